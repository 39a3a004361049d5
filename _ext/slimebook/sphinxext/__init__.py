"""The Sphinx layer: thin directives and roles over the readers in :mod:`slimebook`."""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx

from ..version import __version__
from . import (
    backlinks,
    buildinfo,
    candidates,
    context,
    course,
    coverage,
    diagnostics,
    duplicatetargets,
    formatters,
    guide,
    heap,
    houserules,
    latex,
    numbers,
    pages,
    parallelwrite,
    parents,
    preview,
    reader,
    reading,
    readplan,
    redirectpages,
    search,
    snapshot,
    source,
    sourcecheck,
    stableconfig,
    suggestions,
    templatecache,
    usage,
    usageappendix,
    usagepages,
)


def setup(app: Sphinx) -> dict[str, Any]:
    """Register every part of the book's extension and return Sphinx's extension metadata."""
    diagnostics.setup(app)  # one path for warnings; documents that warned are read again
    context.setup(app)  # the store opened for the build, at builder-inited
    heap.setup(app)  # the long-lived heap frozen before forks and at exit, thawed when the build ends
    formatters.setup(app)  # one Pygments formatter per option set, not one per highlighted code cell
    parents.setup(app)  # a toctree parent is rewritten only when a re-read child's title, toc or labels changed
    readplan.setup(app)  # -j N: the documents ordered so that Sphinx's reading chunks hold equal work
    duplicatetargets.setup(app)  # -j N: a label or term defined by two readers warns as it does in a serial read
    parallelwrite.setup(app)  # -j N: N writers, fed while the main process resolves and indexes
    pages.setup(app)  # generated pages: written in one batch (parallel with -j N), one navigation per set of links
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
    reading.setup(app)  # reading order, call paths, repository map
    numbers.setup(app)
    latex.setup(app)  # slimebook.sty, questions as numbered boxes in the PDF
    stableconfig.setup(app)  # no "configuration has changed" on every build
    reader.setup(app)  # static JS/CSS: diagram zoom, copy-link buttons, focus, dark highlighted lines
    candidates.setup(app)  # every instance candidate confirmed by a lesson or left with a reason
    buildinfo.setup(app)  # {buildinfo}: the pin and the build's Python
    search.setup(app)  # the zh search: jieba loaded only when a page is indexed, and read whole
    templatecache.setup(app)  # the theme's templates compiled once, kept beside the doctrees
    app.setup_extension("slimebook.sphinxext.anchors")  # stable section ids, published anchors, redirects
    redirectpages.setup(app)  # a removed page of the redirects file becomes a page that sends readers on
    # generated pages publish their anchors too: snapshot pages (#L1) and occurrence rows (#occ-…)
    app.connect("slimebook-page-anchors", snapshot.published_page_anchors)
    app.connect("slimebook-page-anchors", usagepages.published_page_anchors)
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}
