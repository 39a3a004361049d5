"""``{slimenum}``: a number taken from the pin or its scan, so no figure in the prose is typed by hand.

``{slimenum}`py-files``` → the number of ``.py`` files at the pin; the keys are those of
:meth:`slimebook.usage.Figures.get` (``py-lines``, ``files:slime/``, ``lines:slime/rollout/``,
``occurrences:asyncio.gather``, ``occurrences:syntax:await``, ``category:asyncio``, ``kind:syntax``,
``records``, ``api-names``, …). A bad key is a warning at ``doc:line`` and shows the key itself.
The document is read again when the pin or the scanner version changes (see
:mod:`slimebook.sphinxext.environment.scancache`).
"""

from __future__ import annotations

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxRole

from ...store import SourceError
from ...usage import FigureError
from ..diagnostics import SlimebookWarning, warn
from ..environment.scancache import get_figures, note_scan_use

logger = logging.getLogger(__name__)


class SlimeNumber(SphinxRole):
    """``{slimenum}`KEY```: the number, as plain text (class ``slimenum``)."""

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        try:
            value = get_figures(self.env).get(self.text)
        except (FigureError, SourceError) as exc:
            warn(self.env, SlimebookWarning.NUMBER, "slimenum: %s", exc, location=self.get_location(),
                 docname=self.env.docname)
            return [nodes.literal(self.rawtext, self.text, classes=["slimebook-broken"])], []
        note_scan_use(self.env)
        text = str(value)
        return [nodes.inline(text, text, classes=["slimenum"])], []


def setup(app: Sphinx) -> None:
    """Register the role."""
    app.add_role("slimenum", SlimeNumber())
