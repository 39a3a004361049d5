"""The walk over one libcst module: scopes, bindings and the raw material of records, with nothing decided yet.

Pipeline position: the first of the per-file scanner's three steps, which :func:`.visitor.scan_module` runs:
**walk** → resolution (:mod:`.resolve`) → positions (:mod:`.positions`).

The walk is our own (a field walk over the frozen dataclasses, trivia fields skipped): libcst's
visitor machinery rebuilds every node and its ``QualifiedNameProvider`` costs about ten times the
parse on the pinned tree (see ``/work/shared/NOTES.md``). It builds the scopes and bindings of
:mod:`slimebook.scan.imports` and collects, without deciding anything yet:

* import statements (``import`` records, decided at once: they need no resolution);
* every outermost Name / Attribute chain in load context, with whether it is the callee of a call
  (``api_call`` / ``api_reference`` once the root resolves to an import of a tracked name);
* every call ``receiver.method(...)`` (``method_call`` or ``instance_candidate``);
* the async syntax (``async_def``, ``await``, ``async_with``, ``async_for``,
  ``async_comprehension``, and ``async_generator`` for an ``async def`` owning a ``yield``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import libcst as cst

from .categories import current_table
from .evidence import dotted_chain
from .imports import Binding, Scope

__all__ = ["Entry", "Walker"]

_TRIVIA = frozenset({
    "lpar", "rpar", "comma", "leading_lines", "lines_after_decorators", "header", "footer",
    "semicolon", "newline", "trailing_whitespace", "colon", "dot", "equal", "operator",
    "asynchronous", "lbracket", "rbracket", "lbrace", "rbrace", "star", "posonly_ind",
    "first_line", "empty_lines", "relative",
})
_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields(node_type: type) -> tuple[str, ...]:
    names = _FIELDS.get(node_type)
    if names is None:
        names = tuple(
            f.name for f in dataclasses.fields(node_type)
            if f.name not in _TRIVIA and not f.name.startswith("whitespace")
        )
        _FIELDS[node_type] = names
    return names


def _dotted(node: cst.BaseExpression) -> str:
    chain = dotted_chain(node)
    assert chain is not None
    return ".".join((chain[0], *chain[1]))


def _is_staticmethod(decorators: tuple[cst.Decorator, ...] | list[cst.Decorator]) -> bool:
    return any(isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod" for d in decorators)


@dataclass
class Entry:
    """A record before positions: its start node, end node and whether each is inclusive."""

    start: cst.CSTNode
    end: cst.CSTNode
    scope: str
    kind: str
    name: str
    category: str
    provenance: str
    inclusive_start: bool = False
    inclusive_end: bool = False


class Walker:
    """Builds scopes and collects the raw material of records (see module docstring).

    Use: ``walker = Walker(); walker.walk(module)``; then :func:`~slimebook.scan.resolve.resolve` reads:

    Attributes:
        module_scope: the module's :class:`~slimebook.scan.imports.Scope`, holding every other scope.
        entries: the :class:`Entry` list decided during the walk (import statements, async syntax).
        refs: ``(root name, attributes, scope, field, node, use)`` per outermost Name / Attribute chain, ``use``
            being ``load``, ``call`` or ``store``.
        calls: ``(call, scope, field)`` per call whose callee is an attribute.
        attr_assigns: ``(receiver name, attribute, binding, scope)`` per assignment to ``name.attr``.
        async_defs: ``(node, scope)`` per ``async def``.
        import_names: every name an import binds somewhere in the file.
        classes: class qualname → its scope (None when the class is defined twice: ambiguous).
    """

    def __init__(self) -> None:
        self.module_scope = Scope("module", "<module>")
        self.scope = self.module_scope
        self.field = "<module>"
        self.entries: list[Entry] = []
        # (root name, attributes, scope, field, node, use): use is "load", "call" or "store"
        self.refs: list[tuple[str, tuple[str, ...], Scope, str, cst.CSTNode, str]] = []
        self.calls: list[tuple[cst.Call, Scope, str]] = []
        self.attr_assigns: list[tuple[str, str, Binding, Scope]] = []
        self.async_defs: list[tuple[cst.FunctionDef, Scope]] = []
        self.import_names: set[str] = set()
        # class qualname → its scope, for receivers typed through an instance (None: defined twice, ambiguous)
        self.classes: dict[str, Scope | None] = {}

    # -- traversal --------------------------------------------------------------------------------
    def walk(self, node: cst.CSTNode) -> None:
        """Walk ``node``: its ``visit_<Type>`` method when there is one, else each child of a non-trivia field."""
        handler = _HANDLERS.get(node.__class__)
        if handler is not None:
            handler(self, node)
            return
        for name in _fields(node.__class__):
            value = getattr(node, name)
            if isinstance(value, cst.CSTNode):
                self.walk(value)
            elif isinstance(value, (list, tuple)):
                for child in value:
                    if isinstance(child, cst.CSTNode):
                        self.walk(child)

    def _syntax(self, name: str, start: cst.CSTNode, end: cst.CSTNode | None = None,
                scope: str | None = None, inclusive_start: bool = False, inclusive_end: bool = False) -> None:
        self.entries.append(Entry(start, end or start, scope or self.field, "syntax", name, "syntax",
                                  "syntax", inclusive_start, inclusive_end))

    def chain(self, node: cst.BaseExpression, is_call: bool, store: bool = False) -> None:
        """An outermost Name / Attribute chain in load context (``store``: the target of an assignment)."""
        attrs: list[str] = []
        base = node
        while isinstance(base, cst.Attribute):
            attrs.append(base.attr.value)
            base = base.value
        if isinstance(base, cst.Name):
            attrs.reverse()
            use = "store" if store else "call" if is_call else "load"
            self.refs.append((base.value, tuple(attrs), self.scope, self.field, node, use))
        else:
            self.walk(base)

    # -- expressions --------------------------------------------------------------------------------
    def visit_Name(self, node: cst.Name) -> None:
        self.refs.append((node.value, (), self.scope, self.field, node, "load"))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.chain(node, False)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute):
            self.calls.append((node, self.scope, self.field))
        if isinstance(func, (cst.Name, cst.Attribute)):
            self.chain(func, True)
        else:
            self.walk(func)
        for arg in node.args:
            self.walk(arg.value)

    def visit_Arg(self, node: cst.Arg) -> None:
        self.walk(node.value)

    def visit_Await(self, node: cst.Await) -> None:
        self._syntax("await", node)
        self.walk(node.expression)

    def visit_Yield(self, node: cst.Yield) -> None:
        scope = self.scope
        while scope.kind == "comprehension" and scope.parent is not None:
            scope = scope.parent
        scope.has_yield = True
        if node.value is not None:
            self.walk(node.value)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self.walk(node.value)
        if isinstance(node.target, cst.Name):
            self.scope.owner_of_binding(node.target.value).bind(
                node.target.value, Binding("assign", node.value, self.scope))
        else:
            self.walk(node.target)

    def visit_Lambda(self, node: cst.Lambda) -> None:
        outer, outer_field = self.scope, self.field
        scope = Scope("lambda", outer.child_qualname("<lambda>"), outer)
        self.field = scope.qualname
        self._parameters(node.params, scope)
        self.scope = scope
        self.walk(node.body)
        self.scope, self.field = outer, outer_field

    def _comprehension(self, node: cst.BaseComp, elements: list[cst.BaseExpression]) -> None:
        outer, outer_field = self.scope, self.field
        scope = Scope("comprehension", outer.child_qualname("<comprehension>"), outer)
        self.field = scope.qualname
        comp: cst.CompFor | None = node.for_in
        first = True
        while comp is not None:
            self.walk(comp.iter)  # the first iterable is evaluated in the enclosing scope
            if first:
                self.scope = scope
                first = False
            self._bind_target(comp.target, Binding("other"))
            for cond in comp.ifs:
                self.walk(cond.test)
            if comp.asynchronous is not None:
                # ends with the iterable; a tuple's or generator's own parentheses are part of it (as in ast)
                end, inclusive_end = comp.iter, False
                if isinstance(end, (cst.Tuple, cst.GeneratorExp)) and end.rpar:
                    end, inclusive_end = end.rpar[0], True
                self._syntax("async_comprehension", comp.asynchronous, end, inclusive_start=True,
                             inclusive_end=inclusive_end)
            comp = comp.inner_for_in
        for element in elements:
            self.walk(element)
        self.scope, self.field = outer, outer_field

    def visit_ListComp(self, node: cst.ListComp) -> None:
        self._comprehension(node, [node.elt])

    def visit_SetComp(self, node: cst.SetComp) -> None:
        self._comprehension(node, [node.elt])

    def visit_GeneratorExp(self, node: cst.GeneratorExp) -> None:
        self._comprehension(node, [node.elt])

    def visit_DictComp(self, node: cst.DictComp) -> None:
        self._comprehension(node, [node.key, node.value])

    # -- definitions ------------------------------------------------------------------------------
    def _parameters(self, params: cst.Parameters, scope: Scope) -> None:
        """Annotations and defaults are evaluated in the current scope; names bind in ``scope``."""
        for param in (*params.posonly_params, *params.params, params.star_arg, *params.kwonly_params,
                      params.star_kwarg):
            if not isinstance(param, cst.Param):
                continue
            annotation = param.annotation.annotation if param.annotation is not None else None
            if annotation is not None:
                self.walk(annotation)
            if param.default is not None:
                self.walk(param.default)
            scope.bind(param.name.value, Binding("param", annotation, self.scope))

    def _type_parameters(self, params: cst.TypeParameters | None, scope: Scope) -> None:
        if params is None:
            return
        for param in params.params:
            inner = param.param
            scope.bind(inner.name.value, Binding("other"))
            bound = getattr(inner, "bound", None)
            if bound is not None:
                self.walk(bound)
            default = getattr(param, "default", None)
            if default is not None:
                self.walk(default)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        outer, outer_field = self.scope, self.field
        for decorator in node.decorators:
            self.walk(decorator.decorator)
        name = node.name.value
        outer.bind(name, Binding("other"))
        scope = Scope("function", outer.child_qualname(name), outer)
        positional = [*node.params.posonly_params, *node.params.params]
        if outer.kind == "class" and positional and not _is_staticmethod(node.decorators):
            scope.first_param = positional[0].name.value
        self.field = scope.qualname
        self._type_parameters(node.type_parameters, scope)
        self._parameters(node.params, scope)
        if node.returns is not None:
            self.walk(node.returns.annotation)
        self.scope = scope
        self.walk(node.body)
        self.scope, self.field = outer, outer_field
        if node.asynchronous is not None:
            self._syntax("async_def", node, scope=scope.qualname)
            self.async_defs.append((node, scope))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        outer, outer_field = self.scope, self.field
        for decorator in node.decorators:
            self.walk(decorator.decorator)
        outer.bind(node.name.value, Binding("class"))
        scope = Scope("class", outer.child_qualname(node.name.value), outer)
        self.classes[scope.qualname] = None if scope.qualname in self.classes else scope
        self.field = scope.qualname
        self._type_parameters(node.type_parameters, scope)
        for arg in (*node.bases, *node.keywords):
            self.walk(arg.value)
        self.scope = scope
        self.walk(node.body)
        self.scope, self.field = outer, outer_field

    def visit_TypeAlias(self, node: cst.TypeAlias) -> None:
        self.scope.bind(node.name.value, Binding("other"))
        self._type_parameters(node.type_parameters, self.scope)
        self.walk(node.value)

    # -- imports ------------------------------------------------------------------------------------
    def _import_record(self, qualname: str, start: cst.CSTNode, end: cst.CSTNode) -> None:
        category = current_table().category_of(qualname)
        if category is not None:
            self.entries.append(Entry(start, end, self.field, "import", qualname, category, "import_statement"))

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            dotted = _dotted(alias.name)
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                bound, target, end = alias.asname.name.value, dotted, alias.asname.name
            else:
                bound = target = dotted.split(".", 1)[0]
                end = alias.name
            self.scope.bind(bound, Binding("import", target))
            self.import_names.add(bound)
            self._import_record(dotted, alias.name, end)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        module = _dotted(node.module) if node.module is not None else ""
        relative = "." * len(node.relative)
        if isinstance(node.names, cst.ImportStar):
            if not relative:
                self._import_record(f"{module}.*", node, node)
            return
        for alias in node.names:
            name = alias.name.value if isinstance(alias.name, cst.Name) else _dotted(alias.name)
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                bound, end = alias.asname.name.value, alias.asname.name
            else:
                bound, end = name, alias.name
            target = f"{relative}{module}.{name}" if module else f"{relative}{name}"
            self.scope.bind(bound, Binding("import", target))
            self.import_names.add(bound)
            if not relative:
                self._import_record(target, alias.name, end)

    # -- bindings ---------------------------------------------------------------------------------
    def _bind_target(self, target: cst.BaseExpression, binding: Binding, walked: bool = False) -> None:
        """Bind ``target`` to ``binding``; ``walked``: the target's expressions were already recorded (a second
        binding of the same target, as for ``x.attr: T = value``)."""
        if isinstance(target, cst.Name):
            self.scope.bind(target.value, binding)
        elif isinstance(target, cst.Attribute):
            if walked:
                pass
            elif isinstance(target.value, (cst.Name, cst.Attribute)):
                # the whole target: ``asyncio.timeout = shim`` stores the API asyncio.timeout (a chain whose root is
                # not a tracked import makes no record, as in load context)
                self.chain(target, False, store=True)
            else:
                self.walk(target.value)
            if isinstance(target.value, cst.Name):
                self.attr_assigns.append((target.value.value, target.attr.value, binding, self.scope))
        elif isinstance(target, (cst.Tuple, cst.List)):
            values = None
            if binding.kind == "assign" and isinstance(binding.value, (cst.Tuple, cst.List)):
                values = [el.value for el in binding.value.elements]
                if len(values) != len(target.elements) or any(
                        isinstance(el, cst.StarredElement) for el in (*target.elements, *binding.value.elements)):
                    values = None
            for index, element in enumerate(target.elements):
                inner = Binding("assign", values[index], binding.scope) if values else Binding("other")
                self._bind_target(element.value, inner)
        elif isinstance(target, cst.StarredElement):
            self._bind_target(target.value, Binding("other"))
        else:
            self.walk(target)

    def visit_Assign(self, node: cst.Assign) -> None:
        self.walk(node.value)
        for target in node.targets:
            self._bind_target(target.target, Binding("assign", node.value, self.scope))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        annotation = node.annotation.annotation
        self.walk(annotation)
        if node.value is not None:
            self.walk(node.value)
        self._bind_target(node.target, Binding("annotation", annotation, self.scope))
        if node.value is not None and isinstance(node.target, (cst.Name, cst.Attribute)):
            self._bind_target(node.target, Binding("assign", node.value, self.scope), walked=True)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.walk(node.value)
        self._bind_target(node.target, Binding("other"))

    def visit_For(self, node: cst.For) -> None:
        self.walk(node.iter)
        self._bind_target(node.target, Binding("other"))
        self.walk(node.body)
        if node.orelse is not None:
            self.walk(node.orelse)
        if node.asynchronous is not None:
            self._syntax("async_for", node)

    def visit_With(self, node: cst.With) -> None:
        for item in node.items:
            self.walk(item.item)
            if item.asname is not None:
                target = item.asname.name
                kind = "with" if isinstance(target, cst.Name) else "other"
                self._bind_target(target, Binding(kind, item.item, self.scope))
        self.walk(node.body)
        if node.asynchronous is not None:
            self._syntax("async_with", node)

    def _handler(self, node: cst.ExceptHandler | cst.ExceptStarHandler) -> None:
        if node.type is not None:
            self.walk(node.type)
        if node.name is not None:
            self._bind_target(node.name.name, Binding("other"))
        self.walk(node.body)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        self._handler(node)

    def visit_ExceptStarHandler(self, node: cst.ExceptStarHandler) -> None:
        self._handler(node)

    def visit_Del(self, node: cst.Del) -> None:
        self._bind_target(node.target, Binding("other"))

    def visit_Global(self, node: cst.Global) -> None:
        self.scope.declared_global.update(item.name.value for item in node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.scope.declared_nonlocal.update(item.name.value for item in node.names)

    # -- match patterns ---------------------------------------------------------------------------
    def visit_MatchAs(self, node: cst.MatchAs) -> None:
        if node.pattern is not None:
            self.walk(node.pattern)
        if node.name is not None:
            self.scope.bind(node.name.value, Binding("other"))

    def visit_MatchStar(self, node: cst.MatchStar) -> None:
        if node.name is not None:
            self.scope.bind(node.name.value, Binding("other"))

    def visit_MatchMapping(self, node: cst.MatchMapping) -> None:
        for element in node.elements:
            self.walk(element.key)
            self.walk(element.pattern)
        if node.rest is not None:
            self.scope.bind(node.rest.value, Binding("other"))

    def visit_MatchKeywordElement(self, node: cst.MatchKeywordElement) -> None:
        self.walk(node.pattern)


#: libcst node type → the ``visit_<Type>`` method of :class:`Walker` handling it.
_HANDLERS: dict[type, Callable[[Walker, cst.CSTNode], None]] = {
    getattr(cst, name[6:]): method for name, method in vars(Walker).items() if name.startswith("visit_")
}
