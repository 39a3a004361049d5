"""``{buildinfo}``: a fact of this build in the prose — the pin read from the lock, the Python running it.

``{buildinfo}`pin``` → the full sha; the keys are those of :data:`slimebook.buildinfo.FACT_KEYS` (``pin``,
``pin-short``, ``upstream``, ``license``, ``python``, ``python-minor``, ``python-impl``). A bad key is a
warning at ``doc:line`` and shows the key itself, struck out. The pin facts render as inline code, the
others as plain text.

A document using the role depends on the lock (re-read on a re-pin), and records the interpreter version it
was read with: ``env-get-outdated`` re-reads it when the build runs on another Python.
"""

from __future__ import annotations

import platform

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.util import logging
from sphinx.util.docutils import SphinxRole

from ...buildinfo import FactError, fact
from ..context import get_store, lock_path
from ..diagnostics import SlimebookWarning, warn
from ..environment.envdata import doc_data, keep_per_doc

logger = logging.getLogger(__name__)

_CODE_KEYS = frozenset({"pin", "pin-short", "upstream"})
_ATTR = "slimebook_buildinfo_docs"


class BuildInfo(SphinxRole):
    """``{buildinfo}`KEY```: the value (class ``buildinfo``)."""

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        store = get_store(self.env)
        try:
            value = fact(store.lock, self.text)
        except FactError as exc:
            warn(self.env, SlimebookWarning.BUILDINFO, "buildinfo: %s", exc, location=self.get_location())
            return [nodes.literal(self.rawtext, self.text, classes=["slimebook-broken"])], []
        self.env.note_dependency(str(lock_path(self.env)))
        doc_data(self.env, _ATTR)[self.env.docname] = platform.python_version()
        node = nodes.literal(value, value) if self.text.strip() in _CODE_KEYS else nodes.Text(value)
        return [nodes.inline("", "", node, classes=["buildinfo"])], []


def _outdated(app: Sphinx, env: BuildEnvironment, added: set[str], changed: set[str],
              removed: set[str]) -> list[str]:
    """Documents read with another interpreter version than this build's."""
    now = platform.python_version()
    return sorted(docname for docname, version in env.__dict__.get(_ATTR, {}).items()
                  if version != now and docname in env.found_docs and docname not in removed)


def setup(app: Sphinx) -> None:
    """Register the role and its environment hooks."""
    app.add_role("buildinfo", BuildInfo())
    keep_per_doc(app, _ATTR)
    app.connect("env-get-outdated", _outdated)
