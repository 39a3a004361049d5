"""Snapshot pages: every scanned or cited file rendered whole at the pin, one anchor per line.

This module is Sphinx-free: it turns a file at the pin into an HTML fragment whose line *n* carries
``id="Ln"`` (GitHub's anchor form, so ``#L81`` works on both sides) and whose line number links to
itself. Fragments are cached under ``cache_root()/snapshots`` keyed by (blob id, Pygments version,
renderer version) and written atomically, so a warm build does not highlight anything again.
"""

from __future__ import annotations

import io
import re
import tokenize

import pygments
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import TextLexer, get_lexer_for_filename
from pygments.util import ClassNotFound

from .atomicio import atomic_write
from .lines import display_lines
from .store import SourceContentError, Store, cache_root

__all__ = ["render_snapshot", "snapshot_pagename"]

RENDERER_VERSION = "4"
_LINE_ID = re.compile(r'id="L-(\d+)"')
_LINE_HREF = re.compile(r'href="#L?-(\d+)"')


def snapshot_pagename(path: str) -> str:
    """The HTML page name of the snapshot of ``path``: ``_snapshot/<path>`` (``.html`` is added by Sphinx)."""
    return f"_snapshot/{path}"


def _lexer(path: str):
    try:
        return get_lexer_for_filename(path, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return TextLexer(stripnl=False, ensurenl=False)


def _decode(path: str, data: bytes) -> str:
    """Text of a file for display, one ``\\n`` per line of the book's line model with tabs expanded
    (:func:`slimebook.lines.display_lines`): PEP 263 coding cookie for ``.py`` files, else UTF-8; undecodable
    bytes become U+FFFD (a snapshot shows the file, it does not verify it: excerpts do that).

    Raises:
        SourceContentError: the file holds a NUL byte (binary).
    """
    if b"\0" in data:
        raise SourceContentError(f"{path!r} is a binary file")
    encoding = "utf-8-sig"
    if path.endswith(".py"):
        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        except SyntaxError:
            encoding = "utf-8-sig"
    try:
        text = data.decode(encoding, "replace")
    except LookupError:
        text = data.decode("utf-8", "replace")
    return "".join(line + "\n" for line in display_lines(text))


def render_snapshot(store: Store, path: str) -> str:
    """The highlighted HTML fragment of ``path`` at the pin.

    Returns:
        ``<div class="highlight"><pre>…</pre></div>`` where each line is wrapped in
        ``<span id="L{n}">`` and starts with ``<a href="#L{n}"><span class="linenos">n</span></a>``.
    Raises:
        SourcePathError: the path is invalid at the pin.
        SourceContentError: the file is binary.
    """
    real = store.resolve(path)
    blob = store.blob_id(real)
    entry = cache_root() / "snapshots" / f"py{pygments.__version__}-r{RENDERER_VERSION}" / f"{blob}.html"
    if entry.exists():
        return entry.read_text(encoding="utf-8")
    text = _decode(real, store.read_bytes(real))
    formatter = HtmlFormatter(linenos="inline", anchorlinenos=True, lineanchors="", linespans="L", wrapcode=True)
    html = highlight(text, _lexer(real), formatter)
    html = _LINE_HREF.sub(r'href="#L\1"', _LINE_ID.sub(r'id="L\1"', html))
    atomic_write(entry, html)
    return html
