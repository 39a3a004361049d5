"""Errors a gate reports are not counted as warnings in Sphinx's closing line.

Sphinx (9.0) counts every log record at WARNING or above in ``Sphinx._warncount`` and ends a build with "build
finished with problems, N warnings". A gate that reports errors (the published-anchors check of
:mod:`slimebook.sphinxext.gates.anchors` logs each broken anchor with ``logger.error`` and sets the build's status
to 1) would then also be counted as that many warnings. The gate emits ``slimebook-errors-reported(count)``
(:data:`slimebook.sphinxext.diagnostics.ERRORS_REPORTED`) after
logging its errors; this module takes them out of the count. It touches ``Sphinx._warncount``, a private attribute,
so it is guarded (``usable``): without it Sphinx's count stays as Sphinx made it.
"""

from __future__ import annotations

from sphinx.application import Sphinx

from ..diagnostics import ERRORS_REPORTED, declare_event
from ..guard import Requirement

__all__ = ["setup", "usable"]

#: The Sphinx versions this module was written for, ``(major, minor)``, both included (see ``..guard``).
SPHINX = ((9, 0), (9, 0))
#: What it relies on (the instance attribute is probed by :func:`usable`).
REQUIRES: tuple[Requirement, ...] = (Requirement("sphinx.application:Sphinx.warningiserror"),)


def usable() -> bool:
    """Whether Sphinx still counts warnings in an ``int`` attribute ``_warncount`` of the application (read from the
    source of ``Sphinx.__init__``, since no application exists yet when the guard runs)."""
    import inspect

    try:
        return "self._warncount" in inspect.getsource(Sphinx.__init__)
    except (OSError, TypeError):
        return False


def _uncount(app: Sphinx, count: int) -> None:
    if isinstance(getattr(app, "_warncount", None), int):
        app._warncount -= count


def setup(app: Sphinx) -> None:
    """Take reported errors out of Sphinx's warning count (also loadable alone, as an extension)."""
    declare_event(app, ERRORS_REPORTED)
    app.connect(ERRORS_REPORTED, _uncount)
