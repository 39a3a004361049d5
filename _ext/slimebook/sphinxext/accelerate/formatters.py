"""One Pygments formatter per set of options in HTML builds, instead of one per highlighted block.

Sphinx's ``PygmentsBridge.highlight_block`` asks ``get_formatter`` for a new formatter for every block and every
inline code literal, and each new ``HtmlFormatter`` builds its style table again (``_create_stylesheet``, about
0.3 ms). The book highlights every code cell of its usage tables: 2,603 cells in a full build, 328 in the rebuild of
the lesson on ``await``, 0.1 s of that rebuild. A formatter keeps nothing of the text it formatted (its only
per-call memo, the span openers per token type, depends on the style alone), so the same instance can format
every block that asks for the same options; that is what :func:`reusing` hands out.

Installed at ``builder-inited`` on the HTML builder's bridges (``highlighter`` and ``dark_highlighter``) through their
``formatter`` attribute, the factory ``PygmentsBridge.get_formatter`` calls; options with an unhashable value (a list
of highlighted lines) get a new formatter, as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sphinx.application import Sphinx

from ..guard import Requirement, names_in

#: The Sphinx versions this module was written for, ``(major, minor)``, both included (see ``..guard``).
SPHINX = ((9, 0), (9, 0))
#: What it patches or relies on, checked before its setup runs (:mod:`slimebook.sphinxext.guard`).
REQUIRES: tuple[Requirement, ...] = (
    Requirement("sphinx.highlighting:PygmentsBridge.get_formatter"),
    Requirement("sphinx.highlighting:PygmentsBridge.__init__", ("dest", "stylename")),
    Requirement("sphinx.builders.html:StandaloneHTMLBuilder.init_highlighter"),
)

__all__ = ["reusing", "setup", "usable"]


def reusing(factory: Callable[..., Any]) -> Callable[..., Any]:
    """A factory that returns one ``factory(**options)`` per distinct set of options.

    Args:
        factory: a formatter class (or any callable taking keyword options).
    Returns:
        A callable with the same signature; for options whose values are all hashable it returns the instance it
        made for equal options before, otherwise a new one.
    """
    made: dict[tuple[tuple[str, Any], ...], Any] = {}

    def make(**options: Any) -> Any:
        key = tuple(sorted(options.items()))
        try:
            formatter = made.get(key)
        except TypeError:  # an unhashable option value
            return factory(**options)
        if formatter is None:
            formatter = made[key] = factory(**options)
        return formatter

    make.__wrapped__ = factory  # type: ignore[attr-defined]
    return make


def _install(app: Sphinx) -> None:
    if app.builder.format != "html":
        return
    for bridge in (getattr(app.builder, "highlighter", None), getattr(app.builder, "dark_highlighter", None)):
        if bridge is not None and not hasattr(bridge.formatter, "__wrapped__"):
            bridge.formatter = reusing(bridge.formatter)


def usable() -> bool:
    """Whether the instance attributes :func:`_install` reads are where it was written for: ``PygmentsBridge`` keeps
    its formatter class in ``formatter`` (set in ``__init__``, called by ``get_formatter``), and the HTML builder's
    ``init_highlighter`` sets ``highlighter`` and ``dark_highlighter``."""
    from sphinx.builders.html import StandaloneHTMLBuilder
    from sphinx.highlighting import PygmentsBridge

    return (names_in(PygmentsBridge.__init__, "formatter") and names_in(PygmentsBridge.get_formatter, "formatter")
            and names_in(StandaloneHTMLBuilder.init_highlighter, "highlighter", "dark_highlighter"))


def setup(app: Sphinx) -> None:
    """Reuse formatters in HTML builds (``builder-inited``)."""
    app.connect("builder-inited", _install)
