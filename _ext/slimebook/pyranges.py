"""Line ranges of Python definitions, by qualified name, computed with libcst positions.

Rule (issue 2, ``:pyobject:``): a definition's range runs from its first decorator line to the last
line of its body, *including* comments indented inside the body, *excluding* trailing blank lines
and anything that follows at the definition's own (outer) indentation. What is a comment line and what is blank
is decided by Python's tokenizer (a line inside a multi-line string is code, whatever its first character), on the
lines of the book's line model (:mod:`slimebook.lines`). Qualified names join the
enclosing class and function names with dots: ``Outer.Inner.method``, ``f.inner``.
"""

from __future__ import annotations

import difflib
import functools
import tokenize
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .lines import split_lines

if TYPE_CHECKING:  # libcst is imported where a text is parsed: selecting among known definitions needs none of it
    import libcst as cst

__all__ = ["Definition", "SymbolError", "closest_names", "definitions", "select_definition", "symbol_range"]


class SymbolError(ValueError):
    """The symbol is unknown, ambiguous, or the file does not parse; the message says which."""


@dataclass(frozen=True)
class Definition:
    """A ``def``/``async def``/``class`` at ``qualname`` spanning lines ``start``–``end`` (1-based, inclusive)."""

    qualname: str
    kind: str  # "class" | "function"
    start: int
    end: int


@functools.cache
def _collector_type() -> type:
    """The libcst visitor class collecting definitions (made on first use, so importing this module costs no libcst)."""
    import libcst as cst
    from libcst.metadata import PositionProvider

    class _Collector(cst.CSTVisitor):
        METADATA_DEPENDENCIES = (PositionProvider,)

        def __init__(self, lines: list[str]) -> None:
            super().__init__()
            self.lines = lines
            self.kinds = _line_kinds(lines)
            self.stack: list[str] = []
            self.found: list[Definition] = []

        def _record(self, node: cst.FunctionDef | cst.ClassDef, kind: str) -> None:
            pos = self.get_metadata(PositionProvider, node)
            start = pos.start.line
            for deco in node.decorators:
                start = min(start, self.get_metadata(PositionProvider, deco).start.line)
            head = self.get_metadata(PositionProvider, node.name).start.line
            end = _trim_end(self.lines, self.kinds, head, _extend_end(self.lines, self.kinds, head, pos.end.line))
            qualname = ".".join([*self.stack, node.name.value])
            self.found.append(Definition(qualname, kind, start, end))
            self.stack.append(node.name.value)

        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            self._record(node, "function")

        def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
            self.stack.pop()

        def visit_ClassDef(self, node: cst.ClassDef) -> None:
            self._record(node, "class")

        def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
            self.stack.pop()

    return _Collector


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _deeper(line: str, outer: str) -> bool:
    indent = _indent(line)
    return indent.startswith(outer) and len(indent) > len(outer)


@dataclass(frozen=True)
class _LineKinds:
    """What the tokenizer says each line holds: ``comments`` (a comment and nothing else), ``code`` (any other
    token, including every line a multi-line string or f-string spans). A line in neither is blank."""

    comments: frozenset[int]
    code: frozenset[int]


_LAYOUT = frozenset({tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER,
                     tokenize.COMMENT})


def _line_kinds(lines: list[str]) -> _LineKinds:
    """Tokenize ``lines`` (the book's line model, so the tokenizer's line *n* is ours) and classify each line.

    If Python's tokenizer cannot read the text (libcst accepts grammar newer than the running Python), every
    non-blank line counts as code: no comment is then taken in or trimmed, which never cuts a definition short.
    """
    comments: set[int] = set()
    code: set[int] = set()
    feed = iter([line + "\n" for line in lines])
    try:
        for tok in tokenize.generate_tokens(lambda: next(feed, "")):
            if tok.type == tokenize.COMMENT:
                comments.add(tok.start[0])
            elif tok.type not in _LAYOUT:
                code.update(range(tok.start[0], tok.end[0] + 1))
    except (tokenize.TokenError, SyntaxError):
        return _LineKinds(frozenset(), frozenset(n for n, line in enumerate(lines, 1) if line.strip()))
    return _LineKinds(frozenset(comments - code), frozenset(code))


def _extend_end(lines: list[str], kinds: _LineKinds, head: int, end: int) -> int:
    """Take in comment lines indented deeper than the ``def`` line that follow the last statement.

    libcst leaves such comments in the body's ``footer``, outside the definition's position. What is a comment
    line is the tokenizer's call (a ``#`` line inside a string is code).
    """
    outer = _indent(lines[head - 1])
    last, n = end, end + 1
    while n <= len(lines):
        if n in kinds.code or (n in kinds.comments and not _deeper(lines[n - 1], outer)):
            break
        if n in kinds.comments:
            last = n
        n += 1
    return last


def _trim_end(lines: list[str], kinds: _LineKinds, head: int, end: int) -> int:
    """Drop trailing blank lines and comment lines that are not indented deeper than the ``def`` line."""
    outer = _indent(lines[head - 1])
    while end > head and end not in kinds.code and not (end in kinds.comments and _deeper(lines[end - 1], outer)):
        end -= 1
    return end


@functools.lru_cache(maxsize=128)
def _definitions(text: str) -> tuple[Definition, ...]:
    import libcst as cst
    from libcst.metadata import MetadataWrapper

    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        raise SymbolError(f"does not parse: {exc.message} (line {exc.raw_line})") from exc
    lines = split_lines(text)
    collector = _collector_type()(lines)
    MetadataWrapper(module, unsafe_skip_copy=True).visit(collector)
    return tuple(collector.found)


def definitions(text: str) -> list[Definition]:
    """Every class and function definition in ``text``, in source order.

    Results are memoised per text (an LRU of 128 files): a chapter citing ten symbols of one file
    parses it once.

    Args:
        text: Python source (any grammar libcst parses, 3.0–3.15); lines end as
            :func:`slimebook.lines.split_lines` says.
    Raises:
        SymbolError: the text does not parse.
    """
    return list(_definitions(text))


def symbol_range(text: str, qualname: str) -> tuple[int, int]:
    """The ``(start, end)`` lines of the one definition named ``qualname`` in ``text``.

    Raises:
        SymbolError: no such definition, or more than one (the message lists their lines), or the
            text does not parse.
    """
    return select_definition(definitions(text), qualname)


def closest_names(defs: Sequence[Definition], qualname: str, limit: int = 3) -> list[str]:
    """The qualified names among ``defs`` a writer most likely meant by ``qualname``, best first, at most ``limit``.

    First every definition whose qualified name ends with ``.qualname`` (an unqualified ``__aexit__`` for
    ``E2BSandbox.__aexit__``), then :func:`difflib.get_close_matches` over the qualified names and over their last
    parts (a typo such as ``__aexitt__``). Empty when nothing is close.
    """
    names = list(dict.fromkeys(d.qualname for d in defs))
    found = [name for name in names if name.endswith("." + qualname)]
    found += difflib.get_close_matches(qualname, names, n=limit, cutoff=0.6)
    last = qualname.rsplit(".", 1)[-1]
    tails = difflib.get_close_matches(last, list(dict.fromkeys(n.rsplit(".", 1)[-1] for n in names)), n=limit,
                                      cutoff=0.75)
    found += [name for tail in tails for name in names if name.rsplit(".", 1)[-1] == tail]
    return list(dict.fromkeys(found))[:limit]


def select_definition(defs: Sequence[Definition], qualname: str) -> tuple[int, int]:
    """The ``(start, end)`` of the one definition named ``qualname`` among ``defs``.

    Raises:
        SymbolError: none (the message names the closest qualified names, :func:`closest_names`), or several
            (the message lists their lines).
    """
    matches = [d for d in defs if d.qualname == qualname]
    if not matches:
        close = closest_names(defs, qualname)
        hint = f"; closest: {', '.join(close)}" if close else ""
        raise SymbolError(f"no definition named {qualname!r}{hint}")
    if len(matches) > 1:
        where = ", ".join(f"L{d.start}–L{d.end}" for d in matches)
        raise SymbolError(f"{qualname!r} is ambiguous: {len(matches)} definitions at {where}")
    return matches[0].start, matches[0].end
