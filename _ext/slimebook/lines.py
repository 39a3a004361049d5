"""The one line model of the book: how a file at the pin is cut into numbered lines, and how a line is shown.

Every reader that numbers lines goes through this module: the excerpt reader (``:lines:``), the symbol ranges of
``:pyobject:``, the snapshot pages, the scanner and the drift report. So line *n* means the same text everywhere.

Line ends (:func:`split_lines`)
    ``\\r\\n``, a lone ``\\r`` and ``\\n`` end a line; nothing else does. This is the rule of Python's tokenizer
    (``tokenize``, the ``NEWLINE``/``NL`` tokens), of libcst's positions and of Pygments (which rewrites ``\\r\\n``
    and ``\\r`` to ``\\n`` before lexing). A final line end does not start another (empty) line: ``"a\\n"`` is one
    line, ``"a\\n\\n"`` two (the second empty), ``""`` none.

    Not line ends: form feed (``\\f``, U+000C), vertical tab (``\\v``), U+001C–U+001E, NEL (U+0085), LINE SEPARATOR
    (U+2028) and PARAGRAPH SEPARATOR (U+2029). :meth:`str.splitlines` splits on all of them, Python's tokenizer on
    none (a form feed at the start of a line only resets its indentation count), so they stay inside their line as
    ordinary characters and are shown as they are. git and GitHub split on ``\\n`` only, so a file holding a lone
    ``\\r`` numbers differently on GitHub after that point; the book follows Python, which is what the scanner
    and the symbol ranges see.

Tabs (:func:`expand_tabs`)
    A shown line has its tab characters expanded to the next multiple of 8 columns (:data:`TAB_SIZE`; the
    tokenizer's rule for indentation and the terminal's default), counting columns in code points from the start of
    the line. Expansion happens once, when the excerpt reader and the snapshot renderer read a file, so the HTML
    page, the PDF, the snapshot page and the text the copy button copies are the same characters. Positions the
    scanner records (columns) count the raw characters, as libcst does; they are data, not display.
"""

from __future__ import annotations

import re

__all__ = ["LINE_BREAK", "TAB_SIZE", "expand_tabs", "line_starts", "split_lines", "display_lines"]

#: A line end: ``\r\n``, a lone ``\r`` or ``\n`` (Python's tokenizer, libcst and Pygments agree).
LINE_BREAK = re.compile(r"\r\n|\r|\n")

#: Columns between tab stops when a line is shown.
TAB_SIZE = 8


def split_lines(text: str) -> list[str]:
    """The lines of ``text`` without their line ends (see the module docstring for the rule).

    Args:
        text: decoded file text.
    Returns:
        ``lines`` where line *n* of the file is ``lines[n - 1]``; a final line end does not add an empty line.
    """
    lines = LINE_BREAK.split(text)
    if lines[-1] == "":
        lines.pop()
    return lines


def line_starts(text: str) -> list[int]:
    """Offsets at which each line of ``text`` starts (``[0, ...]``), by the same rule as :func:`split_lines`.

    A text ending with a line end gets one more offset (``len(text)``): the start of the (empty) rest, which
    positions at the very end of the file may point to.
    """
    return [0, *(m.end() for m in LINE_BREAK.finditer(text))]


def expand_tabs(line: str) -> str:
    """``line`` with each tab replaced by spaces up to the next multiple of :data:`TAB_SIZE` columns.

    Args:
        line: one line, without its line end.
    Returns:
        The line as the book shows it; unchanged when it holds no tab.
    """
    return line.expandtabs(TAB_SIZE) if "\t" in line else line


def display_lines(text: str) -> list[str]:
    """:func:`split_lines` then :func:`expand_tabs` on each line: what every rendering of a file shows."""
    return [expand_tabs(line) for line in split_lines(text)]
