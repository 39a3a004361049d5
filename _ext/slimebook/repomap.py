"""The repository map: files and lines per directory of the pin, read from the git tree (no Sphinx).

Every number comes from :meth:`slimebook.store.SourceStore.tree` (``git ls-tree -r`` at the pin) and the
blobs it names, so a re-pin changes the map without anyone editing a page. A *row* is one directory (or the
files lying directly in one directory); the rows of one level add up to their parent, and the top level adds
up to every file at the pin.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .lines import split_lines
from .store import Store, TreeEntry

__all__ = ["ROOT_FILES", "DirRow", "RepoMapError", "count_lines", "repo_map", "subdirectories"]

#: Marker (appended to a directory, ``""`` for the repository root) of the row holding the files that lie
#: directly in that directory: ``"slime/" + ROOT_FILES`` is the files directly under ``slime/``.
ROOT_FILES = "*"

_SYMLINK = "120000"


class RepoMapError(ValueError):
    """An expanded directory does not exist at the pin; ``str()`` names it."""


@dataclass(frozen=True)
class DirRow:
    """One row of the map.

    Attributes:
        key: the directory (``"slime/agent"``), or ``"<dir>/*"`` / ``"*"`` for the files directly in
            ``<dir>`` / the repository root.
        depth: 0 for a top-level row, 1 for a row under an expanded top-level directory, and so on.
        files: every tree entry (regular files and symlinks) at or below it; equals what
            ``git ls-tree -r --name-only <pin> -- <dir>`` lists.
        lines: lines of its text files (``\\n``-separated; a last line without ``\\n`` counts).
        skipped: entries whose lines are not counted: binary blobs (holding a NUL byte) and symlinks.
    """

    key: str
    depth: int
    files: int
    lines: int
    skipped: int

    @property
    def is_files_row(self) -> bool:
        """True for a row of the files lying directly in a directory (key ends with ``*``)."""
        return self.key == ROOT_FILES or self.key.endswith("/" + ROOT_FILES)


def count_lines(data: bytes) -> int | None:
    """Lines in ``data`` by the book's line model (:func:`slimebook.lines.split_lines`: ``\\n``, ``\\r\\n`` and a
    lone ``\\r`` end a line; a last line without an end counts); None for binary data (a NUL byte)."""
    if b"\0" in data:
        return None
    return len(split_lines(data.decode("latin-1")))  # latin-1: every byte is one code point, line ends included


def subdirectories(paths: Iterable[str], parent: str) -> list[str]:
    """The immediate subdirectories of ``parent`` (``""`` for the root) among ``paths``, sorted."""
    prefix = f"{parent}/" if parent else ""
    found = {p[len(prefix):].split("/", 1)[0] for p in paths if p.startswith(prefix) and "/" in p[len(prefix):]}
    return sorted(f"{prefix}{name}" for name in found)


def _line_counts(store: Store, tree: dict[str, TreeEntry]) -> dict[str, int | None]:
    """Path → its lines (:func:`count_lines`), None for a symbolic link, a submodule or a binary file."""
    return {path: None if entry.mode == _SYMLINK or entry.type != "blob" else count_lines(store.read_bytes(path))
            for path, entry in tree.items()}


def repo_map(store: Store, expand: Iterable[str] = ()) -> list[DirRow]:
    """The rows of the map, in tree order.

    Args:
        store: the source store holding the pin.
        expand: directories whose subdirectories get rows of their own (an expanded directory's parent
            must be expanded too, or it has no row to sit under).
    Returns:
        Top-level directories (sorted), each followed, when expanded, by its subdirectories' rows and by a
        ``<dir>/*`` row for its own files when it has any; the root's own files come last as ``*``.
    Raises:
        RepoMapError: an expanded directory is not a directory at the pin.
    """
    tree = store.tree()
    paths = sorted(tree)
    wanted = set(expand)
    for directory in sorted(wanted):
        if not any(p.startswith(directory + "/") for p in paths):
            raise RepoMapError(f"{directory!r} is not a directory at {store.lock.name}@{store.lock.short}")
    sizes = _line_counts(store, tree)

    def row(key: str, members: list[str], depth: int) -> DirRow:
        counted = [sizes[p] for p in members]
        return DirRow(key, depth, len(members), sum(n for n in counted if n is not None),
                      sum(n is None for n in counted))

    rows: list[DirRow] = []

    def walk(directory: str, depth: int) -> None:
        under = [p for p in paths if p.startswith(directory + "/")]
        rows.append(row(directory, under, depth))
        if directory not in wanted:
            return
        for child in subdirectories(under, directory):
            walk(child, depth + 1)
        own = [p for p in under if "/" not in p[len(directory) + 1:]]
        if own:
            rows.append(row(f"{directory}/{ROOT_FILES}", own, depth + 1))

    for top in subdirectories(paths, ""):
        walk(top, 0)
    own = [p for p in paths if "/" not in p]
    if own:
        rows.append(row(ROOT_FILES, own, 0))
    return rows
