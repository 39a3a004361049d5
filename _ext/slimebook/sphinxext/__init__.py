"""The Sphinx layer: thin directives, roles and generated pages over the readers in :mod:`slimebook`.

Packages by job (``ARCHITECTURE.md`` maps them and their one-way imports): :mod:`.environment` (data kept on the
build environment), :mod:`.gates` (checks that fail ``-W``), :mod:`.pages` (generated pages), :mod:`.directives`
(what chapters write), :mod:`.output` (PDF, search language, reader assets, preview), :mod:`.fixes` (guarded fixes
of Sphinx behaviour) and :mod:`.accelerate` (guarded, switchable speed-ups); beside them the shared
:mod:`.config`, :mod:`.context`, :mod:`.diagnostics`, :mod:`.guard` and :mod:`.locale` (the fixed text in the book's
language: Sphinx's message catalogs).
"""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx

from ..version import __version__
from . import accelerate, context, diagnostics, fixes, locale
from .directives import buildinfo, course, guide, numbers, readingorder, readingpath, repomap, source, usage
from .gates import candidates, coverage, houserules, suggestions
from .output import latex, preview, reader, search
from .pages import backlinks, redirectpages, render, repomappages, snapshot, sourcecheck, usageappendix, usagepages


def setup(app: Sphinx) -> dict[str, Any]:
    """Register every part of the book's extension and return Sphinx's extension metadata."""
    locale.setup(app)  # the message catalog of the book's language: every fixed text the extension writes
    diagnostics.setup(app)  # one path for warnings; documents that warned are read again
    context.setup(app)  # the store opened for the build, at builder-inited
    fixes.setup(app)  # guarded fixes: duplicate targets under -j N, index entries of an incremental build
    render.setup(app)  # generated pages: written in one batch, through the builder
    source.setup(app)
    snapshot.setup(app)
    backlinks.setup(app)  # snapshot pages link back to the sections citing them
    course.setup(app)
    guide.setup(app)
    houserules.setup(app)  # house rules: context boxes, Slime names cited with {slime}
    preview.setup(app)  # make livehtml: a page whose build warned lists its warnings at the top
    suggestions.setup(app)  # an undefined {ref} label or a misspelled directive option: the closest names
    sourcecheck.setup(app)
    usage.setup(app)  # usage-index, {usage}, the scan of the pin
    usagepages.setup(app)
    usageappendix.setup(app)  # the usage pages' tables as an appendix of the PDF
    coverage.setup(app)
    readingorder.setup(app)  # reading order: entry boxes and their table (and the reading guide's stylesheet)
    repomap.setup(app)  # the repository map: directory tree and heat map
    readingpath.setup(app)  # call paths as diagrams
    repomappages.setup(app)  # the repository map's directory pages
    numbers.setup(app)
    latex.setup(app)  # slimebook.sty, questions as numbered boxes in the PDF
    reader.setup(app)  # static JS/CSS: diagram zoom, copy-link buttons, focus, dark highlighted lines
    search.setup(app)  # the zh search language: ASCII text split into the terms a query can reach
    candidates.setup(app)  # every instance candidate confirmed by a lesson or left with a reason
    buildinfo.setup(app)  # {buildinfo}: the pin and the build's Python
    app.setup_extension("slimebook.sphinxext.gates.anchors")  # stable section ids, published anchors, redirects
    redirectpages.setup(app)  # a removed page of the redirects file becomes a page that sends readers on
    # generated pages publish their anchors too: snapshot pages (#L1) and occurrence rows (#occ-…)
    app.connect("slimebook-page-anchors", snapshot.published_page_anchors)
    app.connect("slimebook-page-anchors", usagepages.published_page_anchors)
    # guarded speed-ups, switched by slimebook_accelerate: last, as they replace what the parts above registered
    # (the writer of generated pages, the kept_html visitors, the zh search language, the HTML builders)
    accelerate.setup(app)
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}
