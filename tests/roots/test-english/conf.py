# An English book (tests/test_locale.py): every fixed text the extension writes comes from its message catalog in
# the book's language, so no page, script, .tex or .sty of this book holds a CJK character.
project = "English book"
author = "tests"
language = "en"
extensions = ["myst_parser", "sphinx_design", "slimebook"]
slimebook_lock = "sources.toml"  # written by the test: it points at a repository the test builds
slimebook_coverage_waivers = "coverage-waivers.toml"
slimebook_anchors_redirects = "redirects.txt"
exclude_patterns = ["_build", "warns.md"]  # warns.md: only in the preview build (the test includes it)
latex_documents = [("index", "english.tex", project, author, "manual")]
html_sidebars = {"**": ["sidebar/slimebook-pages.html", "searchbox.html"]}  # the extension's sidebar template
