"""Snapshot pages in the HTML output, produced in ``html-collect-pages`` (the way ``sphinx.ext.viewcode``
does): nothing is written into the source tree, so ``sphinx-autobuild`` has nothing to loop on.

Which files get a page: every ``.py`` file at the pin, every file a citation reads, and whatever
other readers add through :func:`add_snapshot_paths` (the usage scanner adds Markdown docs).
``snapshot_ref`` nodes (placed by ``slime-source`` captions and the ``{slime}`` role) become links to
``_snapshot/<path>.html#L<n>`` in HTML and disappear in other formats.
"""

from __future__ import annotations

import hashlib
import html
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import sphinx
from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.writers.html5 import HTML5Translator

from ..atomicio import atomic_write
from ..snapshots import RENDERER_VERSION, render_snapshot, snapshot_pagename
from ..store import SourceContentError, SourceError
from .diagnostics import SlimebookWarning, warn

logger = logging.getLogger(__name__)


class snapshot_ref(nodes.Inline, nodes.Element):  # noqa: N801 - docutils node naming
    """A link to a snapshot page: attributes ``path`` (repo-relative) and ``line`` (1-based, or 0)."""


def make_snapshot_ref(path: str, line: int, text: str = "快照") -> snapshot_ref:
    """A :class:`snapshot_ref` to ``path`` at ``line`` showing ``text``."""
    node = snapshot_ref("", path=path, line=line)
    node += nodes.Text(text)
    return node


def _visit_html(self: HTML5Translator, node: snapshot_ref) -> None:
    uri = self.builder.get_relative_uri(self.builder.current_docname, snapshot_pagename(node["path"]))
    if node["line"]:
        uri += f"#L{node['line']}"
    title = f"{node['path']} 在固定提交处的快照"
    self.body.append(f'<a class="slime-snapshot reference internal" href="{html.escape(uri)}" '
                     f'title="{html.escape(title)}">')


def _depart_html(self: HTML5Translator, node: snapshot_ref) -> None:
    self.body.append("</a>")


def _skip(self: Any, node: snapshot_ref) -> None:
    raise nodes.SkipNode


def add_snapshot_paths(app: Sphinx, paths: set[str]) -> None:
    """Ask for snapshot pages of ``paths`` (repo-relative) in this build."""
    app.__dict__.setdefault("slimebook_snapshot_paths", set()).update(paths)


def builds_pages(app: Sphinx) -> bool:
    """True when the builder writes generated pages (snapshots, usage pages): HTML, but not epub or singlehtml."""
    return app.builder.format == "html" and app.builder.name != "singlehtml" and not app.builder.name.startswith("epub")


def snapshot_paths(app: Sphinx) -> list[str]:
    """Every path that gets a snapshot page in this build, sorted."""
    from .source import get_store

    env = app.env
    store = get_store(env)
    wanted = set(store.files(".py"))
    wanted.update(app.__dict__.get("slimebook_snapshot_paths", set()))
    for records in env.__dict__.get("slimebook_citations", {}).values():
        wanted.update(record["path"] for record in records)
    return sorted(wanted)


def _page_body(app: Sphinx, path: str, fragment: str) -> str:
    from .source import get_store

    lock = get_store(app.env).lock
    upstream = html.escape(lock.permalink(path))
    return (
        f'<section class="slime-snapshot-page"><h1>{html.escape(path)}</h1>'
        f'<p class="slime-snapshot-meta">{html.escape(lock.name)} 固定提交 <code>{lock.short}</code> 处的完整文件'
        f'（<a class="reference external" href="{upstream}">在上游查看</a>）。点行号可得到该行的链接。</p>'
        f"{fragment}</section>"
    )


def _page_stamp_base(app: Sphinx) -> str:
    """What every snapshot page depends on besides its blob: config, tags, navigation, renderer, pin."""
    from .source import get_store

    env = app.env
    info = app.builder.create_build_info()  # type: ignore[attr-defined]
    nav = [(doc, env.titles[doc].astext(), env.toctree_includes.get(doc, [])) for doc in sorted(env.titles)]
    payload = json.dumps([info.config_hash, info.tags_hash, nav, RENDERER_VERSION, sphinx.__version__,
                          get_store(env).lock.commit], ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()


def collect_pages(app: Sphinx) -> Iterator[tuple[str, dict[str, Any], str]]:
    """``html-collect-pages``: yield one page per snapshot path whose output is missing or stale.

    A page is skipped when ``_snapshot/.stamps.json`` in the output directory records the same stamp
    (blob id + :func:`_page_stamp_base`) and the file exists, so incremental builds stay cheap. The
    stamps are written (atomically) only after every yielded page was written.
    """
    if not builds_pages(app):
        return
    from .source import get_store

    store = get_store(app.env)
    stamp_file = Path(app.outdir, "_snapshot", ".stamps.json")
    try:
        old = json.loads(stamp_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        old = {}
    base = _page_stamp_base(app)
    new: dict[str, str] = {}
    for path in snapshot_paths(app):
        try:
            stamp = hashlib.sha256(f"{base}:{store.blob_id(path)}".encode()).hexdigest()
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
        context = {"title": path, "body": _page_body(app, path, fragment), "parents": []}
        yield snapshot_pagename(path), context, "page.html"
    atomic_write(stamp_file, json.dumps(new, sort_keys=True))


def setup(app: Sphinx) -> None:
    """Register the snapshot node and the page collector."""
    app.add_node(snapshot_ref, html=(_visit_html, _depart_html), latex=(_skip, None), text=(_skip, None),
                 man=(_skip, None), texinfo=(_skip, None))
    app.connect("html-collect-pages", collect_pages)


def published_page_anchors(app: Sphinx) -> Iterator[tuple[str, str, str]]:
    """``slimebook-page-anchors``: every snapshot page, published by its first line's anchor ``L1``."""
    for path in snapshot_paths(app):
        yield snapshot_pagename(path), "snapshot", "L1"
