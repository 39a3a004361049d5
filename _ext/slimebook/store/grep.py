"""``git grep`` at the pin, with matches numbered by the book's line model.

Pipeline position: :meth:`SourceStore.grep <slimebook.store.source.SourceStore.grep>` delegates here; the
``slimebook sources grep`` command and the house rules' only/all/never checks read its :class:`GrepMatch` list. Git
ends a line at ``\\n`` only, the book (:mod:`slimebook.lines`) also at a lone ``\\r``: a file holding one is
renumbered here, so a match's line is the line an excerpt shows.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from ..lock import SourceLock
from .errors import RevisionError
from .git import git_env

__all__ = ["GrepMatch", "GrepSearch", "grep_pin"]

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


def grep_pin(git_dir: Path, lock: SourceLock, read_bytes: Callable[[str], bytes], pattern: str,
             pathspecs: Sequence[str] = (), *, ignore_case: bool = False, fixed: bool = False,
             word: bool = False) -> list[GrepMatch]:
    """Every line of the commit ``lock`` pins (in the repository ``git_dir``) that matches ``pattern``.

    Args:
        git_dir: a bare repository holding the pin (the caller checked it is present).
        lock: the pin (its commit, and its short form for messages).
        read_bytes: repo-relative path → the file's bytes at the pin (to renumber a file holding a lone ``\\r``).
        pattern, pathspecs, ignore_case, fixed, word: as :meth:`SourceStore.grep
            <slimebook.store.source.SourceStore.grep>` takes them.
    Returns:
        The matches in path and line order, numbered by the book's line model.
    Raises:
        RevisionError: git rejected the pattern or a pathspec (the message is git's).
    """
    flags = ["-z", "-n", "-I", "--full-name", "--no-color", "-F" if fixed else "-E"]
    flags += ["-i"] * ignore_case + ["-w"] * word
    # the user's git configuration may add columns or quote paths: this output is parsed
    proc = subprocess.run(["git", "-c", "grep.column=false", "-c", "grep.lineNumber=true", "-c",
                           "core.quotePath=false", "grep", *flags, "-e", pattern, lock.commit, "--",
                           *pathspecs], cwd=git_dir, env=git_env(), capture_output=True, check=False)
    if proc.returncode not in (0, 1):
        message = proc.stderr.decode("utf-8", "replace").strip()
        raise RevisionError(f"git grep {pattern!r} at {lock.short}: {message}")
    prefix = f"{lock.commit}:".encode()
    found = GrepSearch(pattern, ignore_case, fixed, word)
    newlines: dict[str, list[int] | None] = {}  # per matched path: offsets after each \n, None without a lone \r
    matches: list[GrepMatch] = []
    for row in proc.stdout.split(b"\n"):  # -z: "<commit>:<path>\0<line>\0<text>"; git splits lines on \n only
        if row:
            path, number, text = row.removeprefix(prefix).split(b"\0", 2)
            name = path.decode("utf-8", "surrogateescape")
            if name not in newlines:
                data = read_bytes(name)
                newlines[name] = [m.end() for m in re.finditer(b"\n", data)] if _LONE_CR.search(data) else None
            matches.extend(_book_lines(name, int(number), text, found, newlines[name], read_bytes))
    return matches


def _book_lines(path: str, git_line: int, text: bytes, search: GrepSearch, newlines: list[int] | None,
                read_bytes: Callable[[str], bytes]) -> list[GrepMatch]:
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
    first = len(_BOOK_BREAK.findall(read_bytes(path), 0, git_start)) + 1
    lines = [(first + n, _decode(part)) for n, part in enumerate(parts)]
    chosen = [(n, line) for n, line in lines if search.matches(line)] or lines
    return [GrepMatch(path, n, line) for n, line in chosen]
