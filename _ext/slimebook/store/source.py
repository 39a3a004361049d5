"""Reading the pinned commit: :class:`SourceStore` (files, their blob ids and text at the pin, without a work tree),
the :class:`Store` protocol the readers take, and :func:`cache_root`.

Pipeline position: the heart of :mod:`slimebook.store`; every reader above it (excerpts, symbol ranges, the
scanner, snapshots, the repository map) reads through a ``Store``. Fetching is :mod:`.fetch`'s job and ``git grep``
:mod:`.grep`'s; the store's methods delegate to them. Files are read through one long-lived
``git cat-file --batch`` process per OS process, with an in-process cache of blobs.
"""

from __future__ import annotations

import os
import posixpath
import subprocess
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TextIO

from ..lines import split_lines
from ..lock import SourceLock
from ..names import DEFAULT_FETCH_COMMAND, source_url_variable
from .errors import PinMissingError, SourceContentError, SourcePathError
from .fetch import fetch_pin, pin_present
from .grep import GrepMatch, grep_pin

__all__ = ["SourceStore", "Store", "TreeEntry", "cache_root"]

_SYMLINK_MODE = "120000"
_MAX_SYMLINK_DEPTH = 16


@dataclass(frozen=True)
class TreeEntry:
    """One entry of ``git ls-tree -r`` at the pin: ``mode`` (octal string), ``type`` and ``oid``."""

    mode: str
    type: str
    oid: str


class Store(Protocol):
    """What the readers need of a store: one pinned commit, read-only (:class:`SourceStore` is the one we ship).

    Readers (excerpts, symbol ranges, the scanner, snapshots, the repository map) and the Sphinx layer take a
    ``Store``; a test may pass any object with these members. Every method raises :class:`SourceError`
    subclasses as :class:`SourceStore` documents them.
    """

    lock: SourceLock

    def tree(self) -> dict[str, TreeEntry]: ...

    def files(self, suffix: str = "") -> list[str]: ...

    def resolve(self, path: str) -> str: ...

    def blob_id(self, path: str) -> str: ...

    def read_bytes(self, path: str) -> bytes: ...

    def read_text(self, path: str) -> str: ...

    def read_lines(self, path: str) -> list[str]: ...


def cache_root() -> Path:
    """The cache directory: ``$SLIMEBOOK_CACHE``, else ``$XDG_CACHE_HOME/slimebook``, else ``~/.cache/slimebook``."""
    if os.environ.get("SLIMEBOOK_CACHE"):
        return Path(os.environ["SLIMEBOOK_CACHE"]).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "slimebook"


class SourceStore:
    """Read-only access to one pinned commit.

    Args:
        lock: the pinned repository (see :func:`slimebook.lock.load_lock`).
        root: the cache directory; defaults to :func:`cache_root`.
        fetch_command: what an error tells the reader to run to fetch the pin (the book's
            ``slimebook_fetch_command``; default :data:`slimebook.names.DEFAULT_FETCH_COMMAND`).

    The store is safe to use from several threads and after ``fork`` (each OS process starts its
    own ``git cat-file`` the first time it reads).
    """

    def __init__(self, lock: SourceLock, root: Path | None = None, fetch_command: str = DEFAULT_FETCH_COMMAND
                 ) -> None:
        self.lock = lock
        self.fetch_command = fetch_command
        self.root = Path(root) if root is not None else cache_root()
        self._tree: dict[str, TreeEntry] | None = None
        self._blobs: dict[str, bytes] = {}
        self._proc: subprocess.Popen[bytes] | None = None
        self._proc_pid: int | None = None
        self._mutex = threading.Lock()

    # -- location and fetching -------------------------------------------------------------------
    @property
    def git_dir(self) -> Path:
        """The bare repository that holds the pin (it may not exist yet)."""
        return self.root / "git" / f"{self.lock.name}-{self.lock.commit}.git"

    def source_url(self) -> str:
        """The URL to fetch from: the lock table's override variable if set (``$SLIME_SOURCE_URL`` for ``[slime]``,
        :func:`slimebook.names.source_url_variable`; any git URL or local path), else the lock's."""
        override = os.environ.get(source_url_variable(self.lock.name))
        if override:
            candidate = Path(override).expanduser()
            return str(candidate.resolve()) if candidate.exists() else override
        return self.lock.url

    def is_present(self) -> bool:
        """True when the cache holds a verified repository with the pinned commit."""
        return pin_present(self.git_dir, self.lock.commit)

    def require(self) -> None:
        """Raise :class:`PinMissingError` unless the pin is in the cache."""
        if not self.is_present():
            raise PinMissingError(
                f"the pinned {self.lock.name} commit {self.lock.commit} is not in the source cache "
                f"{self.root}; fetch it with: {self.fetch_command}"
            )

    def fetch(self, progress: TextIO | None = None) -> bool:
        """Fetch the pinned commit (depth 1) into the cache unless it is already there.

        Args:
            progress: a stream (a terminal) that shows git's progress while fetching; None fetches quietly.
        Returns:
            True when a fetch happened, False when the pin was already present (nothing is run).
        Raises:
            FetchError: git failed (its stderr is in the message), or the source does not hold
                the pinned commit. Nothing is left under the final name in that case.
        """
        return fetch_pin(self.git_dir, self.lock.name, self.lock.commit, self.source_url(), progress)

    # -- reading ---------------------------------------------------------------------------------
    def tree(self) -> dict[str, TreeEntry]:
        """Every file at the pin: repo-relative path → :class:`TreeEntry` (directories are implied)."""
        if self._tree is None:
            self.require()
            out = subprocess.run(
                ["git", "ls-tree", "-r", "-z", "--full-tree", self.lock.commit],
                cwd=self.git_dir, capture_output=True, check=True,
            ).stdout.decode("utf-8", "surrogateescape")
            tree: dict[str, TreeEntry] = {}
            for record in out.split("\0"):
                if not record:
                    continue
                meta, path = record.split("\t", 1)
                mode, typ, oid = meta.split()
                tree[path] = TreeEntry(mode, typ, oid)
            self._tree = tree
        return self._tree

    def files(self, suffix: str = "") -> list[str]:
        """Sorted repo-relative paths of regular files at the pin ending with ``suffix``."""
        return sorted(
            p for p, e in self.tree().items()
            if e.type == "blob" and e.mode != _SYMLINK_MODE and p.endswith(suffix)
        )

    def resolve(self, path: str) -> str:
        """Validate a cited path and follow in-repository symlinks.

        Returns:
            The repo-relative path of a regular file at the pin.
        Raises:
            SourcePathError: empty, absolute, containing ``..`` or backslashes, a directory, a symlink
                resolving outside the repository, or not present at the pin.
        """
        original = path
        if not path or path.startswith("/") or "\\" in path or (len(path) > 1 and path[1] == ":"):
            raise SourcePathError(f"{original!r} must be a relative POSIX path inside the repository")
        parts = path.split("/")
        if any(part in ("..", ".", "") for part in parts):
            raise SourcePathError(f"{original!r} may not contain '..', '.' or empty segments")
        tree = self.tree()
        for _ in range(_MAX_SYMLINK_DEPTH):
            entry = tree.get(path)
            if entry is None:
                prefix = path + "/"
                if any(p.startswith(prefix) for p in tree):
                    raise SourcePathError(f"{original!r} is a directory at {self.lock.short}, not a file")
                raise SourcePathError(f"{original!r} does not exist at {self.lock.name}@{self.lock.short}")
            if entry.mode != _SYMLINK_MODE:
                if entry.type != "blob":
                    raise SourcePathError(f"{original!r} is a {entry.type}, not a file")
                return path
            target = self._read_oid(entry.oid).decode("utf-8", "surrogateescape")
            joined = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
            if target.startswith("/") or joined == ".." or joined.startswith("../"):
                raise SourcePathError(f"{original!r} is a symlink resolving outside the repository ({target})")
            path = joined
        raise SourcePathError(f"{original!r}: too many levels of symbolic links")

    def blob_id(self, path: str) -> str:
        """The git blob id of ``path`` at the pin (after :meth:`resolve`)."""
        return self.tree()[self.resolve(path)].oid

    def read_bytes(self, path: str) -> bytes:
        """The raw bytes of ``path`` at the pin. Raises :class:`SourcePathError` (see :meth:`resolve`)."""
        return self._read_oid(self.blob_id(path))

    def read_text(self, path: str) -> str:
        """The text of ``path`` at the pin, decoded as UTF-8 (a leading BOM is kept out).

        Raises:
            SourcePathError: see :meth:`resolve`.
            SourceContentError: the file holds a NUL byte (binary) or is not valid UTF-8.
        """
        data = self.read_bytes(path)
        if b"\0" in data:
            raise SourceContentError(f"{path!r} is a binary file")
        try:
            return data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise SourceContentError(f"{path!r} is not valid UTF-8 ({exc.reason} at byte {exc.start})") from exc

    def grep(self, pattern: str, pathspecs: Sequence[str] = (), *, ignore_case: bool = False,
             fixed: bool = False, word: bool = False) -> list[GrepMatch]:
        """Every line of the pinned commit that matches ``pattern``: ``git grep`` run on the pin's tree.

        Args:
            pattern: a POSIX extended regular expression (``git grep -E``), or a fixed string with ``fixed``.
            pathspecs: git pathspecs limiting the search (``slime/``, ``*.py``, ``:!tests``); all files when empty.
            ignore_case, fixed, word: ``git grep -i``, ``-F``, ``-w``.
        Returns:
            The matches in path and line order; binary files are skipped (``-I``). Line numbers follow the book's
            line model (:mod:`slimebook.lines`), so a file with a lone carriage return is numbered as excerpts
            number it, not as git does.
        Raises:
            PinMissingError: the pin is not in the cache.
            RevisionError: git rejected the pattern or a pathspec (the message is git's).
        """
        self.require()
        return grep_pin(self.git_dir, self.lock, self.read_bytes, pattern, pathspecs, ignore_case=ignore_case,
                        fixed=fixed, word=word)

    def read_lines(self, path: str) -> list[str]:
        """The lines of ``path`` without line ends, by the book's one line model (:func:`slimebook.lines.split_lines`:
        ``\\r\\n``, a lone ``\\r`` and ``\\n`` end a line, as for Python's tokenizer, libcst and Pygments).

        Line *n* of the file is ``read_lines(path)[n - 1]``. Tabs are kept (see :func:`slimebook.lines.expand_tabs`
        for how they are shown). Raises what :meth:`read_text` raises.
        """
        return split_lines(self.read_text(path))

    def _read_oid(self, oid: str) -> bytes:
        cached = self._blobs.get(oid)
        if cached is not None:
            return cached
        with self._mutex:
            proc = self._batch()
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(oid.encode() + b"\n")
            proc.stdin.flush()
            header = proc.stdout.readline().decode().split()
            if len(header) != 3:
                raise SourcePathError(f"object {oid} is missing from {self.git_dir}")
            size = int(header[2])
            data = proc.stdout.read(size)
            proc.stdout.read(1)  # the newline after the object
        self._blobs[oid] = data
        return data

    def _batch(self) -> subprocess.Popen[bytes]:
        if self._proc is None or self._proc_pid != os.getpid() or self._proc.poll() is not None:
            self.require()
            self._proc = subprocess.Popen(
                ["git", "cat-file", "--batch"], cwd=self.git_dir,
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            )
            self._proc_pid = os.getpid()
        return self._proc

    def close(self) -> None:
        """Stop this process's ``git cat-file`` (reading again restarts it)."""
        if self._proc is not None and self._proc_pid == os.getpid():
            if self._proc.stdin:
                self._proc.stdin.close()
            self._proc.wait(timeout=10)
        self._proc = None

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state.update(_proc=None, _proc_pid=None, _mutex=None, _blobs={})
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._mutex = threading.Lock()
