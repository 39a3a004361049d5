"""Stable anchors: every section has a readable ASCII id, and published anchors never silently vanish.

Three parts, one direction of data:

1. **Section ids** (``doctree-read``). Docutils turns a Chinese heading into ``id1``, ``id2``…, which change
   when a section is inserted above. A section whose ids are all auto-generated (``id\\d+``) or non-ASCII gets
   a warning at ``doc:line`` (``-W`` fails); the fix is a MyST label ``(guide-xxx)=`` before the heading.
   With ``slimebook_anchors_policy = "explicit"`` only an explicit label counts, not an id derived from an
   ASCII title.
2. **Collection.** Per document, the anchors worth publishing are gathered at read time, kept on the
   environment (purged and merged: parallel-read safe). Kinds are pluggable through the event
   ``slimebook-doc-anchors(app, docname, doctree) -> iterable of (kind, id)``; built in are ``section``
   (the label, else the first stable id), ``experiment`` (``exp-…``) and ``source`` (``src-…``). Pages that
   are not documents (generated in ``html-collect-pages``) answer ``slimebook-page-anchors(app) -> iterable of
   (pagename, kind, id)`` when a check or update asks.
3. **Manifest and redirects.** ``slimebook_anchors_manifest`` (``page#id kind`` per line) lists the published
   anchors; ``slimebook_anchors_redirects`` (``old new`` per line, each ``page#id`` or ``page``) says where a
   removed one went. With ``slimebook_anchors_mode = "check"`` the build fails (status 1) for a published
   anchor that is gone without a working redirect; ``"update"`` rewrites the manifest. HTML output honours the
   redirects: an id moved within its page is kept as an extra id on the new target, one moved to another page
   gets a tiny ``location.hash`` script (:func:`moved_ids_script` on generated pages), and a removed page
   becomes a redirect page (made by :mod:`slimebook.sphinxext.pages.redirectpages` through
   :class:`~slimebook.sphinxext.pages.render.GeneratedPage`, which imports
   this module).

The manifest and redirect functions (``parse_manifest``, ``format_manifest``, ``parse_redirects``, ``resolve``,
``check_anchors``) know nothing of Sphinx: they are :mod:`slimebook.anchorcheck`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.errors import ConfigError
from sphinx.util import logging

from ...anchorcheck import (
    Anchor,
    check_anchors,
    format_manifest,
    is_stable,
    parse_manifest,
    resolve,
    split_target,
)
from ..config import declare as declare_config
from ..config import file_setting, load_redirects
from ..diagnostics import ERRORS_REPORTED, SlimebookWarning, declare_event, warn
from ..environment.envdata import doc_data, keep_per_doc

logger = logging.getLogger(__name__)

MODES = ("off", "check", "update")
POLICIES = ("ascii", "explicit")
_ENV = "slimebook_anchors"


# -- section ids and collection (read time) ---------------------------------------------------------------
def _explicit_ids(document: nodes.document, node: nodes.Element) -> list[str]:
    return [document.nameids[name] for name in node["names"]
            if document.nametypes.get(name) and document.nameids.get(name) in node["ids"]]


def section_anchor(document: nodes.document, section: nodes.section, policy: str = "ascii") -> str | None:
    """The id to publish for ``section``: an explicit label first, else (policy ``ascii``) a stable id."""
    explicit = [i for i in _explicit_ids(document, section) if is_stable(i)]
    if explicit:
        return explicit[0]
    if policy == "explicit":
        return None
    stable = [i for i in section["ids"] if is_stable(i)]
    return stable[0] if stable else None


def _location(section: nodes.section) -> Any:
    title = section.next_node(nodes.title)
    return title if title is not None and title.line else section


def _sections(app: Sphinx, docname: str, doctree: nodes.document) -> Iterator[tuple[str, str]]:
    policy = app.config.slimebook_anchors_policy
    for section in doctree.findall(nodes.section):
        anchor = section_anchor(doctree, section, policy)
        if anchor is not None:
            yield "section", anchor
            continue
        title = section.next_node(nodes.title)
        need = "an explicit label" if policy == "explicit" else "a readable ASCII id"
        warn(
            app.env, SlimebookWarning.ANCHOR,
            "section %r has no stable anchor (ids: %s); it needs %s: put a MyST label such as "
            "'(guide-…)=' on the line before the heading",
            title.astext() if title is not None else "?", ", ".join(section["ids"]) or "none", need,
            location=_location(section), docname=docname,
        )


def _experiments_and_sources(app: Sphinx, docname: str, doctree: nodes.document) -> Iterator[tuple[str, str]]:
    for node in doctree.findall(nodes.container):
        classes = node["classes"]
        if "slime-source" in classes and node["ids"]:
            yield "source", node["ids"][0]
        elif {"experiment-code", "experiment-output"} & set(classes):
            yield from (("experiment", i) for i in node["ids"] if i.startswith("exp-"))


def _collect(app: Sphinx, doctree: nodes.document) -> None:
    """``doctree-read``: warn about unstable sections, record this document's anchors and stable ids."""
    env = app.env
    docname = env.docname
    anchors: set[tuple[str, str]] = set()
    for result in app.events.emit("slimebook-doc-anchors", docname, doctree):
        anchors.update((kind, anchor) for kind, anchor in result or ())
    doc_data(env, _ENV)[docname] = {
        "anchors": sorted(anchors),
        # every stable id on the page; directives may set node["ids"] without registering them in doctree.ids
        "ids": sorted({i for node in doctree.findall(nodes.Element) for i in node["ids"] if is_stable(i)}
                      | {i for i in doctree.ids if is_stable(i)}),
    }


def _stable_slugs(app: Sphinx, doctree: nodes.document) -> None:
    """``doctree-read``: MyST slug links (``[…](#标题)``, ``[…](other.md#标题)``) resolve to the heading's stable id.

    MyST records, per document, slug → the section's *first* id at parse time (``env.metadata[doc]["myst_slugs"]``),
    which for a Chinese title is a counter id (``id3``) that moves when a heading is added above it. Each entry, and
    each link within the page MyST already resolved to such an id, is pointed at :func:`section_anchor` instead
    (the MyST label, else a stable ASCII id); a section without one keeps MyST's id and already has its located
    warning from :func:`_sections`.
    """
    env = app.env
    policy = app.config.slimebook_anchors_policy
    stable: dict[str, str] = {}
    for section in doctree.findall(nodes.section):
        anchor = section_anchor(doctree, section, policy)
        if anchor is not None:
            stable.update((i, anchor) for i in section["ids"] if i != anchor)
    if not stable:
        return
    # links within the page were resolved by MyST's transforms already: point them at the same section's stable id
    for ref in doctree.findall(nodes.reference):
        if ref.get("refid") in stable:
            ref["refid"] = stable[ref["refid"]]
    slugs = env.metadata.get(env.docname, {}).get("myst_slugs") or {}
    for slug, (line, section_id, text) in list(slugs.items()):
        if section_id in stable:
            slugs[slug] = (line, stable[section_id], text)


def current_anchors(app: Sphinx) -> tuple[set[Anchor], dict[str, set[str]]]:
    """(anchors to publish, every stable id per page) of the whole book, documents and generated pages."""
    data = app.env.__dict__.get(_ENV, {})
    anchors = {Anchor(doc, anchor, kind) for doc, d in data.items() for kind, anchor in d["anchors"]}
    present = {doc: set(d["ids"]) for doc, d in data.items()}
    for result in app.events.emit("slimebook-page-anchors"):
        for page, kind, anchor in result or ():
            anchors.add(Anchor(page, anchor, kind))
            present.setdefault(page, set()).add(anchor)
    return anchors, present


# -- manifest check / update (build-finished) --------------------------------------------------------
def _finish(app: Sphinx, exc: Exception | None) -> None:
    mode = app.config.slimebook_anchors_mode
    if exc is not None or mode == "off":
        return
    manifest = file_setting(app, "slimebook_anchors_manifest")
    if manifest is None:
        raise ConfigError("slimebook: slimebook_anchors_mode needs slimebook_anchors_manifest")
    anchors, present = current_anchors(app)
    published = parse_manifest(manifest.read_text(encoding="utf-8")) if manifest.is_file() else {}
    redirects = load_redirects(app)
    if mode == "update":
        # A ratchet: what was published stays published while it still resolves (itself or by a redirect);
        # only an anchor that is gone without a redirect leaves the manifest.
        kept = {key: kind for key, kind in published.items() if resolve(key, present, redirects) is not None}
        anchors |= {Anchor(*split_target(key), kind) for key, kind in kept.items()}
        dropped = sorted(set(published) - set(kept))
        manifest.write_text(format_manifest(anchors), encoding="utf-8")
        logger.info("anchors: wrote %d anchors to %s (%d new, %d dropped%s)", len(anchors), manifest,
                    len({a.key for a in anchors} - set(published)), len(dropped),
                    ": " + ", ".join(dropped) if dropped else "")
        return
    problems = check_anchors(published, present, redirects)
    for problem in problems:
        logger.error("anchors: %s", problem, type="slimebook", subtype="anchor")
    if problems:
        # errors, not warnings: the build's status is 1 for them (below); a fix may take them out of Sphinx's warning
        # count (slimebook.sphinxext.fixes.errorcount)
        app.emit(ERRORS_REPORTED, len(problems))
        logger.info("anchors: check failed: %d error%s (published anchors that would break readers' links)",
                    len(problems), "" if len(problems) == 1 else "s")
    new = sorted(a.key for a in anchors if a.key not in published)
    if new:
        logger.info("anchors: %d anchors are not in %s yet (a build with slimebook_anchors_mode = 'update' adds "
                    "them): %s", len(new), manifest.name, ", ".join(new[:10]) + (" …" if len(new) > 10 else ""))
    if problems:
        app.statuscode = 1
    else:
        logger.info("anchors: all %d published anchors resolve", len(published))


# -- redirects in the HTML output ------------------------------------------------------------------------
def _redirect_script(mapping: dict[str, str]) -> str:
    """A script sending ``#old`` to ``mapping[old]`` (``d`` is a fallback target, always null: the redirect pages of
    :mod:`slimebook.sphinxext.pages.redirectpages` fall back on their meta refresh)."""
    data = json.dumps(mapping, sort_keys=True).replace("</", "<\\/")
    return ("<script>(function(){var m=" + data + ",d=null,h=decodeURIComponent(location.hash.slice(1));"
            "var t=Object.prototype.hasOwnProperty.call(m,h)?m[h]:d;if(t){location.replace(t);}})();</script>\n")


def moves(app: Sphinx) -> dict[str, dict[str, str]]:
    """``{old page: {old id, or "" for the page itself: new target}}`` from the redirects file."""
    moves: dict[str, dict[str, str]] = {}
    for old, new in load_redirects(app).items():
        page, anchor = split_target(old)
        moves.setdefault(page, {})[anchor] = new
    return moves


def target_uri(app: Sphinx, frompage: str, target: str) -> str:
    """The URI of ``target`` (``page#id`` or ``page``) relative to ``frompage``, from the current builder."""
    page, anchor = split_target(target)
    uri = app.builder.get_relative_uri(frompage, page)
    return f"{uri}#{anchor}" if anchor else uri


def _outdated(app: Sphinx, env: BuildEnvironment, added: set[str], changed: set[str],
              removed: set[str]) -> list[str]:
    """``env-get-outdated``: pages whose redirect lines changed are rebuilt."""
    moves = load_redirects(app)
    before = env.__dict__.get("slimebook_redirects", {})
    env.slimebook_redirects = moves  # type: ignore[attr-defined]
    touched = {k for k in moves.keys() | before.keys() if moves.get(k) != before.get(k)}
    return sorted({split_target(k)[0] for k in touched} & env.found_docs)


def _apply_redirects(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """``doctree-resolved``: keep a moved id alive on this page."""
    if app.builder.format != "html":
        return
    elsewhere: dict[str, str] = {}
    for old_id, new in moves(app).get(docname, {}).items():
        if not old_id or old_id in doctree.ids:
            continue
        page, new_id = split_target(new)
        target = doctree.ids.get(new_id) if page == docname and new_id else None
        if target is not None:  # same page: the old id becomes a second id of the new target
            target["ids"].append(old_id)
            doctree.ids[old_id] = target
        else:
            elsewhere[old_id] = target_uri(app, docname, new)
    if elsewhere:
        doctree += nodes.raw("", _redirect_script(elsewhere), format="html")


def moved_ids_script(app: Sphinx, page: str) -> str:
    """A ``<script>`` (HTML) that sends each id of generated page ``page`` named on the left of a redirect line to
    its new target, or ``""`` when no line names an id of ``page``. Generated pages (usage, snapshot pages) are not
    documents, so :func:`_apply_redirects` never sees them: their generator appends this to the page body."""
    moved = {old_id: target_uri(app, page, new) for old_id, new in moves(app).get(page, {}).items() if old_id}
    return _redirect_script(moved) if moved else ""


def _check_config(app: Sphinx, config: Any) -> None:
    if config.slimebook_anchors_mode not in MODES:
        raise ConfigError(f"slimebook_anchors_mode must be one of {MODES}, not {config.slimebook_anchors_mode!r}")
    if config.slimebook_anchors_policy not in POLICIES:
        raise ConfigError(f"slimebook_anchors_policy must be one of {POLICIES}, "
                          f"not {config.slimebook_anchors_policy!r}")


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the section check, the collectors, the manifest check and the HTML redirects."""
    declare_config(app, "anchors")  # slimebook_anchors_policy, _manifest, _redirects, _mode
    app.add_event("slimebook-doc-anchors")
    app.add_event("slimebook-page-anchors")
    declare_event(app, ERRORS_REPORTED)
    app.connect("config-inited", _check_config)
    app.connect("slimebook-doc-anchors", _sections)
    app.connect("slimebook-doc-anchors", _experiments_and_sources)
    app.connect("doctree-read", _collect)
    app.connect("doctree-read", _stable_slugs)
    keep_per_doc(app, _ENV)
    app.connect("env-get-outdated", _outdated)
    app.connect("doctree-resolved", _apply_redirects)
    app.connect("build-finished", _finish)
    # env_version: bump when the data kept on the environment changes shape (Sphinx then re-reads everything)
    return {"version": "1", "env_version": 1, "parallel_read_safe": True, "parallel_write_safe": True}
