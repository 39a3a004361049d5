"""Live preview: a page whose build warned shows its warnings at the top (``slimebook_preview``, set by
``make livehtml``).

``make livehtml`` builds without ``-W`` so that a mistake does not stop the preview; the warnings then scroll
past in a terminal the writer is not looking at, and a broken excerpt silently vanishes from the page. With
``slimebook_preview = True`` this module keeps every warning the build logs, by the document it points at, and
at ``doctree-resolved`` puts an admonition listing that document's warnings (line and message) at the top of its
doctree. Only the preview sets the value: ``make html`` and every other target never show the box.

The warnings are taken from the ``sphinx`` logger by a handler of our own (:class:`WarningsByDocument`), so the
build's own output is untouched; a warning's document comes from its location (a ``(docname, line)`` pair, a
node, or a ``path:line`` string: :func:`.diagnostics.warning_place`). Every page that warned is read again in the
next build (:mod:`.diagnostics`), so its box is drawn again with all of its warnings.
"""

from __future__ import annotations

import logging
from collections import defaultdict

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging as sphinx_logging

from .config import declare as declare_config
from .diagnostics import warning_place

__all__ = ["BOX_CLASS", "WarningsByDocument", "setup"]

#: The class of the box; the stylesheet need not know it (it is an ordinary ``warning`` admonition).
BOX_CLASS = "slimebook-preview-warnings"


class WarningsByDocument(logging.Handler):
    """Collects the WARNING (and worse) records of the ``sphinx`` logger as ``docname → [(line, message)]``.

    Args:
        app: the application whose environment maps source paths to docnames.
    """

    def __init__(self, app: Sphinx) -> None:
        super().__init__(logging.WARNING)
        self.app = app
        self.found: dict[str, list[tuple[int | None, str]]] = defaultdict(list)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            if sphinx_logging.is_suppressed_warning(getattr(record, "type", None), getattr(record, "subtype", None),
                                                    self.app.config.suppress_warnings):
                return
            docname, line = warning_place(self.app.env, getattr(record, "location", None))
            entry = (line, record.getMessage())
            if docname is not None and entry not in self.found[docname]:  # Sphinx replays what it buffered
                self.found[docname].append(entry)
        except Exception:  # noqa: BLE001 - a preview aid must never break the build's logging
            pass


def _start(app: Sphinx) -> None:
    """``builder-inited``: in preview, start collecting this build's warnings."""
    root = logging.getLogger("sphinx")  # the root of every Sphinx logger (not sphinx's getLogger: it prefixes)
    for old in [h for h in root.handlers if isinstance(h, WarningsByDocument)]:
        root.removeHandler(old)  # an earlier app that never reached build-finished
    if not app.config.slimebook_preview:
        return
    handler = WarningsByDocument(app)
    root.addHandler(handler)
    app.slimebook_preview_handler = handler  # type: ignore[attr-defined]


def _show(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """``doctree-resolved``: in preview, list the document's warnings at the top of its page."""
    handler = getattr(app, "slimebook_preview_handler", None)
    found = handler.found.get(docname) if handler is not None else None
    if not found:
        return
    box = nodes.admonition(classes=["warning", BOX_CLASS])
    title = f"预览：构建这一页时有 {len(found)} 条警告（make html 会因此失败）"
    box += nodes.title(title, title)
    items = nodes.bullet_list()
    for line, message in sorted(found, key=lambda item: (item[0] or 0)):
        text = f"第 {line} 行：{message}" if line else message
        items += nodes.list_item("", nodes.paragraph(text, text))
    box += items
    sections = list(doctree.findall(nodes.section))
    target = sections[0] if sections else doctree
    position = next((i + 1 for i, child in enumerate(target.children) if isinstance(child, nodes.title)), 0)
    target.insert(position, box)


def _stop(app: Sphinx, _exception: BaseException | None) -> None:
    """``build-finished``: stop collecting."""
    handler = getattr(app, "slimebook_preview_handler", None)
    if handler is not None:
        logging.getLogger("sphinx").removeHandler(handler)
        del app.slimebook_preview_handler  # type: ignore[attr-defined]


def setup(app: Sphinx) -> None:
    """Declare ``slimebook_preview`` and connect the collector and the box."""
    declare_config(app, "preview")
    app.connect("builder-inited", _start)
    app.connect("doctree-resolved", _show)
    app.connect("build-finished", _stop)
