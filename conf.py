"""Sphinx configuration of the Slime source-reading book."""

from __future__ import annotations

import hashlib
import json
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
    "_build", ".venv", "README.md", "ARCHITECTURE.md", "tests", "bench", ".ci", "sources", "node_modules",
    "**/examples/**", ".git", ".ruff_cache",
]

myst_enable_extensions = ["colon_fence", "deflist", "fieldlist", "substitution"]
myst_fence_as_directive = ["mermaid"]
myst_heading_anchors = 3

html_theme = "furo"
html_title = "Slime 源码阅读"
html_static_path = ["_static"]
# Furo's sidebar, plus the generated pages (usage index, coverage table, source check) after the toctrees.
html_sidebars = {"**": [
    "sidebar/brand.html", "sidebar/search.html", "sidebar/scroll-start.html", "sidebar/navigation.html",
    "sidebar/slimebook-pages.html", "sidebar/scroll-end.html",
]}
html_css_files = ["slimebook.css"]
html_search_language = "zh"
# Sphinx segments Chinese with jieba when indexing but not the query: a term the index split ("事件循环" →
# "事件", "循环") is then never found. These book terms are added to jieba's dictionary (one per line; jieba
# picks a frequency that keeps each whole), so the index holds both the parts and the whole term.
html_search_options = {"dict": str(ROOT / "sources" / "search-words.txt")}
# The extension's zh search (slimebook.sphinxext.accelerate.search) loads jieba only when a page is indexed, and works
# around
# the Sphinx 9.0 stemmer name (sphinx-doc/sphinx#14229).

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
# The lock's table, which also names the directive slime-source, the roles {slime} and {slimenum} and the variable
# SLIME_SOURCE_URL; an error about a pin missing from the cache says to run `make sources`.
slimebook_source = "slime"
slimebook_fetch_command = "make sources"
slimebook_build_command = "make html"  # the build the live preview's warning box says fails on its warnings
# House rules (slimebook.sphinxext.gates.houserules): every guide chapter holds a context box; a Slime definition named
# in prose is cited with {slime} somewhere in the same document (checked in every document: guide, lessons, meta).
slimebook_context_box_docs = ["chapters/guide/*", "!chapters/guide/index", "!chapters/guide/reading-order",
                              "!chapters/guide/reuse-roadmap", "chapters/training/*", "!chapters/training/index"]
slimebook_lint_symbols = ["*"]
# Published anchors: `make anchors-check` / `make anchors-update` (see slimebook.sphinxext.gates.anchors).
slimebook_anchors_manifest = "sources/anchors.txt"
slimebook_anchors_redirects = "sources/redirects.txt"

# -- Mermaid: the browser bundle from _static, mmdc for LaTeX ------------------------------------------
# `.ci/node-deps.sh` (run by `make html`/`make latexpdf`) installs .ci/npm/package-lock.json into
# <cache>/node/<sha12 of the lock>/ and stages mermaid's ESM bundle in its static/mermaid/. When that
# directory exists, every page imports mermaid from its own _static/mermaid/ (no CDN). When it does not
# (no npm), pages fall back to the same mermaid version on cdn.jsdelivr.net and the build log says so.
_NPM_LOCK = ROOT / ".ci" / "npm" / "package-lock.json"


def _node_dir() -> Path:
    from slimebook.store import cache_root

    base = Path(os.environ["SLIMEBOOK_NODE"]) if os.environ.get("SLIMEBOOK_NODE") else cache_root() / "node"
    return base / hashlib.sha256(_NPM_LOCK.read_bytes()).hexdigest()[:12]


NODE_DIR = _node_dir()
_MERMAID_STATIC = NODE_DIR / "static"
MERMAID_LOCAL = (_MERMAID_STATIC / "mermaid" / "mermaid.esm.min.mjs").is_file()

# MathJax 3 (the formulas of the loss chapter) comes from the same static directory: a page with math loads
# _static/mathjax/tex-chtml.js, which finds its fonts and TeX extensions beside it. Without npm Sphinx's default
# (MathJax from cdn.jsdelivr.net) stays and the build log says so.
MATHJAX_LOCAL = (_MERMAID_STATIC / "mathjax" / "tex-chtml.js").is_file()

mermaid_version = json.loads(_NPM_LOCK.read_text())["packages"]["node_modules/mermaid"]["version"]
if MERMAID_LOCAL:
    html_static_path.append(str(_MERMAID_STATIC))
    mermaid_use_local = "mermaid/mermaid.esm.min.mjs"  # relative to _static; resolved per page
if MATHJAX_LOCAL:
    mathjax_path = "mathjax/tex-chtml.js"  # relative to _static
mermaid_include_elk = False  # the ELK layout would be another CDN import
mermaid_d3_zoom = False  # d3 would come from the CDN (d3_use_local is not resolved per page)
mermaid_cmd = str(NODE_DIR / "node_modules" / ".bin" / "mmdc")
mermaid_params = [
    "-p", str(NODE_DIR / "puppeteer.json"),  # the system Chromium (written by .ci/node-deps.sh)
    # a CJK sans font for the labels; diagrams at their natural size (useMaxWidth off: mmdc would shrink a wide
    # one into its 800 px page, so a label's printed size would be unknown) with sequence messages wrapped and
    # actors closer together; `make latexpdf` checks that no label is printed below the footnote size
    "-c", str(ROOT / ".ci" / "npm" / "mermaid-pdf.json"),
    "--pdfFit", "-b", "white",
]

# -- LaTeX / PDF ------------------------------------------------------------------------------------------
latex_engine = "xelatex"
latex_documents = [(root_doc, "slimebook.tex", project, author, "manual")]
latex_use_xindy = False  # makeindex is enough for this book; xindy is not in the Debian set we install
latex_show_urls = "no"
# Sphinx loads xeCJK for zh with xelatex (Latin text stays in FreeSerif/FreeSans/FreeMono); give xeCJK the Noto CJK
# fonts (Debian fonts-noto-cjk). Only for a Chinese build: without xeCJK these commands do not exist.
_CJK_PREAMBLE = r"""
\setCJKmainfont{Noto Serif CJK SC}[BoldFont={Noto Sans CJK SC Bold}]
\setCJKsansfont{Noto Sans CJK SC}
\setCJKmonofont{Noto Sans Mono CJK SC}
% circled digits ①…⑳ are not in FreeSerif Bold: let xeCJK set them in the CJK font
\xeCJKDeclareCharClass{CJK}{"2460 -> "24FF}""" if language.split("_")[0] == "zh" else ""
latex_elements = {
    # A Chinese book: no babel/polyglossia "english" (Sphinx falls back to it for zh), no fncychap opener
    # ("CHAPTER 1"); the extension's slimebook.sty sets the fixed strings in the book's language (its message
    # catalog: 目录, 第 1 章, 附录 in Chinese).
    "babel": "",
    "polyglossia": "",
    "fncychap": "",
    "papersize": "a4paper",
    "pointsize": "10pt",
    "preamble": _CJK_PREAMBLE + r"""
% inline code may break after "_" too (snake_case names in narrow table columns were clipped)
\makeatletter
\let\slimebook@underscore\_
\protected\def\slimebook@breakableunderscore{\slimebook@underscore\hskip\z@skip}
\let\slimebook@upquote\sphinxupquote
\protected\def\sphinxupquote#1{{\let\_\slimebook@breakableunderscore\slimebook@upquote{#1}}}
\makeatother
% no table column narrower than a short identifier ("launcher" was clipped at tabulary's 10pt minimum)
\setlength{\tymin}{5em}
""",
    # Long code lines wrap, even where they have no break point (URLs, long identifiers).
    "sphinxsetup": "verbatimwrapslines=true, verbatimforcewraps=true, verbatimmaxunderfull=2",
    "printindex": "",
}


def _report_cdn_fallbacks(app) -> None:
    """Say in the build log which browser bundle (mermaid, MathJax) pages load from a CDN for want of npm."""
    if app.builder.format != "html":
        return
    from sphinx.util import logging

    log = logging.getLogger("conf")
    if not MERMAID_LOCAL:
        log.info("slimebook: mermaid is not in %s (run `bash .ci/node-deps.sh`, needs npm); pages will load "
                 "mermaid %s from cdn.jsdelivr.net instead of _static.", _MERMAID_STATIC, mermaid_version)
    if not MATHJAX_LOCAL:
        log.info("slimebook: MathJax is not in %s (run `bash .ci/node-deps.sh`, needs npm); pages with formulas "
                 "will load MathJax from cdn.jsdelivr.net instead of _static.", _MERMAID_STATIC)


def setup(app):
    app.connect("builder-inited", _report_cdn_fallbacks)
