"""The public names one source name gives: ``slimebook_source = "slime"`` → ``slime-source``, ``{slime}``,
``{slimenum}`` and ``$SLIME_SOURCE_URL``.

A book quotes one table of its lock (``slimebook_source``, the table's name). That one word names everything a
writer types or sets for it, so a book about another repository (``slimebook_source = "demo"``) writes
``demo-source``, ``{demo}``, ``{demonum}`` and sets ``DEMO_SOURCE_URL``, and every tool that finds citations
(:mod:`slimebook.citations`, :mod:`slimebook.drift`, the Sphinx layer's directive, roles, checks and pages) asks
:class:`SourceNames` instead of spelling a name. Nothing here knows about Sphinx.

The rule, in one place:

========================  ===========================  =====================
name                      rule                         for ``slime``
========================  ===========================  =====================
directive                 ``<name>-source``            ``slime-source``
citation role             ``<name>``                   ``{slime}``
number role               ``<name>num``                ``{slimenum}``
URL override (env var)    ``<NAME>_SOURCE_URL``        ``SLIME_SOURCE_URL``
========================  ===========================  =====================

``<NAME>`` is the name upper-cased with every character that cannot stand in a shell variable's name (``-``)
written ``_``: ``my-lib`` → ``MY_LIB_SOURCE_URL``. A source name is lower-case ASCII letters, digits, ``-`` and
``_``, starting with a letter: docutils looks roles and directives up in lower case, MyST's role syntax allows
no other characters, and the variable must not start with a digit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["DEFAULT_FETCH_COMMAND", "DEFAULT_SOURCE", "SourceNames", "source_url_variable"]

#: The source name of a book that does not set ``slimebook_source`` (the Slime book's).
DEFAULT_SOURCE = "slime"

#: What an error tells a reader to run when the pinned commit is not in the cache and the book does not say
#: otherwise (``slimebook_fetch_command``): the command line, run inside the book, needs no flag.
DEFAULT_FETCH_COMMAND = "slimebook sources fetch"

_VALID = re.compile(r"[a-z][a-z0-9_-]*\Z")


def source_url_variable(source: str) -> str:
    """The environment variable that overrides the URL of the lock table ``source``: ``slime`` →
    ``SLIME_SOURCE_URL``, ``my-lib`` → ``MY_LIB_SOURCE_URL`` (any character outside ``[A-Za-z0-9_]`` becomes
    ``_``). Defined for any table name, valid source name or not, since a lock may hold other tables."""
    return re.sub(r"\W", "_", source, flags=re.ASCII).upper() + "_SOURCE_URL"


@dataclass(frozen=True)
class SourceNames:
    """The names a source name gives (see the module docstring for the rule).

    Attributes:
        source: the source name, also the lock table's name (``"slime"``).
    Raises:
        ValueError: ``source`` is not a valid source name; the message says what is allowed.
    """

    source: str

    def __post_init__(self) -> None:
        if not isinstance(self.source, str) or not _VALID.match(self.source):
            raise ValueError(f"the source name {self.source!r} must be lower-case ASCII letters, digits, '-' and "
                             "'_', starting with a letter (it names the lock table, the directive "
                             "'<name>-source' and the role '{<name>}')")

    @property
    def directive(self) -> str:
        """The citation directive: ``slime-source``."""
        return f"{self.source}-source"

    @property
    def role(self) -> str:
        """The citation role: ``slime`` (written ``{slime}`path:81```)."""
        return self.source

    @property
    def number_role(self) -> str:
        """The role of a number taken from the pin or its scan: ``slimenum``."""
        return f"{self.source}num"

    @property
    def url_variable(self) -> str:
        """The environment variable that overrides the lock's URL: ``SLIME_SOURCE_URL``."""
        return source_url_variable(self.source)

    def describe(self) -> str:
        """The citation names as a writer reads them: ``slime-source directives and {slime} roles``."""
        return f"{self.directive} directives and {{{self.role}}} roles"
