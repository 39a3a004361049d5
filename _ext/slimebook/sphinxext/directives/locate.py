"""Where in a document a directive's option is written: the line a warning about that option points at.

MyST and docutils give a directive one line, its opening fence (``directive.lineno``); the options follow it in
``directive.block_text`` (the fence line first). A warning about a wrong ``:lines:`` is most useful at the
``:lines:`` line itself, so the writer's editor jumps to the value to fix.
"""

from __future__ import annotations

import re

from sphinx.util.docutils import SphinxDirective

__all__ = ["content_line", "option_line", "options_named"]

_OPTION_NAME = re.compile(r":([\w-]+):")


def option_line(directive: SphinxDirective, key: str) -> int:
    """The document line of option ``:key:`` in ``directive``'s block; the directive's own line when the block
    does not hold it (an option given some other way, or a block Sphinx did not keep).

    Args:
        directive: a directive being run (``lineno`` and ``block_text`` are read).
        key: the option name without colons (``"lines"``).
    Returns:
        A 1-based line number in the document.
    """
    for offset, line in enumerate(directive.block_text.split("\n")):
        if line.strip().startswith(f":{key}:"):
            return directive.lineno + offset
    return directive.lineno


def content_line(directive: SphinxDirective, offset: int) -> int:
    """The document line of content line ``offset`` (0-based) of ``directive``: found in its block after the
    options (MyST's ``content_offset`` is not a document line); the directive's own line when not found.

    Args:
        directive: a directive being run (``content``, ``lineno`` and ``block_text`` are read).
        offset: an index into ``directive.content``.
    Returns:
        A 1-based line number in the document.
    """
    wanted = directive.content[offset].strip()
    before = sum(1 for c in directive.content[:offset] if c.strip() == wanted)
    seen = 0
    for index, line in enumerate(directive.block_text.split("\n")[1:], start=1):
        if line.strip() == wanted:
            if seen == before:
                return directive.lineno + index
            seen += 1
    return directive.lineno


def options_named(text: str | None) -> list[str]:
    """The option names in ``text`` written as in a chapter: ``":lines: :pyobject:"`` → ``["lines", "pyobject"]``."""
    return _OPTION_NAME.findall(text or "")
