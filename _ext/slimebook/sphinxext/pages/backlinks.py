"""Back-links on snapshot pages: from the source to the book (what ``sphinx.ext.viewcode`` does for API objects,
done for every cited line range).

The citations :mod:`slimebook.sphinxext.directives.source` records on the environment (document, line, path, runs) are
grouped by path.
Each citation is placed in the section of its document that holds its line (the last section title at or
above it), so a snapshot page can say, at the top, which chapters cite the file and how often (:func:`header`,
docutils nodes), list every cited range with links to the citing sections, and mark the cited lines
(:func:`cited_lines`, :func:`line_marks`: data the snapshot page's code node draws): a style rule colours their
``#L<n>`` ids, and the first line of a range gets an empty link ``a.slime-cited-mark`` to that range's entry,
placed after the line-number link (the line spans themselves are not changed). Citations of a whole file
count in the list but mark no lines.

:mod:`slimebook.sphinxext.pages.snapshot` builds each page from these and adds :func:`stamp` to the page's stamp, so a
page is written
again when the citations of its file change.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from dataclasses import dataclass

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment

from ...anchorcheck import is_stable
from ...spans import span_label
from ..context import reading_order
from ..environment.envdata import doc_data, keep_per_doc
from ..environment.envrecords import SectionRecord
from ..environment.envrecords import citations as env_citations
from ..locale import _, fill, list_separator, ngettext
from .render import GeneratedPage, interleave, make_para, make_ref
from .usagetables import usage_details

__all__ = ["Backlink", "backlinks", "cited_lines", "header", "line_marks", "setup", "stamp"]

_CACHE = "slimebook_backlinks"
_SECTIONS = "slimebook_sections"


@dataclass(frozen=True)
class Backlink:
    """One citation of a file, placed in the book.

    Attributes:
        docname: the citing document; ``doc_title`` its title.
        section_id: the stable id of the section holding the citation ("" for the document's top).
        section_title: that section's title ("" for the document's top).
        lineno: the citation's line in the document.
        runs: the cited line ranges; ``None`` when the whole file is cited.
    """

    docname: str
    doc_title: str
    section_id: str
    section_title: str
    lineno: int
    runs: tuple[tuple[int, int], ...] | None

    @property
    def label(self) -> str:
        """``Chapter § Section`` (or the chapter alone when the citation is above every section title)."""
        return f"{self.doc_title} § {self.section_title}" if self.section_title else self.doc_title


def _sections_of(doctree: nodes.document) -> list[SectionRecord]:
    """``(title line, stable id, title)`` of every section below the document's title, in line order."""
    found: list[SectionRecord] = []
    for depth, section in enumerate(doctree.findall(nodes.section)):
        title = section.next_node(nodes.title)
        if depth == 0 or title is None or title.line is None:
            continue  # the document's own title: a citation above every section belongs to the chapter
        stable = [i for i in section["ids"] if is_stable(i)]
        found.append((title.line, stable[0] if stable else (section["ids"] or [""])[0], title.astext()))
    return sorted(found)


def _record_sections(app: Sphinx, doctree: nodes.document) -> None:
    """``doctree-read`` (after the other handlers): keep the document's sections, so the back-links of a build are
    computed without loading every citing document's doctree again."""
    doc_data(app.env, _SECTIONS)[app.env.docname] = _sections_of(doctree)


def _sections(env: BuildEnvironment, docname: str) -> list[SectionRecord]:
    recorded = env.__dict__.get(_SECTIONS, {}).get(docname)
    # an environment pickled before the sections were kept: read them from the document
    return recorded if recorded is not None else _sections_of(env.get_doctree(docname))


def backlinks(app: Sphinx) -> dict[str, list[Backlink]]:
    """Path → its citations in the book, in reading order (computed once per build, after reading)."""
    cached = app.__dict__.get(_CACHE)
    if cached is not None:
        return cached
    env = app.env
    citations = env_citations(env)
    order = {docname: n for n, docname in enumerate(reading_order(env))}
    result: dict[str, list[Backlink]] = defaultdict(list)
    for docname in sorted(citations, key=lambda d: (order.get(d, len(order)), d)):
        if docname not in env.all_docs:
            continue
        sections = _sections(env, docname)
        title = env.titles[docname].astext() if docname in env.titles else docname
        for record in sorted(citations[docname], key=lambda r: r["lineno"]):
            above = [s for s in sections if s[0] <= record["lineno"]]
            line, section_id, section_title = above[-1] if above else (0, "", "")
            whole = not record.get("lines") and not record.get("pyobject")
            runs = None if whole else tuple((int(a), int(b)) for a, b in record["runs"])
            result[record["path"]].append(Backlink(docname, title, section_id, section_title, record["lineno"], runs))
    app.__dict__[_CACHE] = dict(result)
    return app.__dict__[_CACHE]


def stamp(app: Sphinx, path: str) -> str:
    """A digest of the back-links of ``path`` (part of its snapshot page's stamp)."""
    payload = json.dumps([[b.docname, b.doc_title, b.section_id, b.section_title, b.runs]
                          for b in backlinks(app).get(path, [])], ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def _range_id(a: int, b: int) -> str:
    return f"cited-L{a}" if a == b else f"cited-L{a}-L{b}"


def header(page: GeneratedPage, path: str) -> nodes.container | None:
    """The "cited by" box of the snapshot page ``page`` of ``path`` (class ``slime-backlinks``): how often and
    where the book cites the file, then every cited range (id ``cited-L<a>-L<b>``, the target of its mark)
    with links to the citing sections; ``None`` when nothing in the book cites ``path``."""
    links = backlinks(page.app).get(path, [])
    if not links:
        return None

    def ref(link: Backlink) -> nodes.reference:
        uri = page.uri(link.docname) + (f"#{link.section_id}" if link.section_id else "")
        return make_ref(uri, link.label)

    places: dict[tuple[str, str], list[Backlink]] = {}
    for link in links:
        places.setdefault((link.docname, link.section_id), []).append(link)
    box = nodes.container(classes=["slime-backlinks"])
    cited = _("Cited")
    box += make_para(*fill(_("{cited}: the book cites this file {times} in {sections}."),
                           cited=nodes.strong(cited, cited),
                           times=ngettext("{n} time", "{n} times", len(links)).format(n=len(links)),
                           sections=ngettext("{n} section", "{n} sections", len(places)).format(n=len(places))))
    listing = nodes.bullet_list()
    for group in places.values():
        listing += nodes.list_item("", make_para(ref(group[0]), ngettext(" ({n} citation)", " ({n} citations)",
                                                                         len(group)).format(n=len(group))))
    box += listing
    ranges = _ranges(links)
    if ranges:
        details = usage_details(summary=ngettext("{n} cited line range", "{n} cited line ranges",
                                                 len(ranges)).format(n=len(ranges)))
        listing = nodes.bullet_list()
        for (a, b), group in sorted(ranges.items()):
            seen = {(g.docname, g.section_id): g for g in group}
            item = nodes.list_item("", make_para(make_ref(f"#L{a}", span_label(a, b)), " ← ",
                                                 *interleave([ref(g) for g in seen.values()])))
            item["ids"].append(_range_id(a, b))
            listing += item
        details += listing
        box += details
    return box


def _ranges(links: list[Backlink]) -> dict[tuple[int, int], list[Backlink]]:
    ranges: dict[tuple[int, int], list[Backlink]] = {}
    for link in links:
        for run in link.runs or ():
            ranges.setdefault(run, []).append(link)
    return ranges


def line_marks(app: Sphinx, path: str) -> dict[int, list[tuple[str, str]]]:
    """The marks of the cited lines of ``path``: first line of a cited range → ``(range id, tooltip)`` per range
    starting there, in range order. Every line of a cited range is coloured (:func:`cited_lines`); the first
    line also gets a mark linking to the range's entry in :func:`header`."""
    marks: dict[int, list[tuple[str, str]]] = defaultdict(list)
    for (a, b), group in sorted(_ranges(backlinks(app).get(path, [])).items()):
        labels = list_separator().join(dict.fromkeys(g.label for g in group))
        marks[a].append((_range_id(a, b), _("{lines} cited by: {places}").format(lines=span_label(a, b),
                                                                                 places=labels)))
    return dict(marks)


def cited_lines(app: Sphinx, path: str) -> list[int]:
    """Every line of ``path`` inside a cited range, ascending (whole-file citations mark no line)."""
    runs = _ranges(backlinks(app).get(path, []))
    return sorted({n for a, b in runs for n in range(a, b + 1)})


#: Styles of the back-links: a static file, ``static/`` beside this module.
CSS_FILE = "slimebook-backlinks.css"


def _reset(app: Sphinx, env: BuildEnvironment) -> None:
    app.__dict__.pop(_CACHE, None)


def setup(app: Sphinx) -> None:
    """Keep each document's sections; forget the back-links when the environment changes; ship the styles."""
    app.connect("doctree-read", _record_sections, priority=900)  # ids as the other handlers leave them
    keep_per_doc(app, _SECTIONS)
    app.connect("env-updated", _reset)
    app.add_css_file(CSS_FILE)
