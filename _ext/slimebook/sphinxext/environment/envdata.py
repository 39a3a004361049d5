"""Per-document data kept on the build environment, parallel-read safe.

Each kind of data is a dict ``docname -> value`` stored as an attribute of the environment. When a
document is read again its entry is purged (``env-purge-doc``); after a parallel read the entries of
the documents a worker read are merged back (``env-merge-info``). This is the rule that makes
``parallel_read_safe = True`` honest (see ``sphinx.ext.viewcode``); every module of the book's
extension that keeps data per document registers it here instead of writing its own handlers.
"""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment

__all__ = ["doc_data", "keep_per_doc"]


def doc_data(env: BuildEnvironment, attr: str) -> dict[str, Any]:
    """The ``docname -> value`` dict kept on ``env`` under ``attr`` (created empty on first use)."""
    return env.__dict__.setdefault(attr, {})


def keep_per_doc(app: Sphinx, attr: str) -> None:
    """Purge and merge ``env.<attr>`` (a ``docname -> value`` dict) for every build of ``app``."""

    def purge(app: Sphinx, env: BuildEnvironment, docname: str) -> None:
        env.__dict__.get(attr, {}).pop(docname, None)

    def merge(app: Sphinx, env: BuildEnvironment, docnames: set[str], other: BuildEnvironment) -> None:
        mine = doc_data(env, attr)
        mine.update((d, value) for d, value in other.__dict__.get(attr, {}).items() if d in docnames)

    app.connect("env-purge-doc", purge)
    app.connect("env-merge-info", merge)
