# Values extensions change after config-inited (static paths, CSS priorities): a second build must not report
# "The configuration has changed" (tests/test_config_stable.py).
extensions = ["myst_parser", "sphinx_design", "sphinx_copybutton", "slimebook"]
slimebook_lock = "sources.toml"  # written by the test: it points at a repository the test builds
exclude_patterns = ["_build"]
html_static_path = ["_static"]
html_css_files = ["extra.css"]
html_js_files = ["extra.js"]
html_theme = "basic"  # what SphinxTestApp switches alabaster to after start-up (itself a change)
