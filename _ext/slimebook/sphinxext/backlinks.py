"""Back-links on snapshot pages: from the source to the book (what ``sphinx.ext.viewcode`` does for API objects,
done for every cited line range).

The citations :mod:`.source` records on the environment (document, line, path, runs) are grouped by path.
Each citation is placed in the section of its document that holds its line (the last section title at or
above it), so a snapshot page can say, at the top, which chapters cite the file and how often, list every
cited range with links to the citing sections, and mark the cited lines: a style rule colours their
``#L<n>`` ids, and the first line of a range gets an empty link ``a.slime-cited-mark`` to that range's entry,
placed after the line-number link (the line spans themselves are not changed). Citations of a whole file
count in the list but mark no lines.

:mod:`.snapshot` calls :func:`decorate` on each page's fragment and adds :func:`stamp` to the page's stamp, so a
page is written again when the citations of its file change.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
from collections import defaultdict
from dataclasses import dataclass

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment

from ..anchorcheck import is_stable
from ..snapshots import snapshot_pagename
from ..spans import span_label
from .context import reading_order
from .envrecords import citations as env_citations

__all__ = ["Backlink", "backlinks", "decorate", "setup", "stamp"]

_CACHE = "slimebook_backlinks"


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


def _sections(env: BuildEnvironment, docname: str) -> list[tuple[int, str, str]]:
    """``(title line, stable id, title)`` of every section below the document's title, in line order."""
    found: list[tuple[int, str, str]] = []
    doctree = env.get_doctree(docname)
    for depth, section in enumerate(doctree.findall(nodes.section)):
        title = section.next_node(nodes.title)
        if depth == 0 or title is None or title.line is None:
            continue  # the document's own title: a citation above every section belongs to the chapter
        stable = [i for i in section["ids"] if is_stable(i)]
        found.append((title.line, stable[0] if stable else (section["ids"] or [""])[0], title.astext()))
    return sorted(found)


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


def decorate(app: Sphinx, path: str, fragment: str) -> str:
    """The snapshot ``fragment`` of ``path`` with the "cited by" header in front and its cited lines marked.

    Returns the fragment unchanged when nothing in the book cites ``path``.
    """
    links = backlinks(app).get(path, [])
    if not links:
        return fragment
    page = snapshot_pagename(path)

    def href(link: Backlink) -> str:
        uri = app.builder.get_relative_uri(page, link.docname)
        return html.escape(uri + (f"#{link.section_id}" if link.section_id else ""))

    places: dict[tuple[str, str], list[Backlink]] = {}
    for link in links:
        places.setdefault((link.docname, link.section_id), []).append(link)
    ranges: dict[tuple[int, int], list[Backlink]] = {}
    for link in links:
        for run in link.runs or ():
            ranges.setdefault(run, []).append(link)

    out = ['<div class="slime-backlinks">',
           f"<p><strong>被引用</strong>：本书有 {len(links)} 处引用这个文件，分布在 {len(places)} 个小节中。</p><ul>"]
    for group in places.values():
        out.append(f'<li><a class="reference internal" href="{href(group[0])}">{html.escape(group[0].label)}</a>'
                   f"（{len(group)} 处）</li>")
    out.append("</ul>")
    if ranges:
        out.append(f"<details><summary>被引用的 {len(ranges)} 个行段</summary><ul>")
        for (a, b), group in sorted(ranges.items()):
            seen: dict[tuple[str, str], Backlink] = {(g.docname, g.section_id): g for g in group}
            targets = "、".join(f'<a class="reference internal" href="{href(g)}">{html.escape(g.label)}</a>'
                               for g in seen.values())
            out.append(f'<li id="{_range_id(a, b)}"><a href="#L{a}">{span_label(a, b)}</a> ← {targets}</li>')
        out.append("</ul></details>")
    out.append("</div>")

    cited = sorted({n for a, b in ranges for n in range(a, b + 1)})
    starts: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for a, b in ranges:
        starts[a].append((a, b))

    def marks(n: int) -> str:
        return "".join(
            f'<a class="slime-cited-mark" href="#{_range_id(a, b)}" title="{span_label(a, b)} 被引用：'
            f'{html.escape("、".join(dict.fromkeys(g.label for g in ranges[(a, b)])))}"></a>'
            for a, b in starts[n])

    def mark(match: re.Match[str]) -> str:
        n = int(match.group("n"))
        return match.group(0) + marks(n) if n in starts else match.group(0)

    # the mark goes after the line's number link (or, without one, right after the line's opening tag); the
    # line spans themselves are left as they are: the cited lines are coloured by a style rule on their ids
    marked = re.sub(r'<span id="L(?P<n>\d+)">(?:<a href="#L(?P=n)"><span class="linenos">[^<]*</span></a>)?',
                    mark, fragment)
    style = ",".join(f".slime-snapshot-page #L{n}" for n in cited)
    out.append(f"<style>{style} {{ background: rgba(47, 158, 110, 0.10); }}</style>")
    return "\n".join(out) + marked


#: Styles of the back-links: a static file, ``static/`` beside this module.
CSS_FILE = "slimebook-backlinks.css"


def _reset(app: Sphinx, env: BuildEnvironment) -> None:
    app.__dict__.pop(_CACHE, None)


def setup(app: Sphinx) -> None:
    """Forget the back-links when the environment changes; ship the styles."""
    app.connect("env-updated", _reset)
    app.add_css_file(CSS_FILE)
