"""The source store: pinned upstream commits fetched into a cache and read from git objects.

Layout of the cache (``$SLIMEBOOK_CACHE``, else ``$XDG_CACHE_HOME/slimebook``, else
``~/.cache/slimebook``)::

    git/<name>-<commit>.git     a bare repository holding the pinned commit (ref refs/pins/<name>)
    git/.tmp-*                  fetches in progress; renamed into place only when complete

A repository directory exists under its final name only after its fetch finished and the commit
was verified, so an interrupted fetch never leaves a cache that looks valid (``os.rename`` is
atomic on one file system). Files are read without a work tree through one long-lived
``git cat-file --batch`` process per OS process, with an in-process cache of blobs.
"""

from __future__ import annotations

import codecs
import os
import posixpath
import re
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple, Protocol, TextIO

from .lines import split_lines
from .lock import SourceLock
from .names import DEFAULT_FETCH_COMMAND, source_url_variable

__all__ = [
    "FetchError",
    "GrepMatch",
    "PinMissingError",
    "RevisionError",
    "SourceContentError",
    "SourceError",
    "SourcePathError",
    "SourceStore",
    "Store",
    "TreeEntry",
    "cache_root",
    "renames",
    "resolve_commit",
]

_SYMLINK_MODE = "120000"
_MAX_SYMLINK_DEPTH = 16


class SourceError(Exception):
    """Base class of every store error; ``str()`` is a complete sentence for the reader."""


class PinMissingError(SourceError):
    """The pinned commit is not in the cache. The message names the commit and the book's fetch command."""


class FetchError(SourceError):
    """``git fetch`` failed; the message carries git's own stderr."""


class SourcePathError(SourceError):
    """A cited path is malformed, escapes the repository, is a directory, or does not exist at the pin."""


class SourceContentError(SourceError):
    """A cited file is binary or not valid UTF-8."""


class RevisionError(SourceError):
    """A revision is not a sha, is unknown to the source, or is ambiguous; the message says which."""


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


def _git_env(**extra: str) -> dict[str, str]:
    """The environment of every git call: no prompts, C locale, plus ``extra``."""
    return {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true", "LC_ALL": "C", **extra}


def _git(*args: str, cwd: Path | None = None, check: bool = True,
         progress: TextIO | None = None) -> subprocess.CompletedProcess[str]:
    if progress is None:
        proc = subprocess.run(
            ["git", *args], cwd=cwd, env=_git_env(), capture_output=True, text=True, check=False
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
    proc = subprocess.Popen(["git", *args], cwd=cwd, env=_git_env(), stdout=subprocess.DEVNULL,
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


STALE_TEMP_SECONDS = 3600


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


#: A line end of the book's line model, on bytes: CRLF, a lone CR or LF (:data:`slimebook.lines.LINE_BREAK`).
_BOOK_BREAK = re.compile(rb"\r\n|\r|\n")
_LONE_CR = re.compile(rb"\r(?!\n)")


def _decode(line: bytes) -> str:
    return line.decode("utf-8", "replace")


@dataclass(frozen=True)
class GrepSearch:
    """A ``git grep`` search replayed in Python on one line (to place a match inside a git line that holds a lone
    ``\\r``): the pattern as a regular expression or a fixed string, ``-i`` and ``-w``."""

    pattern: str
    ignore_case: bool = False
    fixed: bool = False
    word: bool = False

    def matches(self, line: str) -> bool:
        """Whether ``line`` matches; a pattern Python cannot compile matches every line."""
        body = re.escape(self.pattern) if self.fixed else self.pattern
        if self.word:
            body = rf"(?<!\w)(?:{body})(?!\w)"
        try:
            return re.search(body, line, re.IGNORECASE if self.ignore_case else 0) is not None
        except re.error:
            return True


class GrepMatch(NamedTuple):
    """One matching line of :meth:`SourceStore.grep`: ``path`` (repo-relative), ``line`` (1-based, by the book's
    line model) and ``text`` (the line without its end)."""

    path: str
    line: int
    text: str


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
        if not self.git_dir.is_dir():
            return False
        probe = _git("cat-file", "-e", f"{self.lock.commit}^{{commit}}", cwd=self.git_dir, check=False)
        return probe.returncode == 0

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
        if self.is_present():
            return False
        parent = self.git_dir.parent
        parent.mkdir(parents=True, exist_ok=True)
        _remove_stale_temps(parent)
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=parent))
        try:
            _git("init", "--quiet", "--bare", str(tmp))
            url = self.source_url()
            _git("fetch", "--quiet" if progress is None else "--progress", "--depth", "1", "--no-tags", url,
                 self.lock.commit, cwd=tmp, progress=progress)
            _git("update-ref", f"refs/pins/{self.lock.name}", self.lock.commit, cwd=tmp)
            _git("cat-file", "-e", f"{self.lock.commit}^{{commit}}", cwd=tmp)
            try:
                os.rename(tmp, self.git_dir)
            except OSError:
                if not self.is_present():  # lost a race to an incomplete directory: not ours to fix
                    raise
        except FetchError as exc:
            hint, variable = "", source_url_variable(self.lock.name)
            if not os.environ.get(variable):
                hint = f" (offline? point {variable} at a local clone or mirror that holds the commit)"
            raise FetchError(f"could not fetch {self.lock.commit} from {self.source_url()}: {exc}{hint}") from exc
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
        return True

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
        flags = ["-z", "-n", "-I", "--full-name", "--no-color", "-F" if fixed else "-E"]
        flags += ["-i"] * ignore_case + ["-w"] * word
        # the user's git configuration may add columns or quote paths: this output is parsed
        proc = subprocess.run(["git", "-c", "grep.column=false", "-c", "grep.lineNumber=true", "-c",
                               "core.quotePath=false", "grep", *flags, "-e", pattern, self.lock.commit, "--",
                               *pathspecs], cwd=self.git_dir, env=_git_env(), capture_output=True, check=False)
        if proc.returncode not in (0, 1):
            message = proc.stderr.decode("utf-8", "replace").strip()
            raise RevisionError(f"git grep {pattern!r} at {self.lock.short}: {message}")
        prefix = f"{self.lock.commit}:".encode()
        found = GrepSearch(pattern, ignore_case, fixed, word)
        newlines: dict[str, list[int] | None] = {}  # per matched path: offsets after each \n, None without a lone \r
        matches: list[GrepMatch] = []
        for row in proc.stdout.split(b"\n"):  # -z: "<commit>:<path>\0<line>\0<text>"; git splits lines on \n only
            if row:
                path, number, text = row.removeprefix(prefix).split(b"\0", 2)
                name = path.decode("utf-8", "surrogateescape")
                if name not in newlines:
                    data = self.read_bytes(name)
                    newlines[name] = [m.end() for m in re.finditer(b"\n", data)] if _LONE_CR.search(data) else None
                matches.extend(self._book_lines(name, int(number), text, found, newlines[name]))
        return matches

    def _book_lines(self, path: str, git_line: int, text: bytes, search: GrepSearch,
                    newlines: list[int] | None) -> list[GrepMatch]:
        """The book's lines (:mod:`slimebook.lines`) behind git's line ``git_line`` of ``path`` whose ``text`` matched
        (``newlines``: the offsets after each ``\\n`` of the file, None when it holds no lone ``\\r``).

        Git counts only ``\\n``; the book also ends a line at a lone ``\\r``. A git line holding a lone ``\\r`` is
        several book lines: those the pattern matches are returned (all of them when Python's ``re`` cannot tell,
        since git's regular expressions are not Python's), numbered after every lone ``\\r`` earlier in the file.
        """
        parts = _BOOK_BREAK.split(text.removesuffix(b"\r"))
        if newlines is None:  # no lone \r in the file: git's numbering is the book's
            return [GrepMatch(path, git_line, _decode(parts[0]))]
        git_start = 0 if git_line == 1 else newlines[git_line - 2]
        first = len(_BOOK_BREAK.findall(self.read_bytes(path), 0, git_start)) + 1
        lines = [(first + n, _decode(part)) for n, part in enumerate(parts)]
        chosen = [(n, line) for n, line in lines if search.matches(line)] or lines
        return [GrepMatch(path, n, line) for n, line in chosen]

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


_HEX_RE = re.compile(r"[0-9a-fA-F]{4,40}")
_FULL_RE = re.compile(r"[0-9a-f]{40}")


# -- revisions and renames (git, for the drift checker) ----------------------------------------------
def resolve_commit(lock: SourceLock, rev: str, root: Path | None = None) -> str:
    """The full sha of ``rev`` (a full or abbreviated hex sha, at least 4 digits).

    Resolution order: a full sha is returned as is (lowercased); else the source repository (its override
    variable, ``$SLIME_SOURCE_URL`` for ``[slime]``, or the lock's URL) when it is a local directory; else the commits
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
        _git("init", "--quiet", "--bare", tmp, check=False)
        proc = _git("fetch", "--quiet", "--filter=tree:0", "--no-tags", url, "+refs/heads/*:refs/heads/*",
                    cwd=Path(tmp), check=False)
        if proc.returncode != 0:
            raise RevisionError(f"cannot resolve {rev!r}: fetching {url} failed: {proc.stderr.strip()}")
        return _rev_parse(Path(tmp), rev, url)


def _rev_parse(repo: Path, rev: str, url: str) -> str:
    proc = _git("rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}", cwd=repo, check=False)
    full = proc.stdout.strip()
    if proc.returncode == 0 and _FULL_RE.fullmatch(full):
        return full
    probe = _git("rev-parse", "--disambiguate=" + rev, cwd=repo, check=False)
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
    env = _git_env(GIT_ALTERNATE_OBJECT_DIRECTORIES=str(old.git_dir / "objects"))
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
