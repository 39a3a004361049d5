"""The category table of the usage scanner: data a book names, read in one place (issues 8 and 34).

Every rule the scanner applies to a *name* is data of a :class:`CategoryTable`, read from a TOML file by
:func:`load_categories` (the build reads the file the setting ``slimebook_scan_categories`` names, ``slimebook scan``
the file of ``--categories``; both through this one function). Without a file the table is the default,
``categories.toml`` beside this module: the concurrency APIs of Python's standard library.

The file's format (every key optional unless said otherwise)::

    extends = "default"            # start from the default table and add to it (else the file is the whole table)

    [categories.NAME]              # one per category, in the order reports list them
    description = "…"              # the sentence of the category's usage page, in the book's language
    prefixes = ["demo.Pool", …]    # dotted names: a name belongs to the category of its longest listed prefix
    builtins = ["anext"]           # builtin functions reported when not shadowed

    [types."demo.Pool"]            # a tracked class; its name must lie under a category's prefix
    methods = ["submit", …]        # a call of one on an instance is a method_call ``demo.Pool.submit``
    base = "demo.BasePool"         # the tracked class it inherits from (its methods count for the base too)
    aliases = ["demo.pool.Pool"]   # other names of the same class (implementation modules)
    returns = { submit = "demo.Job" }   # method → the tracked class of its (not awaited) result
    enter_returns_self = true      # ``with demo.Pool() as pool`` binds the instance

    [constructors]                 # function → the tracked class of its (not awaited) result
    "demo.connect" = "demo.Pool"
    [await_constructors]           # coroutine function → the tracked class of its awaited result
    [candidates]
    methods = ["submit", …]        # method names reported as instance candidates on a receiver of unknown type
    string_first = ["get"]         # … except when called with a string first (``d.get("key")``)

A table always has the categories ``syntax`` (async syntax) and ``candidates`` (instance candidates): the scanner
gives them, so they take no prefixes. With ``extends = "default"``, a category or type of the file replaces the
default's entry of the same name (in its place), a new one is added after the default's; the constructors are
merged name by name and the candidate method lists added to the default's. A file that does not hold — not TOML, an
unknown key, a value of the wrong type, a name claimed twice, a reference to an untracked class — raises
:class:`CategoryError`, naming the file and the line.

:data:`BUILTIN_TYPES` (Python's builtin constructors, negative evidence) is a fact of the language, not of a book,
and stays here. The scanner's modules read the table of the scan at hand through :func:`current_table`, bound for
one file's scan by :func:`using_table` (``scan_code`` and ``scan_markdown`` take the table and bind it).
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..lock import toml_error_line, toml_problem
from .categorytable import CategoryError, CategoryTable

__all__ = [
    "BUILTIN_TYPES",
    "DEFAULT_FILE",
    "SCANNER_CATEGORIES",
    "CategoryError",
    "CategoryTable",
    "current_table",
    "default_table",
    "load_categories",
    "parse_categories",
    "using_table",
]

#: The default table: the standard library's concurrency APIs (package data beside this module).
DEFAULT_FILE = Path(__file__).with_name("categories.toml")

#: Categories the scanner itself gives (async syntax, instance candidates); every table has them.
SCANNER_CATEGORIES: tuple[str, ...] = ("syntax", "candidates")

#: Builtin constructors and literal kinds whose result is a known, untracked type.
BUILTIN_TYPES: frozenset[str] = frozenset({
    "dict", "list", "set", "frozenset", "tuple", "str", "bytes", "bytearray", "int", "float",
    "complex", "bool", "object", "range", "memoryview", "open", "iter", "zip", "map", "filter",
    "enumerate", "reversed", "sorted", "super", "type",
})


_CURRENT: ContextVar[CategoryTable | None] = ContextVar("slimebook_scan_table", default=None)


def current_table() -> CategoryTable:
    """The table bound by :func:`using_table` (the scan at hand), else :func:`default_table`."""
    return _CURRENT.get() or default_table()


@contextmanager
def using_table(table: CategoryTable | None) -> Iterator[CategoryTable]:
    """Bind ``table`` (None: the default) as :func:`current_table` for the block; yields it."""
    table = table or default_table()
    token = _CURRENT.set(table)
    try:
        yield table
    finally:
        _CURRENT.reset(token)


# -- reading a file ------------------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def default_table() -> CategoryTable:
    """The table of :data:`DEFAULT_FILE` (read once per process)."""
    return parse_categories(DEFAULT_FILE.read_text(encoding="utf-8"), DEFAULT_FILE)


def load_categories(path: str | Path | None = None) -> CategoryTable:
    """The table of the categories file ``path``; None (or ``""``) gives :func:`default_table`.

    The one reader of categories files: the build and ``slimebook scan`` call it with the same file.

    Raises:
        CategoryError: the file is missing, unreadable, not TOML, or does not hold (with its line).
    """
    if not path:
        return default_table()
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CategoryError("no such categories file", path) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CategoryError(f"cannot read the categories file: {exc}", path) from exc
    return parse_categories(text, path)


_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_DOTTED = re.compile(rf"{_NAME}(?:\.{_NAME})*")
_IDENTIFIER = re.compile(_NAME)
_CATEGORY = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
_TOP = {"extends", "categories", "types", "constructors", "await_constructors", "candidates"}
_CATEGORY_KEYS = {"description", "prefixes", "builtins"}
_TYPE_KEYS = {"methods", "base", "aliases", "returns", "enter_returns_self"}
_CANDIDATE_KEYS = {"methods", "string_first"}

Where = tuple[str, ...]


class _Source:
    """One file's text and where its tables and keys are, for messages (``line`` of a key path)."""

    _KEY = r"""(?:[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|'[^']*')"""
    _HEADER = re.compile(rf"\s*\[\s*({_KEY}(?:\s*\.\s*{_KEY})*)\s*\]\s*(?:#.*)?$")
    _ASSIGN = re.compile(rf"\s*({_KEY}(?:\s*\.\s*{_KEY})*)\s*=")

    def __init__(self, text: str, path: str | Path) -> None:
        self.path = str(path)
        self.lines: dict[Where, int] = {}
        table: Where = ()
        multiline = False
        for number, line in enumerate(text.splitlines(), 1):
            if multiline:
                multiline = line.count('"""') % 2 == 0
                continue
            header = self._HEADER.match(line)
            assign = None if header else self._ASSIGN.match(line)
            if header:
                table = self._path(header.group(1))
                self.lines.setdefault(table, number)
            elif assign:
                self.lines.setdefault(table + self._path(assign.group(1)), number)
                multiline = line.count('"""') % 2 == 1
        self.data = self._parse(text)

    @staticmethod
    def _path(keys: str) -> Where:
        """The key path of a dotted TOML key (``types."asyncio.Queue"`` → ``("types", "asyncio.Queue")``)."""
        try:
            value: Any = tomllib.loads(f"{keys} = 0")
        except tomllib.TOMLDecodeError:
            return ()
        path: list[str] = []
        while isinstance(value, dict) and len(value) == 1:
            key, value = next(iter(value.items()))
            path.append(key)
        return tuple(path)

    def _parse(self, text: str) -> dict[str, Any]:
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise CategoryError(toml_problem(exc, text), self.path, toml_error_line(exc, text)) from exc

    def line(self, where: Where) -> int | None:
        """The line of the key path ``where``, else of its nearest enclosing table that has one."""
        while where:
            if where in self.lines:
                return self.lines[where]
            where = where[:-1]
        return None

    def error(self, message: str, where: Where) -> CategoryError:
        return CategoryError(message, self.path, self.line(where))


def _name_of(where: Where) -> str:
    """How a message names an entry: ``[types."demo.Pool"] returns``."""
    if not where:
        return "the file"
    head = where[0] if len(where) == 1 else f"{where[0]}.{json.dumps(where[1]) if '.' in where[1] else where[1]}"
    return f"[{head}]" + (f" {'.'.join(where[2:])}" if len(where) > 2 else "")


class _Reader:
    """The entries of one or two files (the default and a book's file that extends it), each with its origin."""

    def __init__(self) -> None:
        self.categories: dict[str, dict[str, Any]] = {}
        self.types: dict[str, dict[str, Any]] = {}
        self.constructors: dict[str, str] = {}
        self.await_constructors: dict[str, str] = {}
        self.candidates: list[str] = []
        self.string_first: list[str] = []
        self.origin: dict[Where, _Source] = {}  # an entry's key path → the file that gave it
        self.last: _Source | None = None

    def error(self, message: str, where: Where) -> CategoryError:
        """An error at ``where`` (a key path), located in the file that gave the entry."""
        source = next((self.origin[where[:n]] for n in range(len(where), 0, -1) if where[:n] in self.origin),
                      self.last)
        assert source is not None
        return source.error(message, where)

    def add(self, source: _Source) -> None:
        """Add the entries of ``source`` (checked for shape: keys and the types of values)."""
        data = source.data
        self.last = source
        unknown = sorted(set(data) - _TOP)
        if unknown:
            raise source.error(f"unknown top-level key {unknown[0]!r}; the keys are {', '.join(sorted(_TOP))}",
                               (unknown[0],))
        for section in ("categories", "types", "constructors", "await_constructors", "candidates"):
            if not isinstance(data.get(section, {}), dict):
                raise source.error(f"{section!r} must be a table ([{section}…])", (section,))
        self._add_categories(source, data)
        self._add_types(source, data)
        self._add_constructors(source, data)
        self._add_candidates(source, data)

    def _add_categories(self, source: _Source, data: dict) -> None:
        """The ``[categories.NAME]`` entries: description, prefixes, builtins."""
        for name, entry in data.get("categories", {}).items():
            where = ("categories", name)
            self._entry(source, where, entry, _CATEGORY_KEYS)
            if not _CATEGORY.fullmatch(name):
                raise source.error(f"category name {name!r}: letters, digits, '-' and '_' only", where)
            description = entry.get("description", "")
            if not isinstance(description, str):
                raise source.error(f"{_name_of(where)} description must be a string", (*where, "description"))
            self.categories[name] = {"description": description,
                                     "prefixes": self._names(source, where, entry, "prefixes", _DOTTED),
                                     "builtins": self._names(source, where, entry, "builtins", _IDENTIFIER)}
            self.origin[where] = source

    def _add_types(self, source: _Source, data: dict) -> None:
        """The ``[types."NAME"]`` entries: methods, base, returns, aliases, ``enter_returns_self``."""
        for name, entry in data.get("types", {}).items():
            where = ("types", name)
            self._entry(source, where, entry, _TYPE_KEYS)
            if not _DOTTED.fullmatch(name):
                raise source.error(f"type name {name!r} is not a dotted name", where)
            base = entry.get("base")
            if base is not None and not (isinstance(base, str) and _DOTTED.fullmatch(base)):
                raise source.error(f"{_name_of(where)} base must be a dotted name", (*where, "base"))
            returns = entry.get("returns", {})
            if not isinstance(returns, dict) or not all(isinstance(v, str) for v in returns.values()):
                raise source.error(f"{_name_of(where)} returns must be a table of method = \"class\"",
                                   (*where, "returns"))
            enters = entry.get("enter_returns_self", False)
            if not isinstance(enters, bool):
                raise source.error(f"{_name_of(where)} enter_returns_self must be true or false",
                                   (*where, "enter_returns_self"))
            self.types[name] = {"methods": self._names(source, where, entry, "methods", _IDENTIFIER),
                                "base": base, "returns": dict(returns), "enter_returns_self": enters,
                                "aliases": self._names(source, where, entry, "aliases", _DOTTED)}
            self.origin[where] = source

    def _add_constructors(self, source: _Source, data: dict) -> None:
        """The ``[constructors]`` and ``[await_constructors]`` entries: dotted name → tracked class."""
        for section in ("constructors", "await_constructors"):
            target = getattr(self, section)
            for name, value in data.get(section, {}).items():
                where = (section, name)
                if not _DOTTED.fullmatch(name) or not isinstance(value, str):
                    raise source.error(f"[{section}] entries are \"dotted.name\" = \"tracked class\"", where)
                target[name] = value
                self.origin[where] = source

    def _add_candidates(self, source: _Source, data: dict) -> None:
        """The ``[candidates]`` method names (and those whose first argument is a string)."""
        candidates = data.get("candidates", {})
        self._entry(source, ("candidates",), candidates, _CANDIDATE_KEYS)
        for key, target in (("methods", self.candidates), ("string_first", self.string_first)):
            for name in self._names(source, ("candidates",), candidates, key, _IDENTIFIER):
                if name not in target:
                    target.append(name)
                self.origin.setdefault(("candidates", key, name), source)

    @staticmethod
    def _entry(source: _Source, where: Where, entry: object, keys: set[str]) -> None:
        if not isinstance(entry, dict):
            raise source.error(f"{_name_of(where)} must be a table", where)
        unknown = sorted(set(entry) - keys)
        if unknown:
            raise source.error(f"{_name_of(where)}: unknown key {unknown[0]!r}; the keys are "
                               f"{', '.join(sorted(keys))}", (*where, unknown[0]))

    @staticmethod
    def _names(source: _Source, where: Where, entry: dict, key: str, pattern: re.Pattern) -> list[str]:
        names = entry.get(key, [])
        kind = "dotted names" if pattern is _DOTTED else "identifiers"
        if not isinstance(names, list) or not all(isinstance(n, str) and pattern.fullmatch(n) for n in names):
            bad = next((n for n in names if not (isinstance(n, str) and pattern.fullmatch(n))), names) \
                if isinstance(names, list) else names
            raise source.error(f"{_name_of(where)} {key} must be a list of {kind}; {bad!r} is not one",
                               (*where, key))
        return list(names)

    def table(self, path: str) -> CategoryTable:
        """The checked table (cross references: names claimed twice, untracked classes, cycles)."""
        for name in SCANNER_CATEGORIES:
            if name not in self.categories:
                raise self._file_error(f"the category {name!r} is missing: the scanner gives it to "
                                       f"{'async syntax' if name == 'syntax' else 'instance candidates'} "
                                       f"([categories.{name}] with its description)")
            entry = self.categories[name]
            if entry["prefixes"] or entry["builtins"]:
                raise self.error(f"[categories.{name}] takes no prefixes or builtins: the scanner gives it",
                                 ("categories", name))
        prefixes: dict[str, str] = {}
        builtins: dict[str, str] = {}
        for name, entry in self.categories.items():
            for key, claimed in (("prefixes", prefixes), ("builtins", builtins)):
                for item in entry[key]:
                    if item in claimed and claimed[item] != name:
                        raise self.error(f"{item!r} is in two categories, {claimed[item]!r} and {name!r}",
                                         ("categories", name, key))
                    claimed[item] = name
        table = CategoryTable(
            categories=tuple(self.categories),
            descriptions={n: e["description"] for n, e in self.categories.items()},
            api_prefixes=prefixes, builtins=builtins,
            types={n: tuple(e["methods"]) for n, e in self.types.items()},
            type_bases={n: e["base"] for n, e in self.types.items() if e["base"]},
            type_aliases={a: n for n, e in self.types.items() for a in e["aliases"]},
            constructors=dict(self.constructors), await_constructors=dict(self.await_constructors),
            method_returns={(n, m): r for n, e in self.types.items() for m, r in e["returns"].items()},
            enter_returns_self=frozenset(n for n, e in self.types.items() if e["enter_returns_self"]),
            candidate_methods=frozenset(self.candidates), string_arg_methods=frozenset(self.string_first),
            path=path,
        )
        self._check_types(table)
        return table

    def _file_error(self, message: str) -> CategoryError:
        assert self.last is not None
        return CategoryError(message, self.last.path)

    def _check_types(self, table: CategoryTable) -> None:
        every_method = {m for methods in table.types.values() for m in methods}
        aliases: dict[str, str] = {}
        for name, entry in self.types.items():
            where = ("types", name)
            if table.category_of(name) is None:
                raise self.error(f"the class {name!r} lies under no category's prefixes", where)
            base = entry["base"]
            if base is not None and base not in table.types:
                raise self.error(f"[types.{json.dumps(name)}] base {base!r} is not a tracked class", (*where, "base"))
            if base is not None and name in table.ancestors(name):
                raise self.error(f"[types.{json.dumps(name)}] base: the classes' bases go round in a circle",
                                 (*where, "base"))
            for alias in entry["aliases"]:
                if alias in table.types or aliases.get(alias, name) != name:
                    raise self.error(f"the alias {alias!r} already names {aliases.get(alias, alias)!r}",
                                     (*where, "aliases"))
                aliases[alias] = name
            known = {m for t in (name, *table.ancestors(name)) for m in table.types[t]}
            for method, returned in entry["returns"].items():
                if method not in known:
                    raise self.error(f"[types.{json.dumps(name)}] returns: {method!r} is not one of its methods",
                                     (*where, "returns"))
                if returned not in table.types:
                    raise self.error(f"[types.{json.dumps(name)}] returns: {returned!r} is not a tracked class",
                                     (*where, "returns"))
        for section in ("constructors", "await_constructors"):
            for name, returned in getattr(self, section).items():
                if returned not in table.types:
                    raise self.error(f"[{section}] {name!r}: {returned!r} is not a tracked class", (section, name))
        for name in self.candidates:
            if name not in every_method:
                raise self.error(f"[candidates] methods: {name!r} is no tracked class's method",
                                 ("candidates", "methods", name))
        for name in self.string_first:
            if name not in table.candidate_methods:
                raise self.error(f"[candidates] string_first: {name!r} is not one of the candidate methods",
                                 ("candidates", "string_first", name))


def parse_categories(text: str, path: str | Path = "<categories>") -> CategoryTable:
    """The table of a categories file's ``text`` (``path`` names it in messages, and in :attr:`CategoryTable.path`).

    Raises:
        CategoryError: not TOML, an unknown key, a value of the wrong type, a name in two categories, a reference
            to an untracked class, a missing ``syntax`` or ``candidates`` category (with the file's line).
    """
    source = _Source(text, path)
    reader = _Reader()
    extends = source.data.get("extends")
    if extends is not None:
        if extends != "default":
            raise source.error(f"extends = {extends!r}: the only table a file can extend is \"default\"",
                               ("extends",))
        reader.add(_Source(DEFAULT_FILE.read_text(encoding="utf-8"), DEFAULT_FILE))
    reader.add(source)
    return reader.table(str(path))
