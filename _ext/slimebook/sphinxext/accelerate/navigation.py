"""One navigation for every page that is not a document: the global toctree resolved once per build and drawn
once per set of links, instead of both once per generated page.

A generated page is not a document, so its navigation (the whole toctree, which Furo turns into its sidebar) does not
depend on the page but on the directory its links are relative to. Stock Sphinx resolves and draws it for every page
(``Builder._get_local_toctree``); this module gives such pages a ``toctree`` that reproduces that method's output
(its argument defaults, ``render_partial``) from a shared drawing, so it must follow that private method's behaviour:
its guard (``REQUIRES``) checks the method is there with the parameters it was written for.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.environment.adapters.toctree import global_toctree_for_doc

from ..guard import Requirement, names_in

#: The Sphinx versions this module was written for, ``(major, minor)``, both included (see ``..guard``).
SPHINX = ((9, 0), (9, 0))
#: What it patches or relies on, checked before its setup runs (:mod:`slimebook.sphinxext.guard`).
REQUIRES: tuple[Requirement, ...] = (
    Requirement("sphinx.builders.html:StandaloneHTMLBuilder._get_local_toctree", ("docname", "collapse")),
    Requirement("sphinx.environment.adapters.toctree:global_toctree_for_doc", ("env", "docname", "builder", "tags",
    "collapse")),
    Requirement("sphinx.builders.html:StandaloneHTMLBuilder.render_partial", ("node",)),
    Requirement("sphinx.builders:Builder.get_relative_uri", ("from_", "to")),
    Requirement("sphinx.builders.html:StandaloneHTMLBuilder.get_target_uri", ("docname",)),
)

__all__ = ["setup", "usable"]


def usable() -> bool:
    """Whether the page context's ``toctree`` is still ``_get_local_toctree`` (``handle_page``) and that method still
    resolves the tree with ``global_toctree_for_doc`` and renders it with ``render_partial``: what :class:`_Navigation`
    reproduces. (``REQUIRES`` checks their names and parameters; what the method's defaults are, it cannot.)"""
    from sphinx.builders.html import StandaloneHTMLBuilder

    return (names_in(StandaloneHTMLBuilder.handle_page, "_get_local_toctree")
            and names_in(StandaloneHTMLBuilder._get_local_toctree, "global_toctree_for_doc", "render_partial"))


_NAV = "slimebook_shared_navigation"


class _Targets:
    """The builder, except that a link made by the toctree resolver keeps its target, between two NUL
    characters (made relative to a real page by :meth:`_Navigation.html`)."""

    def __init__(self, builder: Any) -> None:
        self._builder = builder

    def __getattr__(self, name: str) -> Any:
        return getattr(self._builder, name)

    def get_relative_uri(self, from_: str, to: str, typ: str | None = None) -> str:
        return f"\0{to}\0"


class _Navigation:
    """The global toctree of pages that are not documents, resolved once per build and set of arguments, drawn
    once per set of links: directories whose links to the tree's targets are the same (``../../chapters/…`` from
    every directory two levels below a top directory no document lives in) share one drawing.

    Why this is exact: Sphinx resolves the global toctree for a page (``global_toctree_for_doc``) from the
    page's name in three places only: its ancestors in the toctrees and the ``current`` classes (none for a
    page no toctree names), and each link, made relative to the page (``builder.get_relative_uri``, which keeps
    only the page's directory). So the tree is resolved once with the links' targets kept (:class:`_Targets`),
    each directory's links to those targets are made by the builder, and each distinct set of links gets a copy
    of the tree with them, rendered as ``Builder._get_local_toctree`` renders it (same argument defaults,
    ``render_partial``). Two directories with the same links get the same HTML, so Furo's sidebar (cached by
    that HTML) is computed once for both too.
    """

    def __init__(self, app: Sphinx) -> None:
        self.app = app
        env = app.env
        #: every entry a toctree names (documents and the special pages a toctree may name)
        self.entries = {ref for toc in env.tocs.values() for node in toc.findall(addnodes.toctree)
                        for _title, ref in node["entries"]}
        self._trees: dict[Any, nodes.Element | None] = {}
        self._targets: dict[Any, tuple[str, ...]] = {}  # the targets the tree links to, in order
        self._drawn: dict[Any, str] = {}  # (their links from a directory, arguments) -> HTML
        self._html: dict[Any, str] = {}  # (directory, arguments) -> HTML

    def applies(self, pagename: str) -> bool:
        """True for a page that is neither a document nor named by a toctree."""
        return pagename not in self.app.env.all_docs and pagename not in self.entries

    def html(self, pagename: str, collapse: bool = True, **kwargs: Any) -> str:
        """What the page context's ``toctree(**kwargs)`` returns for ``pagename``."""
        builder = self.app.builder
        kwargs.setdefault("includehidden", False)  # the defaults of Builder._get_local_toctree
        if kwargs.get("maxdepth") == "":
            kwargs.pop("maxdepth")
        key = (collapse, tuple(sorted(kwargs.items())))
        directory = builder.get_target_uri(pagename).rsplit("#", 1)[0].rpartition("/")[0]
        if (directory, key) in self._html:
            return self._html[directory, key]
        if key not in self._trees:
            tree = global_toctree_for_doc(self.app.env, pagename, _Targets(builder),  # type: ignore[arg-type]
                                          tags=builder.tags, collapse=collapse, **kwargs)
            self._trees[key] = tree
            self._targets[key] = () if tree is None else tuple(dict.fromkeys(
                ref["refuri"][1:].partition("\0")[0] for ref in tree.findall(nodes.reference)
                if ref["refuri"].startswith("\0")))
        links = tuple(builder.get_relative_uri(pagename, target) for target in self._targets[key])
        if (links, key) not in self._drawn:
            self._drawn[links, key] = self._draw(self._trees[key], dict(zip(self._targets[key], links, strict=True)))
        self._html[directory, key] = self._drawn[links, key]
        return self._html[directory, key]

    def _draw(self, tree: nodes.Element | None, links: dict[str, str]) -> str:
        """``tree`` rendered with each kept target replaced by its link in ``links`` (target → relative URI)."""
        if tree is not None:
            tree = tree.deepcopy()
            for ref in tree.findall(nodes.reference):
                if ref["refuri"].startswith("\0"):
                    target, _, anchor = ref["refuri"][1:].partition("\0")
                    ref["refuri"] = links[target] + anchor
        return self.app.builder.render_partial(tree)["fragment"]


def _share_navigation(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any],
                      doctree: Any) -> None:
    """``html-page-context`` (before Furo's): a page that is not a document gets a ``toctree`` that resolves
    the navigation once per build and draws it once per set of links (:class:`_Navigation`). Furo builds its
    sidebar from that HTML and caches its own work by the HTML's text, so it too works once per drawing."""
    if "toctree" not in context or pagename in app.env.all_docs:
        return
    navigation = app.builder.__dict__.get(_NAV)
    if navigation is None:
        navigation = app.builder.__dict__[_NAV] = _Navigation(app)
    if navigation.applies(pagename):
        context["toctree"] = lambda **kwargs: navigation.html(pagename, **kwargs)


def _forget_navigation(app: Sphinx, env: BuildEnvironment) -> None:
    app.builder.__dict__.pop(_NAV, None)


def setup(app: Sphinx) -> None:
    """Share the navigation of generated pages (``html-page-context``, before Furo's reads it)."""
    app.connect("html-page-context", _share_navigation, priority=400)  # before Furo's (500) reads it
    app.connect("env-updated", _forget_navigation)
