"""Running a scan over the store: the per-file cache and the process pool.

Cache: one JSON file per (blob id, scanner version, source kind) under
``slimebook.store.cache_root() / "scan" / <scanner version> / <blob[:2]> / <blob[2:]>.<code|doc>.json``,
outside the work tree. An entry holds the path-independent result of a file (raw records, status,
error), so two paths with the same content share it; paths and ids are added when results are
assembled. Entries are written atomically (a temporary file in the same directory, then
``os.replace``), so a reader never sees half an entry and concurrent scans may race harmlessly.
A warm scan lists the pinned tree (``git ls-tree``, for the blob ids) and reads only cache entries.

Cold files are scanned in a :class:`~concurrent.futures.ProcessPoolExecutor` with one worker per
available core (``fork`` start method where the platform has it, so workers inherit the imported
libcst); the parent reads the blobs and sends their bytes; workers write their cache entries. A
worker killed by the native parser is survived: the files left are rescanned one process each and
the culprit is reported as an error.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..atomicio import atomic_write
from ..store import cache_root
from .categories import CategoryTable, default_table, using_table
from .records import Occurrence, RawRecord, ScanError, ScannedFile, ScanResult, assign_ids

if TYPE_CHECKING:  # the scanner (and libcst) is imported on a cache miss only: a warm scan reads JSON
    from .visitor import FileScan

__all__ = ["SCANNER_VERSION", "Progress", "ScanItem", "default_cache_dir", "scan_code", "scan_items", "scan_markdown",
           "scan_store", "scanner_version"]

#: Bump when the meaning of the output changes (any edit of the table or of the scanner's source
#: changes :func:`scanner_version` by itself, so a stale cache entry is never read).
SCANNER_VERSION = "1"


@lru_cache(maxsize=1)
def _code_digest() -> tuple[bytes, str]:
    """The scanner's own source files and the line model (``slimebook/lines.py``) as one SHA-1 state's input, and
    the libcst version."""
    try:
        libcst_version = metadata.version("libcst")
    except metadata.PackageNotFoundError:  # pragma: no cover
        libcst_version = "unknown"
    data = b""
    here = Path(__file__).parent
    for source in [*sorted(here.glob("*.py")), here.parent / "lines.py"]:  # lines.py: the line model it numbers by
        try:
            data += source.name.encode() + b"\0" + source.read_bytes()
        except OSError:  # pragma: no cover - an installation without sources
            pass
    return data, libcst_version


def scanner_version(table: CategoryTable | None = None) -> str:
    """The cache key's version: ``SCANNER_VERSION``, a digest of the category table's rules
    (:attr:`~slimebook.scan.categories.CategoryTable.digest`; None: the default table), of the scanner's own source
    files and of the line model, and the libcst version, e.g. ``1.3f2a9c01.libcst1.9.0``."""
    code, libcst_version = _code_digest()
    digest = hashlib.sha1((table or default_table()).digest.encode())
    digest.update(code)
    return f"{SCANNER_VERSION}.{digest.hexdigest()[:8]}.libcst{libcst_version}"


def default_cache_dir() -> Path:
    """``cache_root() / "scan"``: the directory holding one subdirectory per scanner version."""
    return cache_root() / "scan"


@dataclass(frozen=True)
class ScanItem:
    """One file to scan: repo-relative ``path``, ``source`` (``code``/``doc``), git ``blob`` id, and
    ``load``, a callable returning the file's bytes (called only on a cache miss)."""

    path: str
    source: str
    blob: str
    load: Callable[[], bytes]


def _entry_path(cache: Path, blob: str, source: str) -> Path:
    return cache / blob[:2] / f"{blob[2:]}.{source}.json"


def _entry(scan: FileScan) -> dict[str, Any]:
    return {"records": scan.records, "status": scan.status, "error": scan.error, "blocks": scan.blocks}


def _write_atomic(path: Path, entry: dict[str, Any]) -> None:
    atomic_write(path, json.dumps(entry, ensure_ascii=False, separators=(",", ":")))


def _read_entry(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and "records" in data else None


def scan_code(data: bytes | str, table: CategoryTable | None = None) -> FileScan:
    """:func:`slimebook.scan.visitor.scan_code` with ``table`` (None: the default) as the category table, imported
    on first use (a warm scan reads JSON and needs no libcst)."""
    from .visitor import scan_code as scan

    with using_table(table):
        return scan(data)


def scan_markdown(data: bytes | str, table: CategoryTable | None = None) -> FileScan:
    """:func:`slimebook.scan.docs.scan_markdown` with ``table`` as the category table (see :func:`scan_code`)."""
    from .docs import scan_markdown as scan

    with using_table(table):
        return scan(data)


#: One file to scan in a worker: (source kind, blob id, bytes, cache directory or None, category table).
Task = tuple[str, str, bytes, str | None, CategoryTable]


def _scan_task(task: Task) -> dict[str, Any]:
    """Scan one file's bytes (runs in a worker); writes the cache entry unless it is an internal error."""
    source, blob, data, cache, table = task
    try:
        entry = _entry(scan_code(data, table) if source == "code" else scan_markdown(data, table))
    except Exception as exc:  # an internal scanner error: report it, never cache it
        return {"records": [], "status": "error", "error": [f"internal scanner error: {exc!r}", None],
                "blocks": None}
    if cache is not None:
        try:
            _write_atomic(_entry_path(Path(cache), blob, source), entry)
        except OSError:  # an unwritable cache costs speed, not results
            pass
    return entry


def _run_pool(tasks: list[Task], workers: int,
              results: list[dict[str, Any] | None]) -> Iterator[int]:
    """Scan ``tasks`` on ``workers`` processes into ``results``, yielding each task's index when its result is in
    (in task order). If a worker dies (libcst's native parser can crash the process on pathological input), every
    task left without a result is rerun alone in its own process, so one bad file costs only its own result."""
    from . import docs, visitor  # noqa: F401 - imported before the workers fork, so each inherits libcst

    with ProcessPoolExecutor(max_workers=workers, mp_context=_pool_context()) as pool:
        futures = [pool.submit(_scan_task, task) for task in tasks]
        for index, future in enumerate(futures):
            try:
                results[index] = future.result()
            except BrokenProcessPool:
                continue
            yield index
    for index, result in enumerate(results):
        if result is None:
            results[index] = _isolated(tasks[index])
            yield index


def _run_serial(tasks: list[Task],
                results: list[dict[str, Any] | None]) -> Iterator[int]:
    for index, task in enumerate(tasks):
        results[index] = _scan_task(task)
        yield index


def _isolated_main(task: Task, conn) -> None:
    conn.send(_scan_task(task))
    conn.close()


def _isolated(task: Task) -> dict[str, Any]:
    context = _pool_context()
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=_isolated_main, args=(task, sender), daemon=True)
    process.start()
    sender.close()
    try:
        entry = receiver.recv()
    except EOFError:
        entry = None
    process.join()
    if entry is None:
        entry = {"records": [], "status": "error", "blocks": None,
                 "error": [f"the parser crashed on this file (exit code {process.exitcode})", None]}
        source, blob, _, cache, _ = task
        if cache is not None:  # deterministic for this blob and scanner version
            try:
                _write_atomic(_entry_path(Path(cache), blob, source), entry)
            except OSError:
                pass
    return entry


def _pool_context() -> multiprocessing.context.BaseContext:
    if "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()  # pragma: no cover


def _available_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover
        return os.cpu_count() or 1


#: ``progress(paths, count)``: iterates over ``paths`` (the files scanned, each yielded when its result is in) and
#: yields each one, showing progress on the way (``sphinx.util.display.status_iterator`` has this shape).
Progress = Callable[[Iterable[str], int], Iterable[str]]


def scan_items(
    items: Sequence[ScanItem], *, jobs: int | None = None, cache: bool = True, cache_dir: Path | None = None,
    commit: str | None = None, progress: Progress | None = None, table: CategoryTable | None = None,
) -> ScanResult:
    """Scan ``items`` (cache first, then the misses in parallel) and assemble the result.

    Args:
        items: the files; ``load`` is called in this process, only for cache misses.
        table: the category table (:func:`~slimebook.scan.categories.load_categories`); None: the default.
        jobs: worker processes for the misses; None means one per available core, 1 scans in-process.
        cache: read and write the cache.
        cache_dir: the cache directory (default :func:`default_cache_dir`).
        commit: recorded in the result.
        progress: shows the cold files as they are scanned (see :data:`Progress`); not called when every file is in
            the cache.
    Returns:
        A :class:`~slimebook.scan.records.ScanResult`.
    Raises:
        Whatever ``load`` raises (e.g. :class:`~slimebook.store.SourceError`); files that do not
        parse are reported in ``errors``, not raised.
    """
    table = table or default_table()
    version = scanner_version(table)
    directory = (cache_dir or default_cache_dir()) / version if cache else None
    entries: dict[int, dict[str, Any]] = {}
    misses: list[int] = []
    for index, item in enumerate(items):
        entry = _read_entry(_entry_path(directory, item.blob, item.source)) if directory else None
        if entry is None:
            misses.append(index)
        else:
            entries[index] = entry
    if misses:
        target = str(directory) if directory else None
        tasks: list[Task] = [(items[i].source, items[i].blob, items[i].load(), target, table) for i in misses]
        order = sorted(range(len(tasks)), key=lambda k: -len(tasks[k][2]))
        workers = min(jobs or _available_cores(), len(tasks))
        ordered = [tasks[k] for k in order]
        results: list[dict[str, Any] | None] = [None] * len(ordered)
        done = _run_serial(ordered, results) if workers <= 1 else _run_pool(ordered, workers, results)
        paths = (items[misses[order[index]]].path for index in done)
        for _ in progress(paths, len(ordered)) if progress else paths:
            pass
        for _ in paths:  # whatever a progress display left unread
            pass
        for k, entry in zip(order, results, strict=True):
            entries[misses[k]] = entry  # type: ignore[assignment]  # every result is in once `done` is exhausted
    return _assemble(items, entries, version, commit)


def _assemble(items: Sequence[ScanItem], entries: dict[int, dict[str, Any]], version: str,
              commit: str | None) -> ScanResult:
    ordered = sorted(range(len(items)), key=lambda i: (items[i].source != "code", items[i].path))
    records: list[Occurrence] = []
    files: list[ScannedFile] = []
    errors: list[ScanError] = []
    for index in ordered:
        item, entry = items[index], entries[index]
        raw = [RawRecord(*rec) for rec in entry["records"]]  # tuples from a scan, arrays from the cache
        for occ_id, rec in assign_ids(item.path, raw):
            records.append(Occurrence(occ_id, item.path, *rec, item.source))
        files.append(ScannedFile(item.path, item.source, item.blob, entry["status"], len(entry["records"]),
                                 entry.get("blocks")))
        if entry.get("error"):
            message, line = entry["error"]
            errors.append(ScanError(item.path, item.source, message, line))
    errors.sort(key=lambda e: (e.source != "code", e.path))
    return ScanResult(records=records, files=files, errors=errors, version=version, commit=commit)


def scan_store(store, jobs: int | None = None, *, cache: bool = True, cache_dir: Path | None = None,
               docs: bool = True, progress: Progress | None = None, table: CategoryTable | None = None) -> ScanResult:
    """Scan every ``*.py`` file and every Markdown file's fenced Python blocks at the pin.

    Args:
        store: a :class:`~slimebook.store.SourceStore` (anything with ``files(suffix)``,
            ``blob_id(path)``, ``read_bytes(path)`` and ``lock.commit`` will do).
        jobs: worker processes for cold files (None: all available cores; 1: in-process).
        cache: use the scan cache (see module docstring).
        cache_dir: override the cache directory (default ``cache_root() / "scan"``).
        docs: also scan ``*.md`` files (records with ``source="doc"``).
        progress: shows the files scanned when some are not in the cache (see :func:`scan_items`).
        table: the category table (:func:`~slimebook.scan.categories.load_categories`); None: the default.
    Returns:
        A :class:`~slimebook.scan.records.ScanResult` with ``.records``, ``.files``, ``.errors``,
        ``.version``.
    Raises:
        slimebook.store.PinMissingError: the pin is not in the source cache.
    """
    items = [ScanItem(p, "code", store.blob_id(p), _loader(store, p)) for p in store.files(".py")]
    if docs:
        items += [ScanItem(p, "doc", store.blob_id(p), _loader(store, p)) for p in store.files(".md")]
    lock = getattr(store, "lock", None)
    return scan_items(items, jobs=jobs, cache=cache, cache_dir=cache_dir, commit=getattr(lock, "commit", None),
                      progress=progress, table=table)


def _loader(store, path: str) -> Callable[[], bytes]:
    return lambda: store.read_bytes(path)
