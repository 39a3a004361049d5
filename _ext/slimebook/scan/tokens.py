"""A small tolerant tokenizer for Python-like text that may not parse, and its grouping into logical lines.

Pipeline position: in the scanner's doc-block path (:mod:`.docs`). Doc blocks are often broken Python, which neither
libcst nor Python's :mod:`tokenize` accept; this tokenizer never fails. The repairs (:mod:`.repair`), the split of a
block into top-level chunks (:mod:`.docs`) and the token fallback (:mod:`.fallback`) read its logical lines;
:func:`.visitor.nesting_depth` shares its string pattern. Pure regular expressions: no libcst.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..lines import LINE_BREAK

__all__ = ["STRING_PATTERN", "Token", "logical_lines", "tokenize"]

#: A Python string literal (any prefix, single or triple quoted, unterminated up to the line or
#: file end); shared with :func:`slimebook.scan.visitor.nesting_depth`.
STRING_PATTERN = (
    r"""(?:[rRbBuUfFtT]{1,2})?(?:'''(?:\\.|[^\\])*?(?:'''|\Z)|\"\"\"(?:\\.|[^\\])*?(?:\"\"\"|\Z)"""
    r"""|'(?:\\.|[^\\'\r\n])*(?:'|(?=[\r\n])|\Z)|"(?:\\.|[^\\"\r\n])*(?:"|(?=[\r\n])|\Z))"""
)

_TOKEN = re.compile(
    r"(?P<nl>\r\n|\r|\n)"
    r"|(?P<ws>[ \t\f]+)"
    r"|(?P<cont>\\(?:\r\n|\r|\n))"
    r"|(?P<comment>#[^\r\n]*)"
    rf"|(?P<string>{STRING_PATTERN})"
    r"|(?P<name>[^\W\d]\w*)"
    r"|(?P<number>\d[\w.]*)"
    r"|(?P<op>\.\.\.|->|:=|\*\*=?|//=?|<<=?|>>=?|[-+*/%@&|^<>!=]=|[-+*/%@&|^~<>()\[\]{},:;.=!])"
    r"|(?P<other>.)",
    re.DOTALL,
)


@dataclass(frozen=True, slots=True)
class Token:
    """A token: ``kind`` (a group name of the tokenizer), ``text``, 1-based ``line``, 0-based ``col``."""

    kind: str
    text: str
    line: int
    col: int

    @property
    def end(self) -> tuple[int, int]:
        """(line, col) just after the token."""
        parts = LINE_BREAK.split(self.text)
        if len(parts) == 1:
            return self.line, self.col + len(self.text)
        return self.line + len(parts) - 1, len(parts[-1])


def tokenize(text: str) -> list[Token]:
    """Tokens of a Python-like text; never fails (unknown characters are ``other`` tokens)."""
    tokens = []
    line, line_start = 1, 0
    for match in _TOKEN.finditer(text):
        kind = match.lastgroup or "other"
        value = match.group()
        tokens.append(Token(kind, value, line, match.start() - line_start))
        if kind in ("nl", "cont", "string", "comment") and ("\n" in value or "\r" in value):
            breaks = list(LINE_BREAK.finditer(value))
            line += len(breaks)
            line_start = match.start() + breaks[-1].end()
    return tokens


#: Keywords that cannot begin a continuation line inside brackets: a line starting with one
#: starts a new logical line even when a bracket was left open (broken code).
_STATEMENT_ONLY = frozenset({
    "def", "class", "import", "return", "raise", "try", "except", "finally", "while", "with", "elif",
    "del", "pass", "global", "nonlocal", "assert", "break", "continue",
})


def logical_lines(tokens: list[Token]) -> list[list[Token]]:
    """Significant tokens grouped by logical line: newlines inside brackets do not end one, unless
    the next line starts with a statement-only keyword (an unclosed bracket in broken code)."""
    significant = [t for t in tokens if t.kind not in ("ws", "cont", "comment")]
    out: list[list[Token]] = []
    current: list[Token] = []
    depth = 0
    at_line_start = True
    for index, token in enumerate(significant):
        if token.kind == "nl":
            if depth == 0 and current:
                out.append(current)
                current = []
            at_line_start = True
            continue
        if at_line_start and depth > 0 and current:
            following = significant[index + 1].text if index + 1 < len(significant) else ""
            if token.text in _STATEMENT_ONLY or (token.text == "async" and following in ("def", "with")):
                out.append(current)
                current, depth = [], 0
        at_line_start = False
        if token.kind == "op":
            if token.text in "([{":
                depth += 1
            elif token.text in ")]}":
                depth = max(0, depth - 1)
        current.append(token)
    if current:
        out.append(current)
    return out
