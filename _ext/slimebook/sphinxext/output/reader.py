"""Reader features of the HTML book, as static files (``static/`` beside this module, copied by Sphinx):

* ``slimebook-reader.js`` / ``.css``: every mermaid diagram opens full width in a dialog (click, Enter or Space;
  Escape or the close button leaves it), "copy link" buttons on excerpt captions and on the targeted ``#L<n>``
  line of a snapshot page, a visible keyboard focus on dropdowns, highlighted lines readable in the dark theme,
  table wrappers whose padding stays inside the content column;
* ``slimebook-usage.css``: usage tables that fit the content column (registered by
:mod:`slimebook.sphinxext.pages.usagepages`).

The files are added to ``html_static_path`` at ``builder-inited`` (as ``sphinx-copybutton`` does), so HTML builders
copy them into ``_static/``; the script is a static template, ``slimebook-reader.js.jinja``, which Sphinx renders into
``slimebook-reader.js`` with the texts the reader sees in the book's language (:mod:`slimebook.sphinxext.locale`).

Templates (``templates/`` beside this module) are added to ``templates_path`` at ``config-inited``, before the
builder loads its templates: ``sidebar/slimebook-pages.html`` links the generated pages (usage index, coverage
table, source check), its words from the same catalog; the book's ``html_sidebars`` places it after Furo's
navigation.
"""

from __future__ import annotations

from pathlib import Path

from sphinx.application import Sphinx
from sphinx.config import Config

STATIC = Path(__file__).with_name("static")
TEMPLATES = Path(__file__).with_name("templates")


def _add_templates_path(app: Sphinx, config: Config) -> None:
    # a new list: appending would change Sphinx's default (one list shared by every Config of the process) when the
    # book does not set templates_path
    if str(TEMPLATES) not in config.templates_path:
        config.templates_path = [*config.templates_path, str(TEMPLATES)]


def _add_static_path(app: Sphinx) -> None:
    if app.builder.format == "html" and str(STATIC) not in app.config.html_static_path:
        app.config.html_static_path.append(str(STATIC))


def setup(app: Sphinx) -> None:
    """Register the templates directory, the static directory, the stylesheet and the script."""
    app.connect("config-inited", _add_templates_path)
    app.connect("builder-inited", _add_static_path)
    app.add_css_file("slimebook-reader.css")
    app.add_js_file("slimebook-reader.js", defer="defer")
