"""The book the command line works on: its ``conf.py`` read by Sphinx's own reader, its documents found by Sphinx's
own discovery, so ``slimebook`` and ``sphinx-build`` agree on the settings and on the files without a flag.

A book is a directory holding ``conf.py`` (the Sphinx source directory, which is also its configuration directory).
:func:`find_book` walks up from a directory to the nearest one holding ``conf.py``; :func:`read_book` executes that
file with :meth:`sphinx.config.Config.read` (exactly as a build does, in the configuration directory) and takes the
extension's settings the command line needs (:data:`BOOK_SETTINGS`: the lock, the source name, the fetch command,
the scanner's categories file, the candidate notes)
with the same defaults as the build. :meth:`Book.documents` lists the book's source files with
:class:`sphinx.project.Project`, Sphinx's own discovery, under the build's rules: every file with a source suffix
(``source_suffix``, plus ``.md`` when a MyST extension is loaded, as MyST registers it) matching
``include_patterns``, minus ``exclude_patterns``, ``templates_path`` and the HTML builder's asset paths
(``html_static_path``, ``html_extra_path``); a build directory inside the book is left out the way Sphinx leaves it
out, by ``exclude_patterns`` (``sphinx-quickstart`` writes ``_build`` there). Of those, the ``.md`` and ``.rst``
files are the ones citations are read from (:data:`slimebook.citations.BOOK_SUFFIXES`).

This is the one module outside ``slimebook.sphinxext`` that imports Sphinx, and only its configuration reader and
file discovery (``sphinx.config``, ``sphinx.project``, ``sphinx.util.tags``, ``sphinx.errors``; no application, no
build): a copy of either would drift from the build's (``tests/test_imports.py`` states the exception).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .citations import BOOK_SUFFIXES
from .lock import DEFAULT_LOCK
from .names import DEFAULT_FETCH_COMMAND, DEFAULT_SOURCE, SourceNames

__all__ = ["BOOK_SETTINGS", "CONF_FILE", "Book", "BookError", "find_book", "read_book"]

#: The file that makes a directory a book.
CONF_FILE = "conf.py"

#: The extension's settings the command line reads from ``conf.py``, with the defaults the build declares for them
#: (:data:`slimebook.sphinxext.config.SETTINGS`; a test keeps the two equal).
BOOK_SETTINGS: dict[str, str] = {
    "slimebook_lock": DEFAULT_LOCK,
    "slimebook_source": DEFAULT_SOURCE,
    "slimebook_fetch_command": DEFAULT_FETCH_COMMAND,
    "slimebook_scan_categories": "",
    "slimebook_candidate_notes": "sources/candidate-notes.toml",
}

#: Sphinx settings the discovery reads that the HTML builder (not Sphinx's core) declares, with its defaults.
_HTML_ASSET_PATHS = ("html_static_path", "html_extra_path")
#: Extensions that register ``.md`` as a source suffix in their ``setup`` (not in ``conf.py``).
_MARKDOWN_EXTENSIONS = ("myst_parser", "myst_nb")


class BookError(Exception):
    """No book where one is needed, or its ``conf.py`` cannot be read; ``str()`` is a full sentence."""


@dataclass(frozen=True)
class Book:
    """One book's settings, as the build reads them.

    Attributes:
        confdir: the directory holding ``conf.py`` (relative to the working directory when it was found there).
        settings: the values of :data:`BOOK_SETTINGS` (``conf.py``'s, else the defaults).
        suffixes: the source suffixes of the build, in its order (``(".md", ".rst")``).
        include_patterns, exclude_patterns: the build's ``include_patterns`` and what it leaves out
            (``exclude_patterns``, ``templates_path``, the HTML asset paths), relative to ``confdir``.
    """

    confdir: Path
    settings: dict[str, Any] = field(default_factory=dict)
    suffixes: tuple[str, ...] = ()
    include_patterns: tuple[str, ...] = ("**",)
    exclude_patterns: tuple[str, ...] = ()

    @property
    def names(self) -> SourceNames:
        """The names ``slimebook_source`` gives (:class:`slimebook.names.SourceNames`).

        Raises:
            BookError: the source name is not valid.
        """
        try:
            return SourceNames(self.settings["slimebook_source"])
        except ValueError as exc:
            raise BookError(f"{self.confdir / CONF_FILE}: slimebook_source: {exc}") from exc

    @property
    def lock(self) -> Path:
        """The lock file (``slimebook_lock``, relative to ``confdir``)."""
        return self.confdir / self.settings["slimebook_lock"]

    @property
    def categories(self) -> Path | None:
        """The scanner's categories file (``slimebook_scan_categories``, relative to ``confdir``); None for the
        default table."""
        value = self.settings["slimebook_scan_categories"]
        return self.confdir / value if value else None

    @property
    def candidate_notes(self) -> Path:
        """The candidate notes file (``slimebook_candidate_notes``, relative to ``confdir``; it may not exist)."""
        return self.confdir / self.settings["slimebook_candidate_notes"]

    @property
    def fetch_command(self) -> str:
        """What an error tells the reader to run to fetch the pin (``slimebook_fetch_command``)."""
        return self.settings["slimebook_fetch_command"]

    def documents(self) -> list[Path]:
        """The book's source files citations are read from: the build's documents with a ``.md`` or ``.rst``
        suffix, each as ``confdir / relative path``, sorted."""
        from sphinx.project import Project

        suffixes = [s for s in self.suffixes if s in BOOK_SUFFIXES]
        project = Project(self.confdir, suffixes)
        docnames = project.discover(self.exclude_patterns, self.include_patterns)
        return sorted(self.confdir / project.doc2path(name, absolute=False) for name in docnames)

    def describe_search(self) -> str:
        """Where :meth:`documents` looks, as a sentence part: the directory, the suffixes and what is left out."""
        suffixes = ", ".join(s for s in self.suffixes if s in BOOK_SUFFIXES) or "none of .md, .rst"
        left_out = ", ".join(self.exclude_patterns) or "nothing"
        include = "" if self.include_patterns == ("**",) else f" matching {', '.join(self.include_patterns)}"
        return (f"the documents of the book in {self.confdir.resolve()} ({suffixes}{include}; "
                f"left out: {left_out})")


def find_book(start: Path) -> Path | None:
    """The nearest directory from ``start`` upward that holds ``conf.py``, or None.

    Returns:
        The directory relative to the working directory when ``start`` is relative (``Path(".")``, ``Path("..")``),
        else absolute.
    """
    here = start.resolve()
    for directory in (here, *here.parents):
        if (directory / CONF_FILE).is_file():
            return directory if start.is_absolute() else Path(os.path.relpath(directory))
    return None


def _suffixes(source_suffix: Any, extensions: Sequence[str]) -> tuple[str, ...]:
    """The build's source suffixes: ``source_suffix`` in any form Sphinx accepts (str, list, dict), plus ``.md``
    when an extension that registers it is loaded."""
    if isinstance(source_suffix, str):
        found = [source_suffix]
    elif isinstance(source_suffix, dict):
        found = list(source_suffix)
    else:
        found = list(source_suffix or [])
    if ".md" not in found and any(ext in _MARKDOWN_EXTENSIONS for ext in extensions):
        found.append(".md")
    return tuple(found)


def read_book(confdir: Path) -> Book:
    """Execute ``confdir/conf.py`` as Sphinx does and take the settings the command line needs.

    Raises:
        BookError: there is no ``conf.py`` in ``confdir``, it fails (Sphinx's message is quoted), or a setting of
            :data:`BOOK_SETTINGS` is not a string.
    """
    from sphinx.config import Config
    from sphinx.errors import ConfigError
    from sphinx.util.tags import Tags

    if not (confdir / CONF_FILE).is_file():
        raise BookError(f"{confdir.resolve()} holds no {CONF_FILE}: a book is the directory holding its {CONF_FILE}")
    try:
        config = Config.read(confdir.resolve(), overrides={}, tags=Tags())
    except ConfigError as exc:
        raise BookError(f"{confdir / CONF_FILE}: {exc}") from exc
    for name, default in (*BOOK_SETTINGS.items(), *((n, []) for n in _HTML_ASSET_PATHS)):
        if name not in config:
            config.add(name, default, "", types=type(default))
    settings = {name: getattr(config, name) for name in BOOK_SETTINGS}
    for name, value in settings.items():
        if not isinstance(value, str):
            raise BookError(f"{confdir / CONF_FILE}: {name} must be a str, not {value!r}")
    excluded = [*config.exclude_patterns, *config.templates_path,
                *(p for name in _HTML_ASSET_PATHS for p in getattr(config, name))]
    return Book(confdir, settings, _suffixes(config.source_suffix, config.extensions),
                tuple(config.include_patterns), tuple(str(p) for p in excluded))
