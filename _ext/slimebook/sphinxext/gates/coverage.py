"""The coverage gate: every API name and syntax kind the pinned code uses is taught by a lesson or waived with a
reason.

Lessons declare what they teach with ``lesson-teaches`` (:mod:`slimebook.sphinxext.directives.course`, kept in
``env.slimebook_teaches``); the waiver file (``slimebook_coverage_waivers``, default
``sources/coverage-waivers.toml``, format in :func:`slimebook.usage.parse_waivers`) excuses the rest.
After all documents are read (``env-check-consistency``) the gate warns, so ``-W`` fails:

* for a name the scan found that no lesson teaches and no waiver excuses (at the waiver file);
* for a waiver pattern that excuses nothing: it matches no scanned name, or only taught ones (at its line);
* for a waiver file that is not valid.

A declared name the pinned code never uses is only reported (one summary line; each name in the verbose log): a
lesson may teach an API the pinned code does not happen to use. Without a waiver file the gate is off (the coverage page
says so); documents that declare names depend on the waiver file, so editing it re-runs the check.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.util import logging

from ...usage import Coverage, Waiver, WaiverError, coverage, parse_waivers
from ..config import declare as declare_config
from ..config import read_file_setting
from ..context import reading_order
from ..diagnostics import SlimebookWarning, file_location, warn
from ..environment.scancache import get_scan, get_table
from .candidates import confirmed_uses

logger = logging.getLogger(__name__)

__all__ = ["WaiverFile", "book_coverage", "load_waiver_file", "reading_order"]


@dataclass(frozen=True)
class WaiverFile:
    """The waiver file as read: ``path`` (None when the option is empty), ``exists``, ``waivers``,
    ``error`` (a :class:`WaiverError` when the file is invalid)."""

    path: Path | None
    exists: bool
    waivers: tuple[Waiver, ...] = ()
    error: WaiverError | None = None


def load_waiver_file(app: Sphinx) -> WaiverFile:
    """Read ``slimebook_coverage_waivers`` (relative to the configuration directory)."""
    path, text = read_file_setting(app, "slimebook_coverage_waivers")
    if text is None:
        return WaiverFile(path, False)
    try:
        return WaiverFile(path, True, tuple(parse_waivers(text)))
    except WaiverError as exc:
        return WaiverFile(path, True, error=exc)


def _teaches(env: BuildEnvironment) -> dict[str, list[str]]:
    teaches = env.__dict__.get("slimebook_teaches", {})
    return {docname: list(names) for docname, names in teaches.items() if docname in env.all_docs}


def book_coverage(app: Sphinx, waivers: WaiverFile | None = None) -> Coverage:
    """The coverage of the book's lessons against the scan of the pin."""
    waivers = waivers or load_waiver_file(app)
    env = app.env
    return coverage(get_scan(env).records, _teaches(env), waivers.waivers, reading_order(env),
                    confirmed=confirmed_uses(app), table=get_table(env))


def _check(app: Sphinx, env: BuildEnvironment) -> None:
    """``env-check-consistency``: the gate (see the module docstring)."""
    waivers = load_waiver_file(app)
    if waivers.path is None or not waivers.exists:
        return
    if waivers.error is not None:
        warn(env, SlimebookWarning.COVERAGE, "coverage waivers: %s", waivers.error,
             location=file_location(waivers.path, waivers.error.line))
    result = book_coverage(app, waivers)
    for row in result.by_status("unmapped"):
        warn(env, SlimebookWarning.COVERAGE,
             "coverage: %s (%s, %d occurrence%s at the pin) is taught by no lesson and has no waiver; "
             "declare it in a lesson's lesson-teaches or add a waiver with a reason here",
             row.key, row.category, row.count, "" if row.count == 1 else "s", location=file_location(waivers.path, 1))
    for waiver, why in result.stale:
        warn(env, SlimebookWarning.COVERAGE, "coverage: stale waiver %r: %s", waiver.pattern, why,
             location=file_location(waivers.path, waiver.line))
    # Not a problem, so never in a warning's shape: one line per name in the verbose log (-v), one summary line.
    for docname, pattern in result.absent:
        logger.verbose("coverage: %s declares %r, which the scan does not find at the pin", docname, pattern)
    if result.absent:
        count = len(result.absent)
        logger.info("coverage: %d declared name%s not used at the pin (fine: a lesson may teach what the pinned "
                    "code does not use; -v lists them)", count, " is" if count == 1 else "s are")


def _depend(app: Sphinx, doctree) -> None:
    """``doctree-read``: a document that declares names depends on the waiver file."""
    env = app.env
    if env.docname in env.__dict__.get("slimebook_teaches", {}):
        waivers = load_waiver_file(app)
        if waivers.path is not None and waivers.exists:
            env.note_dependency(str(waivers.path))


def setup(app: Sphinx) -> None:
    """Register the waiver option and the gate."""
    declare_config(app, "coverage")  # slimebook_coverage_waivers
    app.connect("doctree-read", _depend)
    app.connect("env-check-consistency", _check)
