"""The published-anchors check without Sphinx (``slimebook.anchorcheck``): manifest, redirects, resolution."""

from __future__ import annotations

import pytest

from slimebook.anchorcheck import (
    MANIFEST_HEADER,
    Anchor,
    check_anchors,
    format_manifest,
    is_stable,
    parse_manifest,
    parse_redirects,
    resolve,
)


def test_manifest_round_trip_is_sorted_and_deduplicated() -> None:
    text = format_manifest([Anchor("b", "x", "section"), Anchor("a", "y", "source"), Anchor("b", "x", "section")])
    assert text == MANIFEST_HEADER + "a#y source\nb#x section\n"
    assert parse_manifest(text) == {"a#y": "source", "b#x": "section"}


@pytest.mark.parametrize("bad", ["a#b", "a section", "a#b c d"])
def test_manifest_lines_are_validated(bad: str) -> None:
    with pytest.raises(ValueError, match="line 1"):
        parse_manifest(bad + "\n")


def test_redirects_parse_and_reject_duplicates() -> None:
    assert parse_redirects("# c\nold#a new#b\nold-page new-page\n") == {"old#a": "new#b", "old-page": "new-page"}
    with pytest.raises(ValueError, match="twice"):
        parse_redirects("a#x b#y\na#x c#z\n")


@pytest.mark.parametrize(("text", "line"), [("a#x\n", 1), ("# c\na#x b#y\na#x b#y c#z\n", 3)])
def test_a_redirect_line_needs_exactly_two_fields(text: str, line: int) -> None:
    with pytest.raises(ValueError, match=f"redirects line {line}: expected 'old new'"):
        parse_redirects(text)


@pytest.mark.parametrize(("anchor", "stable"), [
    ("anchors-home", True), ("async-08-to-thread", True), ("id3x", True), ("L81", True),
    ("id3", False), ("id12", False), ("中文标题", False), ("标题-1", False),
])
def test_stable_anchors_are_ascii_and_not_docutils_counters(anchor: str, stable: bool) -> None:
    assert is_stable(anchor) is stable


def test_resolve_follows_anchor_page_and_chained_redirects() -> None:
    present = {"p": {"a", "b"}, "q": {"a"}}
    assert resolve("p#a", present, {}) == "p#a"
    assert resolve("p#gone", present, {"p#gone": "p#b"}) == "p#b"
    assert resolve("old#a", present, {"old": "q"}) == "q#a"  # a moved page keeps its ids…
    assert resolve("old#z", present, {"old": "q"}) == "q"  # …or lands on the new page itself
    assert resolve("p#x", present, {"p#x": "p#y", "p#y": "q#a"}) == "q#a"
    assert resolve("p#x", present, {"p#x": "p#y", "p#y": "p#x"}) is None  # a cycle
    assert resolve("p#x", present, {}) is None


def test_check_names_every_broken_anchor_and_redirect() -> None:
    present = {"p": {"a"}}
    problems = check_anchors({"p#a": "section", "p#gone": "section", "p#moved": "source"}, present,
                             {"p#moved": "p#nowhere"})
    assert len(problems) == 3
    assert "p#gone is gone" in problems[0]
    assert "p#moved is gone and its redirect to p#nowhere leads nowhere" in problems[1]
    assert "redirect p#moved -> p#nowhere: the target does not exist" in problems[2]
    assert check_anchors({"p#a": "section"}, present, {}) == []
