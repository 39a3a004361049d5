"""The candidates gate: every instance candidate is confirmed by a lesson that reads it, or left with a reason.

The notes file (``slimebook_candidate_notes``, default ``sources/candidate-notes.toml``; format in
:func:`slimebook.candidates.parse_notes`) is matched against the scan's ``instance_candidate`` records and
the citations the lessons recorded (:mod:`slimebook.sphinxext.directives.source`) by
:func:`slimebook.candidates.settle`. After all
documents are read (``env-check-consistency``) the gate warns, so ``-W`` fails:

* at the entry's line, for a confirmation that does not hold (no such candidate, an API the category table
  does not know, a lesson that is not a document or does not cite the line) and for a left rule that
  covers nothing;
* at line 1 of the file, once per candidate that is neither confirmed nor covered by a left rule, and once per
  candidate on a line a lesson cites, for a method that lesson teaches (``lesson-teaches``), unless it is
  confirmed or a left rule lists its place (a method-name pattern is not enough for a line the book reads);
* at the file, for a notes file that is not valid.

Without a notes file the gate is off. The candidates page (:mod:`slimebook.sphinxext.pages.usagepages`) shows the
counts.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.util import logging

from ...candidates import Notes, NotesError, Settled, parse_notes, settle
from ..config import declare as declare_config
from ..config import file_setting, read_file_setting
from ..diagnostics import SlimebookWarning, file_location, warn
from ..environment.envrecords import citations
from ..environment.scancache import get_scan, get_table

logger = logging.getLogger(__name__)

__all__ = ["NotesFile", "book_settled", "confirmed_uses", "load_notes_file"]


@dataclass(frozen=True)
class NotesFile:
    """The notes file as read: ``path`` (None when the option is empty), ``exists``, ``notes``, ``text``,
    ``error`` (a :class:`NotesError` when the file is invalid)."""

    path: Path | None
    exists: bool
    notes: Notes = Notes()
    text: str = ""
    error: NotesError | None = None


def load_notes_file(app: Sphinx) -> NotesFile:
    """Read ``slimebook_candidate_notes`` (relative to the configuration directory)."""
    path, text = read_file_setting(app, "slimebook_candidate_notes")
    if text is None:
        return NotesFile(path, False)
    try:
        return NotesFile(path, True, parse_notes(text), text)
    except NotesError as exc:
        return NotesFile(path, True, text=text, error=exc)


def _citations(env: BuildEnvironment) -> dict[str, list[tuple[str, list]]]:
    return {docname: [(c["path"], c["runs"]) for c in items] for docname, items in citations(env).items()}


def book_settled(app: Sphinx, notes: NotesFile | None = None) -> Settled:
    """The candidates of the pin, settled by the notes file against the lessons' citations."""
    notes = notes or load_notes_file(app)
    env = app.env
    return settle(get_scan(env).records, notes.notes, _citations(env), env.all_docs,
                  env.__dict__.get("slimebook_teaches", {}), table=get_table(env))


def confirmed_uses(app: Sphinx) -> list:
    """The confirmed candidates as method uses: each candidate's record with kind ``method_call`` and the
    confirmed API as its name (``asyncio.Future.set_result``), for counting a class's instance uses."""
    settled = book_settled(app).confirmed
    return [dataclasses.replace(record, kind="method_call", name=conf.api) for record, conf in settled]


def _check(app: Sphinx, env: BuildEnvironment) -> None:
    """``env-check-consistency``: the gate (see the module docstring)."""
    notes = load_notes_file(app)
    if notes.path is None or not notes.exists:
        return
    if notes.error is not None:
        warn(env, SlimebookWarning.CANDIDATES, "candidate notes: %s", notes.error,
             location=file_location(notes.path, notes.error.line))
        return
    result = book_settled(app, notes)
    for problem in result.problems:
        warn(env, SlimebookWarning.CANDIDATES, "candidate notes: %s", problem.message,
             location=file_location(notes.path, problem.at))
    for record, lessons in result.read:
        warn(env, SlimebookWarning.CANDIDATES, "candidate notes: %s:%d '%s' (%s) is on a line %s cites, for a "
             "method that lesson teaches; confirm the API it is with a [[confirmed]] entry, or leave it with a "
             "[[left]] rule that lists \"%s:%d\" in places, with the reason", record.path, record.line, record.name,
             record.id, " and ".join(lessons), record.path, record.line, location=file_location(notes.path, 1))
    for record in result.open:
        warn(env, SlimebookWarning.CANDIDATES, "candidate notes: %s:%d '%s' (%s) is neither confirmed nor left with "
             "a reason; add a [[confirmed]] entry or a [[left]] rule here", record.path, record.line, record.name,
             record.id, location=file_location(notes.path, 1))


def _depend(app: Sphinx, doctree) -> None:
    """``doctree-read``: a document that cites the pin (a confirmation's lesson must) or declares names depends on
    the notes file, so an edit of the notes alone re-reads it and the gate runs again (``env-check-consistency``
    runs only when a document was read)."""
    env = app.env
    if citations(env).get(env.docname) or env.docname in env.__dict__.get("slimebook_teaches", {}):
        path = file_setting(app, "slimebook_candidate_notes")
        if path is not None and path.is_file():
            env.note_dependency(str(path))


def setup(app: Sphinx) -> None:
    """Register the notes option, the gate and the lessons' dependency on the notes file."""
    declare_config(app, "candidates")  # slimebook_candidate_notes
    app.connect("doctree-read", _depend)
    app.connect("env-check-consistency", _check)
