"""Build accelerators: everything that patches a Sphinx or library internal to make the build fast.

One switch, ``slimebook_accelerate`` (default on; ``-D slimebook_accelerate=0`` turns it off): off, the book builds
on Sphinx's stock behaviour, with the same pages and the same search index (``tests/test_accelerate.py`` builds a
root both ways, ``-j 1`` and ``-j 2``, and compares every file). On, each module is set up only when its guard passes
(:mod:`slimebook.sphinxext.guard`: the Sphinx versions it was written for and the attributes and signatures it
patches); one that fails steps aside with an info line, and the build goes on stock.

Nothing outside this package imports it; it may import every other part of the Sphinx layer.
"""

from __future__ import annotations

from sphinx.application import Sphinx
from sphinx.util import logging

from ..config import declare as declare_config
from ..guard import set_up_guarded

__all__ = ["ACCELERATORS", "setup"]

logger = logging.getLogger(__name__)

#: The accelerators, in the order they are set up (each a module of this package with ``setup``, ``SPHINX`` and
#: ``REQUIRES``).
ACCELERATORS: tuple[str, ...] = (
    "heap",  # the long-lived heap frozen before forks and at exit, thawed when the build ends
    "formatters",  # one Pygments formatter per option set, not one per highlighted code cell
    "parents",  # a toctree parent is rewritten only when a re-read child's title, toc or labels changed
    "readplan",  # -j N: the documents ordered so that Sphinx's reading chunks hold equal work
    "parallelwrite",  # -j N: N writers, fed while the main process resolves and indexes
    "pagewriting",  # -j N: generated pages written by N forked writers, in chunks of equal cost
    "navigation",  # generated pages: one navigation per set of links, not one per page
    "fragments",  # the HTML of usage tables kept between builds
    "stableconfig",  # no "configuration has changed" on every build
    "search",  # the zh search: jieba loaded only when a page is indexed, and read whole
    "templatecache",  # the theme's templates compiled once, kept beside the doctrees
)


def setup(app: Sphinx) -> None:
    """Declare ``slimebook_accelerate``; when it is on, set up every accelerator whose guard passes."""
    declare_config(app, "accelerate")
    if not app.config.slimebook_accelerate:
        logger.info("slimebook: accelerators off (slimebook_accelerate = False): Sphinx's own behaviour")
        return
    set_up_guarded(app, __name__, ACCELERATORS)
