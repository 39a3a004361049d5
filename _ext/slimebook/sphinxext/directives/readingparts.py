"""What the reading guide's directives share (:mod:`.readingorder`, :mod:`.readingpath`, :mod:`.repomap`): their
warning, a table cell of inline nodes and the label a ``{slime}`` role shows."""

from __future__ import annotations

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from ...citations import parse_role_text
from ..diagnostics import SlimebookWarning, warn

__all__ = ["CSS_FILE", "reading_warn", "role_label", "text_cell"]

#: Styles of the entry boxes, the tables and the heat map: a static file in ``output/static/``.
CSS_FILE = "slimebook-reading.css"


def reading_warn(directive: SphinxDirective, message: str, lineno: int | None = None) -> None:
    """Warn (subtype ``reading``) at ``lineno`` of the directive's document, its own line when None."""
    warn(directive.env, SlimebookWarning.READING, message,
         location=(directive.env.docname, lineno or directive.lineno))


def text_cell(*children: nodes.Node) -> nodes.entry:
    """A table cell holding one paragraph of ``children``."""
    para = nodes.paragraph()
    para.extend(children)
    return nodes.entry("", para)


def role_label(text: str) -> str:
    """What a ``{slime}`` role shows: its title, else ``path`` or ``path:lines``."""
    target = parse_role_text(text)
    if target.title:
        return target.title
    return f"{target.path}:{target.lines}" if target.lines else target.path
