# House rules (tests/test_houserules.py): context boxes in guide chapters, Slime names in prose cited with {slime}.
extensions = ["myst_parser", "slimebook"]
slimebook_lock = "sources.toml"  # written by the test: it points at a repository the test builds
exclude_patterns = ["_build"]
slimebook_context_box_docs = ["guide/*", "!guide/index"]
slimebook_lint_symbols = ["guide/*"]
language = "zh_CN"  # the tests read the text the extension writes in Chinese (its zh_CN catalog)
