"""Where things are in a TOML text (``slimebook.tomltext``): tokens with lines and columns, tables with their keys."""

from __future__ import annotations

import tomllib

from hypothesis import given
from hypothesis import strategies as st

from slimebook.tomltext import Token, tables, tokens


def test_tokens_leave_comments_out_and_count_lines_at_newlines_only() -> None:
    text = 'a = "x\u2028y"  # "a = 1"\r\nb = """\n[[t]]\n""" \nc = [1, \'q\']\n'
    assert [(t.kind, t.text, t.line, t.column) for t in tokens(text) if t.kind != "newline"] == [
        ("bare", "a", 1, 0), ("punct", "=", 1, 2), ("string", '"x\u2028y"', 1, 4),
        ("bare", "b", 2, 0), ("punct", "=", 2, 2), ("string", '"""\n[[t]]\n"""', 2, 4),
        ("bare", "c", 5, 0), ("punct", "=", 5, 2), ("punct", "[", 5, 4), ("bare", "1", 5, 5), ("punct", ",", 5, 6),
        ("string", "'q'", 5, 8), ("punct", "]", 5, 11)]


def test_tables_group_statements_under_their_headers() -> None:
    text = ('top = 1\n[[ left ]]\n"places" = [\n  "a.py:3",  # "b.py:4"\n  \'c.py:5\',\n]\nx = {line = 2}\n'
            '[sub . "t"]\nline = 7\n')
    root, left, sub = tables(text)
    assert (root.name, root.line, [t.text for t in root.keys["top"]]) == ("", 0, ["1"])
    assert (left.name, left.array, left.line) == ("left", True, 2)
    assert [(t.text, t.line) for t in left.keys["places"]] == [('"a.py:3"', 4), ("'c.py:5'", 5)]
    assert [t.text for t in left.keys["x"]] == ["line", "2"]  # an inline table's keys are the value's tokens
    assert (sub.name, sub.array, sub.line, [t.text for t in sub.keys["line"]]) == ("sub.t", False, 8, ["7"])


_TEXT = st.text(st.characters(blacklist_categories=("Cs", "Cc")) | st.sampled_from('"\'\\#[]=\n\u2028'),
                max_size=12)


def _basic(value: str) -> str:
    return '"' + "".join({'"': '\\"', "\\": "\\\\", "\n": "\\n"}.get(c, c) for c in value) + '"'


@st.composite
def _documents(draw: st.DrawFn) -> tuple[str, list[tuple[int, int, list[str]]]]:
    """A notes-like document whose comments and multi-line strings hold header and key look-alikes, and per
    ``[[t]]`` table its header line, its ``line`` and its ``places``."""
    parts: list[str] = []
    expected: list[tuple[int, int, list[str]]] = []
    for _ in range(draw(st.integers(1, 3))):
        header = "".join(parts).count("\n") + 1
        places = draw(st.lists(_TEXT, max_size=3))
        number = draw(st.integers(1, 999))
        note = draw(_TEXT).replace("\n", " ")
        parts.append(f"[[t]]  # [[u]] {note}\n")
        inside = note.replace('"', "").replace("\\", "\\\\")  # a multi-line basic string: no quote, no escape
        parts.append(f'evidence = """\nline = 5\n[[t]]\n{inside}"""\n')
        parts.append(f"# line = {number + 1}\nline = {number}\n")
        parts.append("places = [\n" + "".join(f"  {_basic(p)},  # {_basic(p)}\n" for p in places) + "]\n")
        expected.append((header, number, places))
    return "".join(parts), expected


@given(_documents())
def test_tables_find_what_tomllib_reads(document: tuple[str, list[tuple[int, int, list[str]]]]) -> None:
    text, expected = document
    assert len(tomllib.loads(text)["t"]) == len(expected)
    found = [t for t in tables(text) if t.name == "t"]
    assert [(t.line, int(t.keys["line"][0].text),
             [tomllib.loads(f"v = {s.text}")["v"] for s in t.keys["places"]]) for t in found] == expected
    lines = text.split("\n")
    for table in found:
        for token in (*table.keys["places"], *table.keys["line"]):
            assert lines[token.line - 1][token.column:].startswith(token.text)
    assert all(isinstance(t, Token) for t in tokens(text))
