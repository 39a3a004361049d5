"""Shapes of the records the extension keeps on the build environment (per document, see
:mod:`slimebook.sphinxext.environment.envdata`).

They are ``TypedDict`` s: plain dicts at run time, so the pickled environment is what it was, while every
reader of a record names its fields and their types in one place.
"""

from __future__ import annotations

from typing import TypedDict

from sphinx.environment import BuildEnvironment

__all__ = ["CitationRecord", "SectionRecord", "UsageDocRecord", "citations"]

#: One section below a document's title, kept under ``env.slimebook_sections[docname]`` (a list, in line order) for
#: the back-links of snapshot pages: ``(title line, stable id, title text)``.
SectionRecord = tuple[int, str, str]


class CitationRecord(TypedDict):
    """One resolved ``slime-source`` directive or ``{slime}`` role, kept under ``env.slimebook_citations[docname]``.

    ``runs`` are the selected 1-based inclusive line ranges at the pin, ``blob`` the git blob id read, ``symbol``
    the qualified name a ``:pyobject:`` resolved to (None otherwise); ``lines`` and ``pyobject`` are the options as
    written (None when absent).
    """

    docname: str
    lineno: int
    kind: str  # "directive" or "role"
    path: str
    blob: str
    runs: list[tuple[int, int]]
    symbol: str | None
    lines: str | None
    pyobject: str | None


class UsageDocRecord(TypedDict):
    """What a document built from the scan depends on, kept under ``env.slimebook_usage_docs[docname]``:
    the scan key (``<commit>:<scanner version>``) and the lessons whose ``lesson-teaches`` it reads."""

    scan: str
    lessons: list[str]


def citations(env: BuildEnvironment) -> dict[str, list[CitationRecord]]:
    """Every document's citation records (an empty mapping before any document cited the pin)."""
    return env.__dict__.get("slimebook_citations", {})
