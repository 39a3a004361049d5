"""The cases (``tests/roots/test-cases``, from the shared cases folder): each chapter built against the fixture pin,
with the right values as expected values.

- ``lone-cr``: one line numbering (a lone ``\\r`` ends a line for the reader, libcst, Pygments and the snapshot);
- ``leading-blank-lines``: every shown line number is the source line of that number, blank first and last lines
  included, for a non-Python lexer;
- ``emphasize-lines-error``: an option error names doc:line, the cited path and the option;
- ``tabs``: tabs expanded to 8-column stops once, identically in HTML, LaTeX, the snapshot page and the copied text.
"""

from __future__ import annotations

import html as htmllib
import re
from pathlib import Path

import pytest
from docutils import nodes
from sphinx.testing.util import SphinxTestApp

from conftest import SourceRepo, copy_root

_LINENO = re.compile(r'<span class="linenos">\s*(\d+)</span>')


def shown_lines(fragment: str) -> list[tuple[int, str]]:
    """``(number, text)`` for each line of a Sphinx-highlighted block with inline line numbers, as a reader sees it."""
    pre = fragment[fragment.index("<pre>") + 5: fragment.index("</pre>")]
    out = []
    for raw in pre.split("\n"):
        match = _LINENO.search(raw)
        if not match:
            continue
        text = htmllib.unescape(re.sub(r"<[^>]+>", "", raw[match.end():]))
        out.append((int(match.group(1)), text))
    return out


def blocks_of(page: str, anchor: str) -> list[list[tuple[int, str]]]:
    """The shown lines of each run of the excerpt whose wrapper has id ``anchor``."""
    start = page.index(f'id="{anchor}"')
    end = page.find('<div class="literal-block-wrapper', start + 1)
    part = page[start: end if end != -1 else len(page)]
    return [shown_lines(chunk) for chunk in re.findall(r"<pre>.*?</pre>", part, flags=re.S)]


def snapshot_lines(page: str) -> dict[int, str]:
    """Line number → text of a snapshot page (its lines carry ``id="Ln"``)."""
    out = {}
    for match in re.finditer(r'<span id="L(\d+)">(.*?)(?=<span id="L\d+">|</code>)', page, flags=re.S):
        body = re.sub(r'<a href="#L\d+"><span class="linenos">\s*\d+</span></a>', "", match.group(2))
        out[int(match.group(1))] = htmllib.unescape(re.sub(r"<[^>]+>", "", body)).rstrip("\n")
    return out


@pytest.fixture
def cases(tmp_path: Path, fetched_cache: Path, source_repo: SourceRepo, monkeypatch: pytest.MonkeyPatch,
          sphinx_build):
    """Build the cases root with ``buildername`` against the fixture pin."""
    monkeypatch.setenv("SLIMEBOOK_CACHE", str(fetched_cache))

    def _build(buildername: str = "html") -> SphinxTestApp:
        src = copy_root("cases", tmp_path / buildername)
        (src / "sources.toml").write_text(source_repo.lock_text())
        return sphinx_build(src, buildername)

    return _build


def test_lone_cr_one_numbering(cases) -> None:
    app = cases()
    page = (app.outdir / "lone-cr.html").read_text()
    # :pyobject: target is lines 7-8 once the CR (line 4) ends a line, as for libcst and Pygments
    assert blocks_of(page, "src-pkg-cr-py-target") == [[(7, "def target():"), (8, "    return 1")]]
    assert "pkg/cr.py · L7–L8 ·" in page
    # :lines: 6-7 is the blank line and the def, and its snapshot link lands on the same numbering
    assert blocks_of(page, "src-pkg-cr-py-l6-7") == [[(6, ""), (7, "def target():")]]
    assert 'href="_snapshot/pkg/cr.py.html#L6"' in page
    snap = snapshot_lines((app.outdir / "_snapshot" / "pkg" / "cr.py.html").read_text())
    assert snap[4] == "# note" and snap[5] == "more" and snap[6] == "" and snap[7] == "def target():"
    assert max(snap) == 8


def test_lone_cr_scanner_agrees(fetched_cache: Path, source_repo: SourceRepo, tmp_path: Path) -> None:
    """The scanner's record lines are the reader's: ``code`` of a record on line n is ``read_lines()[n - 1]``."""
    from slimebook.lines import split_lines
    from slimebook.lock import load_lock
    from slimebook.scan.visitor import scan_code
    from slimebook.store import SourceStore

    lock = tmp_path / "l.toml"
    lock.write_text(source_repo.lock_text())
    store = SourceStore(load_lock(lock), root=fetched_cache)
    text = store.read_text("pkg/cr.py") + "import asyncio\nasyncio.run(target())\n"
    assert split_lines(text)[:8] == store.read_lines("pkg/cr.py")
    records = scan_code(text).records
    assert records and all(r[9] == split_lines(text)[r[0] - 1] for r in records)
    assert [r[0] for r in records if r[6] == "asyncio.run"] == [10]


def test_leading_and_trailing_blank_lines_keep_their_numbers(cases) -> None:
    app = cases()
    page = (app.outdir / "leading-blank-lines.html").read_text()
    assert blocks_of(page, "src-pkg-run-sh-l2-3") == [[(2, ""), (3, "echo one")]]
    assert blocks_of(page, "src-pkg-run-sh-l3-4") == [[(3, "echo one"), (4, "")]]


def test_emphasize_lines_error_names_place_path_and_option(cases) -> None:
    app = cases()
    warnings = app._warning.getvalue()
    src = (app.srcdir / "emphasize-lines-error.md").read_text().splitlines()
    fence = next(n for n, text in enumerate(src, 1) if text.startswith("```{slime-source}"))
    line = next(n for n in range(fence, len(src) + 1) if src[n - 1].startswith(":emphasize-lines:"))  # the option
    assert re.search(
        rf"emphasize-lines-error\.md:{line}: WARNING: slime-source: pkg/mod\.py: :emphasize-lines: "
        r"malformed line range 'abc'", warnings), warnings
    assert warnings.count("WARNING") == 1


def test_tabs_expand_once_for_every_output(cases) -> None:
    expected = [(3, "def g():"), (4, "        x = 1   # c"), (5, "        yy = 22 # d"), (6, "        return x")]
    app = cases()
    page = (app.outdir / "tabs.html").read_text()
    shown = blocks_of(page, "src-pkg-tabs2-py-g")
    assert shown == [expected]
    assert shown[0][1][1].index("# c") == shown[0][2][1].index("# d") == 16
    # the copy button copies the block's text: the same characters, no tab
    doctree = app.env.get_doctree("tabs")
    block = next(b for b in doctree.findall(nodes.literal_block) if "slime-run" in b["classes"])
    assert block.astext() == "".join(text + "\n" for _, text in expected)
    snap = snapshot_lines((app.outdir / "_snapshot" / "pkg" / "tabs2.py.html").read_text())
    assert [(n, snap[n]) for n in range(3, 7)] == expected
    latex = cases("latex")
    tex = next(latex.outdir.glob("*.tex")).read_text()
    assert "\t" not in tex
    assert "yy" in tex
