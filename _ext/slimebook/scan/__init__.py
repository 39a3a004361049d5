"""The usage scanner (issue 8): where the pinned Slime source uses concurrency APIs and async syntax.

Pipeline position: ``store`` → **scan** → pages. The scanner reads files from a
:class:`~slimebook.store.SourceStore` (or any text), parses them with libcst (whose native parser
accepts the Python 3.0–3.14 grammars whatever interpreter runs, so results do not depend on the
running Python), and never imports or executes scanned code. It knows nothing of Sphinx.

Entry points:

* :func:`scan_store` → :class:`ScanResult` (``.records``, ``.files``, ``.errors``, ``.version``):
  every ``*.py`` file at the pin plus the fenced Python blocks of its Markdown files, cached per
  (blob id, scanner version) and scanned on all cores when cold (:mod:`.runner`).
* :func:`scan_code` / :func:`scan_markdown`: one file's content, no store, no cache.

Record ids (:func:`~slimebook.scan.records.occurrence_id`): ``occ-`` + the first 12 hex digits of
SHA-1 over (path, scope, kind, name, ordinal), the ordinal counting earlier records of the same
file with the same (scope, kind, name) in position order. Lines are not part of the key: an id
survives lines inserted above it and a re-pin that leaves its function alone.

The category table (which names are recorded, under which category; :class:`CategoryTable`) is data: a book's
categories file read by :func:`load_categories`, by default the standard library's concurrency APIs.

Modules: :mod:`.categories` (the table and its reader), :mod:`.records` (schema, ids, writers),
:mod:`.imports` (scopes and the import table), :mod:`.evidence` (receiver types),
:mod:`.visitor` (one file: walk, resolve, positions), :mod:`.walker` (the walk), :mod:`.resolve` (references and
calls to records), :mod:`.positions` (spans), :mod:`.docs` (Markdown blocks), :mod:`.tokens` (a tolerant tokenizer),
:mod:`.repair` (line-preserving repairs of doc blocks), :mod:`.fallback` (records by tokens),
:mod:`.runner` (cache and processes). The modules that need libcst (:mod:`.visitor`, :mod:`.docs` and theirs) are
imported on the first cache miss, not with the package: a warm scan only reads JSON. The scanner's version digests
every ``*.py`` file of this folder (:func:`~slimebook.scan.runner.scanner_version`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .categories import CategoryError, CategoryTable, default_table, load_categories
from .records import (
    RECORD_FIELDS,
    SCHEMA_VERSION,
    Occurrence,
    ScanError,
    ScannedFile,
    ScanResult,
    format_stats,
    write_json,
    write_tsv,
)
from .runner import (
    SCANNER_VERSION,
    Progress,
    ScanItem,
    default_cache_dir,
    scan_code,
    scan_items,
    scan_markdown,
    scan_store,
    scanner_version,
)

if TYPE_CHECKING:
    from .visitor import FileScan


def __getattr__(name: str) -> object:
    """``FileScan`` from :mod:`.visitor` on first use: importing the package (for its table or a warm scan) costs
    no libcst."""
    if name == "FileScan":
        from .visitor import FileScan

        return FileScan
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "RECORD_FIELDS",
    "SCANNER_VERSION",
    "SCHEMA_VERSION",
    "CategoryError",
    "CategoryTable",
    "FileScan",
    "Occurrence",
    "Progress",
    "ScanError",
    "ScanItem",
    "ScanResult",
    "ScannedFile",
    "default_cache_dir",
    "default_table",
    "load_categories",
    "format_stats",
    "scan_code",
    "scan_items",
    "scan_markdown",
    "scan_store",
    "scanner_version",
    "write_json",
    "write_tsv",
]
