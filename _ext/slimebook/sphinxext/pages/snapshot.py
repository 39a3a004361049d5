"""Snapshot pages in the HTML output, produced in ``html-collect-pages`` (the way ``sphinx.ext.viewcode``
does): nothing is written into the source tree, so ``sphinx-autobuild`` has nothing to loop on. They are a
batch of :mod:`slimebook.sphinxext.pages.render` (one :class:`~slimebook.sphinxext.pages.render.PageJob` per stale
page, written with the other generated pages,
in parallel in a parallel build); each body is docutils nodes (:func:`page_body`), the highlighted file a
:class:`snapshot_code` node holding the cached fragment of :func:`~slimebook.snapshots.render_snapshot`.

Which files get a page: every ``.py`` file at the pin, every file a citation reads, and whatever
every file the usage scanner read (its Markdown docs), and what an extension adds through
:func:`add_snapshot_paths`.
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
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging

from ...atomicio import atomic_write
from ...snapshots import render_snapshot, snapshot_pagename
from ...store import SourceContentError, SourceError
from ..context import app_of, builds_pages, get_store, page_stamp_base
from ..diagnostics import SlimebookWarning, warn
from ..environment.envrecords import citations
from ..environment.scancache import get_scan
from ..locale import _, fill
from . import backlinks
from .render import EVENT, GeneratedPage, PageBatch, PageJob, make_para, make_ref

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


def make_snapshot_ref(path: str, line: int, refdoc: str, text: str | None = None, sep: str = "") -> snapshot_ref:
    """A :class:`snapshot_ref` to ``path`` at ``line``, written in ``refdoc``, showing ``sep`` + ``text`` (default:
    the word "snapshot" in the book's language)."""
    node = snapshot_ref("", path=path, line=line, refdoc=refdoc, sep=sep)
    node += nodes.Text(_("snapshot") if text is None else text)
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
                           classes=["slime-snapshot"],
                           reftitle=_("Snapshot of {where} at the pinned commit").format(where=where))


class SnapshotLinks(SphinxPostTransform):
    """Resolve every :class:`snapshot_ref`: a link where snapshot pages are written, nothing elsewhere."""

    default_priority = 20  # before other post-transforms look at references

    def run(self, **kwargs: Any) -> None:
        app = app_of(self.env)
        pages = builds_pages(app)
        for node in list(self.document.findall(snapshot_ref)):
            parent = node.parent
            if pages:
                link = snapshot_link(app, node.get("refdoc") or self.env.docname, node["path"], node["line"],
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
    wanted.update(f.path for f in get_scan(env).files)  # the Markdown docs the usage scanner read
    wanted.update(app.__dict__.get("slimebook_snapshot_paths", set()))
    for records in citations(env).values():
        wanted.update(record["path"] for record in records)
    return sorted(wanted)


class snapshot_code(nodes.General, nodes.Element):  # noqa: N801 - docutils node naming
    """The highlighted file on a snapshot page, drawn in HTML only (snapshot pages exist only there).

    Attributes: ``path``; ``html``, the fragment of :func:`~slimebook.snapshots.render_snapshot` (one
    ``<span id="L<n>">`` per line, its number a link to itself, highlighted once per blob and cached: the reader
    and its cache make the per-line anchors, which a ``literal_block`` cannot); ``marks``, line → ``(range id,
    tooltip)`` of the cited ranges starting there (:func:`~slimebook.sphinxext.pages.backlinks.line_marks`);
    ``cited``, the lines inside
    a cited range (:func:`~slimebook.sphinxext.pages.backlinks.cited_lines`), coloured by a style rule on their ids.
    """


_LINE_START = re.compile(r'<span id="L(?P<n>\d+)">(?:<a href="#L(?P=n)"><span class="linenos">[^<]*</span></a>)?')


def _visit_code_html(self: Any, node: snapshot_code) -> None:
    marks: dict[int, list[tuple[str, str]]] = node["marks"]

    def mark(match: re.Match[str]) -> str:
        found = marks.get(int(match.group("n")))
        if not found:
            return match.group(0)
        return match.group(0) + "".join(f'<a class="slime-cited-mark" href="#{target}" title="{html.escape(title)}">'
                                         "</a>" for target, title in found)

    if node["cited"]:
        style = ",".join(f".slime-snapshot-page #L{n}" for n in node["cited"])
        self.body.append(f"<style>{style} {{ background: rgba(47, 158, 110, 0.10); }}</style>\n")
    # the mark goes after the line's number link (or, without one, right after the line's opening tag); the
    # line spans themselves are left as they are
    self.body.append(_LINE_START.sub(mark, node["html"]) if marks else node["html"])
    raise nodes.SkipNode


def page_body(page: GeneratedPage, path: str) -> nodes.section:
    """The body of the snapshot page of ``path`` (``page``): title, pin and upstream link, the "cited by" box of
    :mod:`slimebook.sphinxext.pages.backlinks`, and the whole file highlighted (:class:`snapshot_code`).

    Raises:
        SourceContentError: the file is binary (no page).
        SourceError: the file cannot be read at the pin.
    """
    app = page.app
    store = get_store(app.env)
    lock = store.lock
    code = snapshot_code("", path=path, html=render_snapshot(store, path), marks=backlinks.line_marks(app, path),
                         cited=backlinks.cited_lines(app, path))
    section = nodes.section(ids=["slime-snapshot"], classes=["slime-snapshot-page"])
    section += nodes.title(path, path)
    section += make_para(*fill(_("The whole file at the pinned commit {commit} of {name} ({upstream}). Click a line "
                                 "number for a link to its line."),
                               name=lock.name, commit=nodes.literal(lock.short, lock.short),
                               upstream=make_ref(lock.permalink(path), _("view upstream"))),
                         classes=["slime-snapshot-meta"])
    box = backlinks.header(page, path)
    if box is not None:
        section += box
    section += code
    return section


#: The code the pages are drawn by: a page is written again when it changes.
_CODE = tuple(Path(__file__).with_name(n) for n in ("snapshot.py", "backlinks.py", "render.py"))


def _batch(app: Sphinx) -> PageBatch | None:
    """``slimebook-generated-pages``: one job per snapshot path whose page is missing or stale.

    A page is skipped when ``_snapshot/.stamps.json`` in the output directory records the same stamp (blob id,
    back-links, :func:`page_stamp_base`, this code) and the file exists, so incremental builds stay cheap. The
    stamps are written (atomically) when every page of the build was written, without the pages that failed.
    """
    if not builds_pages(app):
        return None
    store = get_store(app.env)
    stamp_file = Path(app.outdir, "_snapshot", ".stamps.json")
    try:
        old = json.loads(stamp_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        old = {}
    base = json.dumps([page_stamp_base(app), [hashlib.sha256(p.read_bytes()).hexdigest() for p in _CODE]])
    new: dict[str, str] = {}
    jobs = []

    def failed(path: str) -> Callable[[Exception], None]:
        def report(exc: Exception) -> None:
            new.pop(path, None)
            if isinstance(exc, SourceContentError):  # a binary file: no page, nothing to read there
                logger.info("snapshot: skipped %s", exc)
            else:
                warn(app.env, SlimebookWarning.SNAPSHOT, "snapshot: %s", exc)
        return report

    for path in snapshot_paths(app):
        try:
            blob = store.blob_id(path)
        except SourceError as exc:
            failed(path)(exc)
            continue
        new[path] = hashlib.sha256(f"{base}:{blob}:{backlinks.stamp(app, path)}".encode()).hexdigest()
        if old.get(path) == new[path] and Path(app.outdir, snapshot_pagename(path) + ".html").exists():
            continue
        jobs.append(PageJob(snapshot_pagename(path), path, lambda page, path=path: page_body(page, path),
                            skip=(SourceError,), failed=failed(path), cost=3))
    return PageBatch(jobs, lambda: atomic_write(stamp_file, json.dumps(new, sort_keys=True)))


def setup(app: Sphinx) -> None:
    """Register the snapshot nodes and the page generator."""
    # SnapshotLinks replaces every placeholder; the visitors only guard a doctree that skipped post-transforms
    app.add_node(snapshot_ref, **{f: (_skip, None) for f in ("html", "latex", "text", "man", "texinfo")})
    # a snapshot page's code is drawn in HTML only: no other builder writes snapshot pages
    app.add_node(snapshot_code, html=(_visit_code_html, None),
                 **{f: (_skip, None) for f in ("latex", "text", "man", "texinfo")})
    app.add_post_transform(SnapshotLinks)
    app.connect(EVENT, _batch)


def published_page_anchors(app: Sphinx) -> Iterator[tuple[str, str, str]]:
    """``slimebook-page-anchors``: every snapshot page, published by its first line's anchor ``L1``."""
    for path in snapshot_paths(app):
        yield snapshot_pagename(path), "snapshot", "L1"
