"""Fixes of Sphinx behaviour the book relies on, each guarded like an accelerator (:mod:`slimebook.sphinxext.guard`):
it checks at setup that what it works around is there, and steps aside with an info line when it is not.

They are on whatever ``slimebook_accelerate`` says: they change which warnings a build gives and what an incremental
build's search index holds, not how fast it is.

* :mod:`.duplicatetargets`: with ``-j N`` (and in an incremental build) Sphinx misses "duplicate label" warnings a
  full serial read gives; the serial read is replayed over per-document records.
* :mod:`.indexentries`: an incremental build drops the index entries of the documents it does not write again from
  the search index; they are put back from the index it loaded.

Only this package's ``__init__`` and :mod:`slimebook.sphinxext.accelerate` import these modules.
"""

from __future__ import annotations

from sphinx.application import Sphinx

from ..guard import set_up_guarded

__all__ = ["FIXES", "setup"]

#: The fixes, in the order they are set up.
FIXES: tuple[str, ...] = ("duplicatetargets", "indexentries", "errorcount")


def setup(app: Sphinx) -> None:
    """Set up every fix whose guard passes."""
    set_up_guarded(app, __name__, FIXES)
