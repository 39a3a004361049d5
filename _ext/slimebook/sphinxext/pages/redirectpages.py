"""Redirect pages: a page of the redirects file that no longer exists is replaced by a page that sends readers on.

``sources/redirects.txt`` (``slimebook_anchors_redirects``, read by :mod:`slimebook.sphinxext.gates.anchors`) may name
a whole page
(``old-page new-page``) or ids of a page (``old-page#id new-page#id``). When the old page is neither a document
nor a generated page of this build, its output name gets a small page, produced in ``html-collect-pages`` like
every generated page and rendered the same way (:class:`~slimebook.sphinxext.pages.render.GeneratedPage`): a meta
refresh to the new page
(``metatags`` in the page context, one second, so the id script below runs first), a sentence with a link to it
in the body, and the script :class:`~slimebook.sphinxext.pages.render.GeneratedPage` appends to every generated page,
which sends each
moved id of the old page to its new target. This is the shape of ``sphinx-reredirects``' pages, in the book's
theme.

The module is apart from :mod:`slimebook.sphinxext.gates.anchors` because :mod:`slimebook.sphinxext.pages.render`
imports the anchors' script helper: a redirect page
made in :mod:`slimebook.sphinxext.gates.anchors` would be an import cycle.
"""

from __future__ import annotations

import html
from collections.abc import Iterator
from typing import Any

from sphinx.application import Sphinx

from ...anchorcheck import split_target
from ..context import builds_pages
from ..gates.anchors import current_anchors, moves, target_uri
from ..locale import _, fill
from .render import GeneratedPage, make_para, make_ref

__all__ = ["TITLE", "setup"]

#: The title of every redirect page.
TITLE = _("This page has moved")


def _redirect_pages(app: Sphinx) -> Iterator[tuple[str, dict[str, Any], str]]:
    """``html-collect-pages``: a redirect page for every page of the redirects file that no longer exists.

    A page exists when it is a document or a generated page that publishes anchors in this build
    (``slimebook-page-anchors``); a redirect of one of its ids never replaces the page itself. The new place is
    the page's own line (``old-page new-page``), else the page of its first id's line."""
    if not builds_pages(app):
        return
    generated = set(current_anchors(app)[1])
    for page, ids in sorted(moves(app).items()):
        if page in app.env.found_docs or page in generated:
            continue
        default = ids.get("") or split_target(next(iter(ids.values())))[0]
        href = target_uri(app, page, default)
        body = GeneratedPage(app, page).html(make_para(*fill(_("This page has moved to {target}."),
                                                             target=make_ref(href, default))))
        metatags = f'<meta http-equiv="refresh" content="1; url={html.escape(href)}">'
        yield page, {"title": str(TITLE), "body": body, "metatags": metatags}, "page.html"


def setup(app: Sphinx) -> None:
    """Register the redirect pages (``html-collect-pages``)."""
    app.connect("html-collect-pages", _redirect_pages)
