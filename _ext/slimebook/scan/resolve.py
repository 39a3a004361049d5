"""Resolution, the second step of the per-file scanner: the walk's references and calls become records once the
whole file is known (bindings are flow-insensitive).

Pipeline position: :func:`.visitor.scan_module` runs walk (:mod:`.walker`) → **resolution** → positions
(:mod:`.positions`). A reference whose root name resolves to an import of a tracked name is an ``api_call`` or
``api_reference`` (a called builtin too); a call ``receiver.method(...)`` is a ``method_call`` when the receiver's
type is known (:class:`~slimebook.scan.evidence.Evidence`: constructor, annotation, context manager, attribute),
else an ``instance_candidate`` when the method name is one the category table lists. An ``async def`` owning a
``yield`` adds ``async_generator``.
"""

from __future__ import annotations

import libcst as cst

from .categories import current_table
from .evidence import Evidence, dotted_chain, is_tracked
from .imports import Scope, import_target, lookup
from .walker import Entry, Walker

__all__ = ["resolve"]


def resolve(walker: Walker) -> list[Entry]:
    """Turn the walker's refs and calls into entries (the second, resolving step of a scan).

    Args:
        walker: a :class:`~slimebook.scan.walker.Walker` that has walked the whole module.
    Returns:
        ``walker.entries`` (the import and syntax entries of the walk) with the resolved entries appended: an
        ``async_generator`` per async generator, the API references and calls, then the method calls and instance
        candidates, each :class:`~slimebook.scan.walker.Entry` still without positions.
    """
    foreign = _attach_self_attributes(walker)
    entries = walker.entries
    entries += _async_generators(walker)
    entries += _api_entries(walker)
    entries += _method_entries(walker, Evidence(walker.classes, foreign))
    return entries


def _attach_self_attributes(walker: Walker) -> set[str]:
    """Attach each ``self.attr = …`` binding in a method to its class's attributes; return the attribute names
    assigned on another receiver than a method's ``self`` (their types are not trusted)."""
    foreign: set[str] = set()
    for self_name, attr, binding, scope in walker.attr_assigns:
        owner = lookup(scope, self_name)
        if owner is not None and owner.kind == "function" and owner.first_param == self_name \
                and owner.parent is not None and owner.parent.kind == "class":
            owner.parent.attrs.setdefault(attr, []).append(binding)
        else:
            foreign.add(attr)
    return foreign


def _async_generators(walker: Walker) -> list[Entry]:
    """An ``async_generator`` entry per ``async def`` that owns a ``yield``."""
    return [Entry(node, node, scope.qualname, "syntax", "async_generator", "syntax", "syntax")
            for node, scope in walker.async_defs if scope.has_yield]


def _api_entries(walker: Walker) -> list[Entry]:
    """An ``api_call`` / ``api_reference`` entry per reference whose root resolves to an import of a tracked name,
    or that names a builtin of the table not shadowed in its scope."""
    entries = []
    import_names = walker.import_names
    table = current_table()
    for root, attrs, scope, where, node, use in walker.refs:
        if root in import_names:
            target = import_target(scope, root)
            if target is not None:
                qualname = ".".join((target, *attrs)) if attrs else target
                category = table.category_of(qualname)
                if category is not None:
                    kind = "api_call" if use == "call" else "api_reference"
                    provenance = "attribute_store" if use == "store" else "import_resolution"
                    entries.append(Entry(node, node, where, kind, qualname, category, provenance))
                continue
        if not attrs and root in table.builtins and lookup(scope, root) is None:
            kind = "api_call" if use == "call" else "api_reference"
            entries.append(Entry(node, node, where, kind, root, table.builtins[root], "builtin"))
    return entries


def _method_entries(walker: Walker, evidence: Evidence) -> list[Entry]:
    """A ``method_call`` entry per call on a receiver of a tracked type, an ``instance_candidate`` per call of a
    candidate method on a receiver of unknown type (module attributes are API chains already)."""
    entries = []
    table = current_table()
    for call, scope, where in walker.calls:
        func = call.func
        receiver = func.value
        chain = dotted_chain(receiver)
        if chain is not None and chain[0] in walker.import_names and import_target(scope, chain[0]) is not None:
            continue  # a module attribute, already an API chain (or an untracked module)
        method = func.attr.value
        fact = evidence.expr_type(receiver, scope)
        if is_tracked(fact):
            category = table.category_of(fact[0]) or "candidates"
            entries.append(Entry(func, func, where, "method_call", f"{fact[0]}.{method}", category, fact[1]))
        elif fact is None and method in table.candidate_methods and not _excluded_receiver(receiver, scope, evidence) \
                and not _string_argument(method, call):
            entries.append(Entry(func, func, where, "instance_candidate", method, "candidates",
                                 "unresolved_receiver_candidate"))
    return entries


def _string_argument(method: str, call: cst.Call) -> bool:
    """Whether ``call`` of ``method`` (one of the table's ``[candidates] string_first``) passes a string
    literal as its first positional argument: a mapping lookup or a log call, not a tracked type's method."""
    if method not in current_table().string_arg_methods or not call.args or call.args[0].keyword is not None:
        return False
    first = call.args[0]
    return not first.star and isinstance(first.value, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString))


def _excluded_receiver(receiver: cst.BaseExpression, scope: Scope, evidence: Evidence) -> bool:
    """Whether ``receiver`` is a method's own first parameter (``self``) or a call of the builtin ``super()``: an
    instance of a class of the file, not of a tracked type."""
    if isinstance(receiver, cst.Name):
        return evidence.self_class(receiver.value, scope) is not None
    if isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Name):
        return receiver.func.value == "super" and lookup(scope, "super") is None
    return False
