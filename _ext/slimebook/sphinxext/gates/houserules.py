"""House rules checked by every build, as warnings of subtype ``house`` (``-W`` fails on them).

Two rules of the writers' page (``chapters/meta/building.md``), checked when a document is read:

* **A guide chapter opens with a context box.** Documents matching ``slimebook_context_box_docs`` (fnmatch
  patterns on docnames; a pattern starting with ``!`` exempts) must hold a ``context-box``. The warning is at the
  document's title.
* **A function of the source named in prose is cited with the citation role** (``{slime}``, named by
  ``slimebook_source``). In documents matching ``slimebook_lint_symbols``
  (patterns as above), inline code
  in prose (not inside a link or a cross-reference) that names a definition at the pin, qualified
  (``BaseHarness.run``) or by a distinctive last part (``launch_and_wait``: with ``_`` or a capital, not a dunder,
  not a standard-library name), while the document cites that name with no citation role, gets one warning per
  name and document, at its first mention, with the role to write. A name defined in a file the document already
  cites (an excerpt, a role) counts as cited. Which names are defined at the pin comes from
  :func:`slimebook.symbols.pin_symbols`.
"""

from __future__ import annotations

import asyncio
import builtins
import concurrent.futures
import contextlib
import fnmatch
import keyword
import multiprocessing
import queue
import re
import subprocess
import sys
import threading
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx

from ...store import SourceError
from ...symbols import PinSymbols, pin_symbols
from ..config import declare as declare_config
from ..context import get_store, source_names
from ..diagnostics import SlimebookWarning, warn
from ..environment.envrecords import citations

__all__ = ["needs_context_box", "setup", "symbol_mentions", "STDLIB_NAMES"]

_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
_DUNDER = re.compile(r"__\w+__\Z")


def _stdlib_names() -> frozenset[str]:
    names: set[str] = set(dir(builtins)) | set(keyword.kwlist) | set(sys.stdlib_module_names)
    for module in (asyncio, threading, queue, subprocess, multiprocessing, contextlib, concurrent.futures):
        names.update(dir(module))
    for cls in (asyncio.AbstractEventLoop, asyncio.Task, asyncio.Future, asyncio.Queue, asyncio.Semaphore,
                asyncio.Event, asyncio.Lock, asyncio.Condition, asyncio.TaskGroup, asyncio.StreamReader,
                asyncio.StreamWriter, asyncio.subprocess.Process, threading.Thread, threading.Event,
                concurrent.futures.Future, concurrent.futures.ThreadPoolExecutor, subprocess.Popen,
                contextlib.AsyncExitStack):
        names.update(dir(cls))
    return frozenset(names)


#: names a chapter may write in backticks without citing Slime: they name Python, not Slime
STDLIB_NAMES = _stdlib_names()


def needs_context_box(docname: str, patterns: list[str]) -> bool:
    """Whether a rule given by ``patterns`` applies to ``docname``: it matches a pattern and no later ``!pattern``
    exempts it (fnmatch on docnames, e.g. ``["chapters/guide/*", "!chapters/guide/index"]``)."""
    needed = False
    for pattern in patterns:
        if pattern.startswith("!"):
            if fnmatch.fnmatchcase(docname, pattern[1:]):
                needed = False
        elif fnmatch.fnmatchcase(docname, pattern):
            needed = True
    return needed


def _distinctive(name: str) -> bool:
    if "." in name:
        return name.split(".", 1)[0] not in sys.stdlib_module_names
    return (not _DUNDER.match(name) and name not in STDLIB_NAMES and len(name) >= 4
            and ("_" in name.strip("_") or any(c.isupper() for c in name)))


def _in_link(node: nodes.Node) -> bool:
    parent = node.parent
    while parent is not None:
        if isinstance(parent, (nodes.reference, addnodes.pending_xref, nodes.FixedTextElement, nodes.raw)):
            return True
        parent = parent.parent
    return False


def symbol_mentions(doctree: nodes.document, symbols: PinSymbols, cited: set[str], cited_paths: set[str] = frozenset()
                    ) -> list[tuple[nodes.literal, str, list[str]]]:
    """The first uncited mention of each Slime name in ``doctree``'s prose.

    Args:
        doctree: a document.
        symbols: the definitions at the pin.
        cited: qualified names this document cites with the citation role or directive (their last parts count too).
        cited_paths: files this document cites; a name defined in one of them counts as cited (the excerpt or the
            link is one click away).
    Returns:
        ``(literal node, name as written, qualified names it may mean)``, one per name, in document order.
    """
    cited_parts = cited | {name.rsplit(".", 1)[-1] for name in cited}
    seen: set[str] = set()
    found = []
    for literal in doctree.findall(nodes.literal):
        text = literal.astext().strip()
        name = text[:-2] if text.endswith("()") else text
        if name in seen or not _NAME.fullmatch(name) or _in_link(literal) or not _distinctive(name):
            continue
        meant = symbols.lookup(name)
        if not meant or name in cited_parts or any(q in cited for q in meant):
            continue
        if any(path in cited_paths for q in meant for path in symbols.qualified[q]):
            continue
        seen.add(name)
        found.append((literal, text, meant))
    return found


def _line(node: nodes.Node) -> int | None:
    while node is not None:
        if node.line:
            return node.line
        node = node.parent
    return None


def _source_line(source: list[str], needle: str, near: int | None) -> int | None:
    """The first line at or after ``near`` holding ``needle``: docutils gives a table cell's text, or a paragraph's
    later line, the line of an enclosing element only. ``near`` when the text is not found."""
    start = max((near or 1) - 1, 0)
    for index in range(start, len(source)):
        if needle in source[index]:
            return index + 1
    return near


def _check(app: Sphinx, doctree: nodes.document) -> None:
    """``doctree-read``: both rules for the document just read."""
    env = app.env
    docname = env.docname
    if needs_context_box(docname, list(app.config.slimebook_context_box_docs)):
        if not any("context-box" in node["classes"] for node in doctree.findall(nodes.admonition)):
            title = next(iter(doctree.findall(nodes.title)), None)
            warn(env, SlimebookWarning.HOUSE, "house rule: a guide chapter opens with a context box; put "
                 "```{context-box}``` with :main-line: (and :inputs:, :outputs:, :cleanup:, :returns-to:) under the "
                 "title", location=(docname, _line(title) if title is not None else 1))
    if not needs_context_box(docname, list(app.config.slimebook_lint_symbols)):
        return
    try:
        symbols = pin_symbols(get_store(env))
    except SourceError:  # pragma: no cover - the build stops earlier without the pin
        return
    records = citations(env).get(docname, [])
    cited = {record["symbol"] for record in records if record.get("symbol")}
    paths = {record["path"] for record in records}
    try:
        source = Path(env.doc2path(docname)).read_text(encoding="utf-8").splitlines()
    except OSError:  # pragma: no cover - the document was just read
        source = []
    role = source_names(app.config).role
    for literal, text, meant in symbol_mentions(doctree, symbols, cited, paths):
        qualname = meant[0]
        path = symbols.qualified[qualname][0]
        more = f" (also defined as {', '.join(meant[1:3])}{' …' if len(meant) > 3 else ''})" if len(meant) > 1 else ""
        warn(env, SlimebookWarning.HOUSE, "house rule: `%s` is a %s definition at the pin%s, named here without "
             "a citation; cite it once in this document: {%s}`%s <%s>`", text, get_store(env).lock.name, more, role,
             qualname, path,
             location=(docname, _source_line(source, f"`{text}`", _line(literal))))


def setup(app: Sphinx) -> None:
    """Register the two rules' options and the check."""
    declare_config(app, "house")  # slimebook_context_box_docs, slimebook_lint_symbols
    app.connect("doctree-read", _check, priority=900)  # after the roles and directives recorded their citations
