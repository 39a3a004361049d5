"""Offline HTML without a browser: where the pages load mermaid and MathJax from, with and without the npm bundle.

With the bundle staged by .ci/node-deps.sh, every page imports mermaid from its own ``_static``, a page with
formulas loads MathJax from there, and no page names a CDN; without it (no npm), the build still succeeds, says
so in its log, and pages load the same mermaid version, and Sphinx's default MathJax, from jsDelivr (the
documented fallback).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_browser import MERMAID_STATIC, build_site

from conftest import ROOT

CDN = re.compile(r"cdn\.jsdelivr\.net|unpkg\.com|cdnjs")
LOCK_VERSION = json.loads((ROOT / ".ci" / "npm" / "package-lock.json").read_text())["packages"][
    "node_modules/mermaid"]["version"]


def _pages(outdir: Path) -> dict[str, str]:
    return {p.relative_to(outdir).as_posix(): p.read_text(encoding="utf-8") for p in outdir.rglob("*.html")}


def test_pages_import_mermaid_from_static(tmp_path: Path) -> None:
    if MERMAID_STATIC is None:
        pytest.skip("mermaid is not staged in the cache (run `bash .ci/node-deps.sh`, needs npm)")
    app = build_site(tmp_path, MERMAID_STATIC.parent.parent)
    pages = _pages(Path(app.outdir))
    assert {name for name, text in pages.items() if CDN.search(text)} == set()
    assert 'import mermaid from "./_static/mermaid/mermaid.esm.min.mjs"' in pages["index.html"]
    static = Path(app.outdir) / "_static" / "mermaid"
    assert (static / "mermaid.esm.min.mjs").is_file()
    assert len(list((static / "chunks" / "mermaid.esm.min").glob("*.mjs"))) > 50  # the lazy-loaded diagram code
    assert "pages will load mermaid" not in app._status.getvalue()
    # MathJax only where there is math, from the page's own _static, with its fonts beside it
    assert '<script defer="defer" src="_static/mathjax/tex-chtml.js' in pages["math.html"]
    assert "mathjax" not in pages["loop.html"].lower()
    fonts = Path(app.outdir) / "_static" / "mathjax" / "output" / "chtml" / "fonts" / "woff-v2"
    assert len(list(fonts.glob("*.woff"))) > 10
    assert "pages with formulas will load MathJax" not in app._status.getvalue()


def test_without_npm_bundle_pages_fall_back_to_the_cdn_and_say_so(tmp_path: Path) -> None:
    app = build_site(tmp_path, None)
    assert "WARNING" not in app._warning.getvalue().replace("[slimebook.snapshot]", "")
    assert f"pages will load mermaid {LOCK_VERSION} from cdn.jsdelivr.net" in app._status.getvalue()
    index = _pages(Path(app.outdir))["index.html"]
    assert f"https://cdn.jsdelivr.net/npm/mermaid@{LOCK_VERSION}/dist/mermaid.esm.min.mjs" in index
    assert not (Path(app.outdir) / "_static" / "mermaid").exists()
    assert "pages with formulas will load MathJax from cdn.jsdelivr.net" in app._status.getvalue()
    assert "https://cdn.jsdelivr.net/npm/mathjax@" in _pages(Path(app.outdir))["math.html"]
