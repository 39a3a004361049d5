"""One path for every warning of the book's extension, and the rule that makes each warning repeat.

Shape of MyST-Parser's ``MystWarnings`` / ``create_warning``: each warning has a typed subtype
(:class:`SlimebookWarning`, logged as ``type="slimebook"``, ``subtype=<value>`` so ``suppress_warnings`` can name
it) and goes through :func:`warn`. Unlike Sphinx's own warnings, :func:`warn` also remembers which document the
warning belongs to, and the next build reads that document again (``env-get-outdated``), so the warning is
emitted again: without this a second ``-W`` build of an unchanged book passed although the first failed, because
Sphinx neither re-reads nor re-resolves an unchanged document.

Which document a warning belongs to: the one given as ``docname``, else the document of a ``(docname, line)``
location, else the document being read, else (a warning about the whole book: the coverage gate, a snapshot
page) the root document. Re-reading the root document is what makes the whole-book checks run again: they run in
``env-check-consistency`` or while pages are written, which Sphinx skips when no document changed.

Sphinx's and other extensions' warnings (an undefined label, a MyST option error, …) get the same rule: a handler
on the ``sphinx`` logger (:class:`WarnedDocuments`, installed for the length of a build) marks the document each
warning record points at, so a second ``-W`` build fails where the first did whoever logged the warning.

Where the marks live: marks made while reading are kept per document on the environment (merged after a parallel
read, purged when the document is read again); marks made later (consistency check, resolving, writing) are kept
in a set on the environment that each build starts empty. At ``build-finished`` the union is written atomically
to ``<doctreedir>/slimebook-warned.json`` (build output, never the source tree); ``env-get-outdated`` of the next
build reads it.
"""

from __future__ import annotations

import enum
import json
import logging as std_logging
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.utils import get_source_line
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.util import logging

from ..atomicio import atomic_write
from .environment.envdata import doc_data, keep_per_doc

__all__ = ["SlimebookWarning", "WARNED_FILE", "WarnedDocuments", "document_warnings", "file_location", "warn",
           "warning_place"]

logger = logging.getLogger("slimebook")

#: The file (in the doctree directory) listing the documents that warned in the last build.
WARNED_FILE = "slimebook-warned.json"

_ENV = "slimebook_problem_docs"
_APP = "slimebook_warned_docs"


class SlimebookWarning(enum.Enum):
    """Every warning subtype the extension emits (``type="slimebook"``, ``subtype=<value>``)."""

    SOURCE = "source"  #: the citation directive and role (``slime-source``, ``{slime}``): a citation not at the pin
    EXPERIMENT = "experiment"  #: ``experiment``: missing script, decoding, timeout, options
    TEACHES = "teaches"  #: ``lesson-teaches``: an empty list
    USAGE = "usage"  #: ``usage-index`` and ``{usage}``: unknown names, categories, pages
    NUMBER = "number"  #: ``{slimenum}``: an unknown count
    COVERAGE = "coverage"  #: the coverage gate and the waiver file
    ANCHOR = "anchor"  #: sections without a stable anchor; ids that cannot be made from writer text
    SNAPSHOT = "snapshot"  #: a snapshot page that cannot be rendered
    READING = "reading"  #: ``reading-entry``, ``reading-order-table``, ``reading-path``, ``repo-map``
    BUILDINFO = "buildinfo"  #: ``{buildinfo}``: an unknown key
    CANDIDATES = "candidates"  #: the candidate notes file: invalid entries, unsettled instance candidates
    #: house rules (:mod:`slimebook.sphinxext.gates.houserules`): a context box missing, a Slime name in prose
    #: not cited
    HOUSE = "house"
    DUPLICATE = "duplicate"  #: a label, term or object defined in two documents read by different parallel readers
    DEPENDENCY = "dependency"  #: a package the book's settings need is not installed (jieba for a Chinese search)


def _reading(env: BuildEnvironment) -> str:
    try:
        return env.docname or ""
    except (KeyError, AttributeError):  # pragma: no cover - older Sphinx raised outside reading
        return ""


def file_location(path: Path, line: int | None = None) -> str:
    """A warning location for a data file outside the documents: ``"path:line"``, line 1 when the line is unknown.

    Always with a line: Sphinx reads a location string without ``:`` as a docname and appends the source suffix
    (``sources/candidate-notes.toml.md``).
    """
    return f"{path}:{line or 1}"


def warn(
    env: BuildEnvironment,
    subtype: SlimebookWarning,
    message: str,
    *args: Any,
    location: Any = None,
    docname: str | None = None,
) -> None:
    """Log a warning of the extension and mark its document for re-reading in the next build.

    Args:
        env: the build environment.
        subtype: the warning's kind.
        message: ``%``-style format, as for :meth:`logging.Logger.warning`; ``args`` fill it.
        location: what Sphinx shows as the place: ``(docname, line)``, a node, or a ``"path:line"`` string.
        docname: the document the warning belongs to, when ``location`` does not say (see the module docstring).
    """
    target = docname or warning_place(env, location)[0]
    _mark(env, target or _reading(env) or env.config.root_doc)
    logger.warning(message, *args, location=location, type="slimebook", subtype=subtype.value)


def _mark(env: BuildEnvironment, docname: str) -> None:
    """Read ``docname`` again in the next build (see the module docstring for where the mark lives)."""
    if _reading(env):
        doc_data(env, _ENV)[docname] = True
    else:
        env.__dict__.setdefault(_APP, set()).add(docname)


def warning_place(env: BuildEnvironment, location: Any) -> tuple[str | None, int | None]:
    """``(docname, line)`` of a warning's location, the way Sphinx's log translator reads one: a ``(docname, line)``
    pair, a node (its source path → docname), or a ``"path:line"`` / docname string; ``(None, None)`` when it names
    no document of the book (a data file, no location)."""
    if isinstance(location, tuple) and len(location) == 2:
        return (location[0] or None), location[1]
    if isinstance(location, nodes.Node):
        source, line = get_source_line(location)
        doc = location.document
        source = source or (doc.get("source") if doc is not None else None)
        return (env.path2doc(source) if source else None), line
    if isinstance(location, str):
        path, sep, line = location.rpartition(":")
        if sep and line.isdigit():
            return env.path2doc(path), int(line)
        return (location if location in env.found_docs else env.path2doc(location)), None
    return None, None


class WarnedDocuments(std_logging.Handler):
    """Marks the document of every WARNING record of the ``sphinx`` logger for re-reading (:func:`_mark`), whoever
    logged it, and keeps what it said as ``found``: docname → ``[(line, message)]`` in the order logged (the live
    preview lists them, :mod:`slimebook.sphinxext.output.preview`). Records that ``suppress_warnings`` silences and
    records that name no
    document are left alone."""

    def __init__(self, app: Sphinx) -> None:
        super().__init__(std_logging.WARNING)
        self.app = app
        self.found: dict[str, list[tuple[int | None, str]]] = {}

    def emit(self, record: std_logging.LogRecord) -> None:
        try:
            if logging.is_suppressed_warning(getattr(record, "type", None), getattr(record, "subtype", None),
                                             self.app.config.suppress_warnings):
                return
            docname, line = warning_place(self.app.env, getattr(record, "location", None))
            if docname is not None:
                _mark(self.app.env, docname)
                said = self.found.setdefault(docname, [])
                entry = (line, record.getMessage())
                if entry not in said:  # Sphinx replays the records it buffered
                    said.append(entry)
        except Exception:  # noqa: BLE001 - marking must never break the build's logging
            pass


def document_warnings(app: Sphinx, docname: str) -> list[tuple[int | None, str]]:
    """``[(line, message)]`` of the warnings this build has logged so far about ``docname`` (any logger)."""
    handler = getattr(app, "slimebook_warned_handler", None)
    return list(handler.found.get(docname, ())) if handler is not None else []


def _warned_file(app: Sphinx) -> Path:
    return Path(app.doctreedir, WARNED_FILE)


def _outdated(app: Sphinx, env: BuildEnvironment, added: set[str], changed: set[str],
              removed: set[str]) -> list[str]:
    """``env-get-outdated``: the documents that warned in the last build are read again."""
    try:
        warned = set(json.loads(_warned_file(app).read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        warned = set()
    warned |= set(env.__dict__.get(_ENV, {}))
    return sorted(warned & env.found_docs - removed)


def _finish(app: Sphinx, exception: BaseException | None) -> None:
    """``build-finished``: stop marking and write the documents that warned in this build (atomically)."""
    _stop(app)
    env = app.env
    if env is None:  # pragma: no cover - failed before the environment existed
        return
    warned = set(env.__dict__.get(_ENV, {})) | env.__dict__.get(_APP, set())
    path = _warned_file(app)
    if warned or path.exists():
        atomic_write(path, json.dumps(sorted(warned)))


def _start(app: Sphinx) -> None:
    app.env.__dict__.pop(_APP, None)
    root = std_logging.getLogger("sphinx")  # the root of every Sphinx logger
    for old in [h for h in root.handlers if isinstance(h, WarnedDocuments)]:
        root.removeHandler(old)  # an earlier app that never reached build-finished (constructed, never built)
    handler = WarnedDocuments(app)
    root.addHandler(handler)
    app.slimebook_warned_handler = handler  # type: ignore[attr-defined]


def _stop(app: Sphinx) -> None:
    handler = getattr(app, "slimebook_warned_handler", None)
    if handler is not None:
        std_logging.getLogger("sphinx").removeHandler(handler)
        del app.slimebook_warned_handler  # type: ignore[attr-defined]


#: Emitted by a gate after it logged errors (not warnings): ``slimebook-errors-reported(app, count)``.
ERRORS_REPORTED = "slimebook-errors-reported"


def declare_event(app: Sphinx, name: str) -> None:
    """Register the event ``name`` unless it is registered already (parts that may be loaded alone each declare the
    events they emit or listen to)."""
    if name not in app.events.events:
        app.add_event(name)


def setup(app: Sphinx) -> None:
    """Register the per-document marks and the hooks that re-read documents that warned."""
    keep_per_doc(app, _ENV)
    app.connect("builder-inited", _start)
    app.connect("env-get-outdated", _outdated)
    app.connect("build-finished", _finish)
