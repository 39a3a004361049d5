"""The per-file scanner: one walk over a libcst module, then resolution, then positions.

Pipeline position: ``store`` → **scan** (:mod:`.runner` calls :func:`scan_code` per ``.py`` file, :mod:`.docs` calls
:func:`scan_module` per fenced block) → records. Its three steps, one module each:

1. the walk (:mod:`.walker`) builds scopes and bindings and collects imports, references, calls and async
   syntax, deciding nothing but import records;
2. resolution (:mod:`.resolve`) runs once the whole file is known (bindings are flow-insensitive) and turns
   references and calls into records;
3. positions are computed in one code-generation pass for the nodes that made records
   (:mod:`slimebook.scan.positions`).

Each expression gives at most one API record: an attribute chain is taken whole (``asyncio.subprocess.PIPE`` is one
``api_reference``), and a call's callee is an ``api_call``, never also a reference. String annotations
(``"asyncio.Queue"``) serve as receiver evidence but make no ``api_reference`` record: they are not expressions of
the file. This module also decodes a file's bytes (PEP 263) and refuses what the native parser cannot survive
(too many nested brackets, too deep a recursion).
"""

from __future__ import annotations

import io
import re
import sys
import tokenize
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import libcst as cst

from ..lines import split_lines
from .imports import Scope
from .positions import node_spans
from .records import RawRecord
from .resolve import resolve
from .tokens import STRING_PATTERN
from .walker import Walker

__all__ = [
    "MAX_NESTING", "STRING_PATTERN", "FileScan", "RawRecord", "decode_source", "nesting_depth", "scan_code",
    "scan_module",
]


@dataclass
class FileScan:
    """The path-independent result of scanning one file (what the cache stores).

    Attributes:
        records: raw records (:data:`RawRecord`) in position order.
        status: ``ok`` | ``repaired`` | ``tokens`` | ``error`` (see :class:`~slimebook.scan.records.ScannedFile`).
        error: ``(message, line or None)`` when the file did not parse.
        blocks: number of fenced Python blocks (docs only).
    """

    records: list[RawRecord] = field(default_factory=list)
    status: str = "ok"
    error: tuple[str, int | None] | None = None
    blocks: int | None = None


def scan_module(module: cst.Module, text: str) -> tuple[list[RawRecord], Scope]:
    """Scan a parsed module.

    Args:
        module: ``libcst.parse_module(text)``.
        text: the exact source text of ``module``.
    Returns:
        ``(records, module_scope)``: raw records in position order, and the module scope (its
        import bindings serve the token fallback of :mod:`slimebook.scan.fallback`, through :mod:`slimebook.scan.docs`).
    """
    walker = Walker()
    walker.walk(module)
    entries = resolve(walker)
    if not entries:
        return [], walker.module_scope
    syntactic = [e.start for e in entries if not e.inclusive_start]
    syntactic += [e.end for e in entries if not e.inclusive_end and (e.end is not e.start or e.inclusive_start)]
    inclusive = [e.start for e in entries if e.inclusive_start] + [e.end for e in entries if e.inclusive_end]
    spans = node_spans(module, text, syntactic, inclusive)
    lines = split_lines(text)
    out: list[RawRecord] = []
    for e in entries:
        start, end = spans.get(id(e.start)), spans.get(id(e.end))
        if start is None or end is None:  # pragma: no cover - every asked node is generated
            continue
        line, col = start[0], start[1]
        out.append(RawRecord(line, col, end[2], end[3], e.scope, e.kind, e.name, e.category, e.provenance,
                             lines[line - 1] if line <= len(lines) else ""))
    out.sort(key=lambda r: (r.line, r.col, r.end_line, r.end_col, r.kind, r.name))
    return out, walker.module_scope


#: CPython's tokenizer refuses more than 200 nested brackets (``MAXLEVEL``); libcst's native parser
#: overflows its stack (killing the process) somewhere past a thousand, so deeper files are reported
#: as errors before parsing.
MAX_NESTING = 200
_NESTING = re.compile(rf"{STRING_PATTERN}|#[^\r\n]*|[()\[\]{{}}]", re.DOTALL)


def nesting_depth(text: str) -> int:
    """The deepest bracket nesting of ``text`` outside strings and comments; any value up to
    :data:`MAX_NESTING` may stand for "not deeper than that" (files with few brackets are not scanned)."""
    openers = text.count("(") + text.count("[") + text.count("{")
    if openers <= MAX_NESTING:
        return openers
    depth = deepest = 0
    for match in _NESTING.finditer(text):
        token = match.group()
        if token in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif token in ")]}":
            depth -= 1
    return deepest


def decode_source(data: bytes) -> str:
    """Decode Python source bytes per PEP 263 (BOM or coding cookie, default UTF-8), BOM dropped.

    Raises:
        SyntaxError: an unknown encoding in the cookie, or a BOM contradicting it.
        UnicodeDecodeError: the bytes are not valid in the declared encoding.
    """
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return data.decode(encoding)


def scan_code(data: bytes | str) -> FileScan:
    """Scan one Python file's content; never raises for bad input.

    Args:
        data: the raw bytes of the file (decoded per PEP 263) or its text.
    Returns:
        A :class:`FileScan`; a file that does not decode or parse has ``status="error"`` and
        ``error=(message, line)``.
    """
    try:
        text = decode_source(data) if isinstance(data, bytes) else data.removeprefix("\ufeff")
    except (SyntaxError, UnicodeDecodeError, LookupError) as exc:
        return FileScan(status="error", error=(f"cannot decode: {exc}", None))
    if nesting_depth(text) > MAX_NESTING:
        return FileScan(status="error", error=(f"too many nested brackets (more than {MAX_NESTING})", None))
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        message = " ".join(exc.message.split()) or "syntax error"
        return FileScan(status="error", error=(f"does not parse: {message}", exc.raw_line))
    except RecursionError:
        return FileScan(status="error", error=("too deeply nested for the parser", None))
    try:
        with deep_recursion():
            records, _ = scan_module(module, text)
    except RecursionError:
        return FileScan(status="error", error=("too deeply nested to scan", None))
    return FileScan(records=records)


#: Python's default recursion limit (1000) is too low for long ``elif`` chains or implicitly
#: concatenated strings (each a nesting level of the tree, walked and regenerated recursively).
RECURSION_LIMIT = 10_000


@contextmanager
def deep_recursion() -> Iterator[None]:
    """Raise the interpreter's recursion limit to :data:`RECURSION_LIMIT` (never lower it) for the
    duration of the block, then restore it."""
    previous = sys.getrecursionlimit()
    if previous < RECURSION_LIMIT:
        sys.setrecursionlimit(RECURSION_LIMIT)
    try:
        yield
    finally:
        if previous < RECURSION_LIMIT:
            sys.setrecursionlimit(previous)
