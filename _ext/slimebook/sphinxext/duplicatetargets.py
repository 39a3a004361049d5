"""Targets defined twice in documents that parallel readers read: the check Sphinx makes only within one reader.

Sphinx warns about a label, a glossary term, an equation label or an object description defined in two documents
when the second one is read (``StandardDomain.process_doc`` and ``note_object``, ``MathDomain.note_equation``,
``PythonDomain.note_object``, ``JavaScriptDomain.note_object``; Sphinx 9). With ``-j N`` each reader is a fork that
sees the documents not being read and its own chunk only; when two readers each define the same name, the domains'
``merge_domaindata`` keeps the last one merged without a word (its own comment says ``XXX duplicates?``). So a
``-W -j 2`` build passed where ``-j 1`` failed, and which pair of documents escaped depended on how the documents
were cut into chunks (:mod:`.readplan` changes that cut).

This module closes the gap in the main process: at each ``env-merge-info`` it compares the names a reader defined
with those merged from earlier readers of the same build (:data:`REGISTRIES`) and warns at the line of the document
that comes later in name order (the one a serial read warns about), through :func:`.diagnostics.warn` (subtype
``duplicate``), so the warning comes back on the next build too.
Names defined by documents that were not read again need no check here: every reader sees them and Sphinx warns.
A serial read emits no ``env-merge-info``; nothing here runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment

from .diagnostics import SlimebookWarning, warn

__all__ = ["MESSAGE", "REGISTRIES", "Registry", "setup"]

_SEEN = "slimebook_merged_targets"


class Registry(NamedTuple):
    """One place of a domain's data where a name may be defined once in the whole book.

    ``domain`` and ``key`` name ``env.domaindata[domain][key]``, a dict ``name -> entry`` whose entries hold their
    document first; ``node_id(name, entry)`` gives the id of the entry's node in that document's doctree (``None``:
    unknown); ``show(name)`` is the phrase of the warning (``"label intro"``); ``clash(earlier, later)`` says
    whether two entries of one name in different documents are a duplicate (the Python domain lets an alias and a
    definition share a name)."""

    domain: str
    key: str
    node_id: Callable[[Any, Any], str | None]
    show: Callable[[Any], str]
    clash: Callable[[Any, Any], bool] = lambda earlier, later: True


def _entry_id(name: Any, entry: Any) -> str | None:
    return entry[1]


def _both_or_neither_aliased(earlier: Any, later: Any) -> bool:
    return bool(getattr(earlier, "aliased", False)) == bool(getattr(later, "aliased", False))


#: The registries compared across readers: those of Sphinx 9's core domains that warn about a second definition.
REGISTRIES: tuple[Registry, ...] = (
    Registry("std", "labels", _entry_id, lambda name: f"label {name}"),
    Registry("std", "objects", _entry_id, lambda key: f"{key[0]} description of {key[1]}"),
    Registry("math", "objects", lambda name, entry: f"equation-{name}", lambda name: f"label of equation {name}"),
    Registry("py", "objects", _entry_id, lambda name: f"object description of {name}",
             clash=_both_or_neither_aliased),
    Registry("js", "objects", _entry_id, lambda name: f"object description of {name}"),
)

#: The warning: what is duplicated, the other document's path.
MESSAGE = "duplicate %s, other instance in %s (the two documents were read by different parallel readers)"


def _line(env: BuildEnvironment, docname: str, node_id: str | None) -> int | None:
    """The line of the node with ``node_id`` in ``docname``'s doctree: its own or its first descendant's, else its
    nearest ancestor's (MyST gives a glossary's terms line 0, their glossary the directive's line); ``None`` when
    the doctree, the node or any line is missing."""
    if not node_id:
        return None
    try:
        node = env.get_doctree(docname).ids.get(node_id)
    except Exception:  # noqa: BLE001 - a missing or unreadable pickle only costs the line number
        return None
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


def _start(app: Sphinx, env: BuildEnvironment, docnames: list[str]) -> None:
    """``env-before-read-docs``: a build's record starts empty."""
    env.__dict__[_SEEN] = {}


def _compare(app: Sphinx, env: BuildEnvironment, docnames: set[str], other: BuildEnvironment) -> None:
    """``env-merge-info``: warn about each name the reader of ``docnames`` defined that an earlier reader of this
    build defined in another document; then remember the reader's names."""
    seen: dict[tuple[str, str, Any], Any] = env.__dict__.setdefault(_SEEN, {})
    for registry in REGISTRIES:
        entries = other.domaindata.get(registry.domain, {}).get(registry.key, {})
        for name in sorted(entries, key=repr):
            entry = entries[name]
            docname = entry[0]
            if docname not in docnames:
                continue
            earlier = seen.get((registry.domain, registry.key, name))
            if earlier is not None and earlier[0] != docname and registry.clash(earlier, entry):
                first, second = sorted((earlier, entry), key=lambda each: each[0])
                line = _line(env, second[0], registry.node_id(name, second))
                warn(env, SlimebookWarning.DUPLICATE, MESSAGE, registry.show(name), env.doc2path(first[0]),
                     location=(second[0], line))
            seen[(registry.domain, registry.key, name)] = entry


def _finish(app: Sphinx, env: BuildEnvironment) -> list[str]:
    """``env-updated``: the record is not kept in the pickled environment."""
    env.__dict__.pop(_SEEN, None)
    return []


def setup(app: Sphinx) -> dict[str, Any]:
    """Connect the record's start, the comparison at each merge and the record's end; returns the extension's
    metadata."""
    app.connect("env-before-read-docs", _start)
    app.connect("env-merge-info", _compare)
    app.connect("env-updated", _finish)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
