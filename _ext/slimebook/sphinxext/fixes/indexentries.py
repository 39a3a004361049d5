"""Index entries kept in the search index by an incremental build, as a full build writes them.

Sphinx 9.0 keeps the search index's index entries (``{index}``, glossary terms) per document on the environment
(``env._search_index_index_entries``) but fills them while pages are written, after the environment was pickled;
and ``IndexBuilder.load``, which reads the last ``searchindex.js`` back for the documents not written again, restores
titles and words but not index entries. So every incremental build dropped the index entries of every document it
did not write again: after ``make html`` on an unchanged book but one chapter, ``searchindex.js`` held the entries of
that chapter only (measured: the PEP entries of the references page were gone). Sphinx's issue: "'indexentries'
section missing results from search index following non-fresh project rebuild" (sphinx-doc/sphinx#12599, open).

:class:`KeptIndexEntriesMixin` restores them for an HTML builder: Sphinx's ``load_indexer`` parses the last file as
before, the ``indexentries`` of that parse are put back for the documents it keeps (:func:`restore_index_entries`),
and before the index is dumped the entries are ordered by document name, as a full build feeds them, so that the
file equals a full build's.
What it restores is what the last file held: a file written before this module, which had already lost entries,
keeps them lost until a full build (``make html`` in CI always is one).
"""

from __future__ import annotations

from collections.abc import Iterable, Set
from typing import Any

from sphinx.application import Sphinx
from sphinx.builders.dirhtml import DirectoryHTMLBuilder
from sphinx.builders.html import StandaloneHTMLBuilder

from ..guard import Requirement, names_in

#: The Sphinx versions this module was written for, ``(major, minor)``, both included (see ``..guard``).
SPHINX = ((9, 0), (9, 0))
#: What it patches or relies on, checked before its setup runs (:mod:`slimebook.sphinxext.guard`).
REQUIRES: tuple[Requirement, ...] = (
    Requirement("sphinx.builders.html:StandaloneHTMLBuilder.load_indexer", ("docnames",)),
    Requirement("sphinx.builders.html:StandaloneHTMLBuilder.dump_search_index"),
    Requirement("sphinx.builders.html:StandaloneHTMLBuilder.indexer_format"),
    Requirement("sphinx.search:IndexBuilder.load", ("stream", "format")),
)

__all__ = ["KeptIndexEntriesMixin", "restore_index_entries", "setup", "usable"]


def usable() -> bool:
    """Whether the index still keeps its entries in the instance attribute ``_index_entries`` (``IndexBuilder``'s
    ``__init__``) and the builder still reads and writes the index through ``indexer_format`` (``load_indexer``,
    ``dump_search_index``), which :class:`KeptIndexEntriesMixin` stands in for while Sphinx reads."""
    from sphinx.search import IndexBuilder

    return (names_in(IndexBuilder.__init__, "_index_entries")
            and names_in(StandaloneHTMLBuilder.load_indexer, "indexer_format")
            and names_in(StandaloneHTMLBuilder.dump_search_index, "indexer_format"))


def restore_index_entries(entries: dict[str, list[tuple[str, str, str]]], frozen: Any,
                          keep: Iterable[str]) -> None:
    """Put back into ``entries`` (``IndexBuilder._index_entries``: docname → sorted ``(entry, id, main)``) what the
    frozen index ``frozen`` (the data of a ``searchindex.js``) holds for the documents in ``keep`` and ``entries``
    does not: ``frozen["indexentries"]`` maps each entry (lower-cased) to ``[document index, id, is main]``, with
    the documents' names in ``frozen["docnames"]``; ``main`` comes back as ``"main"`` or ``""``, as Sphinx stores
    it. A frozen index of another shape restores nothing."""
    if not isinstance(frozen, dict):
        return
    names = frozen.get("docnames")
    hits = frozen.get("indexentries")
    if not isinstance(names, list | tuple) or not isinstance(hits, dict):
        return
    wanted = set(keep) - set(entries)
    found: dict[str, set[tuple[str, str, str]]] = {}
    for entry, places in hits.items():
        for place in places if isinstance(places, list) else ():
            if not (isinstance(place, list) and len(place) == 3 and isinstance(place[0], int)
                    and 0 <= place[0] < len(names)):
                continue
            docname = names[place[0]]
            if docname in wanted:
                found.setdefault(docname, set()).add((entry, place[1], "main" if place[2] else ""))
    for docname in sorted(found):
        entries[docname] = sorted(found[docname])


class _Remembering:
    """An index format (``sphinx.search.js_index``) that keeps what its ``load`` returned in ``frozen``."""

    def __init__(self, format: Any) -> None:  # noqa: A002 - Sphinx's name for it
        self._format = format
        self.frozen: Any = None

    def load(self, stream: Any) -> Any:
        self.frozen = self._format.load(stream)
        return self.frozen

    def __getattr__(self, name: str) -> Any:
        return getattr(self._format, name)


class KeptIndexEntriesMixin:
    """For an HTML builder (``StandaloneHTMLBuilder`` or a subclass): index entries of the documents an incremental
    build does not write again are kept in the search index (see the module docstring)."""

    def load_indexer(self: Any, docnames: Set[str]) -> None:
        """Sphinx's ``load_indexer``, then the index entries of the kept documents put back from what it read (the
        same parse: :class:`_Remembering` stands in for the builder's index format meanwhile)."""
        remembering = _Remembering(self.indexer_format)
        self.indexer_format = remembering
        try:
            super().load_indexer(docnames)  # type: ignore[misc]
        finally:
            del self.indexer_format  # the builder class's format again
        keep = set(self.env.all_docs).difference(docnames)
        if keep and remembering.frozen is not None:  # else Sphinx warned that the index will be incomplete
            restore_index_entries(self.indexer._index_entries, remembering.frozen, keep)

    def dump_search_index(self: Any) -> None:
        """Sphinx's ``dump_search_index``, with the index entries ordered by document name first (a full build
        feeds the documents in that order; the ones restored and the ones fed again come in another)."""
        if self.indexer is not None:
            entries = self.indexer._index_entries
            ordered = sorted(entries.items())
            entries.clear()  # the same dict: Sphinx keeps it on the environment
            entries.update(ordered)
        super().dump_search_index()  # type: ignore[misc]


class KeptIndexEntriesHTMLBuilder(KeptIndexEntriesMixin, StandaloneHTMLBuilder):
    """Sphinx's ``html`` builder with :class:`KeptIndexEntriesMixin`."""


class KeptIndexEntriesDirectoryHTMLBuilder(KeptIndexEntriesMixin, DirectoryHTMLBuilder):
    """Sphinx's ``dirhtml`` builder with :class:`KeptIndexEntriesMixin`."""


def setup(app: Sphinx) -> None:
    """Register the ``html`` and ``dirhtml`` builders with the fix in place of Sphinx's (same names, subclasses);
    the pipelined builders of :mod:`slimebook.sphinxext.accelerate.parallelwrite`, set up later, replace these and
    keep the fix."""
    app.add_builder(KeptIndexEntriesHTMLBuilder, override=True)
    app.add_builder(KeptIndexEntriesDirectoryHTMLBuilder, override=True)
