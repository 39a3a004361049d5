"""The published-anchors check without Sphinx: the manifest, the redirects, and whether a published anchor resolves.

The manifest (``sources/anchors.txt``) lists every anchor the book has published, one ``page#id kind`` per line;
the redirects file (``sources/redirects.txt``) says where a removed one went, one ``old new`` per line, each side a
``page#id`` or a bare ``page``. :func:`check_anchors` names every published anchor that is gone without a redirect
that leads somewhere present, and every redirect into nothing. :mod:`slimebook.sphinxext.gates.anchors` collects what a
build has (the pages and their stable ids) and runs this check at ``build-finished``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

__all__ = [
    "AUTO_ID", "MANIFEST_HEADER", "Anchor", "check_anchors", "format_manifest", "is_stable", "parse_manifest",
    "parse_redirects", "resolve", "split_target",
]

#: docutils' counter ids (``id1``, ``id2``…): they change when a section is inserted above.
AUTO_ID = re.compile(r"id\d+\Z")


def is_stable(anchor: str) -> bool:
    """An id a reader can keep: ASCII and not one of docutils' counters (``id1``, ``id2``…)."""
    return anchor.isascii() and not AUTO_ID.match(anchor)


@dataclass(frozen=True, order=True)
class Anchor:
    """One published anchor: ``page`` (docname or generated page name), ``id``, ``kind``."""

    page: str
    id: str
    kind: str

    @property
    def key(self) -> str:
        """``page#id``, the anchor as the manifest and the redirects file write it."""
        return f"{self.page}#{self.id}"


MANIFEST_HEADER = """\
# Published anchors of the book: "page#id kind", one per line, sorted.
# Rewritten by a build with slimebook_anchors_mode = 'update'; a build with 'check' fails when one of them
# disappears without a line "old new" in the redirects file (slimebook_anchors_redirects).
"""


def _lines(text: str) -> Iterator[tuple[int, list[str]]]:
    """``(line number, fields)`` of every line that is neither blank nor a ``#`` comment."""
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if line and not line.startswith("#"):
            yield n, line.split()


def parse_manifest(text: str) -> dict[str, str]:
    """``{"page#id": kind}`` from a manifest's text.

    Raises:
        ValueError: a line is not ``page#id kind`` (the message names the line number).
    """
    found: dict[str, str] = {}
    for n, fields in _lines(text):
        if len(fields) != 2 or "#" not in fields[0]:
            raise ValueError(f"manifest line {n}: expected 'page#id kind', got {' '.join(fields)!r}")
        found[fields[0]] = fields[1]
    return found


def format_manifest(anchors: Iterable[Anchor]) -> str:
    """The manifest's text: :data:`MANIFEST_HEADER`, then one ``page#id kind`` line per anchor, sorted, no twice."""
    return MANIFEST_HEADER + "".join(f"{a.key} {a.kind}\n" for a in sorted(set(anchors)))


def parse_redirects(text: str) -> dict[str, str]:
    """``{old: new}``; each side is ``page#id`` or a bare ``page``.

    Raises:
        ValueError: a line is not two fields, or an ``old`` is redirected twice (the message names the line).
    """
    found: dict[str, str] = {}
    for n, fields in _lines(text):
        if len(fields) != 2:
            raise ValueError(f"redirects line {n}: expected 'old new', got {' '.join(fields)!r}")
        old, new = fields
        if old in found:
            raise ValueError(f"redirects line {n}: {old!r} is redirected twice")
        found[old] = new
    return found


def split_target(target: str) -> tuple[str, str]:
    """``"page#id"`` → ``("page", "id")``; a bare ``"page"`` → ``("page", "")``."""
    page, _, anchor = target.partition("#")
    return page, anchor


def resolve(target: str, present: dict[str, set[str]], redirects: dict[str, str],
            _seen: frozenset[str] = frozenset()) -> str | None:
    """Follow redirects from ``target`` to something present (``page`` or ``page#id``); None if broken.

    Args:
        target: ``page#id`` or ``page``.
        present: every page of the build → its stable ids.
        redirects: see :func:`parse_redirects`.
    Returns:
        The first target on the way that is present, or None (a dead end or a cycle). A redirect of a whole page
        (``old-page new-page``) carries its ids along: ``old-page#x`` goes to ``new-page#x`` when that resolves,
        else to ``new-page`` itself.
    """
    if target in _seen:
        return None  # a cycle
    seen = _seen | {target}
    page, anchor = split_target(target)
    if page in present and (not anchor or anchor in present[page]):
        return target
    if target in redirects:
        return resolve(redirects[target], present, redirects, seen)
    if anchor and page in redirects:
        new_page = split_target(redirects[page])[0]
        return (resolve(f"{new_page}#{anchor}", present, redirects, seen)
                or resolve(redirects[page], present, redirects, seen))
    return None


def check_anchors(published: dict[str, str], present: dict[str, set[str]],
                  redirects: dict[str, str]) -> list[str]:
    """Problems (sentences) for published anchors that are gone without a redirect that works.

    Args:
        published: ``{"page#id": kind}`` (:func:`parse_manifest`).
        present: every page of the build → its stable ids.
        redirects: ``{old: new}`` (:func:`parse_redirects`).
    Returns:
        First the broken published anchors (sorted by key), then the redirects whose target does not resolve
        (sorted by their old side); empty when everything holds.
    """
    problems = []
    for key, kind in sorted(published.items()):
        if resolve(key, present, redirects) is not None:
            continue
        if key in redirects:
            problems.append(f"published {kind} anchor {key} is gone and its redirect to {redirects[key]} "
                            f"leads nowhere")
        else:
            problems.append(f"published {kind} anchor {key} is gone; add a line '{key} <new-page#new-id>' "
                            "to the redirects file (or build once with slimebook_anchors_mode = 'update' if dropping "
                            "it is intended)")
    for old, new in sorted(redirects.items()):
        if resolve(new, present, redirects) is None:
            problems.append(f"redirect {old} -> {new}: the target does not exist")
    return problems
