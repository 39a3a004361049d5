"""Running git for the store: one environment for every call, failures as errors, progress shown while it runs.

Pipeline position: the lowest layer of :mod:`slimebook.store` above its errors. :mod:`.fetch`, :mod:`.grep` and
:mod:`.revisions` run git through :func:`run_git` or with :func:`git_env`; nothing here knows the pin.
"""

from __future__ import annotations

import codecs
import os
import re
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from .errors import FetchError

__all__ = ["git_env", "run_git"]


def git_env(**extra: str) -> dict[str, str]:
    """The environment of every git call: no prompts, C locale, plus ``extra``."""
    return {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true", "LC_ALL": "C", **extra}


def run_git(*args: str, cwd: Path | None = None, check: bool = True,
            progress: TextIO | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``git *args`` in ``cwd`` with :func:`git_env`.

    Args:
        args: git's arguments (``"fetch", "--depth", "1", …``).
        cwd: the working directory (a bare repository), or None for the current one.
        check: raise on a non-zero exit.
        progress: a stream (a terminal) that shows git's standard error as it arrives; standard output is then
            discarded. None captures both.
    Returns:
        The completed process, output as text (with ``progress``: ``stderr`` without git's progress lines).
    Raises:
        FetchError: git exited non-zero and ``check`` is set; the message names the command and carries git's stderr.
    """
    if progress is None:
        proc = subprocess.run(
            ["git", *args], cwd=cwd, env=git_env(), capture_output=True, text=True, check=False
        )
    else:
        proc = _git_showing_progress(args, cwd, progress)
    if check and proc.returncode != 0:
        raise FetchError(f"git {' '.join(args)} failed (exit {proc.returncode}): {proc.stderr.strip()}")
    return proc


#: a progress line of git (``Receiving objects:  42% (120/285)``), left out of error messages
_GIT_PROGRESS_RE = re.compile(r"^(?:remote: )?[A-Z][a-z]+(?: [a-z]+)*: +\d+% \(")


def _git_showing_progress(args: Sequence[str], cwd: Path | None, progress: TextIO) -> subprocess.CompletedProcess[str]:
    """Run git with its standard error copied to ``progress`` as it arrives (progress lines end with ``\\r``) and kept,
    without the progress lines, for an error message; standard output is discarded."""
    proc = subprocess.Popen(["git", *args], cwd=cwd, env=git_env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    assert proc.stderr is not None
    kept = bytearray()
    decoder = codecs.getincrementaldecoder("utf-8")("replace")  # a chunk may end inside a character
    while chunk := os.read(proc.stderr.fileno(), 4096):
        kept += chunk
        progress.write(decoder.decode(chunk))
        progress.flush()
    proc.stderr.close()
    code = proc.wait()
    lines = bytes(kept).decode("utf-8", "replace").replace("\r", "\n").splitlines()
    message = "\n".join(line for line in lines if line.strip() and not _GIT_PROGRESS_RE.match(line))
    return subprocess.CompletedProcess(["git", *args], code, "", message)
