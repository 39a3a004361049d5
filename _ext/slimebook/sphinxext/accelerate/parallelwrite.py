"""Parallel writing that keeps every core busy: the HTML builders' ``write_documents`` with ``-j N``.

Sphinx (9.0, ``Builder._write_parallel``) writes documents with ``N - 1`` forked processes while the main process
resolves each document's doctree and feeds the search index (``write_doc_serialized``), one chunk after the other,
in chunks of equal numbers of documents. With ``-j 2`` that is one writer: the main process resolves the first chunk
while the writer waits, and the writer writes the last chunk while the main process waits. Measured on this book
(two cores): 3.6 s of resolving and indexing, then 2.6 s of the writer alone, with jieba's dictionary (about 1 s)
loaded by the first document before any writer starts.

:class:`PipelinedWriteMixin` writes the same pages in the same way, in another order of work:

1. the two cheapest documents (the smallest pickled doctrees) are resolved first: the first writer forks with the
   cheaper one as soon as it is resolved, and meanwhile the other's words are collected for the search index and
   its page written here, as Sphinx writes its first document, so that templates are compiled (and jieba's
   dictionary loaded, if the read did not load it) before the other writers fork;
2. the others are resolved one by one in the order of their names and handed in chunks of about equal cost (the
   size of their pickled doctrees; the first chunk is one document, so the second writer forks early too) to ``N``
   forked writers, started in the order of the chunks (:class:`~slimebook.sphinxext.pages.render.OrderedTasks`), each
   as soon as it is
   resolved; a writer collects each page's words for the search index (before the translator may change the
   doctree), then writes it. For every document, the main process notes its images when it resolves it and makes
   the Pygments lexers its code blocks ask for (:func:`warm_lexers`), so that no writer compiles a lexer's rules
   again;
3. the search index is fed every document, in the order of their names, as Sphinx feeds it, with the words its
   writer collected.

What ``write_doc_serialized`` does for HTML (the image paths, then the index) is done in two halves here, both in the
main process: the images of the two cheapest documents first, then the others' in the order of the names (the order
changes nothing: an image's output name was fixed when its document was read, ``env.images``), and the index in the
order of the names; the writers write each document from the doctree as it was after its images were noted, as
before. So the output is the same as Sphinx's, and the same as ``-j 1``'s: the tests build
both and compare every page and the search index.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Sequence, Set
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.builders.dirhtml import DirectoryHTMLBuilder
from sphinx.builders.html import StandaloneHTMLBuilder
from sphinx.locale import __
from sphinx.util import logging
from sphinx.util.display import status_iterator
from sphinx.util.osutil import relative_uri

from ..fixes import indexentries
from ..fixes.indexentries import KeptIndexEntriesMixin
from ..guard import Requirement, names_in
from . import pagewriting
from .pagewriting import OrderedTasks, chunks_by_cost

#: The Sphinx versions this module was written for, ``(major, minor)``, both included (see ``..guard``).
SPHINX = ((9, 0), (9, 0))
#: What it patches or relies on, checked before its setup runs (:mod:`slimebook.sphinxext.guard`); with what
#: :class:`_Tasks` (a :class:`~slimebook.sphinxext.accelerate.pagewriting.OrderedTasks`) and the builders' base
#: :class:`~slimebook.sphinxext.fixes.indexentries.KeptIndexEntriesMixin` rely on.
REQUIRES: tuple[Requirement, ...] = (
    Requirement("sphinx.builders:Builder.write_documents", ("docnames",)),
    Requirement("sphinx.builders:Builder._write_parallel"),
    Requirement("sphinx.builders:BuildPhase"),
    Requirement("sphinx.search:IndexBuilder._word_collector", ("doctree",)),
    Requirement("sphinx.search:IndexBuilder.feed", ("docname", "filename", "title", "doctree")),
    Requirement("sphinx.environment:BuildEnvironment.get_and_resolve_doctree", ("docname", "builder", "tags")),
    Requirement("sphinx.highlighting:PygmentsBridge.get_lexer", ("source", "lang", "force")),
    Requirement("sphinx.builders.html:StandaloneHTMLBuilder.write_doc_serialized", ("docname", "doctree")),
    Requirement("sphinx.builders.html:StandaloneHTMLBuilder.write_doc", ("docname", "doctree")),
    Requirement("sphinx.builders.html:StandaloneHTMLBuilder.index_page", ("pagename", "doctree", "title")),
    Requirement("sphinx.builders.html:StandaloneHTMLBuilder.post_process_images", ("doctree",)),
    Requirement("sphinx.builders.html:StandaloneHTMLBuilder.get_target_uri", ("docname",)),
    Requirement("sphinx.builders.html:StandaloneHTMLBuilder.load_indexer", ("docnames",)),
    *pagewriting.REQUIRES,
    *indexentries.REQUIRES,
)

__all__ = ["PipelinedDirectoryHTMLBuilder", "PipelinedHTMLBuilder", "PipelinedWriteMixin", "setup", "usable",
           "warm_lexers"]

logger = logging.getLogger(__name__)

#: how much lower a writer's scheduling priority is than the main process's (``os.nice``): the main process
#: resolves and indexes every document, so the writers run on what it leaves of the cores
WRITER_NICENESS = 10

#: chunks per writer: enough that the first writer starts early and the last chunks end close together
CHUNKS_PER_WRITER = 4


class _Tasks(OrderedTasks):
    """``ParallelTasks`` that start waiting writers in the order their chunks were resolved (so the index, fed in
    the order of the names, gets its words as early as it can) and that the main process can ask, between two
    pieces of its own work, to collect finished writers and start waiting ones (Sphinx's only does so in
    ``add_task`` and ``join``)."""

    def poll(self) -> bool:
        """Collect the finished tasks (their logs and results) and start waiting ones while slots are free; returns
        whether any task is still running or waiting. Raises ``SphinxParallelError`` when a task failed."""
        while self._join_one():
            pass
        return bool(self._pworking or self._precvs_waiting)


class _Collected:
    """What a writer collected of one document for the search index: the word store that
    ``IndexBuilder._word_collector`` returned for its doctree, and the Latin terms the search language's ``split``
    noted meanwhile (``SearchChinese.latin_terms``; ``None`` for a language that notes none)."""

    __slots__ = ("latin_terms", "words")

    def __init__(self, words: Any, latin_terms: set[str] | None) -> None:
        self.words = words
        self.latin_terms = latin_terms


def _collect(indexer: Any, doctree: nodes.document) -> _Collected:
    """The words of ``doctree`` as ``indexer.feed`` would collect them (in a writer on its copy of the doctree, or in
    the main process for the document written there). The Latin terms the language's ``split`` notes meanwhile are
    returned, not kept: they reach the language when the page is fed (:func:`_feed`), in the order of the names, as
    Sphinx's ``stem`` expects (a term noted early keeps an earlier page's word from being stemmed)."""
    lang = indexer.lang
    noted = getattr(lang, "latin_terms", None)
    if noted is None:
        return _Collected(indexer._word_collector(doctree), None)
    lang.latin_terms = set()  # so that what this doctree adds can be told apart
    try:
        words = indexer._word_collector(doctree)
        terms = lang.latin_terms
    finally:
        lang.latin_terms = noted
    return _Collected(words, terms)


def _feed(indexer: Any, feed_page: Any, doctree: nodes.document, collected: _Collected | None) -> None:
    """Call ``feed_page()`` (which feeds ``doctree`` to ``indexer``), with ``collected`` standing in for the words
    the indexer would collect from ``doctree``: when the indexer asks its collector for this doctree (and only for
    it), the Latin terms are noted, as the language's ``split`` would have noted them, and the word store returned.
    Without ``collected``, or if Sphinx's ``feed`` no longer asks its collector, the indexer collects as it always
    does."""
    if collected is None or indexer is None:
        feed_page()
        return
    own = indexer._word_collector

    def word_collector(tree: nodes.document) -> Any:
        if tree is not doctree:  # a page without search (``nosearch``) is fed an empty document
            return own(tree)
        if collected.latin_terms is not None:
            indexer.lang.latin_terms.update(collected.latin_terms)
        return collected.words

    indexer._word_collector = word_collector
    try:
        feed_page()
    finally:
        del indexer._word_collector  # the bound method of the class again


def _languages(doctree: nodes.document) -> Iterator[str]:
    """The ``language`` of every node the HTML translator highlights: literal blocks, and inline literals with a
    language (Sphinx's ``code`` role)."""
    for node in doctree.findall(lambda node: isinstance(node, (nodes.literal_block, nodes.literal))):
        language = node.get("language")
        if language:
            yield language


def warm_lexers(highlighter: Any, doctree: nodes.document, warmed: set[str]) -> None:
    """Make, in the main process, the Pygments lexers the translator will ask ``highlighter`` for when it writes
    ``doctree``, for each language not in ``warmed`` (a set of language names, updated).

    Why: a Pygments ``RegexLexer`` compiles its token rules when its class is first instantiated in a process
    (``LexerMeta.__call__``) and keeps them on the class. Writers forked after that inherit the compiled rules; a
    writer forked before compiles them again for its first page. Measured on a ``-j 2`` build of the book:
    ``PythonLexer``'s rules were compiled 22 times (by the writers of documents and of generated pages), 1.05 s of
    CPU in all; with this warm-up 4 times (the main process and the three readers), 0.12 s. ``highlighter`` is the
    builder's ``sphinx.highlighting.PygmentsBridge``; both forms of a Python language are made (plain source and
    a ``>>>`` session, which ``get_lexer`` tells apart by the source). Nothing is logged: an unknown language warns
    when the page is written, as it always did."""
    for language in _languages(doctree):
        if language in warmed:
            continue
        warmed.add(language)
        with logging.suppress_logging():
            for source in ("", ">>>"):
                try:
                    highlighter.get_lexer(source, language, force=True)
                except Exception:  # noqa: BLE001 - a warm-up only; the writer reports what fails
                    logger.debug("no lexer made for %r", language)


class PipelinedWriteMixin:
    """``write_documents`` of an HTML builder, pipelined as the module docstring says; serial builds (``-j 1``, or
    an extension that is not parallel-write safe) are Sphinx's own."""

    def write_documents(self: Any, docnames: Set[str]) -> None:
        """Write ``docnames`` (a set of docnames); with ``-j N`` (``N > 1``) and at least three of them, through
        :meth:`_write_pipelined`, else as Sphinx does."""
        nproc = self._app.parallel
        if not (self.parallel_ok and nproc > 1 and len(docnames) > 2):
            super().write_documents(docnames)  # type: ignore[misc]
            return
        self._write_pipelined(sorted(docnames), nproc)

    def _note_images(self: Any, docname: str, doctree: nodes.document) -> None:
        """The first half of ``StandaloneHTMLBuilder.write_doc_serialized``: the images of the page (main process)."""
        self.imgpath = relative_uri(self.get_target_uri(docname), self.imagedir)
        self.post_process_images(doctree)

    def _index(self: Any, docname: str, doctree: nodes.document, collected: _Collected | None = None) -> None:
        """The second half of ``StandaloneHTMLBuilder.write_doc_serialized``: the page fed to the search index, with
        the words a writer collected when there are any (:func:`_feed`)."""
        title_node = self.env.longtitles.get(docname)
        title = title_node.astext() if title_node else ""
        _feed(self.indexer, lambda: self.index_page(docname, doctree, title), doctree, collected)

    def _resolve(self: Any, docname: str, warmed: set[str]) -> nodes.document:
        from sphinx.builders import BuildPhase

        self.phase = BuildPhase.RESOLVING
        doctree = self.env.get_and_resolve_doctree(docname, self, tags=self.tags)
        self._note_images(docname, doctree)
        warm_lexers(self.highlighter, doctree, warmed)
        return doctree

    def _cost(self: Any, docname: str) -> float:
        try:
            return float(os.path.getsize(os.path.join(self.doctreedir, f"{docname}.doctree")))
        except OSError:
            return 1.0

    def _order_of_work(self: Any, docnames: Sequence[str], nproc: int) -> tuple[str, str, list[list[str]]]:
        """``(opener, first, chunks)``: the two cheapest documents and the others in chunks of about equal cost."""
        costs = {name: self._cost(name) for name in docnames}
        # the two cheapest documents: the first writer forks with the cheaper as soon as it is resolved; the main
        # process writes the other meanwhile, as Sphinx writes its first document, so that the writers forked
        # after it inherit what its page loaded (templates, jieba's dictionary if the read did not load it)
        opener, first = sorted(docnames, key=lambda name: (costs[name], name))[:2]
        rest = [name for name in docnames if name not in (opener, first)]
        chunks = chunks_by_cost(rest, CHUNKS_PER_WRITER * nproc, costs.__getitem__)
        if chunks and len(chunks[0]) > 1:  # the second writer forks after one more document, not a chunk
            chunks[:1] = [chunks[0][:1], chunks[0][1:]]
        return opener, first, chunks

    def _write_chunk(self: Any, docs: list[tuple[str, nodes.document]]) -> dict[str, _Collected]:
        """A forked writer's task: each page's words for the search index, then the page; returns docname → words."""
        from sphinx.builders import BuildPhase

        os.nice(WRITER_NICENESS)
        self.phase = BuildPhase.WRITING
        words = {}
        for docname, doctree in docs:
            if self.indexer is not None:
                words[docname] = _collect(self.indexer, doctree)  # before the translator may change the doctree
            self.write_doc(docname, doctree)
        return words

    def _write_here(self: Any, docname: str, doctree: nodes.document, collected: dict[str, _Collected]) -> None:
        """Write a page in the main process, its words collected into ``collected`` first."""
        from sphinx.builders import BuildPhase

        self.phase = BuildPhase.WRITING
        if self.indexer is not None:
            collected[docname] = _collect(self.indexer, doctree)
        self.write_doc(docname, doctree)

    def _index_by_name(self: Any, resolved: list[tuple[str, nodes.document]], collected: dict[str, _Collected],
                       tasks: _Tasks) -> None:
        """Feed the index every resolved page in the order of the names, as Sphinx feeds it; each page with the words
        its writer collected, waiting for them while a writer still has them."""
        from sphinx.builders import BuildPhase

        self.phase = BuildPhase.WRITING
        for docname, doctree in sorted(resolved, key=lambda pair: pair[0]):
            while docname not in collected and tasks.poll():
                time.sleep(0.01)
            self._index(docname, doctree, collected.pop(docname, None))

    def _write_pipelined(self: Any, docnames: Sequence[str], nproc: int) -> None:
        """Write ``docnames`` (sorted) with ``nproc`` forked writers in the order the module docstring gives."""
        opener, first, chunks = self._order_of_work(docnames, nproc)
        collected: dict[str, _Collected] = {}
        progress = status_iterator([[opener], *chunks], __("writing output... "), "darkgreen", len(chunks) + 1,
                                   self.config.verbosity)

        def on_chunk_done(_docs: list[tuple[str, nodes.document]], result: dict[str, _Collected]) -> None:
            collected.update(result)
            next(progress)

        warmed: set[str] = set()
        tasks = _Tasks(nproc)
        try:
            resolved: list[tuple[str, nodes.document]] = [(opener, self._resolve(opener, warmed))]
            tasks.add_task(self._write_chunk, resolved[:1], on_chunk_done)
            resolved.append((first, self._resolve(first, warmed)))
            self._write_here(first, resolved[-1][1], collected)
            for chunk in chunks:
                arg = []
                for docname in chunk:
                    arg.append((docname, self._resolve(docname, warmed)))
                    tasks.poll()
                resolved.extend(arg)
                tasks.add_task(self._write_chunk, arg, on_chunk_done)
            self._index_by_name(resolved, collected, tasks)
        except BaseException:
            tasks.terminate()
            raise
        tasks.join()
        logger.info("")


class PipelinedHTMLBuilder(PipelinedWriteMixin, KeptIndexEntriesMixin, StandaloneHTMLBuilder):
    """Sphinx's ``html`` builder with :class:`PipelinedWriteMixin`'s parallel writing and the index entries an
    incremental build keeps (:class:`~slimebook.sphinxext.fixes.indexentries.KeptIndexEntriesMixin`)."""


class PipelinedDirectoryHTMLBuilder(PipelinedWriteMixin, KeptIndexEntriesMixin, DirectoryHTMLBuilder):
    """Sphinx's ``dirhtml`` builder with :class:`PipelinedWriteMixin`'s parallel writing and the index entries an
    incremental build keeps (:class:`~slimebook.sphinxext.fixes.indexentries.KeptIndexEntriesMixin`)."""


def usable() -> bool:
    """What ``REQUIRES`` cannot say: the builder's instance attributes :class:`PipelinedWriteMixin` reads
    (``_app``, ``parallel_ok``, ``imgpath``, ``imagedir``, set in ``Builder.__init__``); that the HTML builder's
    ``write_doc_serialized`` is still the two halves it does in its own order (the image paths through ``imgpath``
    and ``post_process_images``, the page through ``longtitles`` and ``index_page``); and what its bases rely on
    (:func:`~slimebook.sphinxext.accelerate.pagewriting.usable`: ``ParallelTasks``' ``_precvs_waiting``, ``_pworking``,
    ``_precvs``, ``_procs`` and ``_join_one``, which ``_Tasks.poll`` reads too;
    :func:`~slimebook.sphinxext.fixes.indexentries.usable`)."""
    from sphinx.builders import Builder

    return (names_in(Builder.__init__, "_app", "parallel_ok", "imgpath", "imagedir")
            and names_in(StandaloneHTMLBuilder.write_doc_serialized, "imgpath", "imagedir", "post_process_images",
                         "longtitles", "index_page")
            and pagewriting.usable() and indexentries.usable())


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the pipelined ``html`` and ``dirhtml`` builders in place of Sphinx's (same names, subclasses);
    returns the extension's metadata (it can also be loaded alone)."""
    app.add_builder(PipelinedHTMLBuilder, override=True)
    app.add_builder(PipelinedDirectoryHTMLBuilder, override=True)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
