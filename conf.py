"""Sphinx configuration of the Slime source-reading book."""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "_ext"))  # the package is also installed; this keeps a bare checkout working

project = "Slime 源码阅读"
author = "slimebook authors"
copyright = "2026, slimebook authors; Slime code © THUDM, Apache-2.0"
language = "zh_CN"

extensions = [
    "myst_parser",
    "sphinx_design",
    "sphinx_copybutton",
    "sphinxcontrib.mermaid",
    "sphinx.ext.intersphinx",
    "slimebook",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = [
    "_build", ".venv", "README.md", "tests", "bench", ".ci", "sources", "node_modules",
    "**/examples/**", ".git", ".ruff_cache",
]

myst_enable_extensions = ["colon_fence", "deflist", "fieldlist", "substitution"]
myst_fence_as_directive = ["mermaid"]
myst_heading_anchors = 3

html_theme = "furo"
html_title = "Slime 源码阅读"
html_static_path = ["_static"]
html_css_files = ["slimebook.css"]
html_search_language = "zh"

pygments_style = "sphinx"
highlight_language = "python"

# Offline first: Debian's python3.11-doc ships the inventory; the URL is the fallback.
_PY_INV = "/usr/share/doc/python3.11/html/objects.inv"
intersphinx_mapping = {
    "python": ("https://docs.python.org/3", (_PY_INV if os.path.exists(_PY_INV) else None, None)),
}
intersphinx_timeout = 5
# Plain {py:func}`asyncio.gather` resolves through intersphinx; nitpicky makes a wrong name a warning (-W fails).
nitpicky = True

slimebook_lock = "sources/sources.toml"

latex_engine = "xelatex"
