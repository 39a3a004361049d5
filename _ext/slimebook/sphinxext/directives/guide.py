"""``context-box``: where the reader is in the coding-agent task (Slime reading-guide chapters).

Every Slime chapter opens with one. Options (all inline MyST/rST markup, all optional but
``main-line``): ``:main-line:`` the current main line of the task, ``:expands:`` what this chapter
opens up, ``:inputs:`` what comes in, ``:outputs:`` what goes out, ``:cleanup:`` who cleans up,
``:returns-to:`` where the reader returns. Body content, if any, follows the fields.
"""

from __future__ import annotations

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from ..locale import _
from ..pages.render import field
from .locate import option_line

#: option → row label (lazy: translated when drawn), in display order (data, not code paths)
FIELDS: tuple[tuple[str, str], ...] = (
    ("main-line", _("Main line")),
    ("expands", _("This chapter opens")),
    ("inputs", _("Inputs")),
    ("outputs", _("Outputs")),
    ("cleanup", _("Who cleans up")),
    ("returns-to", _("Then back to")),
)


class ContextBox(SphinxDirective):
    """Render the context box as an admonition titled "You are here" (in the book's language) holding a field list."""

    has_content = True
    option_spec = {key: directives.unchanged_required for key, _label in FIELDS}

    def run(self) -> list[nodes.Node]:
        if "main-line" not in self.options:
            raise self.error("context-box needs :main-line:")
        box = nodes.admonition(classes=["context-box"])
        title = _("You are here")
        box += nodes.title(title, title)
        fields = nodes.field_list(classes=["context-box-fields"])
        for key, label in FIELDS:
            if key not in self.options:
                continue
            # each value parsed at its own line (MyST's parse_inline counts from the line after ``lineno``), so a
            # reference that does not resolve is reported where it is written
            body, messages = self.parse_inline(self.options[key], lineno=option_line(self, key) - 1)
            fields += field(label, body, messages)
        box += fields
        if self.content:
            box.extend(self.parse_content_to_nodes())
        self.set_source_info(box)
        return [box]


def setup(app: Sphinx) -> None:
    """Register ``context-box``."""
    app.add_directive("context-box", ContextBox)
