"""The coverage of lessons: every API name and syntax kind the scan found, the lessons that teach it, the waiver
that excuses it, and what is stale (waivers that excuse nothing, declared names Slime never uses).

Pipeline position: in :mod:`slimebook.usage`, over :mod:`.names` and :mod:`.waivers`; the Sphinx layer's coverage
gate and coverage page read the :class:`Coverage` it returns.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase, translate

from ..scan.categories import CategoryTable, default_table
from ..scan.records import Occurrence
from .names import API_KINDS, instance_uses, key_of, names_of
from .waivers import Waiver

__all__ = ["Coverage", "CoverageRow", "coverage"]


@dataclass(frozen=True)
class CoverageRow:
    """One API name or syntax kind found by the scan.

    Attributes:
        key: the name as lessons declare it (:func:`key_of`).
        category: its category.
        code, doc: occurrences in ``.py`` files and in fenced blocks of Markdown docs.
        lessons: docnames of the lessons whose ``lesson-teaches`` match it, in reading order.
        waiver: the first waiver that matches it when no lesson does, else None.
    """

    key: str
    category: str
    code: int
    doc: int
    lessons: tuple[str, ...] = ()
    waiver: Waiver | None = None

    @property
    def count(self) -> int:
        return self.code + self.doc

    @property
    def status(self) -> str:
        """``taught``, ``waived`` or ``unmapped``."""
        return "taught" if self.lessons else "waived" if self.waiver else "unmapped"


@dataclass
class Coverage:
    """What :func:`coverage` returns.

    Attributes:
        rows: one per name, unmapped first, then waived, then taught; inside each, by category order
            and name.
        stale: ``(waiver, why)`` for each waiver pattern that excuses nothing (it matches no scanned
            name, or only names a lesson teaches).
        absent: ``(docname, pattern)`` for each declared name that matches no scanned name and no class
            whose instances are used.
        instance_only: ``(docname, pattern, uses)`` for each declared class name that Slime never writes but
            whose instances' methods it calls ``uses`` times (:func:`instance_uses`).
        waiver_hits: pattern → the names it matches, whatever their status.
    """

    rows: list[CoverageRow]
    stale: list[tuple[Waiver, str]] = field(default_factory=list)
    absent: list[tuple[str, str]] = field(default_factory=list)
    instance_only: list[tuple[str, str, int]] = field(default_factory=list)
    waiver_hits: dict[str, list[str]] = field(default_factory=dict)

    def by_status(self, status: str) -> list[CoverageRow]:
        return [row for row in self.rows if row.status == status]


_STATUS_ORDER = {"unmapped": 0, "waived": 1, "taught": 2}


def coverage(records: Iterable[Occurrence], teaches: Mapping[str, Sequence[str]],
             waivers: Sequence[Waiver], order: Sequence[str] = (), confirmed: Sequence[Occurrence] = (),
             table: CategoryTable | None = None) -> Coverage:
    """Map every API name and syntax kind in ``records`` to the lessons that teach it or a waiver.

    Args:
        records: scan records; only :data:`API_KINDS` count.
        teaches: docname → names (or globs) declared by its ``lesson-teaches``.
        waivers: from :func:`~slimebook.usage.waivers.parse_waivers`.
        order: docnames in reading order (lessons are listed in this order, unknown ones after, by name).
        confirmed: instance candidates a person confirmed, as ``method_call`` records named by the confirmed
            API; they count as instance uses of a declared class (``instance_only``), nothing else.
        table: the category table of the scan (rows follow its category order; bases); None: the default.
    """
    table = table or default_table()
    found = _found_names(records, table)
    lessons = _in_reading_order(teaches, order)
    result = Coverage(_coverage_rows(found, teaches, lessons, waivers, table))
    _check_waivers(result, waivers, found)
    _check_declarations(result, teaches, lessons, found, confirmed, table)
    return result


@dataclass
class _Found:
    """The scan's API records (:data:`API_KINDS`) and, per key (:func:`key_of`): occurrences in code and in docs, the
    category, and every name the key counts for (:func:`names_of`: the key, then base-class names)."""

    records: list[Occurrence]
    code: Counter[str] = field(default_factory=Counter)
    doc: Counter[str] = field(default_factory=Counter)
    category: dict[str, str] = field(default_factory=dict)
    also: dict[str, list[str]] = field(default_factory=dict)


def _found_names(records: Iterable[Occurrence], table: CategoryTable) -> _Found:
    """Count the API records of ``records`` per key, in code and in docs, with each key's category and names."""
    found = _Found([r for r in records if r.kind in API_KINDS])
    for record in found.records:
        key = key_of(record)
        (found.doc if record.source == "doc" else found.code)[key] += 1
        found.category.setdefault(key, record.category)
        found.also.setdefault(key, names_of(record, table))
    return found


def _in_reading_order(docnames: Iterable[str], order: Sequence[str]) -> list[str]:
    """``docnames`` in the order of ``order``; those it does not list after them, by name."""
    rank = {docname: n for n, docname in enumerate(order)}
    return sorted(docnames, key=lambda d: (rank.get(d, len(rank)), d))


def _coverage_rows(found: _Found, teaches: Mapping[str, Sequence[str]], lessons: Sequence[str],
                   waivers: Sequence[Waiver], table: CategoryTable) -> list[CoverageRow]:
    """One row per key found: the ``lessons`` (in their order) declaring one of its names, else the first waiver
    matching it; unmapped rows first, then waived, then taught, each by category order and key."""
    # one regular expression per lesson: the union of its patterns, each as fnmatchcase reads it
    declared = {d: re.compile("|".join(f"(?:{translate(p)})" for p in teaches[d]) or "(?!)") for d in teaches}
    rows = []
    for key in found.category:
        teaching = tuple(d for d in lessons if any(declared[d].match(name) for name in found.also[key]))
        waiver = None if teaching else next((w for w in waivers if w.matches(key)), None)
        rows.append(CoverageRow(key, found.category[key], found.code[key], found.doc[key], teaching, waiver))
    cat_rank = {c: n for n, c in enumerate(table.categories)}
    rows.sort(key=lambda r: (_STATUS_ORDER[r.status], cat_rank.get(r.category, len(cat_rank)), r.key))
    return rows


def _check_waivers(result: Coverage, waivers: Sequence[Waiver], found: _Found) -> None:
    """Note each waiver's hits among the keys found, and each waiver that excuses nothing as stale."""
    taught = {row.key for row in result.rows if row.lessons}
    for waiver in waivers:
        hits = sorted(key for key in found.category if waiver.matches(key))
        result.waiver_hits.setdefault(waiver.pattern, hits)
        if not hits:
            result.stale.append((waiver, "matches no API name or syntax kind found at the pin"))
        elif all(key in taught for key in hits):
            result.stale.append((waiver, "every name it matches is taught by a lesson: " + ", ".join(hits)))


def _check_declarations(result: Coverage, teaches: Mapping[str, Sequence[str]], lessons: Sequence[str],
                        found: _Found, confirmed: Sequence[Occurrence], table: CategoryTable) -> None:
    """Note each declared pattern that matches no name found: ``instance_only`` when the class it names is used
    through its instances (confirmed candidates included), else ``absent``."""
    every_name = {name for names in found.also.values() for name in names}
    for docname in lessons:
        for pattern in teaches[docname]:
            if any(fnmatchcase(name, pattern) for name in every_name):
                continue
            uses = len(instance_uses([*found.records, *confirmed], pattern, table))
            if uses:
                result.instance_only.append((docname, pattern, uses))
            else:
                result.absent.append((docname, pattern))
