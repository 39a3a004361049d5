"""The repository map's directory pages: one generated page of scan records per row of every ``repo-map``.

The ``repo-map`` directive (:mod:`slimebook.sphinxext.directives.repomap`) records the keys of its rows on the
environment (:data:`ROWS`, kept per document); at ``slimebook-generated-pages`` this module makes one page per row,
``_slimebook/usage/dir/<dir>`` (:func:`dir_page`), with one section (``#cat-<category>``) per scan category, which is
where the heat map's cells link. The pages are a batch of :mod:`slimebook.sphinxext.pages.render`, stamped per page
so an unchanged one is not written again.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx

from ...atomicio import atomic_write
from ...repomap import ROOT_FILES
from ..context import builds_pages, page_stamp_base
from ..environment.scancache import get_scan, get_table
from ..locale import _, fill, ngettext
from .render import EVENT, GeneratedPage, PageBatch, PageJob
from .usagetables import category_page, usage_nodes

__all__ = ["DIR_ROOT", "ROWS", "dir_page", "key_label", "setup"]

#: Generated pages of the heat map's records: one per map row, one section (``#cat-<category>``) per category.
DIR_ROOT = "_slimebook/usage/dir"

#: The environment attribute holding docname → the keys of its ``repo-map`` rows (written by the directive).
ROWS = "slimebook_repomap_rows"


def key_label(key: str) -> str:
    """What a map row shows: ``agent/`` for ``slime/agent``; a sentence for a files row."""
    if key == ROOT_FILES:
        return _("(files at the root)")
    if key.endswith("/" + ROOT_FILES):
        return _("(files directly in {directory}/)").format(directory=key[:-2])
    return key.rsplit("/", 1)[-1] + "/"


def dir_page(key: str) -> str:
    """The page of a map row's records: ``slime/agent`` → ``_slimebook/usage/dir/slime/agent``; the files
    lying directly in ``slime/`` → ``…/dir/slime/_files``; the root's files → ``…/dir/_files``."""
    if key == ROOT_FILES:
        return f"{DIR_ROOT}/_files"
    if key.endswith("/" + ROOT_FILES):
        return f"{DIR_ROOT}/{key[:-2]}/_files"
    return f"{DIR_ROOT}/{key}"


def _dir_records(records: list, key: str) -> list:
    if key == ROOT_FILES:
        return [r for r in records if "/" not in r.path]
    if key.endswith("/" + ROOT_FILES):
        parent = key[:-2]
        return [r for r in records if r.path.startswith(parent + "/") and "/" not in r.path[len(parent) + 1:]]
    return [r for r in records if r.path.startswith(key + "/")]


def _dir_page_body(page: GeneratedPage, key: str, records: list) -> nodes.section:
    where = _("the files directly at the root") if key == ROOT_FILES else (
        _("the files directly in {directory}/").format(directory=key[:-2]) if key.endswith("/" + ROOT_FILES)
        else f"{key}/")
    section = nodes.section(ids=["slimebook-usage-dir"])
    section += nodes.title("", _("Usage index: {where}").format(where=where))
    intro = nodes.paragraph()
    overview = nodes.reference("", "", internal=True, refuri=page.uri("_slimebook/usage/index"))
    overview += nodes.Text(_("Usage index"))
    intro.extend(fill(_("The scan found {records} in {where} at the pinned commit {commit}, in sections by category. "
                        "Back to the {overview}."),
                      records=ngettext("{n} record", "{n} records", len(records)).format(n=len(records)),
                      where=where, commit=page.render.lock.short, overview=overview))
    section += intro
    for category in get_table(page.app.env).categories:
        chosen = [r for r in records if r.category == category]
        if not chosen:
            continue
        sub = nodes.section(ids=[f"cat-{category}"])
        title = nodes.title()
        ref = nodes.reference("", "", internal=True, refuri=page.uri(category_page(category)))
        ref += nodes.literal(category, category)
        title += ref
        title += nodes.Text(ngettext(" ({n} occurrence)", " ({n} occurrences)", len(chosen)).format(n=len(chosen)))
        sub += title
        sub.extend(usage_nodes(chosen, ("id", "location", "code", "scope", "name", "kind"), page.render,
                               ngettext("Show {n} occurrence", "Show {n} occurrences", len(chosen)).format(
                                   n=len(chosen))))
        section += sub
    return section


#: The code the directory pages are drawn by: a page is written again when it changes.
_DIR_CODE = tuple(Path(__file__).with_name(n) for n in ("repomappages.py", "usagetables.py", "render.py"))
_DIR_STAMPS = f"{DIR_ROOT}/.stamps.json"


def _dir_pages(app: Sphinx) -> PageBatch | None:
    """``slimebook-generated-pages``: one page of records per row of every ``repo-map`` (see :func:`dir_page`),
    unless ``_slimebook/usage/dir/.stamps.json`` records the page's stamp (the scan, the row, the navigation and
    configuration of :func:`page_stamp_base`, this code) and the page exists."""
    if not builds_pages(app):
        return None
    keys = sorted({key for rows in app.env.__dict__.get(ROWS, {}).values() for key in rows})
    if not keys:
        return None
    stamp_file = Path(app.outdir, _DIR_STAMPS)
    try:
        old = json.loads(stamp_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        old = {}
    result = get_scan(app.env)
    base = json.dumps([page_stamp_base(app), result.version, result.commit, app.config.slimebook_usage_collapse,
                       [hashlib.sha256(p.read_bytes()).hexdigest() for p in _DIR_CODE]])
    new = {key: hashlib.sha256(f"{base}:{key}".encode()).hexdigest() for key in keys}
    jobs = []
    for key in keys:
        if old.get(key) == new[key] and Path(app.builder.get_outfilename(dir_page(key))).exists():
            continue
        chosen = _dir_records(result.records, key)
        jobs.append(PageJob(dir_page(key), _("Usage index: {where}").format(where=key_label(key)),
                            lambda page, key=key, chosen=chosen: _dir_page_body(page, key, chosen),
                            cost=len(chosen) + 1))
    return PageBatch(jobs, lambda: atomic_write(stamp_file, json.dumps(new, sort_keys=True)))


def setup(app: Sphinx) -> None:
    """Register the directory pages' generator."""
    app.connect(EVENT, _dir_pages)
