"""The category table as a value: the scanner's rules about names (which category a name belongs to, which tracked
class a method call is made on, what each class inherits), as :func:`slimebook.scan.categories.load_categories`
reads them from a categories file. A part of :mod:`slimebook.scan.categories`, which re-exports its names."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

__all__ = ["CategoryError", "CategoryTable"]


class CategoryError(ValueError):
    """A categories file that does not hold. ``path`` is the file, ``line`` the 1-based line of the problem when
    known; ``str()`` is ``path:line: message``."""

    def __init__(self, message: str, path: str | Path, line: int | None = None) -> None:
        self.message = message
        self.path = str(path)
        self.line = line
        super().__init__(f"{self.path}:{line}: {message}" if line else f"{self.path}: {message}")


@dataclass(frozen=True, eq=False)
class CategoryTable:
    """The scanner's rules about names, read from a categories file (see the module docstring for the format).

    Attributes:
        categories: every category, in report order (``syntax`` and ``candidates`` included).
        descriptions: category → the sentence of its usage page (``""`` when the file gives none).
        api_prefixes: dotted-name prefix → category.
        builtins: builtin function → category.
        types: tracked class (public dotted name) → its method names.
        type_bases: tracked class → the tracked class it inherits from.
        type_aliases: other name → the tracked class's public name.
        constructors: function → tracked class of its result; ``await_constructors`` the same when awaited.
        method_returns: ``(class, method)`` → tracked class of the method's result.
        enter_returns_self: tracked classes whose ``__enter__`` / ``__aenter__`` returns the instance.
        candidate_methods: method names reported as ``instance_candidate`` on a receiver of unknown type.
        string_arg_methods: candidate methods that are not reported when called with a string first.
        path: the file it was read from (the book's file when it extends the default).
    """

    categories: tuple[str, ...]
    descriptions: Mapping[str, str]
    api_prefixes: Mapping[str, str]
    builtins: Mapping[str, str]
    types: Mapping[str, tuple[str, ...]]
    type_bases: Mapping[str, str]
    type_aliases: Mapping[str, str]
    constructors: Mapping[str, str]
    await_constructors: Mapping[str, str]
    method_returns: Mapping[tuple[str, str], str]
    enter_returns_self: frozenset[str]
    candidate_methods: frozenset[str]
    string_arg_methods: frozenset[str]
    path: str = field(default="")

    @cached_property
    def digest(self) -> str:
        """12 hex digits over every rule of the table (not the descriptions, which change no record, nor the path):
        part of the scanner version, so a table that scans differently has its own cache."""
        data = [list(self.categories), self.api_prefixes, self.builtins, self.types, self.type_bases,
                self.type_aliases, self.constructors, self.await_constructors,
                sorted(f"{t}.{m}={r}" for (t, m), r in self.method_returns.items()),
                sorted(self.enter_returns_self), sorted(self.candidate_methods), sorted(self.string_arg_methods)]
        return hashlib.sha1(json.dumps(data, sort_keys=True).encode()).hexdigest()[:12]

    def category_of(self, qualname: str) -> str | None:
        """The category of a resolved dotted name, by its longest prefix in :attr:`api_prefixes`.

        Args:
            qualname: a resolved dotted name such as ``"asyncio.subprocess.PIPE"``.
        Returns:
            The category, or None when no prefix of the name is listed.
        """
        prefixes = self.api_prefixes
        name = qualname
        while True:
            category = prefixes.get(name)
            if category is not None:
                return category
            cut = name.rfind(".")
            if cut < 0:
                return None
            name = name[:cut]

    def canonical_type(self, qualname: str) -> str:
        """The public class name for ``qualname`` (``asyncio.queues.Queue`` → ``asyncio.Queue``)."""
        return self.type_aliases.get(qualname, qualname)

    def ancestors(self, type_name: str) -> list[str]:
        """The tracked base classes of ``type_name``, nearest first (``asyncio.Task`` → ``["asyncio.Future"]``)."""
        found: list[str] = []
        while type_name in self.type_bases and self.type_bases[type_name] not in found:
            type_name = self.type_bases[type_name]
            found.append(type_name)
        return found

    def split_method(self, name: str) -> tuple[str, str] | None:
        """``"asyncio.Task.cancel"`` → ``("asyncio.Task", "cancel")`` when the part before the last dot is a tracked
        class (a ``method_call`` record's name), else None."""
        type_name, _, method = name.rpartition(".")
        return (type_name, method) if type_name in self.types else None

    def inherited_names(self, name: str) -> list[str]:
        """The names a method use ``Type.method`` also counts for: ``Base.method`` for each tracked ancestor that
        defines ``method`` (``asyncio.Task.add_done_callback`` → ``["asyncio.Future.add_done_callback"]``)."""
        split = self.split_method(name)
        if split is None:
            return []
        type_name, method = split
        return [f"{base}.{method}" for base in self.ancestors(type_name) if method in self.types[base]]

    def members(self, category: str) -> list[str]:
        """What the table puts in ``category``: its name prefixes and builtins, sorted."""
        return sorted([p for p, c in self.api_prefixes.items() if c == category]
                      + [b for b, c in self.builtins.items() if c == category])


# -- the table of the scan at hand ---------------------------------------------------------------------------
