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
child and a child whose entry changed still rewrite their parents. The entry (:func:`entry`) is everything a parent
can show of a child: titles, table of contents, the labels, objects (glossary terms, …) and equations it defines,
its section and figure numbers (``{numref}``, ``{eq}`` in the parent) and its ``tocdepth``.

A build that is stopped while it writes (``make livehtml`` stopping its build with SIGTERM, Ctrl-C) has already
pickled the environment, so the next build would take the pages it did not write for current. So ``write-started``
leaves a mark in the doctree directory that ``build-finished`` removes when the build succeeds; while a mark is
there, nothing is held back: every parent of a re-read child is written, as Sphinx alone does.

A change of what every page's navigation shows (:func:`navigation`: a document's title, a toctree's entries or
caption) writes every document (``env-get-updated``): Furo draws the whole toctree, with every document's title, on
every page, and the previous/next links carry the neighbours' titles, while Sphinx alone rewrites only the edited
document and its parents, leaving the other pages with the old title.
"""

from __future__ import annotations

from pathlib import Path

from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment

from ...atomicio import atomic_write
from ..guard import Requirement, names_in

#: The Sphinx versions this module was written for, ``(major, minor)``, both included (see ``..guard``).
SPHINX = ((9, 0), (9, 0))
#: What it patches or relies on, checked before its setup runs (:mod:`slimebook.sphinxext.guard`).
REQUIRES: tuple[Requirement, ...] = (
    Requirement("sphinx.environment:BuildEnvironment.__init__"),
    Requirement("sphinx.builders:Builder.write", ("build_docnames", "updated_docnames", "method")),
    Requirement("sphinx.domains:Domain.get_objects"),
    Requirement("sphinx.domains._domains_container:_DomainsContainer.sorted"),
)

__all__ = ["WRITING_MARK", "entry", "navigation", "setup", "usable"]

#: the environment's attributes :func:`entry` and :func:`navigation` read and :class:`_ParentWrites` changes
_ENV_ATTRIBUTES = ("files_to_rebuild", "titles", "longtitles", "tocs", "toc_secnumbers", "toc_fignumbers",
                   "toctree_includes", "metadata", "domaindata")


def usable() -> bool:
    """Whether the environment still sets the attributes this module reads (:data:`_ENV_ATTRIBUTES`, in
    ``BuildEnvironment.__init__``) and ``Builder.write`` still collects the parents to write from
    ``files_to_rebuild`` (after ``write-started``, which is when a child is held back)."""
    from sphinx.builders import Builder
    from sphinx.environment import BuildEnvironment

    return (names_in(BuildEnvironment.__init__, *_ENV_ATTRIBUTES)
            and names_in(Builder.write, "files_to_rebuild", "emit"))

#: In the doctree directory while a build writes (see the module docstring).
WRITING_MARK = "slimebook-writing"


def entry(env: BuildEnvironment, docname: str) -> str | None:
    """What a toctree parent shows of ``docname``, as a string to compare; None when the environment has no title
    for it (a new document).

    The title and long title, the table of contents (``env.tocs``, with its link targets), the ``std`` domain's
    labels and anonymous labels defined in the document, every domain's objects in it (``get_objects``: glossary
    terms, options, Python objects, …), the math domain's equations, its section and figure numbers and its
    ``tocdepth`` (the one metadata field a toctree reads; MyST's ``wordcount`` changes with every edit), in a stable
    order.
    """
    if docname not in env.titles:
        return None
    std = env.domaindata.get("std", {})
    labels = sorted((name, *value) for name, value in std.get("labels", {}).items() if value[0] == docname)
    anonymous = sorted((name, *value) for name, value in std.get("anonlabels", {}).items() if value[0] == docname)
    objects = sorted((domain.name, *obj) for domain in env.domains.sorted() for obj in domain.get_objects()
                     if obj[3] == docname)
    equations = sorted((label, *value) for label, value in env.domaindata.get("math", {}).get("objects", {}).items()
                       if value[0] == docname)
    toc = env.tocs.get(docname)
    return repr((env.titles[docname].pformat(), env.longtitles[docname].pformat() if docname in env.longtitles else "",
                 toc.pformat() if toc is not None else "", labels, anonymous, objects, equations,
                 sorted(env.toc_secnumbers.get(docname, {}).items()),
                 sorted((k, sorted(v.items())) for k, v in env.toc_fignumbers.get(docname, {}).items()),
                 env.metadata.get(docname, {}).get("tocdepth")))


def navigation(env: BuildEnvironment) -> str:
    """What every page's navigation shows of the book, as a string to compare: each document's title and the
    entries, caption and options of each toctree it holds."""
    shown = []
    for docname in sorted(env.titles):
        toc = env.tocs.get(docname)
        toctrees = [] if toc is None else [sorted((k, repr(v)) for k, v in node.attributes.items())
                                           for node in toc.findall(addnodes.toctree)]
        shown.append((docname, env.titles[docname].astext(), env.toctree_includes.get(docname, []), toctrees))
    return repr(shown)


class _ParentWrites:
    """The state of one application: entries and navigation before the read, ``files_to_rebuild`` entries held
    back."""

    def __init__(self) -> None:
        self.before: dict[str, str] = {}
        self.navigation: str | None = None
        self.held: dict[str, set[str]] = {}

    def note(self, app: Sphinx, env: BuildEnvironment, docnames: list[str]) -> None:
        """``env-before-read-docs``: the entries of the documents about to be read again, and the navigation."""
        self.before = {d: e for d in docnames if (e := entry(env, d)) is not None}
        self.navigation = navigation(env) if docnames and env.titles else None

    def navigation_changed(self, app: Sphinx, env: BuildEnvironment) -> list[str]:
        """``env-get-updated``: every document when the navigation changed in this read, else none."""
        was, self.navigation = self.navigation, None
        return sorted(env.found_docs) if was is not None and navigation(env) != was else []

    def hold_back(self, app: Sphinx, builder) -> None:
        """``write-started``: take children whose entry did not change out of ``env.files_to_rebuild``, unless an
        earlier build stopped while writing; leave the writing mark."""
        env = app.env
        mark = Path(app.doctreedir) / WRITING_MARK
        interrupted = mark.exists()
        atomic_write(mark, "a build is writing (slimebook.sphinxext.accelerate.parents)\n")
        for docname, was in self.before.items():
            parents = env.files_to_rebuild.get(docname)
            if parents and not interrupted and entry(env, docname) == was:
                self.held[docname] = parents
                env.files_to_rebuild[docname] = set()
        self.before = {}

    def restore(self, app: Sphinx, exception: BaseException | None) -> None:
        """``build-finished``: put the held entries back (an application that builds again sees them); remove the
        writing mark when the build succeeded."""
        for docname, parents in self.held.items():
            app.env.files_to_rebuild[docname] = parents | app.env.files_to_rebuild.get(docname, set())
        self.held = {}
        if exception is None:
            (Path(app.doctreedir) / WRITING_MARK).unlink(missing_ok=True)


def setup(app: Sphinx) -> None:
    """Note entries before reading, write everything when the navigation changed, hold back unchanged children when
    writing starts, restore when the build ends."""
    state = _ParentWrites()
    app.connect("env-before-read-docs", state.note, priority=950)  # after handlers that add documents to read
    app.connect("env-get-updated", state.navigation_changed)
    app.connect("write-started", state.hold_back, priority=100)
    app.connect("build-finished", state.restore)
