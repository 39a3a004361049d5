"""Fenced Python code blocks in Markdown, scanned with their positions in the Markdown file.

Pipeline position: ``store`` → **scan**: :mod:`.runner` calls :func:`scan_markdown` for every Markdown file at the
pin; each block goes through :func:`.visitor.scan_module`, and the records come back in Markdown coordinates.

Blocks: the fences the CommonMark parser MyST uses (markdown-it) finds, with their line maps, whose info
string's first word is ``python``, ``py``, ``python3`` or ``py3`` (a backtick fence's info may not hold a
backtick; an unclosed fence runs to the end of the document). Each content line is the parser's, which has the
fence's indentation (and a list item's or a block quote's prefix) removed; ``removed`` counts the characters taken
from the start of the Markdown line, so every position maps back.

Doc blocks are often not valid Python. Each block is tried, in order, until one parses:

1. as written (libcst's grammar already accepts a bare ``await``, ``async with``, ``async for``,
   ``return`` or ``yield`` at top level);
2. repaired (:mod:`.repair`: headers completed, over-indented runs and whole blocks dedented);
3. wrapped in an ``async def`` (as written, then repaired), for fragments only valid in a body.

Repairs never add or remove lines and only append after the last token of a line or remove leading
whitespace, so every position maps back to the Markdown file; records inside the wrapper's own
``async def`` line are dropped. If no variant parses, the block is split into top-level chunks (by the tolerant
tokenizer of :mod:`.tokens`); the chunks that parse (by the same steps) are scanned together, and each chunk that
does not is scanned by tokens (:func:`token_records` of :mod:`.fallback`: async keywords, imports, dotted names
resolved through the block's imports, ``aiter``/``anext`` calls; provenance ``token_fallback``; scopes from
``def``/``class`` indentation).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import libcst as cst
from markdown_it import MarkdownIt

from ..lines import LINE_BREAK
from .fallback import token_records
from .imports import import_target
from .records import RawRecord
from .repair import repair
from .tokens import Token, logical_lines, tokenize
from .visitor import FileScan, deep_recursion, scan_module

__all__ = [
    "Block", "Token", "fenced_python_blocks", "repair", "scan_block", "scan_markdown", "token_records", "tokenize",
]

_PYTHON_INFO = frozenset({"python", "py", "python3", "py3"})
_WRAPPER = "__slimebook_doc_block__"
_WRAP_HEADER = f"async def {_WRAPPER}():"
_WRAP_INDENT = "    "
_CONTINUATION_KEYWORDS = frozenset({"else", "elif", "except", "finally"})


@dataclass(frozen=True)
class Block:
    """One fenced Python block.

    Attributes:
        first_line: the 1-based Markdown line of the block's first content line.
        lines: the content lines, fence indentation removed.
        removed: per content line, how many leading characters were removed.
    """

    first_line: int
    lines: tuple[str, ...]
    removed: tuple[int, ...]

    @property
    def code(self) -> str:
        """The block's source text, newline-terminated."""
        return "".join(line + "\n" for line in self.lines)


@functools.cache
def _markdown() -> MarkdownIt:
    return MarkdownIt("commonmark")


def fenced_python_blocks(text: str) -> list[Block]:
    """The fenced Python blocks of a Markdown text, in order (rules in the module docstring)."""
    lines = LINE_BREAK.split(text)
    if lines[-1] == "":
        lines.pop()  # the empty "line" after a final line break
    blocks: list[Block] = []
    for token in _markdown().parse("\n".join(lines)):
        words = token.info.split()
        if token.type != "fence" or token.map is None or not words or words[0].lower() not in _PYTHON_INFO:
            continue
        opening = token.map[0]
        indent = len(lines[opening]) - len(lines[opening].lstrip(" \t"))
        body, removed = [], []
        content = token.content.removesuffix("\n").split("\n") if token.content else []
        for raw, line in zip(lines[opening + 1 : opening + 1 + len(content)], content, strict=True):
            if not raw.endswith(line):  # a tab the parser expanded: cut the fence's indentation from the raw line
                strip = len(raw) - len(raw.lstrip(" \t"))
                line = raw[min(indent, strip):]
            body.append(line)
            removed.append(len(raw) - len(line))
        blocks.append(Block(opening + 2, tuple(body), tuple(removed)))
    return blocks



def _wrap(code: str) -> str:
    return _WRAP_HEADER + "\n" + "".join(_WRAP_INDENT + line + "\n" for line in code.split("\n"))


def _unwrap_scope(scope: str) -> str:
    if scope == _WRAPPER:
        return "<module>"
    return scope.removeprefix(_WRAPPER + ".")


def _parse_variants(code: str) -> tuple[cst.Module, str, bool, list[int], str] | None:
    """The first variant of ``code`` that parses: (module, its text, wrapped, shifts, status)."""
    repaired: tuple[str, list[int]] | None = None
    for step in range(4):
        wrapped = step >= 2
        if step % 2 == 0:
            text, shifts, status = code, [], "ok" if step == 0 else "repaired"
        else:
            if repaired is None:
                repaired = repair(code)
                if repaired[0] == code and not any(repaired[1]):
                    continue
            text, shifts, status = repaired[0], repaired[1], "repaired"
        source = _wrap(text) if wrapped else text
        try:
            return cst.parse_module(source), source, wrapped, shifts, status
        except (cst.ParserSyntaxError, RecursionError):
            continue
    return None


def _map_back(records: list[RawRecord], wrapped: bool, shifts: list[int]) -> list[RawRecord]:
    out = []
    for rec in records:
        line, col, end_line, end_col, scope = rec.line, rec.col, rec.end_line, rec.end_col, rec.scope
        if wrapped:
            if line == 1:
                continue  # the wrapper's own header
            line, end_line = line - 1, end_line - 1
            col, end_col = col - len(_WRAP_INDENT), end_col - len(_WRAP_INDENT)
            scope = _unwrap_scope(scope)
        if shifts:
            col += shifts[line - 1] if line - 1 < len(shifts) else 0
            end_col += shifts[end_line - 1] if end_line - 1 < len(shifts) else 0
        out.append(rec._replace(line=line, col=max(col, 0), end_line=end_line, end_col=max(end_col, 0), scope=scope))
    return out


def _chunks(code: str) -> list[tuple[int, int]]:
    """0-based [start, end) line ranges of the top-level statements of ``code``."""
    logical = logical_lines(tokenize(code))
    n_lines = len(code.split("\n"))
    starts: list[int] = []
    previous_decorator = False
    for line in logical:
        if line[0].col != 0:
            continue
        if not starts or not (previous_decorator or line[0].text in _CONTINUATION_KEYWORDS):
            starts.append(line[0].line - 1)
        previous_decorator = line[0].text == "@"
    if not starts:
        return [(0, n_lines)]
    starts[0] = 0
    return [(start, starts[i + 1] if i + 1 < len(starts) else n_lines) for i, start in enumerate(starts)]


def scan_block(code: str) -> tuple[list[RawRecord], str]:
    """Scan one block's code.

    Returns:
        ``(records, status)``: raw records in block coordinates (``code`` fields are the block's
        lines) and ``ok`` | ``repaired`` | ``tokens``.
    """
    try:
        with deep_recursion():
            return _scan_block(code)
    except RecursionError:
        return _fill_code(token_records(code, {}), code), "tokens"


def _scan_block(code: str) -> tuple[list[RawRecord], str]:
    parsed = _parse_variants(code)
    if parsed is not None:
        module, text, wrapped, shifts, status = parsed
        records, _ = scan_module(module, text)
        return _fill_code(_map_back(records, wrapped, shifts), code), status
    lines = code.split("\n")
    good = list(lines)
    chunk_shifts = [0] * len(lines)
    failed: list[tuple[int, int]] = []
    wrap = False
    for start, end in _chunks(code):
        piece = _parse_variants("\n".join(lines[start:end]))
        if piece is None:
            failed.append((start, end))
            good[start:end] = [""] * (end - start)
            continue
        _, text, wrapped, shifts, _ = piece
        wrap = wrap or wrapped
        good[start:end] = (_unwrap_text(text) if wrapped else text).split("\n")[: end - start]
        for offset, shift in enumerate(shifts[: end - start]):
            chunk_shifts[start + offset] = shift
    records: list[RawRecord] = []
    imports: dict[str, str] = {}
    combined = "\n".join(good)
    for wrapped in (wrap, not wrap):
        source = _wrap(combined) if wrapped else combined
        try:
            module = cst.parse_module(source)
        except (cst.ParserSyntaxError, RecursionError):
            continue
        found, scope = scan_module(module, source)
        records = _map_back(found, wrapped, chunk_shifts)
        imports = {name: target for name in scope.bindings if (target := import_target(scope, name))}
        break
    else:
        failed = [(0, len(lines))]
        records = []
    for start, end in failed:
        records += token_records("\n".join(lines[start:end]), imports, line_offset=start)
    records.sort(key=lambda r: (r.line, r.col, r.end_line, r.end_col, r.kind, r.name))
    return _fill_code(records, code), "tokens" if failed else "repaired"


def _unwrap_text(text: str) -> str:
    body = text.split("\n")[1:]
    return "\n".join(line[len(_WRAP_INDENT):] for line in body)


def _fill_code(records: list[RawRecord], code: str) -> list[RawRecord]:
    """Set each record's ``code`` and clamp ends that fell into text added by a repair."""
    lines = code.split("\n")
    out = []
    for r in records:
        end_line = min(r.end_line, len(lines))
        end_col = min(r.end_col, len(lines[end_line - 1])) if end_line >= 1 else r.end_col
        out.append(r._replace(end_line=end_line, end_col=end_col,
                              code=lines[r.line - 1] if r.line - 1 < len(lines) else ""))
    return out



def scan_markdown(data: bytes | str) -> FileScan:
    """Scan every fenced Python block of a Markdown file; positions are in the Markdown file.

    Args:
        data: the file's bytes (UTF-8, BOM allowed; undecodable bytes are replaced) or text.
    Returns:
        A :class:`~slimebook.scan.visitor.FileScan` whose ``status`` is the worst block status
        (``ok`` < ``repaired`` < ``tokens``) and ``blocks`` the number of Python blocks.
    """
    text = data.decode("utf-8-sig", "replace") if isinstance(data, bytes) else data.removeprefix("\ufeff")
    md_lines = LINE_BREAK.split(text)
    order = {"ok": 0, "repaired": 1, "tokens": 2}
    status = "ok"
    records: list[RawRecord] = []
    blocks = fenced_python_blocks(text)
    for block in blocks:
        found, block_status = scan_block(block.code)
        if order[block_status] > order[status]:
            status = block_status
        for rec in found:
            line, end_line = rec.line, rec.end_line
            col = rec.col + block.removed[line - 1] if line - 1 < len(block.removed) else rec.col
            end_col = rec.end_col + block.removed[end_line - 1] if end_line - 1 < len(block.removed) else rec.end_col
            md_line = block.first_line + line - 1
            records.append(rec._replace(line=md_line, col=col, end_line=block.first_line + end_line - 1,
                                        end_col=end_col,
                                        code=md_lines[md_line - 1] if md_line - 1 < len(md_lines) else ""))
    return FileScan(records=records, status=status, blocks=len(blocks))
