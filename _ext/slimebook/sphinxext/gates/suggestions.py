"""Warnings that say what was probably meant: an undefined ``{ref}`` label, a misspelled directive option.

**Labels.** A ``{ref}`` to a label nobody defined: the warning names the closest labels that exist.

Sphinx warns ``undefined label: 'guide-walkthru'`` and stops there; a writer then searches the book for the label
they meant. This module answers Sphinx's ``warn-missing-reference`` event for the standard domain's ``ref`` and
``numref`` roles with the same warning (same type and subtype, so ``suppress_warnings = ["ref.ref"]`` still
silences it) plus up to three existing labels that look like the target (:func:`difflib.get_close_matches`).
Sphinx calls every listener of that event, so the standard domain's own listener
(``sphinx.domains.std.warn_missing_reference``, which would say it a second time) is disconnected through the
public ``app.disconnect``; when Sphinx no longer registers that function, nothing is disconnected and the book
gets both lines, never none. The
location is the reference's own node, as Sphinx gives it; directives that parse option values (``context-box``)
pass each option's own line, so the warning lands on the line that holds the reference.

**Directive options.** MyST-Parser warns ``'code-block': Unknown option key: 'emphasise-lines' (allowed: [...])``
and lists every allowed option. A filter on MyST's own warning logger (``myst_parser.warnings_``, through the
standard :mod:`logging` filter API) appends ``; did you mean 'emphasize-lines'?`` when one allowed option is
close. It reads only the message MyST wrote; a message of another shape passes unchanged.
"""

from __future__ import annotations

import ast
import difflib
import logging as std_logging
import re

from sphinx.addnodes import pending_xref
from sphinx.application import Sphinx
from sphinx.domains import Domain
from sphinx.util import logging

logger = logging.getLogger(__name__)

__all__ = ["OptionHint", "closest_labels", "setup"]

#: The roles whose missing target this module reports (the others keep Sphinx's own warning).
ROLES = frozenset({"ref", "numref"})


def closest_labels(target: str, labels: list[str], count: int = 3) -> list[str]:
    """Up to ``count`` of ``labels`` closest to ``target`` (difflib's ratio ≥ 0.6), best first; ``[]`` for none.

    Args:
        target: the label a reference names (lower-cased by Sphinx already).
        labels: every label the book defines.
    """
    return difflib.get_close_matches(target, labels, n=count, cutoff=0.6)


def _warn(app: Sphinx, domain: Domain | None, node: pending_xref) -> bool | None:
    """``warn-missing-reference``: warn once with suggestions; True tells Sphinx not to warn again."""
    if domain is None or domain.name != "std" or node.get("reftype") not in ROLES:
        return None
    target = node["reftarget"]
    if target in domain.data["anonlabels"]:  # the label exists but has no title (Sphinx's wording)
        logger.warning("Failed to create a cross reference. A title or caption not found: %r", target,
                       location=node, type="ref", subtype=node["reftype"])
        return True
    labels = sorted({*domain.data["labels"], *domain.data["anonlabels"]})
    near = closest_labels(target, labels)
    hint = f"; did you mean {', '.join(repr(n) for n in near)}?" if near else "; no label of the book is close to it"
    logger.warning("undefined label: %r%s", target, hint, location=node, type="ref", subtype=node["reftype"])
    return True


#: MyST-Parser's message for an option its directive does not declare (myst_parser/parsers/directives.py).
_UNKNOWN_OPTION = re.compile(r"Unknown option key: (?P<name>'[^']*'|\"[^\"]*\") \(allowed: (?P<allowed>\[.*\])\)")


class OptionHint(std_logging.Filter):
    """Adds ``; did you mean 'x'?`` to MyST's unknown-option warnings when an allowed option is close."""

    def filter(self, record: std_logging.LogRecord) -> bool:
        message = record.getMessage()
        found = _UNKNOWN_OPTION.search(message)
        if found is None or "did you mean" in message:
            return True
        try:
            name = ast.literal_eval(found.group("name"))
            allowed = [str(option) for option in ast.literal_eval(found.group("allowed"))]
        except (ValueError, SyntaxError):
            return True
        near = difflib.get_close_matches(name, allowed, n=1, cutoff=0.6)
        if near:
            record.msg, record.args = f"{message[:found.end()]}; did you mean {near[0]!r}?{message[found.end():]}", ()
        return True


def _standard_listeners(app: Sphinx) -> list[int]:
    """The ids of the standard domain's own ``warn-missing-reference`` listeners (none when Sphinx changed it)."""
    from sphinx.domains import std

    own = getattr(std, "warn_missing_reference", None)
    listeners = getattr(getattr(app, "events", None), "listeners", {}).get("warn-missing-reference", [])
    return [listener.id for listener in listeners if own is not None and listener.handler is own]


def setup(app: Sphinx) -> None:
    """Register the ``warn-missing-reference`` handler in place of the standard domain's, and the option hint."""
    for listener_id in _standard_listeners(app):
        app.disconnect(listener_id)
    app.connect("warn-missing-reference", _warn, priority=400)
    myst = std_logging.getLogger("sphinx.myst_parser.warnings_")  # sphinx.util.logging.getLogger's name for it
    if not any(isinstance(f, OptionHint) for f in myst.filters):
        myst.addFilter(OptionHint())
