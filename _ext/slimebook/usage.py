"""Questions asked of a scan: selections, counts, the coverage of lessons, waivers and book figures.

Pipeline position: ``store`` → ``scan`` → **usage** → Sphinx layer (:mod:`slimebook.sphinxext.directives.usage`).
Everything here takes a :class:`~slimebook.scan.ScanResult` (or its records) and plain data and returns
plain data; nothing knows about Sphinx, so each piece is unit-tested on hand-made records. What depends on the
category table (categories, tracked classes and their bases) takes the book's
:class:`~slimebook.scan.categories.CategoryTable` as ``table`` (None: the default table).

* :class:`Query` / :func:`select`: the filters of the ``usage-index`` directive (categories, name globs,
  kinds, path prefixes), in one declared table of option → field.
* :func:`coverage`: every API name and syntax kind the scan found, the lessons that teach it, the waiver
  that excuses it, and what is stale (waivers that excuse nothing, taught names Slime never uses).
* :func:`parse_waivers`: the waiver file (``sources/coverage-waivers.toml``), with a line per pattern.
* :class:`Figures`: the numbers of the ``{slimenum}`` role (``py-files``, ``files:slime/``, …).
"""

from __future__ import annotations

import importlib
import re
import sys
import tomllib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase, translate

from .lock import toml_error_line
from .scan.categories import CategoryTable, default_table
from .scan.records import KINDS, Occurrence, ScanResult

__all__ = [
    "API_KINDS",
    "COLUMNS",
    "SYNTAX_KINDS",
    "DEFAULT_KINDS",
    "Coverage",
    "CoverageRow",
    "Figures",
    "FigureError",
    "Query",
    "QueryError",
    "Waiver",
    "WaiverError",
    "category_members",
    "coverage",
    "declaration_problem",
    "instance_uses",
    "key_of",
    "names_of",
    "receiver_types",
    "name_anchor",
    "parse_list",
    "parse_waivers",
    "select",
]

#: Kinds of records that are APIs a lesson can teach (imports and candidates are not).
API_KINDS: tuple[str, ...] = ("api_call", "api_reference", "method_call", "syntax")
#: Kinds shown when a query names none: everything but import statements.
DEFAULT_KINDS: tuple[str, ...] = tuple(k for k in KINDS if k != "import")
#: Columns of a usage table, in display order.
COLUMNS: tuple[str, ...] = ("id", "location", "code", "scope", "name", "kind", "provenance")


def key_of(record: Occurrence) -> str:
    """The name a lesson declares for ``record``: ``syntax:await`` for syntax, else the record's name."""
    return f"syntax:{record.name}" if record.kind == "syntax" else record.name


def names_of(record: Occurrence, table: CategoryTable | None = None) -> list[str]:
    """Every name ``record`` counts for: its :func:`key_of`, then, for a method use on a subclass, the same
    method of each tracked base class that defines it (``asyncio.Task.done`` also counts as
    ``asyncio.Future.done``; the bases of ``table``, None for the default table)."""
    key = key_of(record)
    return [key, *(table or default_table()).inherited_names(key)] if record.kind == "method_call" else [key]


def receiver_types(record: Occurrence, table: CategoryTable | None = None) -> list[str]:
    """For a ``method_call`` record, its receiver's tracked type and that type's tracked bases in ``table``;
    else ``[]``."""
    table = table or default_table()
    split = table.split_method(record.name) if record.kind == "method_call" else None
    return [split[0], *table.ancestors(split[0])] if split else []


def instance_uses(records: Iterable[Occurrence], pattern: str, table: CategoryTable | None = None) -> list[Occurrence]:
    """The uses of a method of the class ``pattern`` names (a tracked type's name or a glob), on its instances
    or on a subclass's that inherit the method (bases of ``table``): what a class whose name Slime never writes is
    still used through (``asyncio.Future`` through ``asyncio.Task.add_done_callback``, not through
    ``asyncio.Task.get_name``)."""
    methods = pattern + ".*"
    return [r for r in records
            if r.kind == "method_call" and any(fnmatchcase(n, methods) for n in names_of(r, table))]


#: Syntax kinds the scanner records (``syntax:await`` …), as :mod:`slimebook.scan.visitor` names them.
SYNTAX_KINDS: tuple[str, ...] = (
    "async_def", "await", "async_with", "async_for", "async_comprehension", "async_generator",
)


def _stdlib_has(name: str) -> bool:
    """True when the dotted ``name`` is an attribute path of an importable standard-library module of the
    running interpreter (``asyncio.Task.cancel``, ``multiprocessing.context.BaseContext.Pool``)."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def _known_names(table: CategoryTable) -> set[str]:
    """Every name the category table spells out: prefixes, builtins, tracked types, their methods, syntax kinds."""
    names = {*table.api_prefixes, *table.builtins, *table.types, *(f"syntax:{kind}" for kind in SYNTAX_KINDS)}
    names.update(f"{type_name}.{method}" for type_name, methods in table.types.items() for method in methods)
    return names


def _checkable(name: str) -> bool:
    """True when ``name`` lies in a standard-library module (whose names :func:`_stdlib_has` can check); a
    book's own library (``demo.Pool``) is not imported, so its names under a whole module of the table count."""
    return name.partition(".")[0] in sys.stdlib_module_names


def declaration_problem(name: str, table: CategoryTable | None = None) -> str | None:
    """Why a ``lesson-teaches`` name (or glob) can never match a scan record, or None when it can.

    A name can match when it is a syntax kind the scanner records (``syntax:await``), a builtin it reports
    (``anext``), a method of a tracked type or of a tracked base it inherits (``asyncio.Task.add_done_callback``),
    a name the category table spells out, or a name under a whole module of the table (``asyncio.gather``,
    :meth:`~slimebook.scan.categories.CategoryTable.category_of`) that the running interpreter's standard library
    has, so ``asyncio.gahter`` is reported (a name only a newer Python has is reported too, with that said; a name
    outside the standard library, of a book's own category, is not checked against a module). A glob
    (``asyncio.create_*``, ``typing.Async*``) can match when it matches a name the table spells out, or when the
    dotted components before its first wildcard lie inside a whole module of the table. ``table``: the book's
    category table (None: the default).
    """
    table = table or default_table()
    if re.search(r"[*?\[]", name):
        if any(fnmatchcase(known, name) for known in _known_names(table)):
            return None
        fixed = re.split(r"[*?\[]", name, maxsplit=1)[0].rpartition(".")[0]
        if fixed and table.category_of(fixed) is not None and (not _checkable(fixed) or _stdlib_has(fixed)):
            return None
        return "the glob matches no name the scanner can record (slimebook.scan.categories)"
    if name.startswith("syntax:"):
        kind = name[len("syntax:"):]
        if kind not in SYNTAX_KINDS:
            return f"unknown syntax kind {kind!r}; the scanner records {', '.join(SYNTAX_KINDS)}"
        return None
    if name in table.builtins or name in table.types or name in table.api_prefixes:
        return None
    split = table.split_method(name)
    if split is not None:
        type_name, method = split
        known = {m for t in (type_name, *table.ancestors(type_name)) for m in table.types[t]}
        if method not in known:
            return f"{type_name} has no tracked method {method!r}; the scanner knows {', '.join(sorted(known))}"
        return None
    if table.category_of(name) is None:
        return "no category of the scanner's table holds it (the prefixes of the categories file)"
    if _checkable(name) and not _stdlib_has(name):
        return (f"the standard library of this Python ({sys.version_info[0]}.{sys.version_info[1]}) has no such "
                "name: a typo, or a newer Python's name (then spell it out in the scanner's category table)")
    return None


def name_anchor(key: str) -> str:
    """The HTML id of a name's section on its category page: ``asyncio.gather`` → ``name-asyncio.gather``.

    Dots, underscores and case are kept (HTML ids are case-sensitive), anything else becomes ``-``.
    """
    return "name-" + re.sub(r"[^A-Za-z0-9_.]+", "-", key)


def parse_list(text: str | None) -> tuple[str, ...]:
    """An option value as a tuple of items: separated by commas, spaces or newlines; empty → ``()``."""
    return tuple(item for item in re.split(r"[\s,]+", text or "") if item)


# -- selection -------------------------------------------------------------------------------------------
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


# -- categories ------------------------------------------------------------------------------------------
def category_members(category: str, table: CategoryTable | None = None) -> list[str]:
    """What the category table (None: the default) puts in ``category``: its name prefixes and builtins, sorted."""
    return (table or default_table()).members(category)


# -- waivers ---------------------------------------------------------------------------------------------
class WaiverError(ValueError):
    """The waiver file is not valid; ``line`` is the 1-based line of the problem when known."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


@dataclass(frozen=True)
class Waiver:
    """One waived name pattern: ``pattern`` (a name, ``syntax:…`` or a glob), ``reason``, its ``line``."""

    pattern: str
    reason: str
    line: int

    def matches(self, key: str) -> bool:
        return fnmatchcase(key, self.pattern)


_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"|\'([^\']*)\'')


def _pattern_lines(text: str) -> list[dict[str, int]]:
    """Per ``[[waiver]]`` table, in order: each quoted string in it → its first line."""
    tables: list[dict[str, int]] = []
    for n, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("[[") and stripped.replace(" ", "").startswith("[[waiver]]"):
            tables.append({})
            continue
        if not tables or stripped.startswith("#"):
            continue
        for match in _STRING.finditer(line):
            value = match.group(1) if match.group(1) is not None else match.group(2)
            tables[-1].setdefault(value.replace('\\"', '"'), n)
    return tables


def parse_waivers(text: str) -> list[Waiver]:
    """The waivers of a waiver file's text.

    Format (TOML)::

        [[waiver]]
        reason = "第 11 课（未写）：线程"
        names = ["threading.*", "queue.Queue.*"]   # or: name = "threading.Thread"

    Every table needs a non-empty ``reason`` and at least one name; no other keys. Patterns are globs
    (:func:`fnmatch.fnmatchcase`) over names as lessons declare them (``syntax:async_for``).

    Raises:
        WaiverError: not TOML, or a table is malformed (the message says which, with its line).
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise WaiverError(f"not valid TOML: {exc}", toml_error_line(exc)) from exc
    unknown = sorted(set(data) - {"waiver"})
    if unknown:
        raise WaiverError(f"unknown top-level key(s) {', '.join(unknown)}; use [[waiver]] tables")
    tables = data.get("waiver", [])
    if not isinstance(tables, list):
        raise WaiverError("'waiver' must be an array of tables ([[waiver]])")
    lines = _pattern_lines(text)
    waivers: list[Waiver] = []
    for index, table in enumerate(tables):
        where = lines[index] if index < len(lines) else {}
        first = min(where.values(), default=None)
        extra = sorted(set(table) - {"name", "names", "reason"})
        if extra:
            raise WaiverError(f"waiver #{index + 1}: unknown key(s) {', '.join(extra)}", first)
        reason = table.get("reason")
        if not isinstance(reason, str) or not reason.strip():
            raise WaiverError(f"waiver #{index + 1}: a non-empty 'reason' is required", first)
        names = table.get("names", [])
        if "name" in table:
            names = [table["name"], *names]
        if not isinstance(names, list) or not names or not all(isinstance(n, str) and n.strip() for n in names):
            raise WaiverError(f"waiver #{index + 1}: give 'name' or a non-empty list 'names' of strings", first)
        for name in names:
            waivers.append(Waiver(name.strip(), reason.strip(), where.get(name, first or 1)))
    return waivers


# -- coverage --------------------------------------------------------------------------------------------
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
        waivers: from :func:`parse_waivers`.
        order: docnames in reading order (lessons are listed in this order, unknown ones after, by name).
        confirmed: instance candidates a person confirmed, as ``method_call`` records named by the confirmed
            API; they count as instance uses of a declared class (``instance_only``), nothing else.
        table: the category table of the scan (rows follow its category order; bases); None: the default.
    """
    table = table or default_table()
    code: Counter[str] = Counter()
    doc: Counter[str] = Counter()
    category: dict[str, str] = {}
    also: dict[str, list[str]] = {}  # key → the base-class names it counts for as well
    api_records = [r for r in records if r.kind in API_KINDS]
    for record in api_records:
        key = key_of(record)
        (doc if record.source == "doc" else code)[key] += 1
        category.setdefault(key, record.category)
        also.setdefault(key, names_of(record, table))
    rank = {docname: n for n, docname in enumerate(order)}
    lessons_in_order = sorted(teaches, key=lambda d: (rank.get(d, len(rank)), d))

    # one regular expression per lesson: the union of its patterns, each as fnmatchcase reads it
    declared = {d: re.compile("|".join(f"(?:{translate(p)})" for p in teaches[d]) or "(?!)") for d in teaches}
    rows = []
    for key in category:
        lessons = tuple(d for d in lessons_in_order if any(declared[d].match(name) for name in also[key]))
        waiver = None if lessons else next((w for w in waivers if w.matches(key)), None)
        rows.append(CoverageRow(key, category[key], code[key], doc[key], lessons, waiver))
    cat_rank = {c: n for n, c in enumerate(table.categories)}
    rows.sort(key=lambda r: (_STATUS_ORDER[r.status], cat_rank.get(r.category, len(cat_rank)), r.key))

    result = Coverage(rows)
    taught = {row.key for row in rows if row.lessons}
    for waiver in waivers:
        hits = sorted(key for key in category if waiver.matches(key))
        result.waiver_hits.setdefault(waiver.pattern, hits)
        if not hits:
            result.stale.append((waiver, "matches no API name or syntax kind found at the pin"))
        elif all(key in taught for key in hits):
            result.stale.append((waiver, "every name it matches is taught by a lesson: " + ", ".join(hits)))
    every_name = {name for names in also.values() for name in names}
    for docname in lessons_in_order:
        for pattern in teaches[docname]:
            if any(fnmatchcase(name, pattern) for name in every_name):
                continue
            uses = len(instance_uses([*api_records, *confirmed], pattern, table))
            if uses:
                result.instance_only.append((docname, pattern, uses))
            else:
                result.absent.append((docname, pattern))
    return result


# -- figures ---------------------------------------------------------------------------------------------
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
