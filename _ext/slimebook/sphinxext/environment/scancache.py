"""The scan of the pin, once per build process, and what documents built from it record.

:func:`slimebook.scan.scan_store` runs once per build process at ``builder-inited`` (a warm scan only reads the
cache) with the book's category table (:func:`get_table`: the file ``slimebook_scan_categories`` names, read by
:func:`slimebook.scan.load_categories` as ``slimebook scan --categories`` reads it) and is kept in a module-level
cache keyed by (repository, commit, scanner version; the version digests the table), so ``-j N`` readers and
writers, forked later, inherit it and nothing of it is pickled into the environment.

Per document the environment keeps only the scan key and the lessons a table reads (merged and purged:
parallel-read safe); ``env-get-outdated`` re-reads those documents when the scanner version or pin changes,
or when a lesson they list changed.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.errors import ExtensionError
from sphinx.util import logging
from sphinx.util.display import status_iterator

from ...scan import CategoryError, CategoryTable, Progress, ScanResult, load_categories, scan_store, scanner_version
from ...usage import Figures
from ..config import declare as declare_config
from ..config import file_setting
from ..context import get_store, lock_path
from .envdata import doc_data, keep_per_doc
from .envrecords import UsageDocRecord

logger = logging.getLogger(__name__)

__all__ = ["categories_path", "get_figures", "get_scan", "get_table", "note_scan_use", "note_table_use",
           "scan_key"]


# -- the category table ------------------------------------------------------------------------------------
_TABLES: dict[str, tuple[tuple[int, int], CategoryTable]] = {}


def categories_path(env: BuildEnvironment) -> str | None:
    """The categories file ``slimebook_scan_categories`` names (absolute; set at ``builder-inited``), or None for
    the default table."""
    return getattr(env, "slimebook_categories_path", None)


def get_table(env: BuildEnvironment) -> CategoryTable:
    """The book's category table: :func:`slimebook.scan.load_categories` of :func:`categories_path` (read again
    when the file changes).

    Raises:
        ExtensionError: the file is missing or does not hold (the message names the file and the line).
    """
    path = categories_path(env)
    if path is None:
        return load_categories(None)
    try:
        stat = Path(path).stat()
        signature = (stat.st_mtime_ns, stat.st_size)
    except OSError:
        signature = (-1, -1)
    kept = _TABLES.get(path)
    if kept is not None and kept[0] == signature:
        return kept[1]
    try:
        table = load_categories(path)
    except CategoryError as exc:
        raise ExtensionError(f"slimebook: slimebook_scan_categories: {exc}") from exc
    _TABLES[path] = (signature, table)
    return table


def open_table(app: Sphinx) -> None:
    """``builder-inited``: find the categories file and read it (a bad file stops the build here)."""
    path = file_setting(app, "slimebook_scan_categories")
    app.env.slimebook_categories_path = str(path) if path is not None else None  # type: ignore[attr-defined]
    get_table(app.env)


# -- the scan, once per process ----------------------------------------------------------------------------
_SCANS: dict[tuple[str, str, str], ScanResult] = {}
_FIGURES: dict[tuple[str, str, str], Figures] = {}


def _key(env: BuildEnvironment) -> tuple[str, str, str]:
    store = get_store(env)
    return (str(store.git_dir), store.lock.commit, scanner_version(get_table(env)))


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
        result = scan_store(get_store(env), progress=_progress(env), table=get_table(env))
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
        figures = _FIGURES[key] = Figures(get_store(env), result, get_table(env))
    figures.store = get_store(env)  # this build's store: the cache keeps numbers, not another build's reader
    return figures


def scan_at_start(app: Sphinx) -> None:
    """``builder-inited`` (after the store is open): read the category table, scan (snapshot pages of every scanned
    file are asked for by :func:`slimebook.sphinxext.pages.snapshot.snapshot_paths`, which reads this scan)."""
    open_table(app)
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
    note_table_use(env)


def note_table_use(env: BuildEnvironment) -> None:
    """Record that the current document reads the category table: it is read again when the book's categories
    file changes (descriptions included, which the scanner version leaves out)."""
    path = categories_path(env)
    if path is not None:
        env.note_dependency(path)


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
    """Declare ``slimebook_scan_categories``; scan at ``builder-inited`` (after the store opens), keep per-document
    scan use, re-read what is stale."""
    declare_config(app, "scan")  # slimebook_scan_categories
    app.connect("builder-inited", scan_at_start, priority=600)  # after context.open_store (500)
    keep_per_doc(app, "slimebook_usage_docs")
    app.connect("env-get-outdated", _outdated)
