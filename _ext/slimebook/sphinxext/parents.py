"""A toctree parent is written again only when what it shows of a re-read child changed.

Sphinx writes every document whose toctree lists a re-read document (``env.files_to_rebuild``, in
``Builder.write``), whatever changed in the child. A parent shows of its child only the child's entry: its title
(toctree lines, the sidebar, ``{ref}`` and ``{doc}`` texts, the previous/next links), its table of contents (a
toctree deeper than one level) and the labels it defines (``{ref}`` targets: a label gone must warn in the parent
again). Editing a lesson's body rewrote the course map too, a large page: about 0.07 s of the 1.6 s the edit loop
takes (``bench/edit.py``).

So at ``env-before-read-docs`` the entry of every document about to be read again is noted; at ``write-started``,
before Sphinx collects the parents, a child whose entry is the same after the read is taken out of
``env.files_to_rebuild`` (its parents are then written only when something else asks for them); ``build-finished``
puts the entries back. The environment was pickled before writing, so nothing of this reaches the next build. A new
child, a child whose title, table of contents or labels changed, and section numbers (Sphinx's own
``env-get-updated``) still rewrite their parents.
"""

from __future__ import annotations

from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment

__all__ = ["entry", "setup"]


def entry(env: BuildEnvironment, docname: str) -> str | None:
    """What a toctree parent shows of ``docname``, as a string to compare; None when the environment has no title
    for it (a new document).

    The title and long title, the table of contents (``env.tocs``, with its link targets) and the ``std`` domain's
    labels and anonymous labels defined in the document, in a stable order.
    """
    if docname not in env.titles:
        return None
    std = env.domaindata.get("std", {})
    labels = sorted((name, *value) for name, value in std.get("labels", {}).items() if value[0] == docname)
    anonymous = sorted((name, *value) for name, value in std.get("anonlabels", {}).items() if value[0] == docname)
    toc = env.tocs.get(docname)
    return repr((env.titles[docname].pformat(), env.longtitles[docname].pformat() if docname in env.longtitles else "",
                 toc.pformat() if toc is not None else "", labels, anonymous))


class _ParentWrites:
    """The state of one application: entries before the read, ``files_to_rebuild`` entries held back."""

    def __init__(self) -> None:
        self.before: dict[str, str] = {}
        self.held: dict[str, set[str]] = {}

    def note(self, app: Sphinx, env: BuildEnvironment, docnames: list[str]) -> None:
        """``env-before-read-docs``: the entries of the documents about to be read again."""
        self.before = {d: e for d in docnames if (e := entry(env, d)) is not None}

    def hold_back(self, app: Sphinx, builder) -> None:
        """``write-started``: take children whose entry did not change out of ``env.files_to_rebuild``."""
        env = app.env
        for docname, was in self.before.items():
            parents = env.files_to_rebuild.get(docname)
            if parents and entry(env, docname) == was:
                self.held[docname] = parents
                env.files_to_rebuild[docname] = set()
        self.before = {}

    def restore(self, app: Sphinx, exception: BaseException | None) -> None:
        """``build-finished``: put the held entries back (an application that builds again sees them)."""
        for docname, parents in self.held.items():
            app.env.files_to_rebuild[docname] = parents | app.env.files_to_rebuild.get(docname, set())
        self.held = {}


def setup(app: Sphinx) -> None:
    """Note entries before reading, hold back unchanged children when writing starts, restore when the build ends."""
    state = _ParentWrites()
    app.connect("env-before-read-docs", state.note, priority=950)  # after handlers that add documents to read
    app.connect("write-started", state.hold_back, priority=100)
    app.connect("build-finished", state.restore)
