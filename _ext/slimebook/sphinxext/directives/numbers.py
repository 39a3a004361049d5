"""``{slimenum}``: a number taken from the pin or its scan, so no figure in the prose is typed by hand.

The role is named by ``slimebook_source`` (``<name>num``: ``{slimenum}`` for ``"slime"``, ``{demonum}`` for
``"demo"``; :class:`slimebook.names.SourceNames`), registered at ``config-inited``.

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
from sphinx.config import Config
from sphinx.util import logging
from sphinx.util.docutils import SphinxRole

from ...store import SourceError
from ...usage import FigureError
from ..context import source_names
from ..diagnostics import SlimebookWarning, warn
from ..environment.scancache import get_figures, note_scan_use

logger = logging.getLogger(__name__)


class SlimeNumber(SphinxRole):
    """``{slimenum}`KEY```: the number, as plain text (class ``slimenum``)."""

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        try:
            value = get_figures(self.env).get(self.text)
        except (FigureError, SourceError) as exc:
            warn(self.env, SlimebookWarning.NUMBER, "%s: %s", self.name, exc, location=self.get_location(),
                 docname=self.env.docname)
            return [nodes.literal(self.rawtext, self.text, classes=["slimebook-broken"])], []
        note_scan_use(self.env)
        text = str(value)
        return [nodes.inline(text, text, classes=["slimenum"])], []


def register_number_role(app: Sphinx, config: Config) -> None:
    """``config-inited``: register the role under the name ``slimebook_source`` gives (``slimenum``).

    Raises:
        ConfigError: ``slimebook_source`` is not a valid source name.
    """
    app.add_role(source_names(config).number_role, SlimeNumber())


def setup(app: Sphinx) -> None:
    """Register the role once its name is known."""
    app.connect("config-inited", register_number_role)
