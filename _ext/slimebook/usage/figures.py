"""The numbers of the ``{slimenum}`` role: file and line counts of the pin, and counts of its scan's records, by key
(``py-files``, ``files:slime/``, ``occurrences:asyncio.gather``, …).

Pipeline position: in :mod:`slimebook.usage`, over a :class:`~slimebook.store.Store` and a scan, selecting with
:mod:`.query`; the Sphinx layer's ``{slimenum}`` role asks a :class:`Figures` for each number.
"""

from __future__ import annotations

from ..scan.categories import CategoryTable, default_table
from ..scan.records import KINDS, ScanResult
from .names import API_KINDS
from .query import Query, select

__all__ = ["FIGURE_FORMS", "FigureError", "Figures"]


class FigureError(ValueError):
    """An unknown or malformed ``{slimenum}`` key; the message lists the valid forms."""


FIGURE_FORMS = (
    "py-files", "py-lines", "files", "md-files", "scanned-files", "records", "api-names",
    "files:PREFIX", "lines:PREFIX", "occurrences:NAME", "category:CATEGORY", "kind:KIND",
)


class Figures:
    """Numbers taken from the pin and its scan, by key (see :meth:`get`).

    Args:
        store: a :class:`~slimebook.store.Store` (``files``, ``read_lines``).
        result: the scan of that pin.
        table: the category table of that scan (None: the default).
    """

    def __init__(self, store, result: ScanResult, table: CategoryTable | None = None) -> None:
        self.store = store
        self.result = result
        self.table = table or default_table()
        self._lines: dict[str, int] | None = None

    def _py_lines(self) -> dict[str, int]:
        if self._lines is None:
            self._lines = {p: len(self.store.read_lines(p)) for p in self.store.files(".py")}
        return self._lines

    def get(self, key: str) -> int:
        """The number named ``key``.

        Keys: ``py-files`` / ``py-lines`` (``.py`` files at the pin, their lines); ``files`` (every
        file); ``md-files``; ``scanned-files``; ``records`` (every scan record); ``api-names`` (distinct
        names of api_call / api_reference / method_call records); ``files:PREFIX`` / ``lines:PREFIX``
        (``.py`` files, lines under a path prefix such as ``slime/`` — the prefix must match a file);
        ``occurrences:NAME`` (records a ``usage-index`` with ``:name: NAME`` lists: a name, a glob or
        ``syntax:await``; imports are not counted); ``category:CATEGORY`` (every record of the
        category, imports included, as on the overview page); ``kind:KIND``.

        Raises:
            FigureError: unknown key, unknown category or kind, or a prefix that matches no file.
        """
        key = key.strip()
        records = self.result.records
        simple = {
            "py-files": lambda: len(self.store.files(".py")),
            "py-lines": lambda: sum(self._py_lines().values()),
            "files": lambda: len(self.store.files()),
            "md-files": lambda: len(self.store.files(".md")),
            "scanned-files": lambda: len(self.result.files),
            "records": lambda: len(records),
            "api-names": lambda: len({r.name for r in records if r.kind in API_KINDS and r.kind != "syntax"}),
        }
        if key in simple:
            return simple[key]()
        form, sep, arg = key.partition(":")
        if not sep or not arg:
            raise FigureError(f"unknown key {key!r}; use one of {', '.join(FIGURE_FORMS)}")
        if form in ("files", "lines"):
            paths = [p for p in self.store.files(".py") if p.startswith(arg)]
            if not any(p.startswith(arg) for p in self.store.files()):
                raise FigureError(f"{key!r}: no file at the pin starts with {arg!r}")
            return len(paths) if form == "files" else sum(self._py_lines()[p] for p in paths)
        if form == "occurrences":
            return len(select(records, Query(names=(arg,), table=self.table)))
        if form == "category":
            if arg not in self.table.categories:
                raise FigureError(f"{key!r}: unknown category; one of {', '.join(self.table.categories)}")
            return sum(r.category == arg for r in records)
        if form == "kind":
            if arg not in KINDS:
                raise FigureError(f"{key!r}: unknown kind; one of {', '.join(KINDS)}")
            return sum(r.kind == arg for r in records)
        raise FigureError(f"unknown key {key!r}; use one of {', '.join(FIGURE_FORMS)}")
