"""Property: one line numbering from the file to every rendering (issue 15, "one line model").

Hypothesis generates files (LF, CRLF and lone-CR line ends mixed; tabs; runs of blank lines; comments; strings
holding ``#`` lines; form feeds and U+2028 inside lines) in three languages and a line selection, renders them the way
``slime-source`` does (:func:`slimebook.excerpt.read_excerpt` →
:func:`slimebook.sphinxext.directives.source.excerpt_blocks` →
Sphinx's Pygments bridge with the writer's arguments and the book's lexer options) and the way the snapshot page does
(:func:`slimebook.snapshots.render_snapshot`), then checks that every shown line number's text is the source line of
that number (tabs expanded), that each contiguous selection is one block, and that the snapshot page agrees.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sphinx.highlighting import PygmentsBridge
from test_cases import shown_lines, snapshot_lines

from slimebook.excerpt import read_excerpt
from slimebook.lines import expand_tabs, split_lines
from slimebook.lock import SourceLock
from slimebook.snapshots import render_snapshot
from slimebook.sphinxext.directives.source import excerpt_blocks, keep_blank_lines
from slimebook.store import SourceStore

_WORDS = st.sampled_from(["x = 1", "yy = 22", "return x", "pass", "def f():", "é = '<&>'", "a\f b", "c\u2028d"])
_UNIT = st.one_of(
    st.just([""]),  # a blank line (runs of them come from repetition)
    st.builds(lambda w: [w], _WORDS),
    st.builds(lambda w: [f"# {w}"], _WORDS),  # a comment
    st.builds(lambda w, t: [f"{t}{w}\t# c"], _WORDS, st.sampled_from(["", "\t", "  \t", "    "])),  # tabs
    st.builds(lambda w: ['s = """', f"# {w}", "", '"""'], _WORDS),  # a string holding a '#' line and a blank
)


@st.composite
def files(draw) -> tuple[list[str], str]:
    """``(lines, text)``: the intended lines and the file's text with mixed line ends."""
    lines = [line for unit in draw(st.lists(_UNIT, min_size=1, max_size=12)) for line in unit]
    text, previous = "", ""
    for line in lines:
        ends = ["\n", "\r\n", "\r"]
        if previous == "\r" and line == "":
            ends = ["\r\n", "\r"]  # "\r" then "\n" would be one CRLF: not the file we mean
        end = draw(st.sampled_from(ends))
        text += line + end
        previous = end
    if lines[-1] and draw(st.booleans()):  # no line end after a last line that has text
        text = text[: -len(previous)]
    return lines, text


@st.composite
def selections(draw, total: int) -> list[tuple[int, int]]:
    """Ascending parts ``(a, b)`` within ``1..total``; adjacent parts allowed (they must merge)."""
    cuts = sorted(draw(st.sets(st.integers(1, total), min_size=1, max_size=6)))
    parts, n = [], 0
    while n < len(cuts):
        a = cuts[n]
        b = cuts[n + 1] if n + 1 < len(cuts) and draw(st.booleans()) else a
        n += 2 if b != a else 1
        if parts and a <= parts[-1][1]:
            continue
        parts.append((a, b))
    return parts


class MemoryStore(SourceStore):
    """A :class:`SourceStore` over files held in memory (the reading methods are the real ones)."""

    def __init__(self, files: dict[str, bytes]) -> None:
        super().__init__(SourceLock(name="mem", url="mem", commit="0" * 40, license="MIT", blob_url="{path}"))
        self.data = files

    def resolve(self, path: str) -> str:
        return path

    def blob_id(self, path: str) -> str:
        return hashlib.sha1(self.data[path]).hexdigest()

    def read_bytes(self, path: str) -> bytes:
        return self.data[path]


def _merged(parts: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b in parts:
        if out and a == out[-1][1] + 1:
            out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return out


_CONFIG = SimpleNamespace(highlight_options={})
keep_blank_lines(None, _CONFIG)  # type: ignore[arg-type]
_BRIDGE = PygmentsBridge("html")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), suffix=st.sampled_from([".py", ".sh", ".txt"]))
def test_every_shown_number_is_its_source_line(data, suffix: str) -> None:
    lines, text = data.draw(files())
    assert split_lines(text) == lines
    path = f"pkg/gen{suffix}"
    store = MemoryStore({path: text.encode("utf-8")})
    parts = data.draw(selections(len(lines)))
    spec = ",".join(f"{a}" if a == b else f"{a}-{b}" for a, b in parts)

    excerpt = read_excerpt(store, path, lines=spec)
    assert excerpt.runs == _merged(parts)
    blocks = excerpt_blocks(excerpt)
    assert len(blocks) == len(excerpt.runs)  # a contiguous selection is one block
    for (start, end), block in zip(excerpt.runs, blocks, strict=True):
        lang = block["language"]
        html = _BRIDGE.highlight_block(
            block.rawsource, lang, opts=_CONFIG.highlight_options.get(lang, {}), force=True,
            linenos="inline", **block["highlight_args"],
        )
        shown = shown_lines(html)
        assert [n for n, _ in shown] == list(range(start, end + 1))
        for n, line in shown:
            assert line == expand_tabs(lines[n - 1]), (n, line, lines)

    with tempfile.TemporaryDirectory() as cache, mock.patch.dict(os.environ, {"SLIMEBOOK_CACHE": cache}):
        page = render_snapshot(store, path)
        assert Path(cache, "snapshots").is_dir()
    snap = snapshot_lines(f"<code>{page}")
    assert snap == {n: expand_tabs(line) for n, line in enumerate(lines, 1)}
