extensions = ["myst_parser", "slimebook.sphinxext.gates.anchors", "slimebook.sphinxext.fixes.errorcount"]
exclude_patterns = ["_build"]
