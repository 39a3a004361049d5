# Every warning subtype of the extension at least once (tests/test_warnings_repeat.py builds this book twice).
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

extensions = ["myst_parser", "slimebook", "badsnapshot"]
slimebook_lock = "sources.toml"  # written by the test: it points at a repository the test builds
slimebook_coverage_waivers = "coverage-waivers.toml"
exclude_patterns = ["_build"]
slimebook_candidate_notes = "candidate-notes.toml"
slimebook_context_box_docs = ["more"]  # a chapter that must open with a context box and has none (subtype house)
# a Chinese search index; tests/test_warnings_repeat.py hides jieba, so the build warns that it is missing (subtype
# dependency)
html_search_language = "zh"
