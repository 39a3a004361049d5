"""The per-file scanner: one walk over a libcst module, then resolution, then positions.

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

Resolution runs once the whole file is known (bindings are flow-insensitive), then positions are
computed in one code-generation pass for the nodes that made records
(:mod:`slimebook.scan.positions`). Each expression gives at most one API record: an attribute chain
is taken whole (``asyncio.subprocess.PIPE`` is one ``api_reference``), and a call's callee is an
``api_call``, never also a reference. String annotations (``"asyncio.Queue"``) serve as receiver
evidence but make no ``api_reference`` record: they are not expressions of the file.
"""

from __future__ import annotations

import dataclasses
import io
import re
import sys
import tokenize
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import libcst as cst

from ..lines import split_lines
from .categories import current_table
from .evidence import Evidence, dotted_chain, is_tracked
from .imports import Binding, Scope, import_target, lookup
from .positions import node_spans
from .records import RawRecord

__all__ = [
    "MAX_NESTING", "STRING_PATTERN", "FileScan", "RawRecord", "decode_source", "nesting_depth", "scan_code",
    "scan_module",
]

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
class _Entry:
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


class _Walker:
    """Builds scopes and collects the raw material of records (see module docstring)."""

    def __init__(self) -> None:
        self.module_scope = Scope("module", "<module>")
        self.scope = self.module_scope
        self.field = "<module>"
        self.entries: list[_Entry] = []
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
        self.entries.append(_Entry(start, end or start, scope or self.field, "syntax", name, "syntax",
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
            self.entries.append(_Entry(start, end, self.field, "import", qualname, category, "import_statement"))

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


#: libcst node type → the ``visit_<Type>`` method of :class:`_Walker` handling it.
_HANDLERS: dict[type, Callable[[_Walker, cst.CSTNode], None]] = {
    getattr(cst, name[6:]): method for name, method in vars(_Walker).items() if name.startswith("visit_")
}


@dataclass
class FileScan:
    """The path-independent result of scanning one file (what the cache stores).

    Attributes:
        records: raw records (:data:`RawRecord`) in position order.
        status: ``ok`` | ``repaired`` | ``tokens`` | ``error`` (see :class:`~slimebook.scan.records.ScannedFile`).
        error: ``(message, line or None)`` when the file did not parse.
        blocks: number of fenced Python blocks (docs only).
    """

    records: list[RawRecord] = field(default_factory=list)
    status: str = "ok"
    error: tuple[str, int | None] | None = None
    blocks: int | None = None


def _resolve(walker: _Walker) -> list[_Entry]:
    """Turn the walker's refs and calls into entries (the second, resolving half of a scan)."""
    foreign: set[str] = set()  # attribute names assigned on another receiver than a method's self
    for self_name, attr, binding, scope in walker.attr_assigns:
        owner = lookup(scope, self_name)
        if owner is not None and owner.kind == "function" and owner.first_param == self_name \
                and owner.parent is not None and owner.parent.kind == "class":
            owner.parent.attrs.setdefault(attr, []).append(binding)
        else:
            foreign.add(attr)
    entries = walker.entries
    table = current_table()
    for node, scope in walker.async_defs:
        if scope.has_yield:
            entries.append(_Entry(node, node, scope.qualname, "syntax", "async_generator", "syntax", "syntax"))
    import_names = walker.import_names
    for root, attrs, scope, where, node, use in walker.refs:
        if root in import_names:
            target = import_target(scope, root)
            if target is not None:
                qualname = ".".join((target, *attrs)) if attrs else target
                category = table.category_of(qualname)
                if category is not None:
                    kind = "api_call" if use == "call" else "api_reference"
                    provenance = "attribute_store" if use == "store" else "import_resolution"
                    entries.append(_Entry(node, node, where, kind, qualname, category, provenance))
                continue
        if not attrs and root in table.builtins and lookup(scope, root) is None:
            kind = "api_call" if use == "call" else "api_reference"
            entries.append(_Entry(node, node, where, kind, root, table.builtins[root], "builtin"))
    evidence = Evidence(walker.classes, foreign)
    for call, scope, where in walker.calls:
        func = call.func
        receiver = func.value
        chain = dotted_chain(receiver)
        if chain is not None and chain[0] in import_names and import_target(scope, chain[0]) is not None:
            continue  # a module attribute, already an API chain (or an untracked module)
        method = func.attr.value
        fact = evidence.expr_type(receiver, scope)
        if is_tracked(fact):
            category = table.category_of(fact[0]) or "candidates"
            entries.append(_Entry(func, func, where, "method_call", f"{fact[0]}.{method}", category, fact[1]))
        elif fact is None and method in table.candidate_methods and not _excluded_receiver(receiver, scope, evidence) \
                and not _string_argument(method, call):
            entries.append(_Entry(func, func, where, "instance_candidate", method, "candidates",
                                  "unresolved_receiver_candidate"))
    return entries


def _string_argument(method: str, call: cst.Call) -> bool:
    if method not in current_table().string_arg_methods or not call.args or call.args[0].keyword is not None:
        return False
    first = call.args[0]
    return not first.star and isinstance(first.value, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString))


def _excluded_receiver(receiver: cst.BaseExpression, scope: Scope, evidence: Evidence) -> bool:
    if isinstance(receiver, cst.Name):
        return evidence.self_class(receiver.value, scope) is not None
    if isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Name):
        return receiver.func.value == "super" and lookup(scope, "super") is None
    return False


def scan_module(module: cst.Module, text: str) -> tuple[list[RawRecord], Scope]:
    """Scan a parsed module.

    Args:
        module: ``libcst.parse_module(text)``.
        text: the exact source text of ``module``.
    Returns:
        ``(records, module_scope)``: raw records in position order, and the module scope (its
        import bindings serve the token fallback of :mod:`slimebook.scan.docs`).
    """
    walker = _Walker()
    walker.walk(module)
    entries = _resolve(walker)
    if not entries:
        return [], walker.module_scope
    syntactic = [e.start for e in entries if not e.inclusive_start]
    syntactic += [e.end for e in entries if not e.inclusive_end and (e.end is not e.start or e.inclusive_start)]
    inclusive = [e.start for e in entries if e.inclusive_start] + [e.end for e in entries if e.inclusive_end]
    spans = node_spans(module, text, syntactic, inclusive)
    lines = split_lines(text)
    out: list[RawRecord] = []
    for e in entries:
        start, end = spans.get(id(e.start)), spans.get(id(e.end))
        if start is None or end is None:  # pragma: no cover - every asked node is generated
            continue
        line, col = start[0], start[1]
        out.append(RawRecord(line, col, end[2], end[3], e.scope, e.kind, e.name, e.category, e.provenance,
                             lines[line - 1] if line <= len(lines) else ""))
    out.sort(key=lambda r: (r.line, r.col, r.end_line, r.end_col, r.kind, r.name))
    return out, walker.module_scope


#: A Python string literal (any prefix, single or triple quoted, unterminated up to the line or
#: file end); shared with the tolerant tokenizer of :mod:`slimebook.scan.docs`.
STRING_PATTERN = (
    r"""(?:[rRbBuUfFtT]{1,2})?(?:'''(?:\\.|[^\\])*?(?:'''|\Z)|\"\"\"(?:\\.|[^\\])*?(?:\"\"\"|\Z)"""
    r"""|'(?:\\.|[^\\'\r\n])*(?:'|(?=[\r\n])|\Z)|"(?:\\.|[^\\"\r\n])*(?:"|(?=[\r\n])|\Z))"""
)

#: CPython's tokenizer refuses more than 200 nested brackets (``MAXLEVEL``); libcst's native parser
#: overflows its stack (killing the process) somewhere past a thousand, so deeper files are reported
#: as errors before parsing.
MAX_NESTING = 200
_NESTING = re.compile(rf"{STRING_PATTERN}|#[^\r\n]*|[()\[\]{{}}]", re.DOTALL)


def nesting_depth(text: str) -> int:
    """The deepest bracket nesting of ``text`` outside strings and comments; any value up to
    :data:`MAX_NESTING` may stand for "not deeper than that" (files with few brackets are not scanned)."""
    openers = text.count("(") + text.count("[") + text.count("{")
    if openers <= MAX_NESTING:
        return openers
    depth = deepest = 0
    for match in _NESTING.finditer(text):
        token = match.group()
        if token in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif token in ")]}":
            depth -= 1
    return deepest


def decode_source(data: bytes) -> str:
    """Decode Python source bytes per PEP 263 (BOM or coding cookie, default UTF-8), BOM dropped.

    Raises:
        SyntaxError: an unknown encoding in the cookie, or a BOM contradicting it.
        UnicodeDecodeError: the bytes are not valid in the declared encoding.
    """
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return data.decode(encoding)


def scan_code(data: bytes | str) -> FileScan:
    """Scan one Python file's content; never raises for bad input.

    Args:
        data: the raw bytes of the file (decoded per PEP 263) or its text.
    Returns:
        A :class:`FileScan`; a file that does not decode or parse has ``status="error"`` and
        ``error=(message, line)``.
    """
    try:
        text = decode_source(data) if isinstance(data, bytes) else data.removeprefix("\ufeff")
    except (SyntaxError, UnicodeDecodeError, LookupError) as exc:
        return FileScan(status="error", error=(f"cannot decode: {exc}", None))
    if nesting_depth(text) > MAX_NESTING:
        return FileScan(status="error", error=(f"too many nested brackets (more than {MAX_NESTING})", None))
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        message = " ".join(exc.message.split()) or "syntax error"
        return FileScan(status="error", error=(f"does not parse: {message}", exc.raw_line))
    except RecursionError:
        return FileScan(status="error", error=("too deeply nested for the parser", None))
    try:
        with deep_recursion():
            records, _ = scan_module(module, text)
    except RecursionError:
        return FileScan(status="error", error=("too deeply nested to scan", None))
    return FileScan(records=records)


#: Python's default recursion limit (1000) is too low for long ``elif`` chains or implicitly
#: concatenated strings (each a nesting level of the tree, walked and regenerated recursively).
RECURSION_LIMIT = 10_000


@contextmanager
def deep_recursion() -> Iterator[None]:
    """Raise the interpreter's recursion limit to :data:`RECURSION_LIMIT` (never lower it) for the
    duration of the block, then restore it."""
    previous = sys.getrecursionlimit()
    if previous < RECURSION_LIMIT:
        sys.setrecursionlimit(RECURSION_LIMIT)
    try:
        yield
    finally:
        if previous < RECURSION_LIMIT:
            sys.setrecursionlimit(previous)
