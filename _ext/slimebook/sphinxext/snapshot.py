"""Snapshot pages in the HTML output, produced in ``html-collect-pages`` (the way ``sphinx.ext.viewcode``
does): nothing is written into the source tree, so ``sphinx-autobuild`` has nothing to loop on.

Which files get a page: every ``.py`` file at the pin, every file a citation reads, and whatever
other readers add through :func:`add_snapshot_paths` (the usage scanner adds Markdown docs).
``snapshot_ref`` nodes (placed by ``slime-source`` captions and the ``{slime}`` role) are placeholders,
as ``sphinx.ext.viewcode``'s ``viewcode_anchor`` is: the post-transform :class:`SnapshotLinks` turns each
into a link to ``_snapshot/<path>.html#L<n>`` when the builder writes snapshot pages (:func:`builds_pages`:
``html``, ``dirhtml``) and removes it, with the separator before it and an emptied ``slime-snapshot-mini``
superscript around it, in every other builder (``singlehtml``, ``epub``, ``latex``, ``text``, …), so no
output links to a page that was not written.
"""

from __future__ import annotations

import hashlib
import html
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging

from ..atomicio import atomic_write
from ..snapshots import render_snapshot, snapshot_pagename
from ..store import SourceContentError, SourceError
from . import backlinks
from .context import builds_pages, get_store, page_stamp_base
from .diagnostics import SlimebookWarning, warn
from .envrecords import citations

logger = logging.getLogger(__name__)


class snapshot_ref(nodes.Inline, nodes.Element):  # noqa: N801 - docutils node naming
    """A placeholder link to a snapshot page, resolved by :class:`SnapshotLinks`.

    Attributes: ``path`` (repo-relative), ``line`` (1-based, or 0 for the top of the page), ``refdoc`` (the
    document it was written in), ``sep`` (text shown before the link when there is a link, e.g. ``" · "``).
    Children: the link text. Its ``astext()`` is empty: a title Sphinx takes from a caption at read time (the
    text of a ``{ref}`` to a named excerpt) does not depend on whether the builder writes snapshot pages.
    """

    def astext(self) -> str:
        return ""


def make_snapshot_ref(path: str, line: int, refdoc: str, text: str = "快照", sep: str = "") -> snapshot_ref:
    """A :class:`snapshot_ref` to ``path`` at ``line``, written in ``refdoc``, showing ``sep`` + ``text``."""
    node = snapshot_ref("", path=path, line=line, refdoc=refdoc, sep=sep)
    node += nodes.Text(text)
    return node


def snapshot_uri(app: Sphinx, fromdoc: str, path: str, line: int) -> str:
    """The URI of ``path``'s snapshot page (at ``#L<line>`` when ``line``), relative to ``fromdoc``."""
    uri = app.builder.get_relative_uri(fromdoc, snapshot_pagename(path))
    return uri + (f"#L{line}" if line else "")


def snapshot_link(app: Sphinx, fromdoc: str, path: str, line: int, *children: nodes.Node) -> nodes.reference:
    """A ``reference`` (class ``slime-snapshot``) to the snapshot of ``path`` at ``line`` holding ``children``.

    Only for builders where :func:`builds_pages` is true; elsewhere the page does not exist.
    """
    where = f"{path}:{line}" if line else path
    return nodes.reference("", "", *children, refuri=snapshot_uri(app, fromdoc, path, line), internal=True,
                           classes=["slime-snapshot"], reftitle=f"{where} 在固定提交处的快照")


class SnapshotLinks(SphinxPostTransform):
    """Resolve every :class:`snapshot_ref`: a link where snapshot pages are written, nothing elsewhere."""

    default_priority = 20  # before other post-transforms look at references

    def run(self, **kwargs: Any) -> None:
        pages = builds_pages(self.env._app)  # Sphinx 9: transforms reach the app through env
        for node in list(self.document.findall(snapshot_ref)):
            parent = node.parent
            if pages:
                link = snapshot_link(self.env._app, node.get("refdoc") or self.env.docname, node["path"], node["line"],
                                     *node.children)
                node.replace_self([nodes.Text(node["sep"]), link] if node.get("sep") else [link])
                continue
            parent.remove(node)
            if isinstance(parent, nodes.superscript) and not parent.children and parent.parent is not None:
                parent.parent.remove(parent)


def _skip(self: Any, node: snapshot_ref) -> None:
    raise nodes.SkipNode


def add_snapshot_paths(app: Sphinx, paths: set[str]) -> None:
    """Ask for snapshot pages of ``paths`` (repo-relative) in this build."""
    app.__dict__.setdefault("slimebook_snapshot_paths", set()).update(paths)


def snapshot_paths(app: Sphinx) -> list[str]:
    """Every path that gets a snapshot page in this build, sorted."""
    env = app.env
    store = get_store(env)
    wanted = set(store.files(".py"))
    wanted.update(app.__dict__.get("slimebook_snapshot_paths", set()))
    for records in citations(env).values():
        wanted.update(record["path"] for record in records)
    return sorted(wanted)


def _page_body(app: Sphinx, path: str, fragment: str) -> str:
    lock = get_store(app.env).lock
    upstream = html.escape(lock.permalink(path))
    return (
        f'<section class="slime-snapshot-page"><h1>{html.escape(path)}</h1>'
        f'<p class="slime-snapshot-meta">{html.escape(lock.name)} 固定提交 <code>{lock.short}</code> 处的完整文件'
        f'（<a class="reference external" href="{upstream}">在上游查看</a>）。点行号可得到该行的链接。</p>'
        f"{fragment}</section>"
    )


def collect_pages(app: Sphinx) -> Iterator[tuple[str, dict[str, Any], str]]:
    """``html-collect-pages``: yield one page per snapshot path whose output is missing or stale.

    A page is skipped when ``_snapshot/.stamps.json`` in the output directory records the same stamp
    (blob id + :func:`page_stamp_base`) and the file exists, so incremental builds stay cheap. The
    stamps are written (atomically) only after every yielded page was written.
    """
    if not builds_pages(app):
        return
    store = get_store(app.env)
    stamp_file = Path(app.outdir, "_snapshot", ".stamps.json")
    try:
        old = json.loads(stamp_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        old = {}
    base = page_stamp_base(app)
    new: dict[str, str] = {}
    for path in snapshot_paths(app):
        try:
            stamp = hashlib.sha256(f"{base}:{store.blob_id(path)}:{backlinks.stamp(app, path)}".encode()).hexdigest()
            new[path] = stamp
            if old.get(path) == stamp and Path(app.outdir, snapshot_pagename(path) + ".html").exists():
                continue
            fragment = render_snapshot(store, path)
        except SourceContentError as exc:  # a binary file: no page, nothing to read there
            logger.info("snapshot: skipped %s", exc)
            new.pop(path, None)
            continue
        except SourceError as exc:
            warn(app.env, SlimebookWarning.SNAPSHOT, "snapshot: %s", exc)
            new.pop(path, None)
            continue
        fragment = backlinks.decorate(app, path, fragment)  # "cited by" header, cited lines marked
        context = {"title": path, "body": _page_body(app, path, fragment), "parents": []}
        yield snapshot_pagename(path), context, "page.html"
    atomic_write(stamp_file, json.dumps(new, sort_keys=True))


def setup(app: Sphinx) -> None:
    """Register the snapshot node and the page collector."""
    # SnapshotLinks replaces every placeholder; the visitors only guard a doctree that skipped post-transforms
    app.add_node(snapshot_ref, **{f: (_skip, None) for f in ("html", "latex", "text", "man", "texinfo")})
    app.add_post_transform(SnapshotLinks)
    app.connect("html-collect-pages", collect_pages)


def published_page_anchors(app: Sphinx) -> Iterator[tuple[str, str, str]]:
    """``slimebook-page-anchors``: every snapshot page, published by its first line's anchor ``L1``."""
    for path in snapshot_paths(app):
        yield snapshot_pagename(path), "snapshot", "L1"
