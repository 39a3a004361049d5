"""Toctree parents (``slimebook.sphinxext.accelerate.parents``): written again only when what they show of a re-read
child
(title, table of contents, labels) changed; Sphinx alone rewrites them after every edit of a child."""

from __future__ import annotations

import textwrap
from io import StringIO
from pathlib import Path

import pytest
from sphinx.testing.util import SphinxTestApp

from slimebook.sphinxext.accelerate import parents

CONF = 'extensions = ["myst_parser", "slimebook.sphinxext.accelerate.parents"]\nexclude_patterns = ["_build"]\n'
INDEX = textwrap.dedent("""\
    # Book

    See {ref}`a-section`.

    ```{toctree}
    a
    b
    ```
    """)
A = textwrap.dedent("""\
    # Chapter A

    Body text.

    (a-section)=
    ## Section of A

    More text.
    """)


def _build(src: Path) -> tuple[SphinxTestApp, str]:
    app = SphinxTestApp("html", srcdir=src, status=StringIO(), warning=StringIO())
    try:
        app.build()
        return app, app._warning.getvalue()
    finally:
        app.cleanup()


def _stamps(app: SphinxTestApp) -> dict[str, int]:
    return {name: (app.outdir / f"{name}.html").stat().st_mtime_ns for name in ("index", "a", "b")}


def _book(tmp_path: Path, name: str = "book") -> Path:
    src = tmp_path / name
    src.mkdir()
    (src / "conf.py").write_text(CONF)
    (src / "index.md").write_text(INDEX)
    (src / "a.md").write_text(A)
    (src / "b.md").write_text("# Chapter B\n\nText.\n")
    return src


def test_a_body_edit_leaves_the_parent_as_it_was(tmp_path: Path) -> None:
    src = _book(tmp_path)
    first, _ = _build(src)
    before = _stamps(first)
    (src / "a.md").write_text(A.replace("Body text.", "Body text, edited."))
    second, warnings = _build(src)
    after = _stamps(second)
    assert warnings == ""
    assert after["a"] != before["a"]
    assert after["index"] == before["index"] and after["b"] == before["b"]
    assert second.env.files_to_rebuild["a"] == {"index"}  # given back when the build ended
    # and the parent is what a fresh build of the edited book writes
    fresh, _ = _build(_copy(src, tmp_path / "fresh"))
    assert (second.outdir / "index.html").read_text() == (fresh.outdir / "index.html").read_text()


def _copy(src: Path, dest: Path) -> Path:
    dest.mkdir()
    for name in ("conf.py", "index.md", "a.md", "b.md"):
        (dest / name).write_text((src / name).read_text())
    return dest


def test_a_title_edit_rewrites_the_parent(tmp_path: Path) -> None:
    src = _book(tmp_path)
    first, _ = _build(src)
    before = _stamps(first)
    (src / "a.md").write_text(A.replace("# Chapter A", "# Chapter A, renamed"))
    second, _ = _build(src)
    assert _stamps(second)["index"] != before["index"]
    assert "Chapter A, renamed" in (second.outdir / "index.html").read_text()


def test_a_section_title_edit_rewrites_the_parent(tmp_path: Path) -> None:
    # the parent's {ref} shows the section's title
    src = _book(tmp_path)
    _build(src)
    (src / "a.md").write_text(A.replace("## Section of A", "## Section of A, renamed"))
    second, _ = _build(src)
    assert "Section of A, renamed" in (second.outdir / "index.html").read_text()


def test_a_label_gone_warns_in_the_parent_again(tmp_path: Path) -> None:
    src = _book(tmp_path)
    _, warnings = _build(src)
    assert warnings == ""
    (src / "a.md").write_text(A.replace("(a-section)=\n", ""))
    _, warnings = _build(src)
    assert "index.md" in warnings and "a-section" in warnings


def test_a_title_edit_rewrites_every_page_that_shows_it(tmp_path: Path) -> None:
    # the navigation of every page (the sidebar, the previous/next links) shows every document's title
    src = _book(tmp_path)
    conf = CONF + 'html_theme = "furo"\n'
    (src / "conf.py").write_text(conf)
    _build(src)
    (src / "a.md").write_text(A.replace("# Chapter A", "# Chapter A, renamed"))
    second, _ = _build(src)
    b = (second.outdir / "b.html").read_text()
    assert "Chapter A, renamed" in b
    fresh_src = _copy(src, tmp_path / "fresh")
    fresh, _ = _build(fresh_src)
    assert b == (fresh.outdir / "b.html").read_text()


def test_a_term_gone_warns_in_the_parent_again(tmp_path: Path) -> None:
    src = _book(tmp_path)
    (src / "index.md").write_text(INDEX.replace("See {ref}`a-section`.", "See {term}`widget`."))
    glossary = A + "\n```{glossary}\nwidget\n  A thing.\n```\n"
    (src / "a.md").write_text(glossary)
    _, warnings = _build(src)
    assert warnings == ""
    (src / "a.md").write_text(A)
    _, warnings = _build(src)
    assert "index.md" in warnings and "widget" in warnings


def test_a_numbered_block_added_before_renumbers_the_parent(tmp_path: Path) -> None:
    src = _book(tmp_path)
    (src / "conf.py").write_text(CONF + "numfig = True\n")
    listing = "```{code-block} python\n:caption: {caption}\n:name: {name}\n\npass\n```\n\n"
    (src / "a.md").write_text(A + "\n" + listing.replace("{caption}", "Second").replace("{name}", "lst-b"))
    (src / "index.md").write_text(INDEX.replace("See {ref}`a-section`.", "See {numref}`lst-b`."))
    first, _ = _build(src)
    assert "Listing 1" in (first.outdir / "index.html").read_text()
    unnamed = "```{code-block} python\n:caption: First\n\npass\n```\n\n"  # no label: only the numbers change
    (src / "a.md").write_text(A + "\n" + unnamed + listing.replace("{caption}", "Second").replace("{name}", "lst-b"))
    second, _ = _build(src)
    assert "Listing 2" in (second.outdir / "index.html").read_text()


def test_a_build_stopped_while_writing_leaves_no_parent_stale(tmp_path: Path) -> None:
    # the environment is pickled before writing: a build stopped then (SIGTERM, Ctrl-C) has a renamed child and a
    # parent not yet written; the next build writes every parent of what it re-reads, as Sphinx alone does
    src = _book(tmp_path)
    _build(src)
    (src / "a.md").write_text(A.replace("# Chapter A", "# Chapter A, renamed"))
    (src / "b.md").write_text("# Chapter B\n\nText, edited.\n")
    app = SphinxTestApp("html", srcdir=src, status=StringIO(), warning=StringIO())

    def stop(app, pagename, *args) -> None:
        if pagename == "index":
            raise KeyboardInterrupt

    app.connect("html-page-context", stop)
    try:
        with pytest.raises(KeyboardInterrupt):
            app.build()
    finally:
        app.cleanup()
    assert "Chapter A, renamed" not in (app.outdir / "index.html").read_text()
    assert (app.doctreedir / parents.WRITING_MARK).exists()
    (src / "b.md").write_text("# Chapter B\n\nText, edited again.\n")
    third, _ = _build(src)
    assert "Chapter A, renamed" in (third.outdir / "index.html").read_text()
    assert not (third.doctreedir / parents.WRITING_MARK).exists()
