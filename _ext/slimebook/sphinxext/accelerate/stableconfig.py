"""Configuration that is the same in every build, so Sphinx does not report "The configuration has changed".

Sphinx compares the configuration pickled with the environment (as it was when the last build read its documents)
with the new one right after ``config-inited``. Anything changed later, at ``builder-inited``, is in the pickled
copy but not in the new one, so the message came back on every build ('html_css_files', 'html_static_path'):

* ``html_static_path``: ``sphinx-copybutton``, ``sphinx-design`` and the book's reader
(:mod:`slimebook.sphinxext.output.reader`) append
  their static directories at ``builder-inited``. Here the directories of the extensions this build loads
  (:data:`LATE_STATIC_DIRS`) are added at ``config-inited`` instead, and the duplicates the extensions append later
  are dropped at the end of ``builder-inited``: the list is then the same before and after.
* ``html_css_files`` / ``html_js_files``: the HTML builder's ``init_css_files`` sets ``priority`` 800 in the
  attributes of each entry, in place. Here the same default is set at ``config-inited``.

Not fixed here: Furo registers ``pygments_dark_style`` when the theme is loaded, after the comparison, so that one
name is still reported for HTML builds (a Furo/Sphinx interaction; it does not make Sphinx read anything again,
because only values registered before the comparison can invalidate the environment).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.config import Config

from ..guard import Requirement, code_of

#: The Sphinx versions this module was written for, ``(major, minor)``, both included (see ``..guard``).
SPHINX = ((9, 0), (9, 0))
#: What it patches or relies on, checked before its setup runs (:mod:`slimebook.sphinxext.guard`).
REQUIRES: tuple[Requirement, ...] = (
    Requirement("sphinx.builders.html:StandaloneHTMLBuilder.init_css_files"),
    Requirement("sphinx.builders.html:StandaloneHTMLBuilder.init_js_files"),
)

__all__ = ["LATE_STATIC_DIRS", "setup", "usable"]


def usable() -> bool:
    """Whether the HTML builder still gives the entries of ``html_css_files`` and ``html_js_files`` the priority
    800 (``attrs.setdefault("priority", 800)`` in ``init_css_files`` and ``init_js_files``), the default
    :func:`_early` sets first."""
    from sphinx.builders.html import StandaloneHTMLBuilder

    codes = [code_of(method) for method in (StandaloneHTMLBuilder.init_css_files, StandaloneHTMLBuilder.init_js_files)]
    return all(code is not None and 800 in code.co_consts and "setdefault" in code.co_names for code in codes)


def _beside(module: str, name: str) -> Callable[[], Path]:
    return lambda: Path(importlib.import_module(module).__file__).parent / name


#: extension → the static directory it appends to ``html_static_path`` at ``builder-inited``
LATE_STATIC_DIRS: dict[str, Callable[[], Path]] = {
    "sphinx_copybutton": _beside("sphinx_copybutton", "_static"),
    "sphinx_design": _beside("sphinx_design.extension", "static"),
    "slimebook": _beside("slimebook.sphinxext.output.reader", "static"),
}


def _early(app: Sphinx, config: Config) -> None:
    """``config-inited`` (late): add what ``builder-inited`` would add, as it would add it."""
    paths = config.html_static_path
    for extension, find in LATE_STATIC_DIRS.items():
        if extension in config.extensions:
            path = str(find())
            if path not in paths:
                paths.append(path)
    for entries in (config.html_css_files, config.html_js_files):
        for entry in entries:
            if isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[1], dict):
                entry[1].setdefault("priority", 800)


def _dedupe(app: Sphinx) -> None:
    """``builder-inited`` (last): drop the static directories appended a second time, keeping the first."""
    paths = app.config.html_static_path
    paths[:] = list(dict.fromkeys(paths))


def setup(app: Sphinx) -> None:
    """Register the two hooks (after Sphinx's own ``config-inited`` conversions at priority 800)."""
    app.connect("config-inited", _early, priority=900)
    app.connect("builder-inited", _dedupe, priority=999)
