"""Receiver evidence: what stdlib type an expression holds, and how we know.

One small function per kind of evidence (issue 8), each fed by the category table of the scan at hand
(:func:`slimebook.scan.categories.current_table`):

* :meth:`Evidence.constructor_evidence`: ``loop = asyncio.get_running_loop()``,
  ``q = asyncio.Queue()``, ``fut = loop.run_in_executor(...)``, ``p = await asyncio.create_subprocess_exec(...)``.
* :meth:`Evidence.annotation_evidence`: a parameter, variable or attribute annotated ``asyncio.Queue``
  (also ``Optional[...]``, ``X | None``, ``X[...]`` and string annotations).
* :meth:`Evidence.context_manager_evidence`: ``with ThreadPoolExecutor() as ex`` when the type's
  ``__enter__`` returns the instance.
* :meth:`Evidence.attribute_evidence`: ``self.q = asyncio.Queue()`` in one method of a class (or a
  class-level assignment / annotation), ``self.q`` in any method of it; and ``obj.q`` anywhere in the file
  where ``obj`` itself has evidence of being an instance of that class (``w = Worker()``, ``w: Worker``,
  ``self.worker = Worker()``), the class being defined in the same file (known by its qualified name, so a local
  class never borrows a same-named one's attributes), unless the file also assigns that attribute name on a
  receiver other than ``self``.

Inference is flow-insensitive: a name (or ``self`` attribute) has a type when all of its bindings in
its scope agree on one, ignoring ``= None``; an annotation wins over assignments. A type is either
a tracked one (a key of the table's :attr:`~slimebook.scan.categories.CategoryTable.types`) or *known
untracked*, spelled with a leading ``~`` (literals, builtin constructors, local classes, CapWords classes of other
modules, annotations naming other types); known-untracked receivers are never instance candidates.

Not followed (such receivers stay candidates): element types of containers and loops
(``for t in tasks``, ``dict[str, set[asyncio.Task]]``), subclasses of tracked types
(``class Worker(threading.Thread)`` then ``self.start()``), return types of the project's own
functions, and tuple unpacking of a factory's result (``r, w = await asyncio.open_connection()``).
"""

from __future__ import annotations

import libcst as cst

from .categories import BUILTIN_TYPES, current_table
from .imports import Binding, Scope, import_target, lookup

__all__ = ["Evidence", "TypeFact", "dotted_chain", "is_tracked", "resolve_chain"]

#: (type, provenance); ``type`` starts with ``~`` when it is known but not tracked.
TypeFact = tuple[str, str]

_LITERALS = (
    cst.Dict, cst.DictComp, cst.List, cst.ListComp, cst.Set, cst.SetComp, cst.Tuple, cst.SimpleString,
    cst.ConcatenatedString, cst.FormattedString, cst.Integer, cst.Float, cst.Imaginary,
    cst.GeneratorExp, cst.Lambda, cst.Comparison,
)
_UNKNOWN_ANNOTATIONS = frozenset({"typing.Any", "object", "typing_extensions.Any"})
_NONE = "~None"


def is_tracked(fact: TypeFact | None) -> bool:
    """True when ``fact`` names a tracked stdlib type."""
    return fact is not None and not fact[0].startswith("~")


def dotted_chain(expr: cst.BaseExpression) -> tuple[str, list[str]] | None:
    """``a.b.c`` → ``("a", ["b", "c"])``; None unless ``expr`` is a Name or an Attribute chain on one."""
    attrs: list[str] = []
    while isinstance(expr, cst.Attribute):
        attrs.append(expr.attr.value)
        expr = expr.value
    if not isinstance(expr, cst.Name):
        return None
    attrs.reverse()
    return expr.value, attrs


def resolve_chain(expr: cst.BaseExpression, scope: Scope) -> str | None:
    """The qualified name of a Name / Attribute chain whose root resolves to an import, else None."""
    chain = dotted_chain(expr)
    if chain is None:
        return None
    target = import_target(scope, chain[0])
    if target is None:
        return None
    return ".".join((target, *chain[1])) if chain[1] else target


def _is_none(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"


def _looks_like_class(qualname: str) -> bool:
    last = qualname.rsplit(".", 1)[-1].lstrip("_")
    return bool(last) and last[0].isupper() and not last.isupper()


class Evidence:
    """Type inference over one file's scopes (built by :mod:`slimebook.scan.walker`)."""

    def __init__(self, classes: dict[str, Scope | None] | None = None,
                 foreign_stores: set[str] | frozenset[str] = frozenset()) -> None:
        """``classes``: the file's class scopes by qualified name (``Worker``, ``f.Worker``; None for a name
        defined twice), for ``obj.attr`` where ``obj`` is an instance of one of them; ``foreign_stores``: attribute
        names the file assigns on some other receiver than a method's ``self`` (``w.q = …``), which are then not
        typed through an instance (the store may have replaced what the class assigned)."""
        self._memo: dict[tuple[int, str], TypeFact | None] = {}
        self._busy: set[tuple[int, str]] = set()
        self._classes = classes or {}
        self._foreign = foreign_stores
        self._table = current_table()

    # -- entry point ------------------------------------------------------------------------------
    def expr_type(self, expr: cst.BaseExpression, scope: Scope) -> TypeFact | None:
        """The type of ``expr`` evaluated in ``scope``, or None when there is no evidence."""
        if isinstance(expr, cst.Name):
            if expr.value in ("True", "False"):
                return ("~builtins.bool", "literal")
            return self.name_type(expr.value, scope)
        if isinstance(expr, cst.Attribute):
            return self.attribute_evidence(expr, scope)
        if isinstance(expr, cst.Call):
            return self.constructor_evidence(expr, scope)
        if isinstance(expr, cst.Await) and isinstance(expr.expression, cst.Call):
            target = resolve_chain(expr.expression.func, scope)
            if target in self._table.await_constructors:
                return (self._table.await_constructors[target], "constructor_evidence")
            return None
        if isinstance(expr, _LITERALS):
            return (f"~builtins.{type(expr).__name__}", "literal")
        return None

    # -- the four kinds of evidence ---------------------------------------------------------------
    def constructor_evidence(self, call: cst.Call, scope: Scope) -> TypeFact | None:
        """Type of a call's result: a tracked class or factory, or a method with a known return."""
        func = call.func
        target = resolve_chain(func, scope)
        if target is not None:
            canonical = self._table.canonical_type(target)
            if canonical in self._table.types:
                return (canonical, "constructor_evidence")
            if target in self._table.constructors:
                return (self._table.constructors[target], "constructor_evidence")
            if _looks_like_class(target):
                return (f"~{target}", "constructor_evidence")
            return None
        if isinstance(func, cst.Name):
            owner = lookup(scope, func.value)
            if owner is None:
                return (f"~builtins.{func.value}", "literal") if func.value in BUILTIN_TYPES else None
            if all(b.kind == "class" for b in owner.bindings[func.value]):
                # the class's qualified name, so a local class never borrows a same-named module class's attributes
                return (f"~{owner.child_qualname(func.value)}", "constructor_evidence")
            return None
        if isinstance(func, cst.Attribute):
            receiver = self.expr_type(func.value, scope)
            if is_tracked(receiver):
                returned = self._table.method_returns.get((receiver[0], func.attr.value))
                if returned is not None:
                    return (returned, "constructor_evidence")
        return None

    def annotation_evidence(self, annotation: cst.BaseExpression, scope: Scope) -> str | None:
        """The type an annotation names: tracked, ``~other``, or None (unknown / ``Any``)."""
        if isinstance(annotation, cst.Annotation):
            annotation = annotation.annotation
        if isinstance(annotation, (cst.SimpleString, cst.ConcatenatedString)):
            value = annotation.evaluated_value
            if not isinstance(value, str):
                return None
            try:
                annotation = cst.parse_expression(value.strip())
            except (cst.ParserSyntaxError, RecursionError, ValueError):
                return None
        if _is_none(annotation):
            return _NONE
        if isinstance(annotation, cst.BinaryOperation) and isinstance(annotation.operator, cst.BitOr):
            return self._union([annotation.left, annotation.right], scope)
        if isinstance(annotation, cst.Subscript):
            base = resolve_chain(annotation.value, scope)
            items = [el.slice.value for el in annotation.slice if isinstance(el.slice, cst.Index)]
            if base in ("typing.Optional", "typing_extensions.Optional") and items:
                return self._union([items[0]], scope)
            if base in ("typing.Union", "typing_extensions.Union"):
                return self._union(items, scope)
            if base in ("typing.Annotated", "typing_extensions.Annotated") and items:
                return self.annotation_evidence(items[0], scope)
            annotation = annotation.value
        target = resolve_chain(annotation, scope)
        if target is not None:
            canonical = self._table.canonical_type(target)
            if canonical in self._table.types:
                return canonical
            return None if target in _UNKNOWN_ANNOTATIONS else f"~{target}"
        chain = dotted_chain(annotation)
        if chain is None:
            return None
        if chain[0] == "object" and not chain[1]:
            return None
        owner = lookup(scope, chain[0]) if not chain[1] else None
        if owner is not None and all(b.kind == "class" for b in owner.bindings[chain[0]]):
            return f"~{owner.child_qualname(chain[0])}"  # a class of this file, by its qualified name
        return "~" + ".".join((chain[0], *chain[1]))

    def context_manager_evidence(self, expr: cst.BaseExpression, scope: Scope) -> TypeFact | None:
        """Type bound by ``with expr as name``: the context manager itself when its ``__enter__``
        returns it; otherwise known-untracked (or None with no evidence about ``expr``)."""
        fact = self.expr_type(expr, scope)
        if fact is None:
            return None
        if fact[0] in self._table.enter_returns_self:
            return (fact[0], "context_manager_evidence")
        if fact[0].startswith("~"):
            # still known untracked (no candidate), but not an instance to type attributes through: a class of
            # this file may return anything from __enter__ (attribute_evidence checks this provenance)
            return (fact[0], "context_manager_evidence")
        return ("~enter", "context_manager_evidence")

    def attribute_evidence(self, expr: cst.Attribute, scope: Scope) -> TypeFact | None:
        """Type of ``self.name`` from the class's ``self.name = …`` / annotations; of ``obj.name`` the same
        way when ``obj`` is known to be an instance of a class defined in this file; else None."""
        cls = self.self_class(expr.value.value, scope) if isinstance(expr.value, cst.Name) else None
        if cls is None and expr.attr.value not in self._foreign:
            owner = self.expr_type(expr.value, scope)
            cls = self._classes.get(owner[0][1:]) if owner is not None and owner[0].startswith("~") \
                and owner[1] != "context_manager_evidence" else None
        if cls is None:
            return None
        return self._class_attribute(cls, expr.attr.value)

    def _class_attribute(self, cls: Scope, name: str) -> TypeFact | None:
        """What every binding of attribute ``name`` of class ``cls`` agrees on (memoised per class)."""
        key = (id(cls), "." + name)
        if key in self._memo:
            return self._memo[key]
        if key in self._busy:
            return None
        self._busy.add(key)
        bindings = [*cls.attrs.get(name, ()), *cls.bindings.get(name, ())]
        fact = self._agree(bindings) if bindings else None
        if is_tracked(fact) and fact[1] != "annotation_evidence":
            fact = (fact[0], "attribute_evidence")
        self._busy.discard(key)
        self._memo[key] = fact
        return fact

    # -- helpers ------------------------------------------------------------------------------------
    def name_type(self, name: str, scope: Scope) -> TypeFact | None:
        """Type of a bare name from all its bindings in the scope that owns it."""
        owner = lookup(scope, name)
        if owner is None:
            return None
        key = (id(owner), name)
        if key in self._memo:
            return self._memo[key]
        if key in self._busy:
            return None
        self._busy.add(key)
        fact = self._agree(owner.bindings[name])
        self._busy.discard(key)
        self._memo[key] = fact
        return fact

    def self_class(self, name: str, scope: Scope) -> Scope | None:
        """The class scope when ``name`` is the unrebound first parameter of one of its methods."""
        owner = lookup(scope, name)
        if owner is None or owner.kind != "function" or owner.first_param != name:
            return None
        if owner.parent is None or owner.parent.kind != "class":
            return None
        bindings = owner.bindings[name]
        if len(bindings) != 1 or bindings[0].kind != "param":
            return None
        return owner.parent

    def _union(self, items: list[cst.BaseExpression], scope: Scope) -> str | None:
        types = {self.annotation_evidence(item, scope) for item in items} - {_NONE}
        if len(types) != 1:
            return None
        return types.pop()

    def _agree(self, bindings: list[Binding]) -> TypeFact | None:
        annotated = [b for b in bindings if b.kind in ("annotation", "param") and b.value is not None]
        if annotated:
            types = {self.annotation_evidence(b.value, b.scope) for b in annotated}
            if len(types) != 1:
                return None
            found = types.pop()
            return None if found is None or found == _NONE else (found, "annotation_evidence")
        fact: TypeFact | None = None
        for binding in bindings:
            if binding.kind == "assign":
                if _is_none(binding.value):
                    continue
                current = self.expr_type(binding.value, binding.scope)
            elif binding.kind == "with":
                current = self.context_manager_evidence(binding.value, binding.scope)
            elif binding.kind == "class":
                current = ("~class", "constructor_evidence")
            else:
                return None
            if current is None:
                return None
            if fact is None:
                fact = current
            elif fact[0] != current[0]:
                return None
        return fact
