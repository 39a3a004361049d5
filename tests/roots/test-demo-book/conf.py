"""A small English book about a fixture repository, quoted under the source name ``demo`` (tests/test_demo_book.py).

Not the Slime book's layout: the documents live in ``docs/`` (``root_doc = "docs/index"``), the lock is
``locks/sources.toml`` and names the table ``[demo]``; ``drafts/`` and ``README.md`` are not part of the book. So the
book writes ``demo-source``, ``{demo}`` and ``{demonum}``, and ``DEMO_SOURCE_URL`` overrides its lock's URL. Its
category table (``categories.toml``) adds the demo library's own API to the default one, its lesson teaches that API,
and every fixed text the extension writes comes in English: no page, script, ``.tex`` or ``.sty`` holds a CJK
character, and no generated sentence names Slime.
"""

project = "Demo book"
author = "tests"
copyright = "2026, tests"
language = "en"

extensions = ["myst_parser", "sphinx_design", "slimebook"]
root_doc = "docs/index"
exclude_patterns = ["_build", "README.md", "drafts"]

slimebook_source = "demo"
slimebook_lock = "locks/sources.toml"  # written by the test: its [demo] table pins a repository the test builds
slimebook_scan_categories = "categories.toml"  # the demo library's API beside the standard library's
slimebook_coverage_waivers = "coverage-waivers.toml"
slimebook_candidate_notes = "candidate-notes.toml"
slimebook_anchors_redirects = "redirects.txt"
slimebook_context_box_docs = ["docs/guide"]
slimebook_lint_symbols = ["docs/*"]

html_sidebars = {"**": ["sidebar/slimebook-pages.html", "searchbox.html"]}  # the extension's sidebar template
latex_documents = [("docs/index", "demo.tex", project, author, "manual")]
