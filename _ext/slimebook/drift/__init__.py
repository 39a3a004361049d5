"""Drift between two commits: what every citation becomes when the pin moves.

A citation (:class:`Cited`) names a path and a selection — ``:lines:``, ``:pyobject:`` or the whole
file — that holds at an *old* commit. :class:`DriftChecker` reads it there and finds it at a *new*
commit, giving one :class:`Drift` per citation with a :class:`Status`:

``unchanged``  same text at the same lines.
``moved``      same text at other lines (``:lines:`` relocated by exact match of every cited block;
               ``:pyobject:`` by the same qualified name).
``changed``    the text differs: :meth:`Drift.diff` is a unified diff, old → new.
``gone``       the path (or the symbol) is missing at the new commit; a rename git detects is a hint.
``broken``     the citation does not even resolve at the old commit, so there is nothing to follow.

Citations come from *citation sources*: any callable yielding :class:`Cited`. :func:`book_citations`
reads the book's citation directives and roles (``slime-source`` / ``{slime}``, named by the book's source
name: :class:`slimebook.names.SourceNames`) in its files; a future source (the usage scanner's
occurrence ids) yields ``Cited(kind="occurrence", ident=..., file=None, ...)`` and everything below
works unchanged — only citations with a ``file`` are rewritten in place by :func:`apply_edits`.
:func:`note_citations` reads the candidate notes: the pin's lines they name move with a re-pin too.

Modules: :mod:`.model` (citations, drifts, statuses), :mod:`.relocate` (finding moved lines),
:mod:`.checker` (:class:`DriftChecker`), :mod:`.notes` (the candidate notes' lines), :mod:`.repin` (rewriting
chapters and notes); git calls
(revisions, renames) live in :mod:`slimebook.store`. The re-pin helpers turn moved drifts into text
edits of the chapter files (:func:`plan_edits`, :func:`apply_edits`); the lock is moved by
:func:`slimebook.lock.update_lock_file`. Nothing here knows about Sphinx.
"""

from __future__ import annotations

from ..store import RevisionError, resolve_commit
from .checker import DriftChecker
from .model import (
    NEEDS_WRITER,
    CitationSource,
    Cited,
    Drift,
    Runs,
    Status,
    book_citations,
    format_runs,
    needs_writer,
    summarize,
)
from .notes import NOTE_LINE, NOTE_PLACE, note_citations
from .repin import Edit, apply_edits, plan_edits

__all__ = [
    "NEEDS_WRITER",
    "NOTE_LINE",
    "NOTE_PLACE",
    "CitationSource",
    "Cited",
    "Drift",
    "DriftChecker",
    "Edit",
    "RevisionError",
    "Runs",
    "Status",
    "apply_edits",
    "book_citations",
    "format_runs",
    "needs_writer",
    "note_citations",
    "plan_edits",
    "resolve_commit",
    "summarize",
]
