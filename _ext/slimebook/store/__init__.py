"""The source store: pinned upstream commits fetched into a cache and read from git objects.

Pipeline position: ``sources/sources.toml`` (:mod:`slimebook.lock`) → **store** → the readers (excerpts, symbol
ranges, the scanner, snapshots, the repository map, the drift checker) → the Sphinx layer. It knows nothing of Sphinx.

Layout of the cache (``$SLIMEBOOK_CACHE``, else ``$XDG_CACHE_HOME/slimebook``, else
``~/.cache/slimebook``)::

    git/<name>-<commit>.git     a bare repository holding the pinned commit (ref refs/pins/<name>)
    git/.tmp-*                  fetches in progress; renamed into place only when complete

A repository directory exists under its final name only after its fetch finished and the commit
was verified, so an interrupted fetch never leaves a cache that looks valid (``os.rename`` is
atomic on one file system). Files are read without a work tree through one long-lived
``git cat-file --batch`` process per OS process, with an in-process cache of blobs.

Modules, one job each (everything public is imported from here, as ``slimebook.store.<name>``):

* :mod:`.errors`: the error family, :class:`SourceError` and one subclass per kind of failure.
* :mod:`.git`: running git (the fixed environment, failures as :class:`FetchError`, progress on a terminal).
* :mod:`.fetch`: putting the pinned commit into the cache (a temporary repository renamed into place).
* :mod:`.source`: :class:`SourceStore`, reading files at the pin; the :class:`Store` protocol; :func:`cache_root`.
* :mod:`.grep`: ``git grep`` at the pin, numbered by the book's line model (:class:`GrepMatch`).
* :mod:`.revisions`: abbreviated shas and renames between two pins, for the drift checker.
"""

from __future__ import annotations

from .errors import (
    FetchError,
    PinMissingError,
    RevisionError,
    SourceContentError,
    SourceError,
    SourcePathError,
)
from .fetch import STALE_TEMP_SECONDS as STALE_TEMP_SECONDS  # public, not in __all__ (as before the split)
from .grep import GrepMatch
from .grep import GrepSearch as GrepSearch  # public, not in __all__ (as before the split)
from .revisions import renames, resolve_commit
from .source import SourceStore, Store, TreeEntry, cache_root

__all__ = [
    "FetchError",
    "GrepMatch",
    "PinMissingError",
    "RevisionError",
    "SourceContentError",
    "SourceError",
    "SourcePathError",
    "SourceStore",
    "Store",
    "TreeEntry",
    "cache_root",
    "renames",
    "resolve_commit",
]

