import os
import runpy

project = "PDF 测试"
author = "tests"
extensions = ["myst_parser", "sphinx_design", "slimebook"]
exclude_patterns = ["_build"]
slimebook_lock = "sources.toml"  # written by the test: it points at a repository the test builds

# The book's own conf.py (path given by the test) decides how the PDF is set: the test checks that code.
_book = runpy.run_path(os.environ["SLIMEBOOK_TEST_BOOK_CONF"])
language = _book["language"]
latex_engine = _book["latex_engine"]
latex_elements = _book["latex_elements"]
latex_use_xindy = _book["latex_use_xindy"]
latex_show_urls = _book["latex_show_urls"]
latex_documents = [("index", "pdftest.tex", project, author, "manual")]
