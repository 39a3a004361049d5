extensions = ["myst_parser", "slimebook"]
slimebook_lock = "sources.toml"  # written by the test: it points at a repository the test builds
exclude_patterns = ["_build"]
html_theme = "furo"  # the book's theme: the generated page uses its page template
language = "zh_CN"  # the tests read the text the extension writes in Chinese (its zh_CN catalog)
