"""The line model (``slimebook.lines``) with written-down values: line ends, line starts, tab stops."""

from __future__ import annotations

import pytest

from slimebook.lines import TAB_SIZE, display_lines, expand_tabs, line_starts, split_lines


@pytest.mark.parametrize(("text", "lines"), [
    ("", []),
    ("a", ["a"]),
    ("a\n", ["a"]),
    ("a\n\n", ["a", ""]),
    ("\n", [""]),
    ("a\r\nb\rc\nd", ["a", "b", "c", "d"]),
    ("a\r\r\nb", ["a", "", "b"]),
    ("a\fb\vc\x1cd\x85e\u2028f\u2029g\n", ["a\fb\vc\x1cd\x85e\u2028f\u2029g"]),
])
def test_split_lines(text: str, lines: list[str]) -> None:
    assert split_lines(text) == lines


@pytest.mark.parametrize(("text", "starts"), [
    ("", [0]),
    ("a", [0]),
    ("a\r\nb\rc\n", [0, 3, 5, 7]),
    ("\n\n", [0, 1, 2]),
])
def test_line_starts(text: str, starts: list[int]) -> None:
    assert line_starts(text) == starts


def test_tabs_expand_to_eight_column_stops() -> None:
    assert TAB_SIZE == 8
    assert expand_tabs("\tx") == "        x"
    assert expand_tabs("abc\tx") == "abc     x"
    assert expand_tabs("abcdefgh\tx") == "abcdefgh        x"
    assert expand_tabs("é\tx") == "é       x"  # columns count code points
    assert expand_tabs("no tabs") == "no tabs"
    assert display_lines("\ta\r\nb\tc\n") == ["        a", "b       c"]
