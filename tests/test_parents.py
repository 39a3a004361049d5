"""Toctree parents (``slimebook.sphinxext.parents``): written again only when what they show of a re-read child
(title, table of contents, labels) changed; Sphinx alone rewrites them after every edit of a child."""

from __future__ import annotations

import textwrap
from io import StringIO
from pathlib import Path

from sphinx.testing.util import SphinxTestApp

CONF = 'extensions = ["myst_parser", "slimebook.sphinxext.parents"]\nexclude_patterns = ["_build"]\n'
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
