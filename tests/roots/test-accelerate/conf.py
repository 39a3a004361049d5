import os

project = "加速"
author = "tests"
copyright = "2026, tests"
version = release = "1"
language = "zh_CN"
extensions = ["myst_parser", "slimebook"]
slimebook_lock = "sources.toml"  # written by the test: it points at a repository the test builds
exclude_patterns = ["_build"]
html_theme = "furo"
html_search_language = "zh"
# a user dictionary, as the book has: the zh search loads it with jieba's own
html_search_options = {"dict": os.path.join(os.path.dirname(os.path.abspath(__file__)), "words.txt")}
