"""Compiled page templates kept between builds: Jinja's bytecode cache for the HTML builder's templates.

Sphinx's template bridge (``sphinx.jinja2glue.BuiltinTemplateLoader``) makes a Jinja environment without a
bytecode cache, so every build compiles the theme's templates again: 29 templates of furo and Sphinx's basic theme
for one page, 0.38 profiled seconds of an incremental rebuild of one chapter (about 0.2 s), more than any step of
this extension. Jinja keeps compiled templates in a ``BytecodeCache`` when the environment has one; its
``FileSystemBytecodeCache`` stores a file per template, named by a digest of the template's name and path, holding
a digest of its source (a changed template is compiled again) and Jinja's and Python's bytecode versions, and
writes it through a temporary file and a rename (no reader sees half a file; forked writers of ``-j N`` share it).

What that key does not hold is what else the compiled code depends on. Jinja reads, when it compiles: the
environment's class, extensions, syntax and whitespace options and ``policies``; whether each filter and test is
passed the context or the environment; and, for a filter or test applied to constants (``{{ "x"|f }}``), its
result, which the code generator folds into the code. :func:`environment_digest` names the cache's directory after
all of these it can see (the filters and tests by name, qualified name and what they are passed) and after what their
results can depend on: Sphinx's digest of the ``env`` and ``html`` configuration (what Sphinx itself rewrites every
page for), the bytes of ``conf.py``, the versions of Sphinx, Jinja and every extension. A filter whose result
changes with none of these (one that reads an environment variable, or an extension's code edited without a new
version) keeps a folded result until a build with a fresh environment (``-E``), which starts the cache empty; none of
Sphinx's, furo's or this book's filters depends on anything but its arguments. Directories of other digests are
removed. The directory is ``<doctreedir>/slimebook-templates/<digest>``, beside the pickled doctrees (never the
source tree), named when the first template is loaded, after every ``builder-inited`` handler has added its filters.

The cache never fails a build: a file that cannot be read as Jinja wrote it (truncated, say) is compiled again, and a
directory that cannot be made or written (a read-only build directory) leaves the templates compiled each build, as
Sphinx does, with one line in the log. Only an environment Sphinx made without a bytecode cache gets one: a theme or
extension that set its own keeps it.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path
from typing import Any

from jinja2 import FileSystemBytecodeCache
from sphinx.application import Sphinx
from sphinx.builders.html._build_info import BuildInfo
from sphinx.util import logging

from ..guard import Requirement, names_in

#: The Sphinx versions this module was written for, ``(major, minor)``, both included (see ``..guard``).
SPHINX = ((9, 0), (9, 0))
#: What it patches or relies on, checked before its setup runs (:mod:`slimebook.sphinxext.guard`).
REQUIRES: tuple[Requirement, ...] = (
    Requirement("sphinx.builders.html._build_info:BuildInfo", ("config", "tags", "config_categories")),
    Requirement("sphinx.jinja2glue:BuiltinTemplateLoader.init", ("builder",)),
    Requirement("sphinx.application:Sphinx.fresh_env_used"),
    Requirement("jinja2.utils:_PassArg.from_obj", ("obj",)),
    Requirement("jinja2.bccache:FileSystemBytecodeCache._get_cache_filename", ("bucket",)),
)

__all__ = ["CACHE_DIRNAME", "KeptTemplates", "cache_directory", "environment_digest", "setup", "usable"]


def usable() -> bool:
    """Whether the instance attributes this module reads and sets are where it was written for: the template
    bridge's Jinja ``environment`` (set in ``BuiltinTemplateLoader.init``), ``BuildInfo``'s ``config_hash`` (its
    ``__init__``), and the ``directory`` of Jinja's ``FileSystemBytecodeCache``, which :class:`KeptTemplates` names
    late and Jinja reads for every file (``_get_cache_filename``)."""
    from jinja2.bccache import FileSystemBytecodeCache
    from sphinx.jinja2glue import BuiltinTemplateLoader

    return (names_in(BuiltinTemplateLoader.init, "environment") and names_in(BuildInfo.__init__, "config_hash")
            and names_in(FileSystemBytecodeCache._get_cache_filename, "directory"))

logger = logging.getLogger(__name__)

#: the cache's directory under the doctree directory
CACHE_DIRNAME = "slimebook-templates"

#: the environment's attributes that change the code Jinja compiles from a template (``jinja2.Environment``)
_COMPILE_OPTIONS = (
    "block_start_string", "block_end_string", "variable_start_string", "variable_end_string",
    "comment_start_string", "comment_end_string", "line_statement_prefix", "line_comment_prefix", "trim_blocks",
    "lstrip_blocks", "newline_sequence", "keep_trailing_newline", "optimized", "autoescape", "finalize",
    "undefined", "is_async", "newstyle_gettext",
)


def _describe(value: Any) -> str:
    """A stable text for an option's value: a class or function by its qualified name, else ``repr``."""
    if isinstance(value, type) or callable(value):
        return f"{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', repr(value))}"
    return repr(value)


def _callables(table: dict[str, Any]) -> list[str]:
    """Each filter or test by name, qualified name and what Jinja passes it (``jinja2.utils._PassArg``)."""
    from jinja2.utils import _PassArg

    return [f"{name}={_describe(func)}:{_PassArg.from_obj(func)}" for name, func in sorted(table.items())]


def environment_digest(environment: Any, context: str = "") -> str:
    """A hex digest (16 characters) of what makes ``environment`` (a ``jinja2.Environment``) compile a template
    as it does (see the module docstring): its class, extensions, options (:data:`_COMPILE_OPTIONS`), policies,
    filters and tests, the versions of Sphinx and Jinja, and ``context`` (text the caller adds: the build's
    configuration digest and extension versions)."""
    import jinja2
    import sphinx

    parts = [_describe(type(environment)), sphinx.__version__, jinja2.__version__, context,
             ",".join(sorted(environment.extensions))]
    parts += [f"{name}={_describe(getattr(environment, name, None))}" for name in _COMPILE_OPTIONS]
    parts += [f"policy {name}={_describe(value)}" for name, value in sorted(environment.policies.items())]
    parts += ["filters", *_callables(environment.filters), "tests", *_callables(environment.tests)]
    return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()[:16]


def cache_directory(doctreedir: str | Path, environment: Any, context: str = "") -> Path:
    """Where ``environment``'s compiled templates are kept for a build whose doctree directory is ``doctreedir``:
    ``<doctreedir>/slimebook-templates/<environment_digest(environment, context)>``."""
    return Path(doctreedir) / CACHE_DIRNAME / environment_digest(environment, context)


def build_context(app: Sphinx) -> str:
    """What the build adds to :func:`environment_digest`: Sphinx's configuration digest (categories ``env`` and
    ``html``, as ``slimebook.sphinxext.accelerate.fragments`` takes it; not the tags, which differ between builders
    and which
    no compiled code reads), the SHA-256 of ``conf.py`` (a filter defined there may change without a configuration
    value changing; empty when it cannot be read) and every extension's name and version."""
    config_hash = BuildInfo(app.config, app.tags, frozenset({"env", "html"})).config_hash
    try:
        conf_digest = hashlib.sha256(Path(app.confdir, "conf.py").read_bytes()).hexdigest()
    except OSError:
        conf_digest = ""
    extensions = sorted((name, str(extension.version)) for name, extension in app.extensions.items())
    return repr([config_hash, conf_digest, extensions])


class KeptTemplates(FileSystemBytecodeCache):
    """Jinja's ``FileSystemBytecodeCache`` whose directory is named when the first template is loaded
    (:func:`cache_directory`) and which never fails a build (see the module docstring).

    Args:
        base: the directory that holds one directory per digest (``<doctreedir>/slimebook-templates``).
        context: what the build adds to the digest (:func:`build_context`).
    """

    def __init__(self, base: str | Path, context: str = "") -> None:
        super().__init__(str(base))
        self._base = Path(base)
        self._context = context
        self._usable: bool | None = None  # None: the directory is not named yet

    def _ready(self, environment: Any) -> bool:
        if self._usable is None:
            directory = cache_directory(self._base.parent, environment, self._context)
            try:
                directory.mkdir(parents=True, exist_ok=True)
                for other in self._base.iterdir():
                    if other != directory and other.is_dir():
                        shutil.rmtree(other, ignore_errors=True)
            except OSError as error:
                self._give_up(error)
            else:
                self.directory = str(directory)
                self._usable = True
        return bool(self._usable)

    def _give_up(self, error: OSError) -> None:
        self._usable = False
        logger.info("slimebook: compiled templates are not kept (%s)", error)

    def load_bytecode(self, bucket: Any) -> None:
        """The bucket's code from its file, if the file is there and whole; else the bucket stays empty."""
        if not self._ready(bucket.environment):
            return
        try:
            super().load_bytecode(bucket)
        except Exception:  # noqa: BLE001 - a damaged file (Jinja lets its checksum's UnpicklingError through)
            bucket.reset()

    def dump_bytecode(self, bucket: Any) -> None:
        """Write the bucket's code to its file; when the directory cannot be written, stop keeping templates."""
        if not self._ready(bucket.environment):
            return
        try:
            super().dump_bytecode(bucket)
        except OSError as error:
            self._give_up(error)


def _install(app: Sphinx) -> None:
    """``builder-inited`` (late): give the builder's Jinja environment a :class:`KeptTemplates`, when Sphinx made
    it without a bytecode cache; a build with a fresh environment (``-E``, or none kept) starts it empty."""
    environment = getattr(getattr(app.builder, "templates", None), "environment", None)
    if environment is None or getattr(environment, "bytecode_cache", None) is not None:
        return
    base = Path(app.doctreedir) / CACHE_DIRNAME
    if app.fresh_env_used and base.is_dir():  # -E, or no environment to reuse: nothing compiled before is kept
        shutil.rmtree(base, ignore_errors=True)
    environment.bytecode_cache = KeptTemplates(base, build_context(app))


def setup(app: Sphinx) -> dict[str, Any]:
    """Give the builder's template environment a bytecode cache at ``builder-inited`` (after the handlers of the
    default priority, which may add filters); returns the extension's metadata (it can also be loaded alone)."""
    app.connect("builder-inited", _install, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
