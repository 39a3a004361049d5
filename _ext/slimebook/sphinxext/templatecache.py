"""Compiled page templates kept between builds: Jinja's bytecode cache for the HTML builder's templates.

Sphinx's template bridge (``sphinx.jinja2glue.BuiltinTemplateLoader``) makes a Jinja environment without a
bytecode cache, so every build compiles the theme's templates again: 29 templates of furo and Sphinx's basic theme
for one page, 0.38 profiled seconds of an incremental rebuild of one chapter (about 0.2 s), more than any step of
this extension. Jinja keeps compiled templates in a ``BytecodeCache`` when the environment has one; its
``FileSystemBytecodeCache`` stores a file per template, named by a digest of the template's name and path, holding
a digest of its source (a changed template is compiled again) and Jinja's and Python's bytecode versions, and
writes it through a temporary file and a rename (no reader sees half a file; forked writers of ``-j N`` share it).

What the cache's key does not hold is how the environment compiles: its class, its extensions (Sphinx adds
``jinja2.ext.i18n`` when the book is translated), its syntax and whitespace options. :func:`environment_digest`
names the cache's directory after those and Sphinx's and Jinja's versions, so an environment made differently never
reads code compiled for another; directories of other digests are removed. The directory is
``<doctreedir>/slimebook-templates/<digest>``, beside the pickled doctrees (never the source tree).

Only an environment Sphinx made without a bytecode cache gets one: a theme or extension that set its own keeps it.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.util import logging

__all__ = ["CACHE_DIRNAME", "cache_directory", "environment_digest", "setup"]

logger = logging.getLogger(__name__)

#: the cache's directory under the doctree directory
CACHE_DIRNAME = "slimebook-templates"

#: the environment's attributes that change the code Jinja compiles from a template (``jinja2.Environment``)
_COMPILE_OPTIONS = (
    "block_start_string", "block_end_string", "variable_start_string", "variable_end_string",
    "comment_start_string", "comment_end_string", "line_statement_prefix", "line_comment_prefix", "trim_blocks",
    "lstrip_blocks", "newline_sequence", "keep_trailing_newline", "optimized", "autoescape", "finalize",
    "undefined", "is_async",
)


def _describe(value: Any) -> str:
    """A stable text for an option's value: a class or function by its qualified name, else ``repr``."""
    if isinstance(value, type) or callable(value):
        return f"{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', repr(value))}"
    return repr(value)


def environment_digest(environment: Any) -> str:
    """A hex digest (16 characters) of what makes ``environment`` (a ``jinja2.Environment``) compile a template
    as it does: its class, its extensions' names, the options in :data:`_COMPILE_OPTIONS`, and the versions of
    Sphinx and Jinja."""
    import jinja2
    import sphinx

    parts = [_describe(type(environment)), sphinx.__version__, jinja2.__version__,
             ",".join(sorted(environment.extensions))]
    parts += [f"{name}={_describe(getattr(environment, name, None))}" for name in _COMPILE_OPTIONS]
    return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()[:16]


def cache_directory(doctreedir: str | Path, environment: Any) -> Path:
    """Where ``environment``'s compiled templates are kept for a build whose doctree directory is ``doctreedir``:
    ``<doctreedir>/slimebook-templates/<environment_digest>``."""
    return Path(doctreedir) / CACHE_DIRNAME / environment_digest(environment)


def _install(app: Sphinx) -> None:
    """``builder-inited``: give the builder's Jinja environment a bytecode cache, when Sphinx made it without one."""
    from jinja2 import FileSystemBytecodeCache

    environment = getattr(getattr(app.builder, "templates", None), "environment", None)
    if environment is None or getattr(environment, "bytecode_cache", None) is not None:
        return
    directory = cache_directory(app.doctreedir, environment)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for other in directory.parent.iterdir():
            if other != directory and other.is_dir():
                shutil.rmtree(other, ignore_errors=True)
    except OSError as error:  # a read-only build directory: templates are compiled each build, as by Sphinx
        logger.info("slimebook: compiled templates are not kept (%s)", error)
        return
    environment.bytecode_cache = FileSystemBytecodeCache(str(directory))


def setup(app: Sphinx) -> dict[str, Any]:
    """Give the builder's template environment a bytecode cache at ``builder-inited``; returns the extension's
    metadata (it can also be loaded alone)."""
    app.connect("builder-inited", _install)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
