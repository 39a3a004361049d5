"""The book's Chinese search (:mod:`slimebook.sphinxext.output.search`) with jieba's dictionary loaded only when a
text beyond ASCII is indexed, and loaded faster; the terms indexed are the same.

Sphinx's ``SearchChinese`` loads jieba's dictionary in its constructor, which the HTML builder calls in
``prepare_writing`` of every build, also of one that writes no page (the index is then only pruned and dumped
again). :class:`LazyChineseSearch` is the same search with the load moved to the first text it segments: a build that
indexes a page loads the dictionary once, as before; a build that indexes nothing never loads it. ``bench/edit.py``
prints the loads per build.

The load itself is jieba's ``initialize`` with its cache file read whole (:func:`load_dictionary`). jieba decodes
the file (about 500,000 words, 9 MB for jieba 0.42.1) with ``marshal.load`` on the open file, which reads it piece
by piece; ``marshal.loads`` of the bytes read at once gives the same value in about a third of the time (0.28 s
instead of 0.87 s on this book's machine). That load was a third of the edit loop: the incremental rebuild of the
lesson on ``await`` took 3.2 s, 0.9–1.4 s of it jieba's (``bench/edit.py``).

The class is registered at ``builder-inited`` for HTML builders whose search language is Chinese (after the stock
class, which it replaces), so other builds do not import jieba at all; and jieba is imported without ``pkg_resources``
(:func:`import_jieba`), which was 139 of the
158 ms jieba's import took in every build (``python -X importtime``).

With ``-j N`` the main process waits while readers read; once a reader's end leaves a core free for the rest of the
read (:func:`merge_with_a_free_core`: no chunk waits to start, fewer than ``N`` readers run) it loads jieba's
dictionary there (:func:`load_while_reading`, at that ``env-merge-info``), and the writers it forks later inherit
it. Loading at an earlier merge would hold back the start of the next reader, which Sphinx starts only after the
merge. A serial build still loads it with the first text it segments. ``slimebook.sphinxext.accelerate.readplan``
plans the
readers' chunks with that load (:data:`LOAD_SECONDS`) in the main process.
"""

from __future__ import annotations

import marshal
import os
import sys
import threading
from typing import Any, BinaryIO

from sphinx.application import Sphinx

from ..guard import Requirement, missing, names_in, step_aside
from ..output.search import chinese_search, indexes_chinese

#: The Sphinx versions this module was written for, ``(major, minor)``, both included (see ``..guard``).
SPHINX = ((9, 0), (9, 0))
#: What it patches or relies on, checked before its setup runs (:mod:`slimebook.sphinxext.guard`).
REQUIRES: tuple[Requirement, ...] = (
    Requirement("sphinx.util.parallel:make_chunks", ("arguments", "nproc")),
)
#: What it relies on in Sphinx's zh search, checked when a build indexes in Chinese (:func:`zh_usable`), after jieba
#: is imported its own way: resolving them at setup would import ``sphinx.search.zh``, and so jieba, in every build.
ZH_REQUIRES: tuple[Requirement, ...] = (
    Requirement("sphinx.search.zh:jieba_load_userdict"),
    Requirement("sphinx.search.zh:JIEBA_DEFAULT_DICT"),
    Requirement("sphinx.search.zh:SearchChinese.__init__", ("options",)),
    Requirement("sphinx.search.zh:SearchChinese.split", ("input",)),
)

__all__ = [
    "LOAD_SECONDS", "import_jieba", "lazy_chinese_search", "load_dictionary", "load_while_reading",
    "jieba_usable", "loads_while_reading", "merge_with_a_free_core", "setup", "zh_usable",
]

#: seconds jieba's dictionary takes to load from jieba's cache file with :func:`load_dictionary` (0.23–0.45 s
#: measured on a 2 GHz core, with the user dictionary; jieba's own read took 0.75–1.4 s)
LOAD_SECONDS = 0.35

class _WholeFileMarshal:
    """``marshal`` as jieba's ``initialize`` uses it, with ``load`` reading the file whole before decoding it (see the
    module docstring); every other name is ``marshal``'s."""

    @staticmethod
    def load(file: BinaryIO) -> object:
        return marshal.loads(file.read())

    def __getattr__(self, name: str) -> object:
        return getattr(marshal, name)


#: held while ``jieba.marshal`` is swapped (:func:`load_dictionary`)
_SWAP = threading.Lock()


def load_dictionary(tokenizer: Any = None) -> None:
    """Load the dictionary of jieba's ``tokenizer`` (a ``jieba.Tokenizer``; default ``jieba.dt``, the one
    ``jieba.cut_for_search`` uses) with its cache file read whole: ``tokenizer.initialize()``, what
    ``jieba.initialize()`` calls; nothing when it is loaded. jieba's own rules for the cache apply (its file under
    the temporary directory, written again when missing or older than the dictionary). ``jieba.marshal`` is swapped
    for the call only, one call at a time in this process (a jieba user in another thread meanwhile gets the same
    values from the swapped module). Raises ``ImportError`` without jieba."""
    import jieba

    tokenizer = jieba.dt if tokenizer is None else tokenizer
    if tokenizer.initialized:
        return
    with _SWAP:  # one swap at a time: two threads' swaps would put each other's module back
        own = jieba.marshal
        jieba.marshal = _WholeFileMarshal()  # type: ignore[assignment]
        try:
            tokenizer.initialize()
        finally:
            jieba.marshal = own


def import_jieba() -> None:
    """Import jieba, if it is installed and not imported yet, without importing ``pkg_resources``.

    jieba 0.42.1 (``jieba/_compat.py``) imports ``pkg_resources`` only to open its own data files, and opens them by
    a path next to its module when that import fails: the same files. Importing ``pkg_resources`` (setuptools'
    deprecated API, which scans every installed distribution) took 139 ms of jieba's 158 ms here, in every build
    and every rebuild of the edit loop. So while jieba is imported, ``sys.modules["pkg_resources"]`` is ``None``
    (Python then raises ``ImportError`` for that import); the entry is removed again afterwards, so a later
    ``import pkg_resources`` works as usual. When ``pkg_resources`` is imported already, jieba uses it as before.
    jieba's own fallback joins the working directory to its module's path, so it fails once the working directory
    is deleted; it is replaced by an opener of the files next to jieba's module. Returns nothing; without jieba,
    nothing happens (Sphinx's Chinese search then indexes the Latin terms only, as it does)."""
    if "jieba" in sys.modules or "pkg_resources" in sys.modules:
        return
    sys.modules["pkg_resources"] = None  # type: ignore[assignment]
    try:
        import jieba
        import jieba._compat as compat
    except ImportError:
        return
    finally:
        if sys.modules.get("pkg_resources", 0) is None:
            del sys.modules["pkg_resources"]
    if getattr(compat, "pkg_resources", None) is None:  # jieba took its fallback
        here = os.path.dirname(os.path.abspath(compat.__file__))

        def get_module_res(*res: str) -> BinaryIO:
            return open(os.path.join(here, *res), "rb")  # noqa: SIM115 - jieba closes what it is given

        for module in (compat, jieba):
            if hasattr(module, "get_module_res"):
                module.get_module_res = get_module_res


def _has_jieba() -> bool:
    """Whether jieba can be imported (imported through :func:`import_jieba`)."""
    import_jieba()
    try:
        import jieba  # noqa: F401
    except ImportError:
        return False
    return True


def zh_usable() -> bool:
    """Whether Sphinx's zh search has what :data:`ZH_REQUIRES` names and its ``SearchChinese.__init__`` still loads
    the user dictionary with ``jieba_load_userdict``, the load :class:`LazyChineseSearch` moves to its first
    :meth:`split`. Called when a build indexes in Chinese, after :func:`import_jieba` (never at setup, so that other
    builds import neither ``sphinx.search.zh`` nor jieba)."""
    if missing(ZH_REQUIRES):
        return False
    from sphinx.search.zh import SearchChinese

    return names_in(SearchChinese.__init__, "jieba_load_userdict")


def jieba_usable() -> bool:
    """Whether jieba (imported through :func:`import_jieba`) has what this module touches: the ``marshal`` module
    :func:`load_dictionary` swaps, read as a global by ``Tokenizer.initialize``, and the default tokenizer ``dt`` with
    its ``initialized`` flag. True without jieba: the search then indexes the Latin terms only, as Sphinx's does.
    (``jieba._compat``, whose file opener :func:`import_jieba` replaces, is optional: without it jieba's own
    opener stays.)"""
    import_jieba()
    try:
        import jieba
    except ImportError:
        return True
    return (hasattr(jieba, "marshal") and hasattr(getattr(jieba, "dt", None), "initialized")
            and names_in(getattr(getattr(jieba, "Tokenizer", None), "initialize", None), "marshal"))


def lazy_chinese_search() -> type:
    """The :class:`LazyChineseSearch` class: the book's :func:`~slimebook.sphinxext.output.search.chinese_search`
    with jieba's dictionary loaded by the first :meth:`split` that needs jieba, and read whole (made on first use)."""
    from pathlib import Path

    import_jieba()

    from sphinx.search.zh import JIEBA_DEFAULT_DICT, jieba_load_userdict

    class LazyChineseSearch(chinese_search()):  # type: ignore[misc]
        """The book's Chinese search whose user dictionary (and so jieba's own) is loaded by the first :meth:`split`
        of a text beyond ASCII."""

        def __init__(self, options: dict[str, str]) -> None:
            self._user_words: str | None = options.get("dict", JIEBA_DEFAULT_DICT)
            super().__init__({**options, "dict": ""})  # no dictionary here: it is loaded by the first split

        def split(self, input: str) -> list[str]:  # noqa: A002 - Sphinx's parameter name
            """The parent's split; before the first text beyond ASCII, jieba's dictionary is loaded."""
            if self._user_words is not None and not input.isascii():
                if _has_jieba():  # without it Sphinx's split finds the Latin terms only
                    load_dictionary()  # read faster than jieba reads it; the user dictionary then adds to it
                words, self._user_words = self._user_words, None
                if words and Path(words).is_file():
                    jieba_load_userdict(str(words))  # as SearchChinese.__init__ does
            return super().split(input)

    return LazyChineseSearch


#: ``app.builder.__dict__`` key, True once :func:`_register` registered :class:`LazyChineseSearch` for the build
_REGISTERED = "slimebook_lazy_search"


def _import_first(app: Sphinx) -> None:
    """``builder-inited``, before the book's stock zh search is registered (which imports ``sphinx.search.zh`` and so
    jieba): import jieba without ``pkg_resources`` (:func:`import_jieba`) for a Chinese index."""
    if indexes_chinese(app):
        import_jieba()


def _register(app: Sphinx) -> None:
    """``builder-inited``: register :class:`LazyChineseSearch` for a Chinese index, when :func:`jieba_usable`; else
    step aside (one info line), leaving the book's stock search and jieba's own load."""
    if not indexes_chinese(app):
        return
    if not jieba_usable():
        step_aside(__name__, "jieba is not the one it was written for (jieba.marshal, jieba.dt.initialized, "
                             "Tokenizer.initialize reading marshal)")
        return
    if not zh_usable():
        step_aside(__name__, "Sphinx's zh search is not the one it was written for (" + ", ".join(
            r.target for r in ZH_REQUIRES) + ", SearchChinese.__init__ calling jieba_load_userdict)")
        return
    app.add_search_language(lazy_chinese_search())
    app.builder.__dict__[_REGISTERED] = True


def loads_while_reading(app: Sphinx) -> bool:
    """Whether :func:`load_while_reading` will load jieba's dictionary in this build: an HTML builder with a search
    index in Chinese whose dictionary is not loaded yet, for which :func:`_register` registered the lazy search (so
    never when this module stepped aside, or was not set up: :mod:`~slimebook.sphinxext.accelerate.readplan` asks
    too)."""
    if not (app.builder.__dict__.get(_REGISTERED) and indexes_chinese(app) and getattr(app.builder, "search", False)
            and _has_jieba()):
        return False
    import jieba

    return not jieba.dt.initialized


def merge_with_a_free_core(chunks: int, workers: int) -> int:
    """The merge (1 for the first reader to end) after which a parallel read of ``chunks`` chunks by ``workers``
    readers (``ParallelTasks``) leaves a core free until it ends: at the ``k``-th end ``min(chunks, workers + k - 1)``
    chunks have started, so from ``k = chunks - workers + 1`` on none waits; at least 1."""
    return max(1, chunks - workers + 1)


#: ``app.builder.__dict__`` key of ``[merge at which to load, merges so far]`` for the read under way
_MERGES = "slimebook_search_merges"


def _count_readers(app: Sphinx, _env: object, docnames: list[str]) -> None:
    """``env-before-read-docs`` (last, when the list is final): which merge of this read leaves a core free."""
    from sphinx.util.parallel import make_chunks

    chunks = len(make_chunks(docnames, app.parallel)) if app.parallel > 1 and docnames else 0
    app.builder.__dict__[_MERGES] = [merge_with_a_free_core(chunks, app.parallel), 0]


def load_while_reading(app: Sphinx, *_args: object) -> None:
    """``env-merge-info`` (main process, a reader has ended): load jieba's dictionary once, when
    :func:`loads_while_reading`, at the merge :func:`merge_with_a_free_core` names (at the first, when the read's
    chunks were not counted); the user dictionary stays with the first text segmented, as before."""
    merges = app.builder.__dict__.get(_MERGES)
    if merges is not None:
        merges[1] += 1
        if merges[1] < merges[0]:
            return
    if loads_while_reading(app):
        load_dictionary()


def setup(app: Sphinx) -> None:
    """Register :class:`ChineseSearch` for ``zh`` when an HTML builder starts; load jieba's dictionary while a
    parallel read leaves a core free."""
    app.connect("builder-inited", _import_first, priority=400)  # before the book's own zh search imports jieba (500)
    app.connect("builder-inited", _register, priority=600)  # after the book's own zh search is registered (500)
    app.connect("env-before-read-docs", _count_readers, priority=950)
    app.connect("env-merge-info", load_while_reading, priority=900)
