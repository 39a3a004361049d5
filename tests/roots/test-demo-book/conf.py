"""A small English book about a fixture repository, quoted under the source name ``demo``.

Not the Slime book's layout: the documents live in ``docs/`` (``root_doc = "docs/index"``), the lock is
``locks/sources.toml`` and names the table ``[demo]``; ``drafts/`` and ``README.md`` are not part of the book. So the
book writes ``demo-source``, ``{demo}`` and ``{demonum}``, and ``DEMO_SOURCE_URL`` overrides its lock's URL.
"""

project = "Demo book"
author = "tests"
copyright = "2026, tests"
language = "en"

extensions = ["myst_parser", "slimebook"]
root_doc = "docs/index"
exclude_patterns = ["_build", "README.md", "drafts"]

slimebook_source = "demo"
slimebook_lock = "locks/sources.toml"  # written by the test: its [demo] table pins a repository the test builds
