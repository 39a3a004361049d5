"""The source lock: ``sources/sources.toml`` names each upstream repository and its pinned commit.

The lock is the first stage of the pipeline (sources → scan → store → directives/pages); nothing here
knows about Sphinx.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

__all__ = ["LockError", "SourceLock", "load_lock"]

_SHA_RE = re.compile(r"[0-9a-f]{40}")
_REQUIRED = ("url", "commit", "license", "blob_url")


class LockError(ValueError):
    """The lock file is missing, malformed, or lacks a field; the message names the file and entry."""


@dataclass(frozen=True)
class SourceLock:
    """One pinned upstream repository.

    Attributes:
        name: the table name in the lock (``"slime"``).
        url: the canonical git URL of the upstream repository.
        commit: the full 40-hex sha of the pin.
        license: SPDX identifier of the upstream license.
        blob_url: permalink template with ``{commit}``, ``{path}`` and ``{anchor}`` fields.
        previous_commit: the full 40-hex sha of the pin before the last re-pin
            (``slimebook sources repin --write`` records it), or None when the lock has no
            ``previous_commit`` field. The generated source-check page compares against it.
    """

    name: str
    url: str
    commit: str
    license: str
    blob_url: str
    previous_commit: str | None = None

    @property
    def short(self) -> str:
        """The 7-hex abbreviation of the pin used in captions."""
        return self.commit[:7]

    def permalink(self, path: str, start: int | None = None, end: int | None = None) -> str:
        """Upstream permalink to ``path`` at the pin.

        Args:
            path: repo-relative POSIX path.
            start, end: 1-based inclusive line range; ``end`` may be omitted or equal ``start``
                for a single line (GitHub's ``#L81`` / ``#L81-L104`` anchor rule).
        Returns:
            The URL string.
        """
        if start is None:
            anchor = ""
        elif end is None or end == start:
            anchor = f"#L{start}"
        else:
            anchor = f"#L{start}-L{end}"
        return self.blob_url.format(commit=self.commit, path=path, anchor=anchor)


def load_lock(path: str | Path, name: str = "slime") -> SourceLock:
    """Read entry ``name`` from the TOML lock at ``path``.

    The optional ``previous_commit`` field, when present, must be a full 40-hex sha too.

    Raises:
        LockError: the file is missing or not TOML, the entry or a field is missing, or the commit
            (or ``previous_commit``) is not a full lowercase 40-hex sha.
    """
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise LockError(f"{path}: source lock not found") from exc
    except tomllib.TOMLDecodeError as exc:
        raise LockError(f"{path}: not valid TOML: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise LockError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    entry = data.get(name)
    if not isinstance(entry, dict):
        raise LockError(f"{path}: no [{name}] table")
    missing = [key for key in _REQUIRED if not isinstance(entry.get(key), str) or not entry[key]]
    if missing:
        raise LockError(f"{path}: [{name}] lacks {', '.join(missing)}")
    if not _SHA_RE.fullmatch(entry["commit"]):
        raise LockError(f"{path}: [{name}] commit must be a full 40-hex sha, got {entry['commit']!r}")
    previous = entry.get("previous_commit")
    if previous is not None and not (isinstance(previous, str) and _SHA_RE.fullmatch(previous)):
        raise LockError(f"{path}: [{name}] previous_commit must be a full 40-hex sha, got {previous!r}")
    return SourceLock(name=name, **{key: entry[key] for key in _REQUIRED}, previous_commit=previous)
