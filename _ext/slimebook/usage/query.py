"""Selecting records: the ``usage-index`` directive's filters (categories, name globs, kinds, path prefixes) as a
:class:`Query`, and :func:`select`, which applies one in a stable order.

Pipeline position: in :mod:`slimebook.usage`, over :mod:`.names`; the Sphinx layer's usage tables and the
``occurrences:NAME`` figures (:mod:`.figures`) select through it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase

from ..scan.categories import CategoryTable, default_table
from ..scan.records import KINDS, Occurrence
from .names import key_of, names_of

__all__ = ["COLUMNS", "DEFAULT_KINDS", "Query", "QueryError", "count_by_key", "parse_list", "select"]

#: Kinds shown when a query names none: everything but import statements.
DEFAULT_KINDS: tuple[str, ...] = tuple(k for k in KINDS if k != "import")
#: Columns of a usage table, in display order.
COLUMNS: tuple[str, ...] = ("id", "location", "code", "scope", "name", "kind", "provenance")


def parse_list(text: str | None) -> tuple[str, ...]:
    """An option value as a tuple of items: separated by commas, spaces or newlines; empty → ``()``."""
    return tuple(item for item in re.split(r"[\s,]+", text or "") if item)


class QueryError(ValueError):
    """An invalid query; the message names the option and the allowed values."""


@dataclass(frozen=True)
class Query:
    """A selection of records; every given field narrows it (AND), the items of one field widen it (OR).

    Attributes:
        categories: category names (of ``table``).
        names: name globs matched with :func:`fnmatch.fnmatchcase` against a record's name and its
            :func:`key_of` (so ``syntax:await``, ``asyncio.Queue.*`` and a bare candidate ``get`` all work).
        kinds: record kinds; None means :data:`DEFAULT_KINDS`, ``("all",)`` every kind.
        paths: repo-relative path prefixes (``slime/rollout/`` or a whole file path).
        table: the category table the records were scanned with (its categories, and the bases a method use
            counts for); None: the default table.
    """

    categories: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    kinds: tuple[str, ...] | None = None
    paths: tuple[str, ...] = ()
    table: CategoryTable | None = None

    def validate(self) -> None:
        """Raise :class:`QueryError` for an unknown category or kind, or an empty name or path."""
        known = (self.table or default_table()).categories
        bad = [c for c in self.categories if c not in known]
        if bad:
            raise QueryError(f":category: unknown {', '.join(map(repr, bad))}; one of {', '.join(known)}")
        bad = [k for k in self.kinds or () if k not in KINDS and k != "all"]
        if bad:
            raise QueryError(f":kind: unknown {', '.join(map(repr, bad))}; one of {', '.join(KINDS)} or all")

    @property
    def effective_kinds(self) -> frozenset[str]:
        kinds = DEFAULT_KINDS if self.kinds is None else self.kinds
        return frozenset(KINDS) if "all" in kinds else frozenset(kinds)

    def matches(self, record: Occurrence) -> bool:
        """True when ``record`` passes every given filter."""
        if record.kind not in self.effective_kinds or not self.within(record):
            return False
        return not self.names or self.pattern_index(record) is not None

    def within(self, record: Occurrence) -> bool:
        """True when ``record`` passes the category and path filters (names and kinds aside)."""
        if self.categories and record.category not in self.categories:
            return False
        return not self.paths or any(record.path.startswith(p) for p in self.paths)

    def pattern_index(self, record: Occurrence) -> int | None:
        """The index of the first name glob that matches ``record`` (None when none does): its name, its
        :func:`key_of`, or a base class's name of the method it uses (:func:`names_of`)."""
        names = [*names_of(record, self.table), record.name]
        for index, pattern in enumerate(self.names):
            if any(fnmatchcase(name, pattern) for name in names):
                return index
        return None


def select(records: Iterable[Occurrence], query: Query) -> list[Occurrence]:
    """The records ``query`` selects, in a stable order.

    With name globs, records are grouped by the first glob that matches them (the order the writer
    gave), then by name; inside a group, and without globs, they keep the scan's order (source, path,
    line, column).
    """
    chosen = [r for r in records if query.matches(r)]
    if query.names:
        position = {id(r): n for n, r in enumerate(chosen)}
        chosen.sort(key=lambda r: (query.pattern_index(r), key_of(r), position[id(r)]))
    return chosen


def count_by_key(records: Iterable[Occurrence]) -> Counter[str]:
    """How many of ``records`` there are per :func:`key_of`."""
    return Counter(key_of(r) for r in records)
