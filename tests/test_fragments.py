"""Kept HTML (``slimebook.sphinxext.accelerate.fragments``): a subtree drawn once is appended from the cache by the
next build
only when that build would draw exactly the same HTML; otherwise it is drawn again.

Each test builds a small book whose ``kept`` directive wraps a table of code cells in a ``kept_html`` node (the
usage index does the same in the book) and compares what a rebuild writes with what a fresh build of the same
sources writes.
"""

from __future__ import annotations

import shutil
import textwrap
from io import StringIO
from pathlib import Path

import pytest
from sphinx.testing.util import SphinxTestApp

from slimebook.sphinxext.accelerate import fragments

CONF = textwrap.dedent('''\
    import os, sys
    sys.path.insert(0, os.path.dirname(__file__))
    extensions = ["myst_parser", "keptdemo"]
    exclude_patterns = ["_build"]
    ''')

#: ``kept`` draws a table of the lines of its content, each a highlighted code cell; ``:language:`` names the
#: lexer, ``:math:`` adds a math node (not keepable)
DEMO = textwrap.dedent('''\
    from docutils import nodes
    from docutils.parsers.rst import directives
    from sphinx.util.docutils import SphinxDirective

    from slimebook.sphinxext.accelerate import fragments


    class Kept(SphinxDirective):
        has_content = True
        option_spec = {"language": directives.unchanged, "math": directives.flag}

        def run(self):
            language = self.options.get("language", "python")
            table = nodes.table(classes=["demo"])
            group = nodes.tgroup(cols=1)
            table += group
            group += nodes.colspec(colwidth=1)
            body = nodes.tbody()
            group += body
            for line in self.content:
                entry = nodes.entry()
                para = nodes.paragraph()
                para += nodes.literal(line, line, classes=["code", "highlight", language], language=language)
                entry += para
                body += nodes.row("", entry)
            if "math" in self.options:
                body += nodes.row("", nodes.entry("", nodes.paragraph("", "", nodes.math("x^2", "x^2"))))
            return [fragments.keep([table])]


    def setup(app):
        fragments.setup(app)
        app.add_directive("kept", Kept)
        return {"parallel_read_safe": True, "parallel_write_safe": True}
    ''')

PAGE = textwrap.dedent('''\
    # Page

    Text before.

    ```{kept}
    await asyncio.sleep(1)
    x = [n for n in range(3)]
    ```

    Text after.
    ''')


def _book(base: Path, page: str = PAGE, name: str = "book") -> Path:
    src = base / name
    src.mkdir()
    (src / "conf.py").write_text(CONF)
    (src / "keptdemo.py").write_text(DEMO)
    (src / "index.md").write_text("# Book\n\n```{toctree}\npage\n```\n")
    (src / "page.md").write_text(page)
    return src


def _build(src: Path, buildername: str = "html", **kwargs) -> tuple[SphinxTestApp, str]:
    app = SphinxTestApp(buildername, srcdir=src, status=StringIO(), warning=StringIO(), **kwargs)
    try:
        app.build()
        return app, app._warning.getvalue()
    finally:
        app.cleanup()


def _fresh(src: Path, base: Path) -> str:
    """page.html as a build with no cache writes it."""
    copy = base / "fresh"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(src, copy, ignore=shutil.ignore_patterns("_build"))
    app, _ = _build(copy)
    return (app.outdir / "page.html").read_text()


def _counts(before: dict[str, int]) -> dict[str, int]:
    return {k: fragments.COUNTS[k] - before.get(k, 0) for k in ("hit", "kept", "unkept")}


def test_a_rebuild_appends_the_kept_html_and_writes_the_same_page(tmp_path: Path) -> None:
    src = _book(tmp_path)
    before = dict(fragments.COUNTS)
    first, warnings = _build(src)
    assert warnings == ""
    assert _counts(before) == {"hit": 0, "kept": 1, "unkept": 0}
    kept = fragments.fragment_path(first.doctreedir, "page", 0)
    assert kept.is_file() and '<span class="k">await</span>' in kept.read_text()
    assert not list(src.glob("**/slimebook-fragments")) or all("_build" in str(p) for p in
                                                               src.glob("**/slimebook-fragments"))
    page = (first.outdir / "page.html").read_text()

    (src / "page.md").write_text(PAGE.replace("Text after.", "Text after, edited."))
    before = dict(fragments.COUNTS)
    second, warnings = _build(src)
    assert warnings == ""
    assert _counts(before) == {"hit": 1, "kept": 0, "unkept": 0}
    rebuilt = (second.outdir / "page.html").read_text()
    assert rebuilt == page.replace("Text after.", "Text after, edited.")
    assert rebuilt == _fresh(src, tmp_path)


def test_a_changed_subtree_is_drawn_again(tmp_path: Path) -> None:
    src = _book(tmp_path)
    _build(src)
    (src / "page.md").write_text(PAGE.replace("range(3)", "range(4)"))
    before = dict(fragments.COUNTS)
    app, _ = _build(src)
    assert _counts(before) == {"hit": 0, "kept": 1, "unkept": 0}
    assert "range(4)" not in (app.outdir / "page.html").read_text()  # highlighted: split into spans
    assert (app.outdir / "page.html").read_text() == _fresh(src, tmp_path)


def test_the_same_subtree_in_another_place_is_drawn_for_that_place(tmp_path: Path) -> None:
    # inside a list item the translator draws paragraphs compactly: the translator's state is part of the key
    src = _book(tmp_path)
    _build(src)
    nested = PAGE.replace("```{kept}", "- item\n\n  ```{kept}").replace("await asyncio", "  await asyncio") \
        .replace("x = [n", "  x = [n").replace("```\n\nText after", "  ```\n\nText after")
    (src / "page.md").write_text(nested)
    before = dict(fragments.COUNTS)
    app, warnings = _build(src)
    assert warnings == ""
    assert _counts(before)["hit"] == 0
    assert (app.outdir / "page.html").read_text() == _fresh(src, tmp_path)


def _two_builds_unkept(src: Path) -> list[tuple[SphinxTestApp, str]]:
    """Build ``src`` twice (page.md touched before each); both draw the subtree and keep nothing."""
    builds = []
    for _ in range(2):
        (src / "page.md").touch()
        before = dict(fragments.COUNTS)
        builds.append(_build(src))
        assert _counts(before) == {"hit": 0, "kept": 0, "unkept": 1}
    return builds


def test_a_subtree_that_warns_is_never_kept_so_its_warning_comes_back(tmp_path: Path) -> None:
    src = _book(tmp_path, PAGE.replace("```{kept}", "```{kept}\n:language: no-such-lexer"))
    for _, warnings in _two_builds_unkept(src):
        assert "no-such-lexer" in warnings
    assert not fragments.fragment_path(src / "_build" / "doctrees", "page", 0).exists()


def test_a_subtree_with_a_node_outside_the_keepable_classes_is_drawn_every_time(tmp_path: Path) -> None:
    src = _book(tmp_path, PAGE.replace("```{kept}", "```{kept}\n:math:"))
    for app, _ in _two_builds_unkept(src):
        assert "x^2" in (app.outdir / "page.html").read_text()


def test_a_kept_file_that_does_not_match_is_not_used(tmp_path: Path) -> None:
    src = _book(tmp_path)
    first, _ = _build(src)
    path = fragments.fragment_path(first.doctreedir, "page", 0)
    key, _, html = path.read_text().partition("\n")
    path.write_text("0" * len(key) + "\n<p>forged</p>\n")
    (src / "page.md").touch()
    second, _ = _build(src)
    assert "forged" not in (second.outdir / "page.html").read_text()
    assert path.read_text().startswith(key + "\n")


def test_the_kept_html_of_a_removed_document_is_removed(tmp_path: Path) -> None:
    src = _book(tmp_path)
    first, _ = _build(src)
    path = fragments.fragment_path(first.doctreedir, "page", 0)
    assert path.is_file()
    (src / "index.md").write_text("# Book\n")
    (src / "page.md").unlink()
    _build(src)
    assert not path.exists()


@pytest.mark.parametrize("buildername", ["text", "latex"])
def test_other_builders_draw_the_children(tmp_path: Path, buildername: str) -> None:
    src = _book(tmp_path)
    app, warnings = _build(src, buildername)
    assert "no-such" not in warnings
    out = "".join(p.read_text() for p in app.outdir.glob("*.t*x*"))
    # the text writer wraps the one narrow column after every character, LaTeX highlights token by token
    flat = "".join(out.replace("|", "").split())
    assert "asyncio.sleep" in flat or r"\PYG{n}{asyncio}\PYG{o}{.}\PYG{n}{sleep}" in flat
    assert not (Path(app.doctreedir) / fragments.DIRNAME).exists()


def test_parallel_writers_keep_and_reuse_the_same_html(tmp_path: Path) -> None:
    src = _book(tmp_path)
    for n in range(2, 5):
        (src / f"page{n}.md").write_text(PAGE.replace("# Page", f"# Page {n}"))
    (src / "index.md").write_text("# Book\n\n```{toctree}\npage\npage2\npage3\npage4\n```\n")
    serial, _ = _build(src)
    pages = {p.name: p.read_text() for p in serial.outdir.glob("page*.html")}
    for p in src.glob("page*.md"):
        p.touch()
    parallel, warnings = _build(src, parallel=2)
    assert warnings == ""
    assert {p.name: p.read_text() for p in parallel.outdir.glob("page*.html")} == pages


def test_the_fingerprint_tells_unequal_subtrees_apart() -> None:
    from docutils import nodes

    def cell(text: str, **attributes) -> fragments.kept_html:
        return fragments.keep([nodes.paragraph("", "", nodes.literal(text, text, **attributes))])

    assert fragments.fingerprint(cell("a")) == fragments.fingerprint(cell("a"))
    assert fragments.fingerprint(cell("a")) != fragments.fingerprint(cell("b"))
    assert fragments.fingerprint(cell("a")) != fragments.fingerprint(cell("a", classes=["x"]))
    # the same text in another structure
    flat = fragments.keep([nodes.paragraph("", "", nodes.Text("a"), nodes.Text("b"))])
    nested = fragments.keep([nodes.paragraph("", "", nodes.emphasis("", "a"), nodes.Text("b"))])
    assert fragments.fingerprint(flat) != fragments.fingerprint(nested)
    assert fragments.fingerprint(fragments.keep([nodes.image(uri="x.png")])) is None
