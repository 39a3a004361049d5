"""The candidate notes as a citation source: the lines of the pin a notes file names follow a re-pin too.

A notes file (:mod:`slimebook.candidates`, ``slimebook_candidate_notes``) names lines of the pin in two places:
the ``line`` of each ``[[confirmed]]`` entry, and each ``"path:line"`` of a ``[[left]]`` entry's ``places``. A
re-pin that moves those lines must move these numbers with the chapters' citations, or the build's candidates gate
finds the entries pointing at other code. :func:`note_citations` yields one :class:`~.model.Cited` per number, with
the notes file and the line of the number in it, so :class:`~.checker.DriftChecker` follows it like any one-line
citation and :func:`~.repin.plan_edits` / :func:`~.repin.apply_edits` rewrite the number in place (the rest of the
file, comments and layout included, stays byte for byte).

The numbers are found with :mod:`slimebook.tomltext`, TOML's own tokens: the value of the entry's ``line`` key and the
strings of its ``places`` array, never the same text in a comment, in another key's string or in a multi-line string.
A place is one string token, rewritten by its position among the strings of its line (:func:`place_token`), so two
places on a line that move onto each other's old numbers (``5 → 9`` and ``9 → 13``) each get their own.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from ..candidates import Confirmation, LeftRule, NotesError, parse_notes
from ..tomltext import Token, tables, tokens
from .model import Cited

__all__ = ["NOTE_LINE", "NOTE_PLACE", "line_token", "note_citations", "place_token", "unquoted"]

#: :attr:`Cited.kind` of a ``[[confirmed]]`` entry's ``line``
NOTE_LINE = "candidate note"
#: :attr:`Cited.kind` of one ``"path:line"`` in a ``[[left]]`` entry's ``places``
NOTE_PLACE = "candidate place"

_NUMBER = re.compile(r"[1-9][0-9]*")
_QUOTES = ('"""', "'''", '"', "'")


def unquoted(token: Token) -> tuple[str, str]:
    """``(quote, text between the quotes as written)`` of a string token."""
    quote = next(q for q in _QUOTES if token.text.startswith(q))
    return quote, token.text[len(quote):len(token.text) - len(quote)]


def line_token(text: str) -> Token | None:
    """The number token of a ``line = N`` statement that is the line ``text`` (any quoting of the key, a comment
    after it), or None when ``text`` is not such a statement."""
    root = tables(text)[0]
    value = root.keys.get("line")
    if len(root.keys) != 1 or value is None or len(value) != 1 or not _NUMBER.fullmatch(value[0].text):
        return None
    return value[0]


def place_token(text: str, index: int) -> Token | None:
    """The ``index``-th string (0-based, comments left out) of the line ``text`` read alone, or None."""
    strings = [t for t in tokens(text) if t.kind == "string"]
    return strings[index] if 0 <= index < len(strings) else None


def note_citations(path: Path) -> Iterator[Cited]:
    """The pin's lines the notes file at ``path`` names, as citations of one line each.

    Yields, in file order of the kinds: for each ``[[confirmed]]`` entry, ``Cited(kind=NOTE_LINE, path=entry path,
    lines="<line>", file=path, line=<line of its 'line = N' key>)``; for each ``"p:n"`` of a ``[[left]]`` entry's
    ``places``, ``Cited(kind=NOTE_PLACE, path=p, lines="n", file=path, line=<line of that string>,
    index=<its position among the strings of that line>)``. Lines end at ``"\\n"`` only, as in
    :func:`~.repin.apply_edits`. A number that is not written where it can be rewritten (an inline table, a string
    with escapes, ``line = 0x2E``) is yielded with ``error`` set, so that it is reported and never rewritten. A file
    that does not parse, is not UTF-8 or cannot be read yields one citation with ``error`` at the line it names.
    Nothing when the file does not exist.
    """
    if not path.is_file():
        return
    try:
        data = path.read_bytes()
        text = data.decode("utf-8")
    except OSError as exc:
        yield _broken(path, 1, f"cannot be read: {exc.strerror or exc}")
        return
    except UnicodeDecodeError as exc:
        yield _broken(path, data.count(b"\n", 0, exc.start) + 1, f"not UTF-8 text: {exc.reason}")
        return
    try:
        notes = parse_notes(text)
    except NotesError as exc:
        yield _broken(path, exc.line or 1, str(exc))
        return
    found = tables(text)
    lines = text.split("\n")
    yield from _confirmed(path, lines, notes.confirmed, [t.keys for t in found if t.array and t.name == "confirmed"])
    yield from _places(path, lines, notes.left, [t.keys for t in found if t.array and t.name == "left"])


def _broken(path: Path, line: int, error: str) -> Cited:
    return Cited(kind=NOTE_LINE, path=str(path), file=path, line=line, error=error)


def _confirmed(path: Path, lines: list[str], entries: Sequence[Confirmation],
               keys: list[dict[str, list[Token]]]) -> Iterator[Cited]:
    for index, entry in enumerate(entries):
        value = keys[index].get("line", []) if index < len(keys) else []  # an inline table has no header
        number = value[0] if len(value) == 1 and value[0].text == str(entry.line) else None
        found = line_token(lines[number.line - 1]) if number else None  # what the rewrite will find on that line
        if found is None or found.column != number.column:
            number = None
        yield Cited(kind=NOTE_LINE, path=entry.path, lines=str(entry.line), file=path,
                    line=number.line if number else entry.at,
                    error=None if number else f"its 'line = {entry.line}' is not a decimal number on a line of a "
                                              "[[confirmed]] table")


def _places(path: Path, lines: list[str], rules: Sequence[LeftRule],
            keys: list[dict[str, list[Token]]]) -> Iterator[Cited]:
    for index, rule in enumerate(rules):
        value = keys[index].get("places", []) if index < len(keys) else []
        strings = [t for t in value if t.kind == "string"]
        for k, place in enumerate(rule.places):
            where, _, number = place.rpartition(":")
            token = strings[k] if len(strings) == len(rule.places) else None
            at = _position(lines, token) if token and unquoted(token)[1] == place else None
            if at is None:
                yield Cited(kind=NOTE_PLACE, path=where or place, file=path, line=token.line if token else rule.at,
                            error=f"the place {place!r} is not written as a plain quoted \"path:line\" string in a "
                                  "[[left]] table")
                continue
            yield Cited(kind=NOTE_PLACE, path=where, lines=number, file=path, line=token.line, index=at)


def _position(lines: list[str], token: Token) -> int | None:
    """The position of ``token`` among the strings of its line read alone (what :func:`place_token` finds), or
    None when reading the line alone does not find it there (the line starts inside a multi-line string)."""
    strings = [t for t in tokens(lines[token.line - 1]) if t.kind == "string"]
    return next((k for k, t in enumerate(strings) if (t.column, t.text) == (token.column, token.text)), None)
