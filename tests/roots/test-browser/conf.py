import os
import runpy

project = "浏览器测试"
language = "zh_CN"
extensions = ["myst_parser", "sphinx_design", "sphinx_copybutton", "sphinxcontrib.mermaid", "slimebook"]
myst_fence_as_directive = ["mermaid"]
exclude_patterns = ["_build"]
html_theme = "furo"
html_search_language = "zh"
slimebook_lock = "sources.toml"  # written by the test: it points at a repository the test builds

# The book's own conf.py (path given by the test) decides where mermaid and MathJax come from and sets up zh search:
# the test exercises that code, not a copy of it.
_book = runpy.run_path(os.environ["SLIMEBOOK_TEST_BOOK_CONF"])
mermaid_version = _book["mermaid_version"]
html_search_options = _book["html_search_options"]  # the book's jieba words ("事件循环" stays whole)
if _book["MERMAID_LOCAL"]:
    html_static_path = [str(_book["_MERMAID_STATIC"])]
    mermaid_use_local = _book["mermaid_use_local"]
if _book["MATHJAX_LOCAL"]:
    mathjax_path = _book["mathjax_path"]


def setup(app):
    _book["setup"](app)  # the book's own hooks: the zh search fix and the CDN fallback messages
