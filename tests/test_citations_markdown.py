"""``slimebook.citations`` reads Markdown with MyST's parser: fences, nesting, inline code and line numbers."""

from __future__ import annotations

from pathlib import Path

from slimebook.citations import find_citations
from slimebook.names import SourceNames

FIXTURE = Path(__file__).parent / "fixtures" / "citations" / "tricky.md"


def test_tricky_markdown() -> None:
    found = [(c.line, c.kind, c.path, c.options, c.error is not None)
             for c in find_citations(FIXTURE, SourceNames("slime"))]
    assert found == [
        (3, "role", "a.py", {"lines": "1"}, False),  # the role in inline code on the same line is skipped
        (4, "role", "b.py", {"lines": "3-4"}, False),  # after a soft line break: the paragraph's second line
        (4, "role", "bad target here", {}, True),
        (17, "role", "c.py", {"lines": "5"}, False),  # code fences (````markdown, ~~~python) are skipped
        (19, "directive", "d.py", {"pyobject": "X.y", "emphasize-lines": "3"}, False),  # a fence in a list item
        (24, "role", "e.py", {"lines": "1"}, False),  # in a directive's title
        (25, "role", "f.py", {"lines": "2"}, False),  # in a colon fence's content
        (27, "directive", "g.py", {"lines": "5"}, False),  # a directive nested in a directive
        (37, "role", "i.py", {"lines": "7"}, False),
        (39, "role", "j.py", {"lines": "8"}, False),  # two levels deep
        (45, "role", "k.py", {"lines": "9"}, False),  # in a table row
    ]
