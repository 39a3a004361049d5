extensions = ["myst_parser", "slimebook.sphinxext.gates.anchors"]
exclude_patterns = ["_build"]
