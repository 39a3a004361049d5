"""One way to write a file so that no reader ever sees half of it.

Used for every file the toolchain writes: caches (experiments, snapshots, scan entries), generated
output, the lock and chapter files rewritten by a re-pin, and the CLI's JSON/TSV.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["atomic_write"]


def _umask() -> int:
    """The process umask (read by setting it and putting it back: the only portable way)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8, line endings exactly as given) to ``path`` atomically.

    The text goes to a temporary file in the same directory, which then replaces ``path`` with
    ``os.replace`` (atomic on one file system); an existing file keeps its permission bits, a new one gets
    what ``open()`` would give it (``0o666`` less the process umask), not ``mkstemp``'s private ``0o600``, so
    pages and downloads in the build output stay readable by a web server. Missing parent directories are
    created. On any error the temporary file is removed and the error raised.

    Raises:
        OSError: the directory cannot be created or written.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        os.chmod(tmp, path.stat().st_mode & 0o777 if path.exists() else 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
