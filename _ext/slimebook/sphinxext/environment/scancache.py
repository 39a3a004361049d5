"""The scan of the pin, once per build process, and what documents built from it record.

:func:`slimebook.scan.scan_store` runs once per build process at ``builder-inited`` (a warm scan only reads the
cache) and is kept in a module-level cache keyed by (repository, commit, scanner version), so ``-j N`` readers
and writers, forked later, inherit it and nothing of it is pickled into the environment.

Per document the environment keeps only the scan key and the lessons a table reads (merged and purged:
parallel-read safe); ``env-get-outdated`` re-reads those documents when the scanner version or pin changes,
or when a lesson they list changed.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable

from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.util import logging
from sphinx.util.display import status_iterator

from ...scan import Progress, ScanResult, scan_store, scanner_version
from ...usage import Figures
from ..context import get_store, lock_path
from .envdata import doc_data, keep_per_doc
from .envrecords import UsageDocRecord

logger = logging.getLogger(__name__)

__all__ = ["get_figures", "get_scan", "note_scan_use", "scan_key"]


# -- the scan, once per process ----------------------------------------------------------------------------
_SCANS: dict[tuple[str, str, str], ScanResult] = {}
_FIGURES: dict[tuple[str, str, str], Figures] = {}


def _key(env: BuildEnvironment) -> tuple[str, str, str]:
    store = get_store(env)
    return (str(store.git_dir), store.lock.commit, scanner_version())


def scan_key(env: BuildEnvironment) -> str:
    """``<commit>:<scanner version>``: what a document built from the scan depends on."""
    _, commit, version = _key(env)
    return f"{commit}:{version}"


def _progress(env: BuildEnvironment) -> Progress | None:
    """Sphinx's ``status_iterator`` over the files a cold scan parses, on a terminal; None elsewhere (a log gets the
    one summary line of :func:`scan_at_start`)."""
    if not sys.stdout.isatty():
        return None
    return lambda paths, count: status_iterator(paths, "slimebook: scanning the pin... ", "darkgreen", count,
                                                env.config.verbosity)


def get_scan(env: BuildEnvironment) -> ScanResult:
    """The scan of the pin, computed on first use in this process and kept (one entry) afterwards."""
    key = _key(env)
    result = _SCANS.get(key)
    if result is None:
        result = scan_store(get_store(env), progress=_progress(env))
        _SCANS.clear()
        _FIGURES.clear()
        _SCANS[key] = result
    return result


def get_figures(env: BuildEnvironment) -> Figures:
    """The :class:`~slimebook.usage.Figures` of the pin (cached like the scan)."""
    result = get_scan(env)
    key = _key(env)
    figures = _FIGURES.get(key)
    if figures is None:
        figures = _FIGURES[key] = Figures(get_store(env), result)
    figures.store = get_store(env)  # this build's store: the cache keeps numbers, not another build's reader
    return figures


def scan_at_start(app: Sphinx) -> None:
    """``builder-inited`` (after the store is open): scan (snapshot pages of every scanned file are asked for by
    :func:`slimebook.sphinxext.pages.snapshot.snapshot_paths`, which reads this scan)."""
    result = get_scan(app.env)
    logger.info("slimebook: usage scan %s: %d records in %d files", result.version, len(result.records),
                len(result.files))


# -- environment bookkeeping -------------------------------------------------------------------------------
def note_scan_use(env: BuildEnvironment, lessons: Iterable[str] = ()) -> None:
    """Record that the current document is built from the scan (and from these lessons' declarations)."""
    docs: dict[str, UsageDocRecord] = doc_data(env, "slimebook_usage_docs")
    info = docs.setdefault(env.docname, {"scan": scan_key(env), "lessons": []})
    info["lessons"] = sorted(set(info["lessons"]) | set(lessons))
    env.note_dependency(str(lock_path(env)))


def _outdated(app: Sphinx, env: BuildEnvironment, added: set[str], changed: set[str],
              removed: set[str]) -> list[str]:
    """Documents to read again: built from another scan, or listing a lesson that changed."""
    key = scan_key(env)
    touched = added | changed | removed
    return sorted(
        docname for docname, info in env.__dict__.get("slimebook_usage_docs", {}).items()
        if docname not in touched and docname in env.all_docs
        and (info["scan"] != key or any(lesson in touched for lesson in info["lessons"]))
    )


def setup(app: Sphinx) -> None:
    """Scan at ``builder-inited`` (after the store opens), keep per-document scan use, re-read what is stale."""
    app.connect("builder-inited", scan_at_start, priority=600)  # after context.open_store (500)
    keep_per_doc(app, "slimebook_usage_docs")
    app.connect("env-get-outdated", _outdated)
