"""Line-preserving repairs of a doc block that does not parse, so that libcst can read it.

Pipeline position: the second of the variants :mod:`.docs` tries for a fenced block (as written → **repaired** →
wrapped in an ``async def``); it reads the block through the tolerant tokenizer of :mod:`.tokens`. The repairs:

* a block indented as a whole is dedented;
* a run of lines indented deeper than the statement before it (which does not open a block) is dedented;
* a ``def``/``class`` header without its colon gets ``:`` (and `` ...`` when no body follows), and a header with a
  colon but no body gets `` ...``.

They never add or remove lines and only append after the last token of a line or remove leading whitespace, so
every position maps back to the Markdown file (the shifts say how much was removed from each line).
"""

from __future__ import annotations

from .tokens import Token, logical_lines, tokenize

__all__ = ["repair"]

_HEADER_KEYWORDS = frozenset({"def", "class"})


def repair(code: str) -> tuple[str, list[int]]:
    """Line-preserving repairs of a doc block (see module docstring).

    Args:
        code: the block text.
    Returns:
        ``(text, shifts)``: the repaired text (same number of lines) and, per 0-based line, how many
        leading characters were removed from it (add to a column to map it back).
    """
    lines = code.split("\n")
    shifts = [0] * len(lines)
    logical = _dedent_whole(lines, shifts)
    logical = _dedent_runs(lines, shifts, logical)
    _complete_headers(lines, logical)
    return "\n".join(lines), shifts


def _dedent(lines: list[str], shifts: list[int], first: int, last: int, amount: int) -> None:
    """Remove up to ``amount`` leading blanks from lines ``first`` to ``last - 1`` (never more than a line has),
    adding each cut to ``shifts``."""
    for index in range(first, min(last, len(lines))):
        line = lines[index]
        cut = min(amount, len(line) - len(line.lstrip(" \t")))
        lines[index] = line[cut:]
        shifts[index] += cut


def _dedent_whole(lines: list[str], shifts: list[int]) -> list[list[Token]]:
    """Dedent a block indented as a whole by its first statement's indentation; return the logical lines after."""
    logical = logical_lines(tokenize("\n".join(lines)))
    if logical and logical[0][0].col > 0:
        _dedent(lines, shifts, 0, len(lines), logical[0][0].col)
        logical = logical_lines(tokenize("\n".join(lines)))
    return logical


def _dedent_runs(lines: list[str], shifts: list[int], logical: list[list[Token]]) -> list[list[Token]]:
    """Dedent each run of lines indented deeper than the statement before it, when that statement opens no block, to
    that statement's indentation (at most one run per line of the block); return the logical lines after."""
    index, budget = 1, len(lines)
    while index < len(logical):
        previous, current = logical[index - 1], logical[index]
        indent = current[0].col
        opens_block = previous[-1].text == ":" or _is_header(previous)
        if indent > previous[0].col and not opens_block and budget > 0:
            budget -= 1
            amount = indent - previous[0].col
            stop = index
            while stop < len(logical) and logical[stop][0].col >= indent:
                stop += 1
            last_line = logical[stop][0].line - 1 if stop < len(logical) else len(lines)
            _dedent(lines, shifts, current[0].line - 1, last_line, amount)
            logical = logical_lines(tokenize("\n".join(lines)))
            continue
        index += 1
    return logical


def _complete_headers(lines: list[str], logical: list[list[Token]]) -> None:
    """Give each ``def``/``class`` header its missing colon and, when no body follows it, a body of `` ...``."""
    for index, line in enumerate(logical):
        if not _is_header(line):
            continue
        following = logical[index + 1] if index + 1 < len(logical) else None
        has_body = following is not None and following[0].col > line[0].col
        last = line[-1]
        end_line, end_col = last.end
        if not _header_colon(line):
            insert = ":" if has_body else ": ..."
        elif last.text == ":" and not has_body:
            insert = " ..."
        else:
            continue
        text = lines[end_line - 1]
        lines[end_line - 1] = text[:end_col] + insert + text[end_col:]


def _header_colon(line: list[Token]) -> bool:
    """Whether the logical ``line`` holds a colon outside brackets (a header's own colon)."""
    depth = 0
    for token in line:
        if token.kind == "op":
            if token.text in "([{":
                depth += 1
            elif token.text in ")]}":
                depth -= 1
            elif token.text == ":" and depth == 0:
                return True
    return False


def _is_header(line: list[Token]) -> bool:
    """Whether the logical ``line`` starts a ``def``, ``async def`` or ``class``."""
    first = line[0].text
    return first in _HEADER_KEYWORDS or (first == "async" and len(line) > 1 and line[1].text == "def")
