"""Line ranges of Python definitions, by qualified name, computed with libcst positions.

Rule (issue 2, ``:pyobject:``): a definition's range runs from its first decorator line to the last
line of its body, *including* comments indented inside the body, *excluding* trailing blank lines
and anything that follows at the definition's own (outer) indentation. Qualified names join the
enclosing class and function names with dots: ``Outer.Inner.method``, ``f.inner``.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from .lines import split_lines

__all__ = ["Definition", "SymbolError", "definitions", "select_definition", "symbol_range"]


class SymbolError(ValueError):
    """The symbol is unknown, ambiguous, or the file does not parse; the message says which."""


@dataclass(frozen=True)
class Definition:
    """A ``def``/``async def``/``class`` at ``qualname`` spanning lines ``start``–``end`` (1-based, inclusive)."""

    qualname: str
    kind: str  # "class" | "function"
    start: int
    end: int


class _Collector(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, lines: list[str]) -> None:
        super().__init__()
        self.lines = lines
        self.stack: list[str] = []
        self.found: list[Definition] = []

    def _record(self, node: cst.FunctionDef | cst.ClassDef, kind: str) -> None:
        pos = self.get_metadata(PositionProvider, node)
        start = pos.start.line
        for deco in node.decorators:
            start = min(start, self.get_metadata(PositionProvider, deco).start.line)
        head = self.get_metadata(PositionProvider, node.name).start.line
        end = _trim_end(self.lines, head, _extend_end(self.lines, head, pos.end.line))
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


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _deeper(line: str, outer: str) -> bool:
    indent = _indent(line)
    return indent.startswith(outer) and len(indent) > len(outer)


def _extend_end(lines: list[str], head: int, end: int) -> int:
    """Take in comment lines indented deeper than the ``def`` line that follow the last statement.

    libcst leaves such comments in the body's ``footer``, outside the definition's position.
    """
    outer = _indent(lines[head - 1])
    last, n = end, end + 1
    while n <= len(lines):
        stripped = lines[n - 1].strip()
        if stripped and not (stripped.startswith("#") and _deeper(lines[n - 1], outer)):
            break
        if stripped:
            last = n
        n += 1
    return last


def _trim_end(lines: list[str], head: int, end: int) -> int:
    """Drop trailing blank lines and comments that are not indented deeper than the ``def`` line."""
    outer = _indent(lines[head - 1])
    while end > head:
        line = lines[end - 1]
        stripped = line.strip()
        if not stripped:
            end -= 1
            continue
        if stripped.startswith("#") and not _deeper(line, outer):
            end -= 1
            continue
        break
    return end


@functools.lru_cache(maxsize=128)
def _definitions(text: str) -> tuple[Definition, ...]:
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        raise SymbolError(f"does not parse: {exc.message} (line {exc.raw_line})") from exc
    lines = split_lines(text)
    collector = _Collector(lines)
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


def select_definition(defs: Sequence[Definition], qualname: str) -> tuple[int, int]:
    """The ``(start, end)`` of the one definition named ``qualname`` among ``defs``.

    Raises:
        SymbolError: none, or several (the message lists their lines).
    """
    matches = [d for d in defs if d.qualname == qualname]
    if not matches:
        raise SymbolError(f"no definition named {qualname!r}")
    if len(matches) > 1:
        where = ", ".join(f"L{d.start}–L{d.end}" for d in matches)
        raise SymbolError(f"{qualname!r} is ambiguous: {len(matches)} definitions at {where}")
    return matches[0].start, matches[0].end
