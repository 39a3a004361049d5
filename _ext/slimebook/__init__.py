"""slimebook: the toolchain of the Slime source-reading book.

Pipeline, one direction only: ``lock`` (sources/sources.toml) → ``store`` (git objects at the pin)
→ ``excerpt``/``pyranges`` (verified line ranges) → ``sphinxext`` (directives, roles, pages).
Modules on the left never import modules on the right; only ``sphinxext`` imports Sphinx.

As a Sphinx extension, list ``"slimebook"`` in ``extensions``.
"""

from __future__ import annotations

from .version import __version__

__all__ = ["__version__", "setup"]


def setup(app):  # pragma: no cover - thin delegation
    """Sphinx entry point; see :func:`slimebook.sphinxext.setup`."""
    from .sphinxext import setup as _setup

    return _setup(app)
