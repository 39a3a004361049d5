"""Where things are in a TOML text: its tokens with their line and column, and its tables with the tokens of their keys.

:mod:`tomllib` gives values, never where they are written; ``tomlkit`` (which rewrites the lock keeping its layout)
keeps the text of each item but not its line either. A file the book rewrites in place (the candidate notes on a
re-pin, :mod:`slimebook.drift.notes`) or reports by line (:func:`slimebook.candidates.parse_notes`) needs the
positions too, and a line-by-line regular expression gets them wrong: a comment, another key's string or a
multi-line string can hold the same text as the key or value sought. :func:`tokens` is a small lexer that knows
TOML's comments and four kinds of string; :func:`tables` groups the tokens into the ``[table]`` and ``[[array]]``
headers and the ``key = value`` statements under each. Lines end at ``"\\n"`` only, as TOML's do (and
:func:`tomllib.loads`' error positions): ``str.splitlines`` also ends one at U+2028 and other characters a TOML
string or comment may hold.

Both functions expect a text :func:`tomllib.loads` accepts; on other text they return something, never raise, and
the positions mean nothing. Nothing here decodes a value but a quoted key.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field

__all__ = ["Table", "Token", "tables", "tokens"]

_PUNCT = "[]{}=,."
_STOP = frozenset(" \t\r\n#\"'" + _PUNCT)


@dataclass(frozen=True)
class Token:
    """One token: ``kind`` is ``"string"`` (any of the four quotings, quotes included in ``text``), ``"bare"`` (a
    bare key, number, boolean or date, as written), ``"punct"`` (one of ``[]{}=,.``) or ``"newline"``; ``line`` is
    1-based, ``column`` the 0-based offset of its first character in that line."""

    kind: str
    text: str
    line: int
    column: int


def _string_end(text: str, start: int) -> int:
    """The offset just past the string that starts at ``start`` (its quotes included)."""
    n = len(text)
    for quote in ('"""', "'''"):
        if text.startswith(quote, start):
            i = start + 3
            while i < n and not text.startswith(quote, i):
                i += 2 if quote == '"""' and text[i] == "\\" else 1
            end = min(i + 3, n)
            extra = 0
            while end < n and text[end] == quote[0] and extra < 2:  # up to two quotes may end the content
                end, extra = end + 1, extra + 1
            return end
    quote, i = text[start], start + 1
    while i < n and text[i] not in (quote, "\n"):
        i += 2 if quote == '"' and text[i] == "\\" else 1
    return min(i + 1, n)


def tokens(text: str) -> list[Token]:
    """The tokens of ``text``, comments and blanks left out, in order.

    Returns:
        :class:`Token` s; a multi-line string is one token on the line it starts.
    """
    found: list[Token] = []
    line, line_start, i, n = 1, 0, 0, len(text)
    while i < n:
        char = text[i]
        if char in " \t\r":
            i += 1
        elif char == "#":
            newline = text.find("\n", i)
            i = n if newline < 0 else newline
        elif char == "\n":
            found.append(Token("newline", char, line, i - line_start))
            line, line_start, i = line + 1, i + 1, i + 1
        elif char in "\"'":
            end = _string_end(text, i)
            found.append(Token("string", text[i:end], line, i - line_start))
            breaks = text.count("\n", i, end)
            if breaks:
                line, line_start = line + breaks, text.rfind("\n", i, end) + 1
            i = end
        elif char in _PUNCT:
            found.append(Token("punct", char, line, i - line_start))
            i += 1
        else:
            start = i
            while i < n and text[i] not in _STOP:
                i += 1
            found.append(Token("bare", text[start:i], line, start - line_start))
    return found


def _key_part(token: Token) -> str | None:
    """A key component as TOML reads it: a bare key as written, a quoted key decoded; None for anything else."""
    if token.kind == "bare":
        return token.text
    if token.kind == "string" and not token.text.startswith(('"""', "'''")):
        try:
            return tomllib.loads(f"k = {token.text}")["k"]
        except tomllib.TOMLDecodeError:
            return None
    return None


@dataclass
class Table:
    """A ``[name]`` or ``[[name]]`` header (``name`` dotted, ``array`` for the second) at ``line`` (0 for the
    statements before the first header), and ``keys``: each key statement's dotted key → the tokens of its value
    (strings and bare tokens at any depth, punctuation left out), in order of the statements."""

    name: str
    array: bool
    line: int
    keys: dict[str, list[Token]] = field(default_factory=dict)


def tables(text: str) -> list[Table]:
    """The tables of ``text`` in order, the root table (name ``""``, line 0) first.

    Keys inside inline tables are values of the key that holds them, not statements of their own; a header or a key
    written inside a string or a comment is neither.
    """
    found = [Table("", False, 0)]
    stream = tokens(text)
    i, n = 0, len(stream)
    while i < n:
        token = stream[i]
        if token.kind == "newline":
            i += 1
            continue
        if token.kind == "punct" and token.text == "[":
            array = i + 1 < n and stream[i + 1].text == "[" and stream[i + 1].column == token.column + 1
            i += 2 if array else 1
            parts: list[str] = []
            while i < n and stream[i].text != "]" and stream[i].kind != "newline":
                if stream[i].kind != "punct":
                    parts.append(_key_part(stream[i]) or "")
                i += 1
            found.append(Table(".".join(parts), array, token.line))
            while i < n and stream[i].kind != "newline":
                i += 1
            continue
        parts = []
        while i < n and stream[i].text != "=" and stream[i].kind != "newline":
            if stream[i].kind != "punct":
                parts.append(_key_part(stream[i]) or "")
            i += 1
        i += 1  # the "="
        value: list[Token] = []
        depth = 0
        while i < n and not (depth == 0 and stream[i].kind == "newline"):
            current = stream[i]
            if current.kind == "punct":
                depth += {"[": 1, "{": 1, "]": -1, "}": -1}.get(current.text, 0)
            elif current.kind != "newline":
                value.append(current)
            i += 1
        found[-1].keys.setdefault(".".join(parts), value)
    return found
