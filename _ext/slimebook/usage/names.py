"""What a scan record counts as, and what a lesson may declare: the keys lessons use (``syntax:await``,
``asyncio.gather``), the base-class names a method use also counts for, and why a declared name can never match.

Pipeline position: the bottom of :mod:`slimebook.usage`, over :mod:`slimebook.scan.categories` (the category table)
and the scan's records; :mod:`.query`, :mod:`.coverage` and the Sphinx layer's ``lesson-teaches`` check build on it.
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Iterable
from fnmatch import fnmatchcase

from ..scan.categories import CategoryTable, default_table
from ..scan.records import Occurrence

__all__ = [
    "API_KINDS", "SYNTAX_KINDS", "category_members", "declaration_problem", "instance_uses", "key_of", "name_anchor",
    "names_of", "receiver_types",
]

#: Kinds of records that are APIs a lesson can teach (imports and candidates are not).
API_KINDS: tuple[str, ...] = ("api_call", "api_reference", "method_call", "syntax")


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


#: Syntax kinds the scanner records (``syntax:await`` …), as :mod:`slimebook.scan.walker` names them.
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


def category_members(category: str, table: CategoryTable | None = None) -> list[str]:
    """What the category table (None: the default) puts in ``category``: its name prefixes and builtins, sorted."""
    return (table or default_table()).members(category)
