project = "Duplicates"
author = "tests"
copyright = "2026, tests"
version = release = "1"
extensions = ["myst_parser", "slimebook.sphinxext.fixes.duplicatetargets"]
myst_enable_extensions = ["dollarmath", "amsmath"]
exclude_patterns = ["_build"]
