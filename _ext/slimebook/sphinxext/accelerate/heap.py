"""The build's long-lived objects kept out of Python's cyclic garbage collector (:func:`gc.freeze`).

A build loads a large heap that lives until the end: the environment (every document's records, the scan of the
pin, the citations), the doctrees being written, Sphinx's and the extensions' modules. The cyclic collector walks
all of it again at every full collection, and that costs three times over:

* **in forked workers** (``-j N``): a worker's first full collection walks every object it inherited and writes to
  each object's header, so the kernel copies every page of the parent's heap into the worker. Measured: each forked
  task of :func:`~slimebook.sphinxext.pages.render.write_pages` spent about 0.7 s more CPU on its first usage page
  than the same page costs in
  one process (5.5 s of CPU for the generated pages in one process, 10.9 s in the forked workers of ``-j 2``). The
  Python documentation of :func:`gc.freeze` gives the recipe: freeze right before ``fork()``. This module freezes
  at ``env-before-read-docs`` (Sphinx forks its readers after it) and at ``write-started`` (its writers), and
  :class:`~slimebook.sphinxext.pages.render.OrderedTasks` (the writers of documents and of generated pages) freezes
  right before each fork
  (:func:`freeze_for_fork`, only in a build these hooks run in: nothing would give the objects back otherwise).
  What is frozen stays until :func:`thaw`, garbage or not: the doctrees the parallel writer resolved are held
  through the generated pages (measured on the book with ``-j 2``: 20 to 28 MB more at the peak, 8 to 11 %). Freeing
  them once the documents are written would take a full collection of 0.55 s in the main process (470,000
  objects), which a one-off build otherwise never pays (the interpreter exits with the heap frozen). Not frozen at
  a reader's merge: the merged reader's environment is still alive there and would be held until the end;
* **in the main process**: a full collection no longer walks the frozen environment;
* **at exit**: the interpreter's finalization collects again over everything still alive, objects that are freed
  anyway. Measured on an incremental rebuild of one chapter: 2.32 s from start to exit, 1.89 s with the heap
  frozen at exit (the build itself 1.76 s either way). So an ``atexit`` hook freezes whatever is alive then.

* **while the environment is loaded**: unpickling the book's environment allocates about a million objects, and
  the collections those allocations set off (young ones by the dozen and a full one) find nothing to free: measured
  with ``gc.callbacks`` on an incremental rebuild, 0.063 s of collections inside ``_init_env`` (0.17 s in the
  whole build; the one-page floor of ``bench/edit.py`` spends 0.11 s in all). In the first build of a process the
  collector is paused from ``config-inited`` (last, after the configuration is checked) to ``builder-inited``
  (first), and what was loaded is then frozen (:func:`pause`, :func:`resume`). A build that fails in between leaves
  the collector paused until the next build of the process reaches ``builder-inited`` or ``build-finished``.

Frozen objects are not collected: :func:`thaw` at ``build-finished`` puts them back, and the first freeze of a build
(:func:`collect_and_freeze`, at ``env-before-read-docs``) runs a full collection first when an earlier build ended in
the same process, so that build's garbage is freed, not frozen again. The first build of a process skips the
collection (about 0.07 s over the loaded environment of the book, every incremental rebuild from the command line
or ``make livehtml`` paid it): before it there is only the start-up's garbage, which does not grow. Without that
collection a process that builds repeatedly (the test suite, a loop over ``Sphinx(...).build()``) grew by a whole
build's garbage each time (measured on the book: 323, 467, 603, 746 MB after four builds; with it the tracked objects
stay flat). :func:`thaw` gives back everything frozen
in the process, also what a host program froze itself.

What the exit hook gives up: an object that is part of a reference cycle when the interpreter exits is freed without
the collector, so a ``__del__`` in such a cycle does not run. Every file the book writes is closed by a ``with``
block (``atomicio``) before the build ends, so no buffered output depends on it.
"""

from __future__ import annotations

import atexit
import gc
from typing import Any

from sphinx.application import Sphinx

from ..guard import Requirement

#: The Sphinx versions this module was written for, ``(major, minor)``, both included (see ``..guard``).
SPHINX = ((9, 0), (9, 0))
#: What it patches or relies on, checked before its setup runs (:mod:`slimebook.sphinxext.guard`).
REQUIRES: tuple[Requirement, ...] = (
    Requirement("gc:freeze"),
    Requirement("gc:unfreeze"),
    Requirement("sphinx.util.parallel:ParallelTasks"),
)

__all__ = ["collect_and_freeze", "freeze", "freeze_for_fork", "pause", "resume", "setup", "thaw"]

_EXIT_HOOK: list[bool] = []  # one atexit registration per process
_PAUSED: list[bool] = []  # not empty while pause() holds the collector
_ENDED: list[bool] = []  # not empty once a build has ended in this process (see collect_and_freeze)
_BUILDING: list[bool] = []  # not empty from env-before-read-docs to build-finished of a build these hooks run in


def freeze(*_args: Any) -> None:
    """Move every object the collector tracks now into its permanent generation (:func:`gc.freeze`).

    Accepts and ignores any event arguments, so it can be connected to Sphinx events as it is. No collection runs
    first: garbage frozen with the rest is freed after :func:`thaw` (the next build's :func:`collect_and_freeze`
    at the latest)."""
    gc.freeze()


def freeze_for_fork() -> None:
    """:func:`freeze` right before a fork, in a build this module's hooks run in, between its first freeze
    (:func:`collect_and_freeze`, inside ``Sphinx.build``) and the :func:`thaw` at its ``build-finished`` (connected
    first, so that no other handler failing there skips it); nothing otherwise, so that an extension forking without
    this one (the parallel writer loaded alone) does not keep every build's garbage for the rest of the process."""
    if _BUILDING:
        gc.freeze()


def collect_and_freeze(*_args: Any) -> None:
    """The first freeze of a build: a full collection (:func:`gc.collect`) when an earlier build ended in this
    process (:func:`thaw` notes it), so nothing it left behind is frozen with this one's heap; then
    :func:`freeze`. Event arguments are ignored."""
    if _ENDED:
        gc.collect()
    if not _BUILDING:
        _BUILDING.append(True)
    gc.freeze()


def pause(*_args: Any) -> None:
    """``config-inited``: in the first build of a process (no build ended before), stop automatic collections until
    :func:`resume`, when the collector was running. Event arguments are ignored."""
    if not _ENDED and not _PAUSED and gc.isenabled():
        gc.disable()
        _PAUSED.append(True)


def resume(*_args: Any) -> None:
    """``builder-inited`` (and ``build-finished``): after a :func:`pause`, freeze what was loaded meanwhile (the
    environment) and restart automatic collections; nothing otherwise. Event arguments are ignored."""
    if _PAUSED:
        _PAUSED.clear()
        gc.freeze()
        gc.enable()


def thaw(*_args: Any) -> None:
    """Give the frozen objects back to the collector (:func:`gc.unfreeze`) and note that a build ended (the next
    :func:`collect_and_freeze` collects first); event arguments are ignored."""
    resume()
    gc.unfreeze()
    _BUILDING.clear()
    if not _ENDED:
        _ENDED.append(True)


def setup(app: Sphinx) -> None:
    """Pause the collector while the environment loads, freeze before Sphinx forks readers and writers, thaw when
    the build ends, freeze again at exit."""
    resume()  # a pause an earlier application of this process left (its build failed before builder-inited)
    _BUILDING.clear()  # a build an earlier application left without build-finished (interrupted): it is over
    app.connect("config-inited", pause, priority=999)
    app.connect("builder-inited", resume, priority=0)
    # after what other handlers load for the forks
    app.connect("env-before-read-docs", collect_and_freeze, priority=900)
    app.connect("write-started", freeze, priority=900)
    app.connect("build-finished", thaw, priority=0)  # first: a handler that raises after it cannot skip it
    if not _EXIT_HOOK:
        atexit.register(gc.freeze)
        _EXIT_HOOK.append(True)
