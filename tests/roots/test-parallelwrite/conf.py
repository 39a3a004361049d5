project = "Parallel write"
author = "tests"
copyright = "2026, tests"
version = release = "1"
language = "zh_CN"
extensions = ["myst_parser", "slimebook.sphinxext.accelerate.parallelwrite", "slimebook.sphinxext.accelerate.readplan", "search_ext"]
exclude_patterns = ["_build"]

import sys  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))  # search_ext: the book's Chinese search, as the book registers it
