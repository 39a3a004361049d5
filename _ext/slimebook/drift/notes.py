"""The candidate notes as a citation source: the lines of the pin a notes file names follow a re-pin too.

A notes file (:mod:`slimebook.candidates`, ``slimebook_candidate_notes``) names lines of the pin in two places:
the ``line`` of each ``[[confirmed]]`` entry, and each ``"path:line"`` of a ``[[left]]`` entry's ``places``. A
re-pin that moves those lines must move these numbers with the chapters' citations, or the build's candidates gate
finds the entries pointing at other code. :func:`note_citations` yields one :class:`~.model.Cited` per number, with
the notes file and the line of the number in it, so :class:`~.checker.DriftChecker` follows it like any one-line
citation and :func:`~.repin.plan_edits` / :func:`~.repin.apply_edits` rewrite the number in place (the rest of the
file, comments and layout included, stays byte for byte).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from ..candidates import NotesError, parse_notes
from .model import Cited

__all__ = ["NOTE_LINE", "NOTE_PLACE", "note_citations"]

#: :attr:`Cited.kind` of a ``[[confirmed]]`` entry's ``line``
NOTE_LINE = "candidate note"
#: :attr:`Cited.kind` of one ``"path:line"`` in a ``[[left]]`` entry's ``places``
NOTE_PLACE = "candidate place"

_HEADER = re.compile(r"\s*\[\[\s*([A-Za-z_-]+)\s*\]\]")
_LINE_KEY = re.compile(r"\s*line\s*=\s*(\d+)\b")


def _spans(lines: list[str], kind: str) -> list[tuple[int, int]]:
    """The 1-based line span (header, last line) of each ``[[kind]]`` table, in order."""
    headers = [(n, m.group(1)) for n, text in enumerate(lines, 1) if (m := _HEADER.match(text))]
    ends = [n - 1 for n, _ in headers[1:]] + [len(lines)] if headers else []
    return [(start, end) for (start, name), end in zip(headers, ends, strict=True) if name == kind]


def note_citations(path: Path) -> Iterator[Cited]:
    """The pin's lines the notes file at ``path`` names, as citations of one line each.

    Yields, in file order: for each ``[[confirmed]]`` entry, ``Cited(kind=NOTE_LINE, path=entry path,
    lines="<line>", file=path, line=<line of its 'line = N' key>)``; for each ``"p:n"`` of a ``[[left]]`` entry's
    ``places``, ``Cited(kind=NOTE_PLACE, path=p, lines="n", file=path, line=<line holding that string>,
    index=<how many equal strings precede it on that line>)``. A number whose key or string cannot be found in the
    text (a table written inline) is yielded with ``error`` set, so that it is reported and never rewritten. A file
    that does not parse yields one citation with ``error`` (the parser's sentence) at the line it names. Nothing
    when the file does not exist.

    Raises:
        OSError: the file exists but cannot be read.
    """
    if not path.is_file():
        return
    text = path.read_text(encoding="utf-8")
    try:
        notes = parse_notes(text)
    except NotesError as exc:
        yield Cited(kind=NOTE_LINE, path=str(path), file=path, line=exc.line or 1, error=str(exc))
        return
    lines = text.splitlines()
    yield from _confirmed(path, lines, notes.confirmed)
    yield from _places(path, lines, notes.left)


def _confirmed(path: Path, lines: list[str], entries: tuple) -> Iterator[Cited]:
    spans = _spans(lines, "confirmed")
    for index, entry in enumerate(entries):
        start, end = spans[index] if index < len(spans) else (0, -1)  # an inline table has no header line
        at = next((n for n in range(start + 1, end + 1) if (m := _LINE_KEY.match(lines[n - 1]))
                   and int(m.group(1)) == entry.line), 0)
        yield Cited(kind=NOTE_LINE, path=entry.path, lines=str(entry.line), file=path, line=at or entry.at,
                    error=None if at else "its 'line = N' key is not on a line of its own under [[confirmed]]")


def _places(path: Path, lines: list[str], rules: tuple) -> Iterator[Cited]:
    spans = _spans(lines, "left")
    for index, rule in enumerate(rules):
        start, end = spans[index] if index < len(spans) else (0, -1)
        seen: Counter[tuple[int, str]] = Counter()
        for place in rule.places:
            where, _, number = place.rpartition(":")
            quoted = f'"{place}"'
            at = next((n for n in range(start + 1, end + 1) if lines[n - 1].count(quoted) > seen[n, quoted]), 0)
            if not (where and number.isdigit() and at):
                yield Cited(kind=NOTE_PLACE, path=where or place, file=path, line=at or rule.at,
                            error=f"the place {place!r} is not a double-quoted \"path:line\" string under [[left]]")
                continue
            yield Cited(kind=NOTE_PLACE, path=where, lines=number, file=path, line=at, index=seen[at, quoted])
            seen[at, quoted] += 1
