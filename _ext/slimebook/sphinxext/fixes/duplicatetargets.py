"""Targets defined twice: the warnings a full serial read gives, whichever reader read which document.

Sphinx warns about a label, a glossary term (or another generic object), an equation label or a Python or JavaScript
object defined in two documents when it reads the second one (``StandardDomain.process_doc`` and ``note_object``,
``MathDomain.note_equation``, ``PythonDomain.note_object``, ``JavaScriptDomain.note_object``; Sphinx 9), comparing
it with what the environment holds at that moment. Two builds miss such warnings:

* with ``-j N`` each reader is a fork that sees the documents not being read and its own chunk only, and the
  domains' ``merge_domaindata`` keeps the last definition merged without a word (``XXX duplicates?``); so a
  ``-W -j 2`` build passed where ``-j 1`` failed, depending on how the documents were cut into chunks
  (:mod:`slimebook.sphinxext.accelerate.readplan` changes that cut). Sphinx's issue: "parallel mode of sphinx-build
  could not detect duplicated labels" (sphinx-doc/sphinx#4459, open since 2018);
* an incremental build reads the changed documents only, against an environment that kept one definition of each
  name: when the kept one belongs to the document read again, the other one is forgotten and the warning too.

This module records, when each document has been read (``doctree-read``, in the reader), what it defines and where
(:class:`Definition`, kept per document on the environment: merged after a parallel read, purged when the document
is read again). At ``env-updated`` it replays a full serial read of the whole book over those records, in the order
of the names (:func:`serial_warnings`, each domain's rule in :data:`RULES`), and replays what this build's readers
saw (each reader: what the environment held of the documents not read again, then its own documents in order). Every
warning the full serial read gives that no reader gave is emitted here, at the document's line, through
:func:`.diagnostics.warn` (subtype ``duplicate``, so the document is read again next time and the warning repeats).
The warnings the readers gave are Sphinx's own and are not repeated. A warning Sphinx gives with a type
(``ref.equation`` for an equation label) is not emitted here either when ``suppress_warnings`` suppresses Sphinx's
(:attr:`Rule.sphinx_type`): a book that silences Sphinx's warning expects this one silent too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.util.logging import is_suppressed_warning

from ..diagnostics import SlimebookWarning, warn
from ..environment.envdata import doc_data, keep_per_doc
from ..guard import Requirement, names_in

#: The Sphinx versions this module was written for, ``(major, minor)``, both included (see ``..guard``).
SPHINX = ((9, 0), (9, 0))
#: What it patches or relies on, checked before its setup runs (:mod:`slimebook.sphinxext.guard`).
REQUIRES: tuple[Requirement, ...] = (
    Requirement("sphinx.domains.std:StandardDomain.process_doc", ("env", "docname", "document")),
    Requirement("sphinx.domains.std:StandardDomain.note_object", ("objtype", "name", "labelid")),
    Requirement("sphinx.util.logging:is_suppressed_warning", ("warning_type", "sub_type", "suppress_warnings")),
    Requirement("sphinx.domains.math:MathDomain.note_equation", ("docname", "labelid")),
    Requirement("sphinx.domains.python:PythonDomain.note_object", ("name", "objtype", "node_id", "aliased")),
    Requirement("sphinx.domains.python:ObjectEntry.aliased"),
    Requirement("sphinx.domains.javascript:JavaScriptDomain.note_object", ("fullname", "objtype", "node_id")),
)

__all__ = ["MESSAGE", "RULES", "Definition", "Rule", "serial_warnings", "setup", "usable"]


def usable() -> bool:
    """Whether the environment still keeps the domains' data in ``domaindata`` (``BuildEnvironment.__init__``), where
    :data:`RULES` read each registry, and a parallel read still merges each reader's ``domaindata`` into it
    (``merge_info_from``, through the domains' ``merge_domaindata``)."""
    from sphinx.environment import BuildEnvironment

    return (names_in(BuildEnvironment.__init__, "domaindata")
            and names_in(BuildEnvironment.merge_info_from, "domaindata"))

_RECORDS = "slimebook_definitions"  # docname -> list[Definition] (per document, envdata)
_BUILD = "slimebook_definitions_build"  # this build's _Read

#: The warning: what is defined twice, the document of the other instance.
MESSAGE = "duplicate %s, other instance in %s (a serial read of the whole book warns here)"


class Definition(NamedTuple):
    """One name a document defines: the registry (``"std.labels"``…), the name, a flag the registry's rule reads
    (a label has a title; a Python object is an alias) and the line of its node (``None``: unknown)."""

    registry: str
    name: Any
    flag: bool
    line: int | None


class Rule(NamedTuple):
    """How one registry of a domain decides, in a serial read, whether a definition repeats another.

    ``domain`` and ``key`` name the dict ``env.domaindata[domain][key]`` (name → entry holding its document first);
    ``flag(name, entry, data)`` is the :class:`Definition` flag of an entry; ``step(holder, new)`` gives, for the
    definition ``new`` (a document and its flag) and the definition that holds the name so far (``None``: none),
    whether Sphinx warns and which definition holds the name afterwards; ``show(name)`` is the warning's phrase;
    ``node_id(name, entry)`` the id of the entry's node in its doctree; ``path``: whether Sphinx's warning names the
    other document by its path (else by its name); ``sphinx_type``: the ``(type, subtype)`` Sphinx logs its own
    warning with, which ``suppress_warnings`` can name (``None``: logged without a type, never suppressed)."""

    domain: str
    key: str
    flag: Callable[[Any, Any, dict[str, Any]], bool]
    step: Callable[[tuple[str, bool] | None, tuple[str, bool]], tuple[bool, tuple[str, bool] | None]]
    show: Callable[[Any], str]
    node_id: Callable[[Any, Any], str | None]
    path: bool = False
    sphinx_type: tuple[str, str] | None = None


def _any_holder(holder: tuple[str, bool] | None, new: tuple[str, bool]) -> tuple[bool, tuple[str, bool] | None]:
    """``note_object``, ``note_equation``: a second definition warns and holds the name."""
    return holder is not None, new


def _titled_holder(holder: tuple[str, bool] | None, new: tuple[str, bool]) -> tuple[bool, tuple[str, bool] | None]:
    """``StandardDomain.process_doc``: a label warns when a label with a title holds the name; only a label with a
    title (``new[1]``) takes it."""
    return holder is not None, new if new[1] else holder


def _python_holder(holder: tuple[str, bool] | None, new: tuple[str, bool]) -> tuple[bool, tuple[str, bool] | None]:
    """``PythonDomain.note_object``: a definition replaces an alias silently, an alias leaves a definition alone,
    anything else warns and replaces."""
    if holder is None:
        return False, new
    if holder[1] and not new[1]:
        return False, new
    if not holder[1] and new[1]:
        return False, holder
    return True, new


def _equation_id(name: Any, entry: Any) -> str | None:
    """The id Sphinx gives an equation's node (``sphinx.directives.patches.MathDirective``)."""
    return nodes.make_id(f"equation-{name}")


#: The registries compared, with Sphinx 9's rule for each.
RULES: dict[str, Rule] = {
    "std.labels": Rule("std", "anonlabels", lambda name, entry, data: name in data.get("labels", {})
                       and data["labels"][name][0] == entry[0], _titled_holder,
                       lambda name: f"label {name}", lambda name, entry: entry[1], path=True),
    "std.objects": Rule("std", "objects", lambda name, entry, data: False, _any_holder,
                        lambda key: f"{key[0]} description of {key[1]}", lambda name, entry: entry[1]),
    "math.objects": Rule("math", "objects", lambda name, entry, data: False, _any_holder,
                         lambda name: f"label of equation {name}", _equation_id, sphinx_type=("ref", "equation")),
    "py.objects": Rule("py", "objects", lambda name, entry, data: bool(getattr(entry, "aliased", False)),
                       _python_holder, lambda name: f"object description of {name}", lambda name, entry: entry[1]),
    "js.objects": Rule("js", "objects", lambda name, entry, data: False, _any_holder,
                       lambda name: f"object description of {name}", lambda name, entry: entry[1]),
}


def serial_warnings(
    definitions: Iterable[tuple[str, Definition]], holders: dict[tuple[str, Any], tuple[str, bool]] | None = None,
) -> list[tuple[str, Definition, str]]:
    """The warnings a serial read gives: ``definitions`` are ``(docname, definition)`` in reading order, ``holders``
    what holds each ``(registry, name)`` before the read (a document and its flag). Returns ``(docname,
    definition, other document)`` for each definition Sphinx warns about, in reading order."""
    state = dict(holders or {})
    found = []
    for docname, definition in definitions:
        key = (definition.registry, definition.name)
        holder = state.get(key)
        warns, state[key] = RULES[definition.registry].step(holder, (docname, definition.flag))
        if warns and holder is not None:
            found.append((docname, definition, holder[0]))
        if state[key] is None:
            del state[key]
    return found


def _line(doctree: nodes.document, node_id: str | None) -> int | None:
    """The line of the node with ``node_id``: its own or its first descendant's, else its nearest ancestor's (MyST
    gives a glossary's terms line 0, their glossary the directive's line)."""
    node = doctree.ids.get(node_id) if node_id else None
    if node is None:
        return None
    for each in node.findall(nodes.Node):
        if getattr(each, "line", None):
            return each.line
    while node.parent is not None:
        node = node.parent
        if node.line:
            return node.line
    return None


def _record(app: Sphinx, doctree: nodes.document) -> None:
    """``doctree-read`` (in the reader): what the document just read defines, from the domains' data."""
    env = app.env
    docname = env.docname
    found = []
    for registry, rule in RULES.items():
        data = env.domaindata.get(rule.domain, {})
        for name, entry in data.get(rule.key, {}).items():
            if entry[0] == docname:
                found.append(Definition(registry, name, rule.flag(name, entry, data),
                                        _line(doctree, rule.node_id(name, entry))))
    doc_data(env, _RECORDS)[docname] = found


def _holders(env: BuildEnvironment, reading: set[str]) -> dict[tuple[str, Any], tuple[str, bool]]:
    """What the environment holds of the documents not read again, as the readers will see it."""
    holders = {}
    for registry, rule in RULES.items():
        data = env.domaindata.get(rule.domain, {})
        for name, entry in data.get(rule.key, {}).items():
            if entry[0] not in reading and entry[0] in env.all_docs:
                flag = rule.flag(name, entry, data)
                if registry == "std.labels" and not flag:
                    continue  # only a label with a title holds a name
                holders[registry, name] = (entry[0], flag)
    return holders


class _Read(NamedTuple):
    """What this build's readers see: ``holders`` (what the environment holds of the documents not read again, as
    :func:`serial_warnings` takes it), ``order`` (the documents to read, in reading order) and ``readers`` (the
    documents of each parallel reader, as merged; empty for a serial read)."""

    holders: dict[tuple[str, Any], tuple[str, bool]]
    order: list[str]
    readers: list[set[str]]


def _start(app: Sphinx, env: BuildEnvironment, docnames: list[str]) -> None:
    """``env-before-read-docs`` (last): note what the readers will see and the documents they read."""
    env.__dict__[_BUILD] = _Read(_holders(env, set(docnames)), list(docnames), [])


def _merged(app: Sphinx, env: BuildEnvironment, docnames: set[str], other: BuildEnvironment) -> None:
    """``env-merge-info``: one more reader's documents."""
    env.__dict__.setdefault(_BUILD, _Read({}, [], [])).readers.append(set(docnames))


def _definitions(records: dict[str, list[Definition]], docnames: Sequence[str]) -> list[tuple[str, Definition]]:
    return [(docname, definition) for docname in docnames for definition in records.get(docname, ())]


def _check(app: Sphinx, env: BuildEnvironment) -> list[str]:
    """``env-updated``: warn where a full serial read warns and no reader of this build did."""
    build: _Read = env.__dict__.pop(_BUILD, None) or _Read({}, [], [])
    records: dict[str, list[Definition]] = {doc: defs for doc, defs in doc_data(env, _RECORDS).items()
                                            if doc in env.all_docs}
    expected = serial_warnings(_definitions(records, sorted(records)))
    if not expected:
        return []
    order = [doc for doc in build.order if doc in records]
    readers = build.readers or ([set(order)] if order else [])
    given = set()
    for reader in readers:
        mine = [doc for doc in order if doc in reader]
        given |= {(doc, d.registry, d.name) for doc, d, _other in
                  serial_warnings(_definitions(records, mine), build.holders)}
    for docname, definition, other in expected:
        rule = RULES[definition.registry]
        if (docname, definition.registry, definition.name) in given or (
                rule.sphinx_type and is_suppressed_warning(*rule.sphinx_type, app.config.suppress_warnings)):
            continue
        shown = env.doc2path(other) if rule.path else other
        warn(env, SlimebookWarning.DUPLICATE, MESSAGE, rule.show(definition.name), shown,
             location=(docname, definition.line))
    return []


def setup(app: Sphinx) -> dict[str, Any]:
    """Keep each document's definitions and connect the replay; returns the extension's metadata."""
    keep_per_doc(app, _RECORDS)
    app.connect("doctree-read", _record)
    app.connect("env-before-read-docs", _start, priority=990)
    app.connect("env-merge-info", _merged)
    app.connect("env-updated", _check)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
