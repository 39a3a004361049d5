"""Stable anchors: unstable section ids warn at doc:line; the manifest gate fails on a removed anchor and
passes after a section is inserted above others or when a redirect covers the removal."""

from __future__ import annotations

import re
from io import StringIO
from pathlib import Path

import pytest
from docutils import nodes
from sphinx.testing.util import SphinxTestApp

from conftest import SourceRepo, copy_root
from slimebook.anchorcheck import parse_manifest

#: Occurrence rows the test-anchors book publishes (the fixture pin's mod.py: the import, ``async def run`` and its
#: ``await asyncio.sleep(0)``: asyncio import + api call, syntax async_def + await).
OCCURRENCE_ANCHORS = 4


# -- section ids -----------------------------------------------------------------------------------------
def _app(src: Path, **overrides: object) -> SphinxTestApp:
    app = SphinxTestApp("html", srcdir=src, status=StringIO(), warning=StringIO(), confoverrides=overrides)
    app.build()
    return app


def _section_ids(app: SphinxTestApp, docname: str) -> dict[str, list[str]]:
    doctree = app.env.get_doctree(docname)
    return {s.next_node(nodes.title).astext(): list(s["ids"]) for s in doctree.findall(nodes.section)}


def test_unstable_sections_warn_at_doc_line(tmp_path: Path) -> None:
    app = _app(copy_root("anchors-unstable", tmp_path))
    try:
        ids = _section_ids(app, "index")
        warnings = app._warning.getvalue()
    finally:
        app.cleanup()
    # Chinese headings without a label only get counters (and a non-ASCII slug): unstable.
    counters = [i for i in ids["没有标签的小节"] if i.isascii()]
    assert counters and all(re.fullmatch(r"id\d+", i) for i in counters), ids["没有标签的小节"]
    assert "unstable-labelled" in ids["有标签的小节"]
    assert "an-english-title" in ids["An English title"]
    flagged = re.findall(r"index\.md:(\d+): WARNING: section '([^']+)' has no stable anchor", warnings)
    assert flagged == [("4", "没有标签的小节"), ("11", "另一个没有标签的小节"), ("15", "第三层")]
    assert warnings.count("[slimebook.anchor]") == 3


def test_explicit_policy_also_flags_title_derived_ids(tmp_path: Path) -> None:
    app = _app(copy_root("anchors-unstable", tmp_path), slimebook_anchors_policy="explicit")
    try:
        warnings = app._warning.getvalue()
    finally:
        app.cleanup()
    assert "section 'An English title' has no stable anchor" in warnings
    assert "section '有标签的小节'" not in warnings


# -- the manifest gate on a book with sections, an experiment and an excerpt --------------------------------
@pytest.fixture
def book(tmp_path: Path, fetched_cache: Path, source_repo: SourceRepo, monkeypatch: pytest.MonkeyPatch):
    """A copy of test-anchors against the fixture pin, with its manifest written by an ``update`` build."""
    monkeypatch.setenv("SLIMEBOOK_CACHE", str(fetched_cache))
    src = copy_root("anchors", tmp_path)
    (src / "sources.toml").write_text(source_repo.lock_text())
    app = _app(src, slimebook_anchors_mode="update")
    app.cleanup()
    assert app.statuscode == 0, app._warning.getvalue()
    return src


def _check(src: Path) -> tuple[int, str, SphinxTestApp]:
    app = _app(src, slimebook_anchors_mode="check")
    app.cleanup()
    return app.statuscode, app._warning.getvalue(), app


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_update_writes_every_kind_of_anchor(book: Path) -> None:
    manifest = parse_manifest((book / "anchors.txt").read_text(encoding="utf-8"))
    generated = {anchor: kind for anchor, kind in manifest.items() if kind in ("snapshot", "occurrence")}
    # generated pages publish theirs too: every snapshot page by #L1, every occurrence row by its id
    assert "_snapshot/pkg/mod.py#L1" in generated
    occurrences = {a: kind for a, kind in generated.items() if "#occ-" in a}
    assert len(occurrences) == OCCURRENCE_ANCHORS, sorted(occurrences)
    assert set(occurrences.values()) == {"occurrence"}
    assert {a.split("#")[0] for a in occurrences} == {"_slimebook/usage/category/asyncio",
                                                      "_slimebook/usage/category/syntax"}
    published = {anchor: kind for anchor, kind in manifest.items() if anchor not in generated}
    assert published == {
        "gone#anchors-gone": "section",
        "guide#anchors-guide": "section",
        "guide#anchors-guide-first": "section",
        "guide#anchors-guide-second": "section",
        "index#anchors-gather": "section",
        "index#anchors-home": "section",
        "index#anchors-loop": "section",
        "index#exp-hello": "experiment",
        "index#exp-hello-output": "experiment",
        "index#plain-english-title": "section",
        "index#src-pkg-mod-py-l4-6": "source",
    }


def test_every_published_anchor_is_an_id_in_the_html(book: Path) -> None:
    manifest = parse_manifest((book / "anchors.txt").read_text(encoding="utf-8"))
    assert len(manifest) >= 11 + OCCURRENCE_ANCHORS
    html = book / "_build" / "html"
    missing = []
    for key in manifest:
        page, anchor = key.split("#")
        text = (html / f"{page}.html").read_text(encoding="utf-8")
        if f'id="{anchor}"' not in text:
            missing.append(key)
    assert missing == []


def test_unchanged_book_passes(book: Path) -> None:
    status, warnings, _ = _check(book)
    assert status == 0, warnings
    assert "[slimebook.anchor]" not in warnings


def test_removed_section_fails(book: Path) -> None:
    _edit(book / "guide.md", "(anchors-guide-second)=\n## 第二节\n\n正文。\n", "")
    status, warnings, _ = _check(book)
    assert status == 1
    assert "published section anchor guide#anchors-guide-second is gone" in warnings


def test_a_failed_check_counts_errors_not_warnings(book: Path) -> None:
    _edit(book / "guide.md", "(anchors-guide-second)=\n## 第二节\n\n正文。\n", "")
    status, warnings, app = _check(book)
    log = re.sub(r"\x1b\[[0-9;]*m", "", app._status.getvalue())
    assert status == 1 and "ERROR: anchors: published section anchor" in re.sub(r"\x1b\[[0-9;]*m", "", warnings)
    assert "anchors: check failed: 1 error (" in log
    assert "build finished with problems." in log and "warning" not in log.split("anchors: check failed", 1)[1]


def test_section_inserted_above_passes_and_keeps_ids(book: Path) -> None:
    _edit(book / "guide.md", "(anchors-guide-first)=\n", "(anchors-guide-zero)=\n## 第零节\n\n新的一节。\n\n"
          "(anchors-guide-first)=\n")
    _edit(book / "index.md", "(anchors-loop)=\n", "(anchors-intro)=\n## 引言\n\n(anchors-loop)=\n")
    status, warnings, app = _check(book)
    assert status == 0, warnings
    assert "2 anchors are not in anchors.txt yet" in app._status.getvalue()  # new ones: reported, not failed
    page = (app.outdir / "guide.html").read_text(encoding="utf-8")
    for anchor in ("anchors-guide-zero", "anchors-guide-first", "anchors-guide-second"):
        assert f'id="{anchor}"' in page


def test_redirects_cover_removals_and_work_in_html(book: Path) -> None:
    # same page: a section removed, its id redirected to a sibling
    _edit(book / "guide.md", "(anchors-guide-second)=\n## 第二节\n\n正文。\n", "")
    # another page: a section moved out of index
    _edit(book / "index.md", "(anchors-gather)=\n## gather 与任务\n", "## gather 与任务\n")
    # a removed page
    (book / "gone.md").unlink()
    _edit(book / "index.md", "guide\ngone\n", "guide\n")
    (book / "redirects.txt").write_text(
        "guide#anchors-guide-second guide#anchors-guide-first\n"
        "index#anchors-gather guide#anchors-guide\n"
        "gone index\n"
        "gone#anchors-gone guide#anchors-guide\n", encoding="utf-8")
    status, warnings, app = _check(book)
    assert status == 0, warnings

    guide = (app.outdir / "guide.html").read_text(encoding="utf-8")
    assert 'id="anchors-guide-second"' in guide  # kept as a second id of the target section
    index = (app.outdir / "index.html").read_text(encoding="utf-8")
    assert '{"anchors-gather": "guide.html#anchors-guide"}' in index
    gone = (app.outdir / "gone.html").read_text(encoding="utf-8")
    assert '<meta http-equiv="refresh" content="1; url=index.html">' in gone
    assert '<p>本页已移动到 <a class="reference internal" href="index.html">index</a>。</p>' in gone  # nodes, rendered
    assert '{"anchors-gone": "guide.html#anchors-guide"}' in gone  # its moved id goes on to the new target
    assert '"gone": ' not in gone  # no anchor map beyond the page's own ids

    # a redirect into nothing is itself a failure
    (book / "redirects.txt").write_text("guide#anchors-guide-second guide#nowhere\nindex#anchors-gather "
                                        "guide#anchors-guide\ngone index\n", encoding="utf-8")
    status, warnings, _ = _check(book)
    assert status == 1
    assert "guide#anchors-guide-second is gone and its redirect to guide#nowhere leads nowhere" in warnings


def test_update_is_a_ratchet(book: Path) -> None:
    """An update keeps what still resolves (also through a redirect) and drops only what is gone."""
    _edit(book / "guide.md", "(anchors-guide-second)=\n## 第二节\n\n正文。\n", "")  # gone, redirected
    _edit(book / "guide.md", "(anchors-guide-first)=\n## 第一节\n\n正文。\n", "")  # gone for good
    (book / "redirects.txt").write_text("guide#anchors-guide-second guide#anchors-guide\n", encoding="utf-8")
    app = _app(book, slimebook_anchors_mode="update")
    app.cleanup()
    published = parse_manifest((book / "anchors.txt").read_text(encoding="utf-8"))
    assert "guide#anchors-guide-second" in published
    assert "guide#anchors-guide-first" not in published
    assert "1 dropped: guide#anchors-guide-first" in app._status.getvalue()
    status, warnings, _ = _check(book)
    assert status == 0, warnings


def test_myst_slug_links_land_on_the_stable_id(tmp_path: Path, fetched_cache: Path, source_repo: SourceRepo,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """``[…](#标题)`` and ``[…](other.md#标题)`` resolve to the heading's label, not MyST's counter id."""
    monkeypatch.setenv("SLIMEBOOK_CACHE", str(fetched_cache))
    src = copy_root("anchors", tmp_path)
    (src / "sources.toml").write_text(source_repo.lock_text())
    with open(src / "guide.md", "a", encoding="utf-8") as handle:
        handle.write("\nSlug links: [同页](#事件循环与线程) and [别页](index.md#事件循环).\n\n"
                     "(anchors-guide-loop)=\n## 事件循环与线程\n\nText.\n")
    app = _app(src, myst_heading_anchors=3)  # as the book's conf.py
    app.cleanup()
    html = (app.outdir / "guide.html").read_text(encoding="utf-8")
    assert 'href="#anchors-guide-loop"' in html
    assert 'href="index.html#anchors-loop"' in html
    assert not re.search(r'href="[^"]*#id\d+"', html)
