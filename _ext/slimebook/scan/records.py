"""Occurrence records, their versioned schema, stable ids and the JSON / TSV writers.

Schema (:data:`SCHEMA_VERSION` 1). One record per occurrence, with the fields of
:data:`RECORD_FIELDS`:

``id``
    ``occ-`` + 12 hex digits, see :func:`occurrence_id`.
``path``
    repo-relative POSIX path of the scanned file (a ``.py`` file, or the Markdown file holding a
    fenced Python block).
``line``, ``col``, ``end_line``, ``end_col``
    the span of the occurrence in that file: lines 1-based, columns 0-based in characters (code
    points) of the decoded line, end exclusive; ``\\r\\n``, ``\\r`` and ``\\n`` end lines (the rule of
    libcst and of Python's own tokenizer).
``scope``
    the enclosing qualified symbol: ``<module>``, ``Class``, ``Class.method``, ``f.inner``, with a
    ``<lambda>`` / ``<comprehension>`` segment inside one. A def's or class's header (parameters,
    annotations, defaults, bases) belongs to it; its decorators belong to the enclosing scope.
``kind``
    ``import`` | ``api_call`` | ``api_reference`` | ``method_call`` | ``instance_candidate`` |
    ``syntax``.
``name``
    the resolved qualified name (``asyncio.gather``, ``asyncio.AbstractEventLoop.run_in_executor``),
    the bare method name for ``instance_candidate``, the construct for ``syntax`` (``async_def``,
    ``await``, ``async_with``, ``async_for``, ``async_comprehension``, ``async_generator``).
``category``
    one of the category table's (:attr:`slimebook.scan.categories.CategoryTable.categories`).
``provenance``
    how the record was found: ``import_statement``, ``import_resolution``, ``builtin``,
    ``syntax``, ``constructor_evidence``, ``annotation_evidence``, ``context_manager_evidence``,
    ``attribute_evidence``, ``unresolved_receiver_candidate``, ``token_fallback``, ``attribute_store`` (an
    ``api_reference`` that assigns to the API: ``asyncio.timeout = shim``, ``threading.excepthook = hook``).
``code``
    the whole source line ``line`` (without its line ending).
``source``
    ``code`` for a ``.py`` file, ``doc`` for a fenced block in a Markdown file.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import IO, TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from .categories import CategoryTable

__all__ = [
    "KINDS",
    "PROVENANCES",
    "RECORD_FIELDS",
    "SCHEMA_VERSION",
    "Occurrence",
    "ScanError",
    "ScanResult",
    "ScannedFile",
    "RawRecord",
    "assign_ids",
    "format_stats",
    "occurrence_id",
    "write_json",
    "write_tsv",
]

#: Bumped whenever a field is added, removed or changes meaning.
SCHEMA_VERSION = 1

RECORD_FIELDS: tuple[str, ...] = (
    "id", "path", "line", "col", "end_line", "end_col", "scope", "kind", "name", "category",
    "provenance", "code", "source",
)
KINDS: tuple[str, ...] = (
    "import", "api_call", "api_reference", "method_call", "instance_candidate", "syntax",
)
PROVENANCES: tuple[str, ...] = (
    "import_statement", "import_resolution", "builtin", "syntax", "constructor_evidence",
    "annotation_evidence", "context_manager_evidence", "attribute_evidence",
    "unresolved_receiver_candidate", "token_fallback", "attribute_store",
)


class RawRecord(NamedTuple):
    """One occurrence as the per-file scanners find it, before it gets a path, an id and a source.

    Positions are 1-based lines and 0-based columns of the scanned text; ``code`` is the text of ``line``. The
    runner caches raw records as JSON arrays in this field order and turns them into
    :class:`~slimebook.scan.records.Occurrence` s.
    """

    line: int
    col: int
    end_line: int
    end_col: int
    scope: str
    kind: str
    name: str
    category: str
    provenance: str
    code: str


@dataclass(frozen=True, slots=True)
class Occurrence:
    """One occurrence; the fields are documented in the module docstring."""

    id: str
    path: str
    line: int
    col: int
    end_line: int
    end_col: int
    scope: str
    kind: str
    name: str
    category: str
    provenance: str
    code: str
    source: str

    def as_dict(self) -> dict:
        """The record as a plain dict in :data:`RECORD_FIELDS` order."""
        return {name: getattr(self, name) for name in RECORD_FIELDS}


@dataclass(frozen=True, slots=True)
class ScannedFile:
    """One scanned file.

    Attributes:
        path: repo-relative path.
        source: ``"code"`` or ``"doc"``.
        blob: git blob id at the pin (the cache key with the scanner version).
        status: ``ok``; ``repaired`` (a doc block parsed only after repair or wrapping in an
            ``async def``); ``tokens`` (a doc block, or part of one, was scanned by tokens);
            ``error`` (the file did not parse; see :attr:`ScanResult.errors`).
        records: number of records from this file.
        blocks: number of fenced Python blocks (docs only, else None).
    """

    path: str
    source: str
    blob: str
    status: str
    records: int
    blocks: int | None = None


@dataclass(frozen=True, slots=True)
class ScanError:
    """A file that could not be scanned: ``path``, ``source``, a one-line ``message`` and, when
    known, the 1-based ``line`` of the problem."""

    path: str
    source: str
    message: str
    line: int | None = None


@dataclass
class ScanResult:
    """What :func:`slimebook.scan.scan_store` returns.

    Attributes:
        records: every occurrence, sorted by (source, path, line, col, kind, name).
        files: every scanned file, sorted by (source, path).
        errors: files that did not parse, sorted by path.
        version: the scanner version (the cache key's second half).
        commit: the pinned commit scanned, or None.
        schema_version: :data:`SCHEMA_VERSION`.
    """

    records: list[Occurrence]
    files: list[ScannedFile]
    errors: list[ScanError]
    version: str
    commit: str | None = None
    schema_version: int = SCHEMA_VERSION

    def as_dict(self) -> dict:
        """The JSON document written by :func:`write_json`."""
        return {
            "schema": "slimebook-scan",
            "schema_version": self.schema_version,
            "scanner_version": self.version,
            "commit": self.commit,
            "fields": list(RECORD_FIELDS),
            "files": [asdict(f) for f in self.files],
            "errors": [asdict(e) for e in self.errors],
            "records": [r.as_dict() for r in self.records],
        }


def occurrence_id(path: str, scope: str, kind: str, name: str, ordinal: int) -> str:
    """The stable id of a record.

    Rule: ``"occ-"`` + the first 12 hex digits of SHA-1 over ``path``, ``scope``, ``kind``, ``name``
    and ``ordinal`` joined by NUL bytes, where ``ordinal`` counts (from 0) the earlier records of the
    same file with the same (scope, kind, name), in position order. Lines are not part of the key,
    so an id survives lines inserted above it and a re-pin that leaves its function alone; it
    changes when its scope is renamed or an equal record is inserted before it in the same scope.
    """
    key = "\0".join((path, scope, kind, name, str(ordinal)))
    return "occ-" + hashlib.sha1(key.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def assign_ids(path: str, raw: Iterable[RawRecord]) -> list[tuple[str, RawRecord]]:
    """Pair each raw record of one file with its id.

    Args:
        path: the file's repo-relative path.
        raw: :class:`RawRecord` s, already in position order.
    Returns:
        ``[(id, raw_record), ...]`` in the same order.
    """
    seen: dict[tuple[str, str, str], int] = {}
    out = []
    for rec in raw:
        key = (rec.scope, rec.kind, rec.name)
        ordinal = seen.get(key, 0)
        seen[key] = ordinal + 1
        out.append((occurrence_id(path, *key, ordinal), rec))
    return out


def write_json(result: ScanResult, stream: IO[str]) -> None:
    """Write ``result`` as one JSON document (:meth:`ScanResult.as_dict`) to a text stream."""
    json.dump(result.as_dict(), stream, ensure_ascii=False, indent=1)
    stream.write("\n")


def _tsv_cell(value: object) -> str:
    text = "" if value is None else str(value)
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def write_tsv(result: ScanResult, stream: IO[str]) -> None:
    """Write the records as TSV: a header of :data:`RECORD_FIELDS`, then one row per record.

    Backslash, tab, newline and carriage return inside a cell are written as ``\\\\``, ``\\t``,
    ``\\n`` and ``\\r``.
    """
    stream.write("\t".join(RECORD_FIELDS) + "\n")
    for record in result.records:
        stream.write("\t".join(_tsv_cell(getattr(record, name)) for name in RECORD_FIELDS) + "\n")


def format_stats(result: ScanResult, table: CategoryTable | None = None) -> str:
    """The ``slimebook scan --stats`` report: files, counts by kind, by category (in the order of ``table``, the
    category table of the scan; None: the default), and by both, distinct API names (of ``api_call`` /
    ``api_reference`` / ``method_call`` records) and errors."""
    from collections import Counter

    from .categories import default_table

    categories = (table or default_table()).categories

    by_kind = Counter(r.kind for r in result.records)
    by_category = Counter(r.category for r in result.records)
    both = Counter((r.category, r.kind) for r in result.records)
    sources = Counter(f.source for f in result.files)
    statuses = Counter(f.status for f in result.files)
    blocks = sum(f.blocks or 0 for f in result.files)
    api_names = {r.name for r in result.records if r.kind in ("api_call", "api_reference", "method_call")}
    commit = f" at {result.commit[:7]}" if result.commit else ""
    lines = [
        f"scanner {result.version}, schema {result.schema_version}{commit}",
        f"files scanned: {len(result.files)} ({sources['code']} code, {sources['doc']} doc with {blocks} "
        f"Python blocks); status: " + ", ".join(f"{k} {v}" for k, v in sorted(statuses.items())),
        f"records: {len(result.records)} ({sum(r.source == 'doc' for r in result.records)} from docs)",
        "by kind:",
        *(f"  {kind:<20}{by_kind[kind]:>7}" for kind in KINDS if by_kind[kind]),
        "by category:",
        *(f"  {cat:<20}{by_category[cat]:>7}" for cat in categories if by_category[cat]),
    ]
    kinds = [k for k in KINDS if by_kind[k]]
    header = "".join(f"{k:>{len(k) + 2}}" for k in kinds)
    lines += ["by category and kind:", f"  {'':<20}{header}"]
    for cat in categories:
        if by_category[cat]:
            lines.append(f"  {cat:<20}" + "".join(f"{both[(cat, k)] or '.':>{len(k) + 2}}" for k in kinds))
    lines.append(f"distinct API names: {len(api_names)}")
    lines.append(f"errors: {len(result.errors)}")
    lines += [f"  {e.path}: {e.message}" for e in result.errors]
    return "\n".join(lines)
