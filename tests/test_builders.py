"""Links are right in every builder (issue 15, "builder-aware links").

Snapshot pages (``_snapshot/…``) and the usage pages are written by ``html`` only. The same test root is built
with ``html``, ``singlehtml``, ``epub`` and ``latex``; in each output every local link must point at a file the
builder wrote (and a ``#L<n>`` into a snapshot page at a line that page has), excerpt captions never end in a
separator, and a ``{ref}`` to a named excerpt shows the same caption label in every format.
"""

from __future__ import annotations

import html as htmllib
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from conftest import SourceRepo, copy_root, unlabelled_references

_HREF = re.compile(r'\b(?:href|src)="([^"]*)"')
_TAG = re.compile(r"<[^>]+>")


@pytest.fixture
def build(tmp_path: Path, fetched_cache: Path, source_repo: SourceRepo, monkeypatch: pytest.MonkeyPatch,
          sphinx_build):
    monkeypatch.setenv("SLIMEBOOK_CACHE", str(fetched_cache))

    def _build(buildername: str):
        src = copy_root("builders", tmp_path / buildername)
        (src / "sources.toml").write_text(source_repo.lock_text())
        app = sphinx_build(src, buildername)
        assert app._warning.getvalue() == "", app._warning.getvalue()
        return app

    return _build


def local_links(outdir: Path, suffixes: tuple[str, ...]) -> list[tuple[Path, str]]:
    """Every (page, href) in the written pages whose target is local (no scheme, not only a fragment)."""
    links = []
    for page in sorted(p for p in outdir.rglob("*") if p.suffix in suffixes):
        for href in _HREF.findall(page.read_text(encoding="utf-8")):
            href = htmllib.unescape(href)
            parts = urlsplit(href)
            if parts.scheme or parts.netloc or not parts.path:
                continue
            links.append((page, href))
    return links


def assert_links_land(outdir: Path, suffixes: tuple[str, ...], theme_only: tuple[str, ...] = ()) -> list[str]:
    """Assert every local link lands on a written file (and snapshot fragments on a line); return the hrefs.

    ``theme_only``: pages the theme's navigation links but the builder never writes (Sphinx's own
    ``singlehtml`` writes no ``genindex.html`` or ``search.html``); nothing of this book may link them.
    """
    links = local_links(outdir, suffixes)
    assert links, "no local links found at all"
    for page, href in links:
        parts = urlsplit(href)
        if parts.path in theme_only:
            continue
        target = (page.parent / unquote(parts.path)).resolve()
        if target.is_dir():
            target = target / "index.html"
        assert target.is_file(), f"{page.relative_to(outdir)} links to {href}, which was not written"
        if parts.fragment and "_snapshot" in parts.path:
            assert f'id="{parts.fragment}"' in target.read_text(encoding="utf-8"), (page, href)
    return [href for _, href in links]


def untex(text: str) -> str:
    """LaTeX's escapes of the characters these tests look for, undone."""
    return text.replace("\\textendash{}", "–")


def captions(text: str) -> list[str]:
    """The text of every excerpt caption in an HTML page (an epub's shown link targets left out)."""
    text = re.sub(r'<span class="link-target">[^<]*</span>', "", text)
    found = re.findall(r'<div class="code-block-caption"><span class="caption-text">(.*?)</span>', text, re.S)
    return [htmllib.unescape(_TAG.sub("", c)).strip() for c in found]


def test_html_links_snapshot_pages_that_exist(build, source_repo: SourceRepo) -> None:
    app = build("html")
    hrefs = assert_links_land(Path(app.outdir), (".html",))
    assert any("_snapshot/pkg/mod.py.html#L4" in h for h in hrefs)
    assert any("_slimebook/usage/category/asyncio.html" in h for h in hrefs)
    index = (Path(app.outdir) / "index.html").read_text(encoding="utf-8")
    short = source_repo.pin[:7]
    assert f"The helper — pkg/mod.py · L4–L6 · {short} · 快照" in captions(index)
    assert f"pkg/mod.py · L4–L6, L20–L21 · {short} · 快照" in captions(index)


@pytest.mark.parametrize("buildername", ["singlehtml", "epub"])
def test_single_page_and_epub_link_only_written_files(build, buildername: str, source_repo: SourceRepo) -> None:
    app = build(buildername)
    outdir = Path(app.outdir)
    suffixes = (".html", ".xhtml")
    theme_only = ("genindex.html", "search.html") if buildername == "singlehtml" else ()
    hrefs = assert_links_land(outdir, suffixes, theme_only)
    assert not [h for h in hrefs if "_snapshot" in h or "_slimebook" in h]
    assert not (outdir / "_snapshot").exists()
    short = source_repo.pin[:7]
    pages = [p.read_text(encoding="utf-8") for p in outdir.rglob("*") if p.suffix in suffixes]
    shown = [c for page in pages for c in captions(page)]
    assert f"The helper — pkg/mod.py · L4–L6 · {short}" in shown
    assert all(c.endswith(short) for c in shown), shown  # no dangling " · " where the snapshot link was
    assert not any("快照" in page for page in pages)


def test_latex_has_no_snapshot_links_and_every_reference_has_its_label(build, source_repo: SourceRepo) -> None:
    app = build("latex")
    tex = next(Path(app.outdir).glob("*.tex")).read_text(encoding="utf-8")
    body = tex[: tex.index("\\appendix")]  # then the usage index (usageappendix), which names snapshot pages
    assert "_snapshot" not in tex and "_slimebook" not in body and "快照" not in body
    assert "\\hyperref[" in tex and unlabelled_references(tex) == set()
    short = source_repo.pin[:7]
    caption = untex(re.search(r"\\sphinxSetupCaptionForVerbatim\{(.*)\}\n", tex).group(1))
    assert caption.startswith("The helper — ")
    # the \sphinxhref's closing brace, then nothing; the last separator joined to the commit (no-break spaces)
    assert caption.endswith(f"pkg/mod.py · L4–L6\u00a0·\u00a0{short}}}")


@pytest.mark.parametrize("buildername", ["html", "singlehtml", "latex"])
def test_ref_to_an_excerpt_shows_its_label_in_every_format(build, buildername: str, source_repo: SourceRepo) -> None:
    app = build(buildername)
    outdir = Path(app.outdir)
    text = untex("\n".join(p.read_text(encoding="utf-8") for p in outdir.rglob("*") if p.suffix in (".html", ".tex")))
    label = f"The helper — pkg/mod.py · L4–L6 · {source_repo.pin[:7]}"
    if buildername == "latex":
        ref = r"\\hyperref\[[^\]]*helper-excerpt\}\]\{\\sphinxcrossref\{\\DUrole\{std\}\{\\DUrole\{std-ref\}\{"
        assert re.search(ref + re.escape(label) + r"\}\}\}\}", text)
    else:
        assert f'<span class="std std-ref">{label}</span>' in text
