"""Call paths of the reading guide: ``reading-path``.

``reading-path``
    A mermaid flowchart of a call path: one content line per step, ``{slime}`target` [| edge label]``;
    every node links to the snapshot page (HTML) or the upstream permalink at the step's first line.

Every step is a ``{slime}`` role (parsed by :class:`~slimebook.sphinxext.directives.source.SlimeRole`, so it is
verified at the pin and recorded with the other citations). Every bad input is a warning at ``doc:line`` (``-W``
fails).
"""

from __future__ import annotations

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.util.docutils import SphinxDirective

from ...citations import parse_role_text, role_text
from ...excerpt import ExcerptError, read_excerpt
from ...snapshots import snapshot_pagename
from ..context import builds_pages, get_store, source_names
from .locate import content_line
from .readingparts import reading_warn, role_label

__all__ = ["ReadingPath", "setup"]


class ReadingPath(SphinxDirective):
    """``reading-path``: a top-down mermaid flowchart of ``{slime}`` steps (see the module docstring).

    Option ``:caption:`` is shown under the diagram. The steps are also listed below the diagram as
    ordinary (verified) ``{slime}`` citations, which is what LaTeX readers and screen readers get.
    """

    has_content = True
    option_spec = {"caption": directives.unchanged}

    def run(self) -> list[nodes.Node]:
        steps = self._steps()
        if steps is None:
            return []
        if len(steps) < 2:
            reading_warn(self, "reading-path: a path needs at least two steps")
            return []
        drawn = self._flowchart(steps)
        if drawn is None:
            return []
        code, links, listing = drawn
        out: list[nodes.Node] = [self._diagram(code, links)]
        if self.options.get("caption"):
            caption, messages = self.parse_inline(self.options["caption"], lineno=self.lineno)
            out.append(nodes.paragraph("", "", *caption, classes=["reading-path-caption"]))
            out.extend(messages)
        out.append(listing)
        return out

    def _steps(self) -> list[tuple[str, str, int]] | None:
        """The content's steps as ``(role text, edge label, line)``; None after a warning about a malformed line."""
        names = source_names(self.config)
        steps: list[tuple[str, str, int]] = []
        for offset, raw in enumerate(self.content):
            line = raw.strip()
            if not line:
                continue
            lineno = content_line(self, offset)
            role, _, label = line.partition("|")
            text = role_text(role, names)
            if text is None:
                reading_warn(self, f"reading-path: each line must be one {{{names.role}}} role, optionally "
                                   f"'| edge label'; got {line!r}", lineno)
                return None
            steps.append((text, label.strip(), lineno))
        return steps

    def _step_item(self, text: str, label: str, lineno: int) -> nodes.list_item:
        """A step of the list below the diagram: its ``{slime}`` citation (verified), then ``→ label``."""
        body, messages = self.parse_inline(f"{{{source_names(self.config).role}}}`{text}`", lineno=lineno - 1)
        item = nodes.paragraph()
        item.extend(body)
        if label:
            item += nodes.Text(f" → {label}")
        return nodes.list_item("", item, *messages)

    def _flowchart(self, steps: list[tuple[str, str, int]]
                   ) -> tuple[list[str], list[tuple[str, int, int]], nodes.enumerated_list] | None:
        """The mermaid lines, each node's ``(path, start, end)`` and the step list; None when a step's excerpt
        cannot be read (its role already warned at that line)."""
        store = get_store(self.env)
        code = ["flowchart TD"]
        links: list[tuple[str, int, int]] = []
        listing = nodes.enumerated_list(classes=["reading-path-steps"])
        for n, (text, label, lineno) in enumerate(steps):
            listing += self._step_item(text, label, lineno)
            target = parse_role_text(text)
            try:
                excerpt = read_excerpt(store, target.path, lines=target.lines, pyobject=target.pyobject)
            except ExcerptError:
                return None
            shown = role_label(text).replace('"', "#quot;")  # mermaid's entity for a quote in a label
            code.append(f'    s{n}["{shown}"]')
            links.append((excerpt.path, excerpt.start, excerpt.end))
            code.append(f'    click s{n} href "@@link{n}@@" "{excerpt.path}:{excerpt.label()} @ {store.lock.short}"')
        for n, (_, label, _) in enumerate(steps[:-1]):
            arrow = f'-- "{label.replace(chr(34), "#quot;")}" -->' if label else "-->"
            code.append(f"    s{n} {arrow} s{n + 1}")
        return code, links, listing

    def _diagram(self, code: list[str], links: list[tuple[str, int, int]]) -> nodes.Element:
        """The mermaid node of ``code``; its ``@@linkN@@`` targets are made into URLs at ``doctree-resolved``."""
        from sphinxcontrib.mermaid import mermaid

        diagram = mermaid()
        diagram["code"] = "\n".join(code)
        diagram["options"] = {}
        diagram["reading_links"] = links  # made into URLs at doctree-resolved, relative to the page written
        self.set_source_info(diagram)
        return diagram


def _resolve_paths(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """``doctree-resolved``: the click targets of ``reading-path`` diagrams, relative to the page written:
    the snapshot page at the step's first line in HTML, the upstream permalink elsewhere."""
    from sphinxcontrib.mermaid import mermaid

    lock = get_store(app.env).lock
    for node in doctree.findall(mermaid):
        links = node.get("reading_links")
        if not links:
            continue
        code = node["code"]
        for n, (path, start, end) in enumerate(links):
            if builds_pages(app):
                uri = app.builder.get_relative_uri(docname, snapshot_pagename(path)) + f"#L{start}"
            else:
                uri = lock.permalink(path, start, end)
            code = code.replace(f"@@link{n}@@", uri)
        node["code"] = code


def setup(app: Sphinx) -> None:
    """Set up ``sphinxcontrib.mermaid`` (the directive draws its diagram with it), register the directive and the
    resolution of its links.

    Raises:
        ExtensionError: ``sphinxcontrib.mermaid`` cannot be loaded; the message says what to install.
    """
    try:
        app.setup_extension("sphinxcontrib.mermaid")
    except ExtensionError as exc:
        raise ExtensionError("slimebook: the reading-path directive draws its diagram with sphinxcontrib.mermaid, "
                             "which cannot be loaded: install sphinxcontrib-mermaid (a dependency of slimebook) "
                             f"in the environment that runs Sphinx ({exc})") from exc
    app.add_directive("reading-path", ReadingPath)
    app.connect("doctree-resolved", _resolve_paths)
