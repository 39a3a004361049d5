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

from ..pages.render import field
from .locate import option_line

#: option → row label, in display order (data, not code paths)
FIELDS: tuple[tuple[str, str], ...] = (
    ("main-line", "当前主线"),
    ("expands", "本章展开"),
    ("inputs", "输入"),
    ("outputs", "输出"),
    ("cleanup", "谁来清理"),
    ("returns-to", "读完回到"),
)


class ContextBox(SphinxDirective):
    """Render the context box as an admonition titled "你在这里" holding a field list."""

    has_content = True
    option_spec = {key: directives.unchanged_required for key, _ in FIELDS}

    def run(self) -> list[nodes.Node]:
        if "main-line" not in self.options:
            raise self.error("context-box needs :main-line:")
        box = nodes.admonition(classes=["context-box"])
        box += nodes.title("你在这里", "你在这里")
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
