"""The store's error family: :class:`SourceError` and one subclass per kind of failure.

Pipeline position: the bottom of :mod:`slimebook.store`; every store module raises these, and the readers and the
Sphinx layer catch :class:`SourceError` (its ``str()`` is a complete sentence they can show as it is).
"""

from __future__ import annotations

__all__ = [
    "FetchError",
    "PinMissingError",
    "RevisionError",
    "SourceContentError",
    "SourceError",
    "SourcePathError",
]


class SourceError(Exception):
    """Base class of every store error; ``str()`` is a complete sentence for the reader."""


class PinMissingError(SourceError):
    """The pinned commit is not in the cache. The message names the commit and the fetch command."""


class FetchError(SourceError):
    """``git fetch`` failed; the message carries git's own stderr."""


class SourcePathError(SourceError):
    """A cited path is malformed, escapes the repository, is a directory, or does not exist at the pin."""


class SourceContentError(SourceError):
    """A cited file is binary or not valid UTF-8."""


class RevisionError(SourceError):
    """A revision is not a sha, is unknown to the source, or is ambiguous; the message says which."""
