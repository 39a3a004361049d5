"""Revisions and renames, for the drift checker: an abbreviated sha resolved to a full one, and the renames git
detects between two pins.

Pipeline position: beside :mod:`.source`, used by :mod:`slimebook.drift` (``slimebook sources diff`` / ``repin``);
the book's build never calls it. Git runs through :mod:`.git`.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path

from ..lock import SourceLock
from .errors import RevisionError
from .git import git_env, run_git
from .source import SourceStore, cache_root

__all__ = ["renames", "resolve_commit"]

_HEX_RE = re.compile(r"[0-9a-fA-F]{4,40}")
_FULL_RE = re.compile(r"[0-9a-f]{40}")


def resolve_commit(lock: SourceLock, rev: str, root: Path | None = None) -> str:
    """The full sha of ``rev`` (a full or abbreviated hex sha, at least 4 digits).

    Resolution order: a full sha is returned as is (lowercased); else the source repository
    (its override variable, ``$SLIME_SOURCE_URL`` for ``[slime]``, or the lock's URL) when it is a local directory;
    else the commits
    already in the cache; else the source is fetched without trees or blobs into a temporary
    repository that is removed afterwards.

    Args:
        lock: the lock entry (its name and URL).
        rev: the revision as typed.
        root: the cache directory (default :func:`slimebook.store.cache_root`).
    Raises:
        RevisionError: ``rev`` is not hex, is unknown, or is ambiguous.
    """
    if not _HEX_RE.fullmatch(rev):
        raise RevisionError(f"{rev!r} is not a commit sha (4 to 40 hex digits)")
    rev = rev.lower()
    if _FULL_RE.fullmatch(rev):
        return rev
    url = SourceStore(lock, root).source_url()
    if Path(url).is_dir():
        return _rev_parse(Path(url), rev, url)
    git_root = (Path(root) if root is not None else cache_root()) / "git"
    prefix = f"{lock.name}-"
    cached = sorted({
        p.name[len(prefix) : -len(".git")] for p in git_root.glob(f"{prefix}{rev}*.git") if p.is_dir()
    }) if git_root.is_dir() else []
    if len(cached) == 1:
        return cached[0]
    if len(cached) > 1:
        raise RevisionError(f"{rev!r} is ambiguous in the source cache: {', '.join(cached)}")
    with tempfile.TemporaryDirectory(prefix="slimebook-rev-") as tmp:
        run_git("init", "--quiet", "--bare", tmp, check=False)
        proc = run_git("fetch", "--quiet", "--filter=tree:0", "--no-tags", url, "+refs/heads/*:refs/heads/*",
                       cwd=Path(tmp), check=False)
        if proc.returncode != 0:
            raise RevisionError(f"cannot resolve {rev!r}: fetching {url} failed: {proc.stderr.strip()}")
        return _rev_parse(Path(tmp), rev, url)


def _rev_parse(repo: Path, rev: str, url: str) -> str:
    proc = run_git("rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}", cwd=repo,
                   check=False)
    full = proc.stdout.strip()
    if proc.returncode == 0 and _FULL_RE.fullmatch(full):
        return full
    probe = run_git("rev-parse", "--disambiguate=" + rev, cwd=repo, check=False)
    candidates = probe.stdout.split()
    if len(candidates) > 1:
        raise RevisionError(f"{rev!r} is ambiguous in {url}: {', '.join(candidates[:5])}")
    raise RevisionError(f"{rev!r} is not a commit in {url}")


def renames(old: SourceStore, new: SourceStore) -> dict[str, tuple[str, str]]:
    """Renames git detects from ``old``'s commit to ``new``'s: old path → (new path, similarity percent).

    Runs ``git diff-tree -M`` in the new commit's repository with the old one's objects as an alternate;
    any git failure gives an empty mapping (renames are only a hint).
    """
    found: dict[str, tuple[str, str]] = {}
    env = git_env(GIT_ALTERNATE_OBJECT_DIRECTORIES=str(old.git_dir / "objects"))
    try:
        proc = subprocess.run(
            ["git", "diff-tree", "-r", "-M", "--name-status", "-z", old.lock.commit, new.lock.commit],
            cwd=new.git_dir, env=env, capture_output=True, check=False,
        )
    except OSError:
        return found
    if proc.returncode != 0:
        return found
    fields = proc.stdout.decode("utf-8", "surrogateescape").split("\0")
    i = 0
    while i < len(fields) and fields[i]:
        status = fields[i]
        if status.startswith(("R", "C")):
            if status.startswith("R"):
                found[fields[i + 1]] = (fields[i + 2], str(int(status[1:] or 0)))
            i += 3
        else:
            i += 2
    return found
