extensions = ["myst_parser", "slimebook"]
slimebook_lock = "sources.toml"  # written by the test: it points at a repository the test builds
slimebook_scan_categories = "categories.toml"  # the demo library's API beside the standard library's
slimebook_coverage_waivers = "coverage-waivers.toml"
exclude_patterns = ["_build"]
