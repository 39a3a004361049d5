"""Putting a pinned commit into the source cache: a depth-1 fetch into a temporary bare repository, renamed into
place only once the commit is verified, so an interrupted fetch never leaves a cache that looks valid.

Pipeline position: :meth:`SourceStore.fetch <slimebook.store.source.SourceStore.fetch>` and
:meth:`~slimebook.store.source.SourceStore.is_present` delegate here; git runs through :func:`.git.run_git`.
Nothing here reads a file at the pin.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import TextIO

from ..names import source_url_variable
from .errors import FetchError
from .git import run_git

__all__ = ["STALE_TEMP_SECONDS", "fetch_pin", "pin_present"]

STALE_TEMP_SECONDS = 3600


def pin_present(git_dir: Path, commit: str) -> bool:
    """True when ``git_dir`` is a repository (a verified fetch) that holds ``commit``."""
    if not git_dir.is_dir():
        return False
    probe = run_git("cat-file", "-e", f"{commit}^{{commit}}", cwd=git_dir, check=False)
    return probe.returncode == 0


def _remove_stale_temps(parent: Path) -> None:
    """Remove ``.tmp-*`` fetch directories untouched for an hour: left by a killed fetch (whose git
    children may have finished into them). Never a final name, so never a cache that looks valid."""
    now = time.time()
    for candidate in parent.glob(".tmp-*"):
        try:
            if now - candidate.stat().st_mtime > STALE_TEMP_SECONDS:
                shutil.rmtree(candidate, ignore_errors=True)
        except OSError:
            continue


def fetch_pin(git_dir: Path, name: str, commit: str, url: str, progress: TextIO | None = None) -> bool:
    """Fetch ``commit`` (depth 1) from ``url`` into ``git_dir`` unless it is already there.

    Args:
        git_dir: the final bare repository (``<cache>/git/<name>-<commit>.git``); its parent is created.
        name: the lock entry's name (the ref ``refs/pins/<name>`` marks the commit).
        commit: the full sha to fetch.
        url: any git URL or local path.
        progress: a stream (a terminal) that shows git's progress while fetching; None fetches quietly.
    Returns:
        True when a fetch happened, False when the commit was already present (only the presence probe runs).
    Raises:
        FetchError: git failed (its stderr is in the message, with a hint at the lock entry's override variable,
            ``SLIME_SOURCE_URL`` for ``[slime]``, when it is not set), or the source does not hold the commit. Nothing
            is left under the final name in that case.
    """
    if pin_present(git_dir, commit):
        return False
    parent = git_dir.parent
    parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_temps(parent)
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=parent))
    try:
        run_git("init", "--quiet", "--bare", str(tmp))
        run_git("fetch", "--quiet" if progress is None else "--progress", "--depth", "1", "--no-tags", url,
                commit, cwd=tmp, progress=progress)
        run_git("update-ref", f"refs/pins/{name}", commit, cwd=tmp)
        run_git("cat-file", "-e", f"{commit}^{{commit}}", cwd=tmp)
        try:
            os.rename(tmp, git_dir)
        except OSError:
            if not pin_present(git_dir, commit):  # lost a race to an incomplete directory: not ours to fix
                raise
    except FetchError as exc:
        hint, variable = "", source_url_variable(name)
        if not os.environ.get(variable):
            hint = f" (offline? point {variable} at a local clone or mirror that holds the commit)"
        raise FetchError(f"could not fetch {commit} from {url}: {exc}{hint}") from exc
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return True
