"""The scope-aware import table: scopes, their bindings, and name resolution.

Resolution follows Python's own scoping rules (the language reference, "Naming and binding"),
flow-insensitively, the way the compiler's symbol table sees a file:

* A name bound anywhere in a scope (assignment, parameter, ``import``, ``def``/``class``, ``for``
  and ``with`` targets, ``except ... as``, walrus, ``del``, match captures) is local to that whole
  scope; ``global`` / ``nonlocal`` send the binding to the module / the enclosing function.
* A lookup walks outwards from the scope of the expression; class bodies are skipped except for
  code directly in them.
* A name *resolves to an import* when every binding of it in the scope that owns it is an import of
  the same qualified name. Any other binding there, a parameter, an assignment or a different
  import, shadows it; so a parameter named ``asyncio`` shadows ``import asyncio``, and
  ``import asyncio`` inside a function is seen only in that function.

``import a.b.c`` binds ``a`` (to module ``a``); ``import a.b as c`` binds ``c`` to ``a.b``;
``from a import b as c`` binds ``c`` to ``a.b``; relative imports bind names that never resolve
to the standard library.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Binding", "Scope", "import_target", "lookup"]


@dataclass(slots=True)
class Binding:
    """One binding of a name.

    Attributes:
        kind: ``import`` (``value`` is the qualified name); ``assign`` (``value`` is the assigned
            expression node); ``annotation`` (``value`` is the annotation node); ``param``
            (``value`` is the annotation node or None); ``with`` (``value`` is the context
            expression); ``other`` (definitions, loop and except targets, ``del`` …).
        value: see ``kind``.
        scope: the :class:`Scope` in which ``value`` is evaluated.
    """

    kind: str
    value: Any = None
    scope: Scope | None = None


@dataclass(eq=False, slots=True)
class Scope:
    """A module, class, function, lambda or comprehension scope.

    Attributes:
        kind: ``module`` | ``class`` | ``function`` | ``lambda`` | ``comprehension``.
        qualname: the record ``scope`` string of code in it (``<module>``, ``A.f``, ``f.<lambda>``).
        parent: the enclosing scope (None for the module).
        bindings: name → list of :class:`Binding`.
        declared_global, declared_nonlocal: names declared ``global`` / ``nonlocal`` here.
        first_param: a method's first positional parameter (``self``/``cls``), else None.
        attrs: for classes, attribute name → bindings from ``self.name = …`` in its methods.
        has_yield: a ``yield`` belongs to this function.
    """

    kind: str
    qualname: str
    parent: Scope | None = None
    bindings: dict[str, list[Binding]] = field(default_factory=dict)
    declared_global: set[str] = field(default_factory=set)
    declared_nonlocal: set[str] = field(default_factory=set)
    first_param: str | None = None
    attrs: dict[str, list[Binding]] = field(default_factory=dict)
    has_yield: bool = False

    def child_qualname(self, name: str) -> str:
        """The qualname of a scope named ``name`` nested in this one."""
        return name if self.kind == "module" else f"{self.qualname}.{name}"

    def module(self) -> Scope:
        """The module scope at the root of this one."""
        scope = self
        while scope.parent is not None:
            scope = scope.parent
        return scope

    def owner_of_binding(self, name: str) -> Scope:
        """The scope a new binding of ``name`` made here lands in (``global`` / ``nonlocal`` /
        walrus in a comprehension)."""
        scope = self
        while scope.kind == "comprehension" and scope.parent is not None:
            scope = scope.parent
        return scope

    def bind(self, name: str, binding: Binding) -> None:
        """Record a binding of ``name`` in this scope, honouring ``global`` / ``nonlocal``."""
        target: Scope = self
        if name in self.declared_global:
            target = self.module()
        elif name in self.declared_nonlocal:
            parent = self.parent
            while parent is not None and parent.kind in ("class", "comprehension"):
                parent = parent.parent
            if parent is not None:
                target = parent
        target.bindings.setdefault(name, []).append(binding)


def lookup(scope: Scope, name: str) -> Scope | None:
    """The scope whose binding of ``name`` is seen from ``scope``, or None (builtin or unbound)."""
    if name in scope.declared_global:
        module = scope.module()
        return module if name in module.bindings else None
    current: Scope | None = scope
    first = True
    while current is not None:
        if not first and current.kind == "class":
            current = current.parent
            continue
        if name in current.bindings:
            return current
        if not first and name in current.declared_global:
            module = current.module()
            return module if name in module.bindings else None
        first = False
        current = current.parent
    return None


def import_target(scope: Scope, name: str) -> str | None:
    """The qualified name ``name`` stands for in ``scope`` if it resolves to an import, else None."""
    owner = lookup(scope, name)
    if owner is None:
        return None
    target = None
    for binding in owner.bindings[name]:
        if binding.kind != "import" or (target is not None and binding.value != target):
            return None
        target = binding.value
    return target
