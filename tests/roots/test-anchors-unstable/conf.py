extensions = ["myst_parser", "slimebook.sphinxext.anchors"]
exclude_patterns = ["_build"]
