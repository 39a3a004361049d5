"""Live preview: a page whose build warned shows its warnings at the top (``slimebook_preview``, set by
``make livehtml``).

``make livehtml`` builds without ``-W`` so that a mistake does not stop the preview; the warnings then scroll
past in a terminal the writer is not looking at, and a broken excerpt silently vanishes from the page. With
``slimebook_preview = True`` this module puts, at ``doctree-resolved``, an admonition listing the document's warnings
(line and message) at the top of its doctree. Only the preview sets the value: ``make html`` and every other target
never show the box. The box says which build fails on those warnings: ``slimebook_build_command`` (default
``sphinx-build -W``; this book's ``make html``).

The warnings come from :mod:`.diagnostics`, whose handler on the ``sphinx`` logger keeps every warning the build
logs by the document it points at (:func:`.diagnostics.document_warnings`), so the build's own output is
untouched. Every page that warned is read again in the next build, so its box is drawn again with all of its
warnings.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.application import Sphinx

from ..config import declare as declare_config
from ..diagnostics import document_warnings
from ..locale import _, ngettext

__all__ = ["BOX_CLASS", "setup"]

#: The class of the box; the stylesheet need not know it (it is an ordinary ``warning`` admonition).
BOX_CLASS = "slimebook-preview-warnings"


def _show(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """``doctree-resolved``: in preview, list the document's warnings at the top of its page."""
    found = document_warnings(app, docname) if app.config.slimebook_preview else []
    if not found:
        return
    box = nodes.admonition(classes=["warning", BOX_CLASS])
    title = ngettext("Preview: building this page gave {n} warning ({command} fails on it)",
                     "Preview: building this page gave {n} warnings ({command} fails on them)",
                     len(found)).format(n=len(found), command=app.config.slimebook_build_command)
    box += nodes.title(title, title)
    items = nodes.bullet_list()
    for line, message in sorted(found, key=lambda item: (item[0] or 0)):
        text = _("Line {line}: {message}").format(line=line, message=message) if line else message
        items += nodes.list_item("", nodes.paragraph(text, text))
    box += items
    sections = list(doctree.findall(nodes.section))
    target = sections[0] if sections else doctree
    position = next((i + 1 for i, child in enumerate(target.children) if isinstance(child, nodes.title)), 0)
    target.insert(position, box)


def setup(app: Sphinx) -> None:
    """Declare ``slimebook_preview`` and ``slimebook_build_command``, and draw the box."""
    declare_config(app, "preview")
    app.connect("doctree-resolved", _show)
