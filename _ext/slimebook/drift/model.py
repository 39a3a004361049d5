"""The drift model: citations (:class:`Cited`), what they become (:class:`Drift`, :class:`Status`), and counts.

Pure data and formatting; the checker that fills it is :mod:`.checker`, the relocation algorithm
:mod:`.relocate`, the re-pin writing :mod:`.repin`.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from ..citations import book_files, find_citations
from ..names import SourceNames
from ..spans import runs_label as runs_label_of

__all__ = [
    "NEEDS_WRITER", "CitationSource", "Cited", "Drift", "Runs", "Status", "book_citations", "compress_lines",
    "format_runs", "needs_writer", "runs_label", "summarize",
]

Runs = tuple[tuple[int, int], ...]


class Status(StrEnum):
    """The fate of one citation between two commits (see the module docstring)."""

    UNCHANGED = "unchanged"
    MOVED = "moved"
    CHANGED = "changed"
    GONE = "gone"
    BROKEN = "broken"


#: Statuses the writer has to look at: a re-pin cannot settle them by rewriting line numbers.
NEEDS_WRITER = frozenset({Status.CHANGED, Status.GONE, Status.BROKEN})


# -- citations ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Cited:
    """One thing that points into the source: a selection of ``path`` valid at some commit.

    Attributes:
        kind: ``"directive"``, ``"role"``, or a citation source's own word (``"occurrence"``).
        path: repo-relative path as written.
        lines: a ``:lines:`` spec (``"81-104"``, ``"81-90,95"``), or None.
        pyobject: a qualified name, or None. Neither ``lines`` nor ``pyobject``: the whole file.
        emphasize: the directive's ``:emphasize-lines:`` spec (source line numbers), or None.
        file: the book file holding the citation, or None for citations that are not text in the
            book (they are reported, never rewritten).
        line: 1-based line of the citation in ``file`` (0 without a file).
        index: for a role, its position among the roles on that line (0-based), to rewrite it; for a candidate
            note's place, its position among the TOML strings on that line.
        ident: an identifier for citations without a file (an occurrence id), or None.
        error: the citation could not be parsed (e.g. a malformed role target), or None.
    """

    kind: str
    path: str
    lines: str | None = None
    pyobject: str | None = None
    emphasize: str | None = None
    file: Path | None = None
    line: int = 0
    index: int = 0
    ident: str | None = None
    error: str | None = None

    @property
    def where(self) -> str:
        """``file:line`` for a citation in the book, else the ``ident`` (or ``"?"``)."""
        if self.file is not None:
            return f"{self.file}:{self.line}"
        return self.ident or "?"

    def describe(self) -> str:
        """``path :lines: 81-104`` / ``path :pyobject: Name`` / ``path`` — the selection, as written."""
        if self.lines:
            return f"{self.path} :lines: {self.lines}"
        if self.pyobject:
            return f"{self.path} :pyobject: {self.pyobject}"
        return self.path


#: A citation source: anything that yields citations. :func:`book_citations` is one; the usage
#: scanner's occurrence ids will be another (``Cited(kind="occurrence", ident=..., file=None)``).
CitationSource = Callable[[], Iterable[Cited]]


def book_citations(paths: Iterable[Path], names: SourceNames) -> Iterator[Cited]:
    """Every citation directive and role of ``names`` (``slime-source`` and ``{slime}`` for ``slime``) under
    ``paths``, as :class:`Cited`.

    Args:
        paths: files or directories; directories are searched for ``.md`` and ``.rst`` files.
        names: the book's source names (:class:`slimebook.names.SourceNames`).
    Returns:
        An iterator in file order (sorted paths), then line order, then position on the line.
    """
    for file in book_files(paths):
        roles_on_line: Counter[int] = Counter()
        for c in find_citations(file, names):
            index = 0
            if c.kind == "role":
                index = roles_on_line[c.line]
                roles_on_line[c.line] += 1
            yield Cited(
                kind=c.kind, path=c.path, lines=c.options.get("lines") or None,
                pyobject=c.options.get("pyobject") or None,
                emphasize=c.options.get("emphasize-lines") or None,
                file=file, line=c.line, index=index, error=c.error,
            )


# -- results ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Drift:
    """What one citation becomes at the new commit.

    Attributes:
        cited: the citation.
        status: see :class:`Status`.
        old_runs, new_runs: the selected line ranges (1-based, inclusive) at each commit; ``new_runs``
            of a ``changed`` citation is the counterpart the line diff of the two files suggests,
            and is None when the status is ``gone`` or ``broken``.
        old_blob, new_blob: blob ids read (None where the path did not resolve).
        old_text, new_text: the selected lines at each commit (runs concatenated).
        old_label, new_label: ``path@short`` at each commit, for diff headers.
        new_emphasize: the ``:emphasize-lines:`` spec carried to the new lines when ``moved`` (or
            ``unchanged``), else None.
        note: a sentence for the writer (ambiguous match, rename hint, error), or ``""``.
        renamed_to: the path git reports the file was renamed to, when the status is ``gone``.
    """

    cited: Cited
    status: Status
    old_runs: Runs | None = None
    new_runs: Runs | None = None
    old_blob: str | None = None
    new_blob: str | None = None
    old_text: tuple[str, ...] = ()
    new_text: tuple[str, ...] = ()
    old_label: str = ""
    new_label: str = ""
    new_emphasize: str | None = None
    note: str = ""
    renamed_to: str | None = None

    @property
    def new_lines(self) -> str | None:
        """The ``:lines:`` spec at the new commit when the citation moved or is unchanged, else None."""
        if self.status in (Status.MOVED, Status.UNCHANGED) and self.cited.lines and self.new_runs:
            return format_runs(self.new_runs)
        return None

    def diff(self, reverse: bool = False) -> str:
        """A unified diff of the cited text, old → new (new → old with ``reverse``); ``""`` if equal.

        The headers name ``path@short`` and the line ranges (``L81–L104``).
        """
        a = (self.old_label, self.old_runs, self.old_text)
        b = (self.new_label, self.new_runs, self.new_text)
        if reverse:
            a, b = b, a
        if a[2] == b[2]:
            return ""
        lines = difflib.unified_diff(
            list(a[2]), list(b[2]), fromfile=f"{a[0]} {runs_label(a[1])}", tofile=f"{b[0]} {runs_label(b[1])}",
            lineterm="", n=2,
        )
        return "\n".join(lines)

    def summary(self) -> str:
        """One line: status, where the selection went, and the note (the CLI's report line)."""
        text = str(self.status)
        if self.status is Status.MOVED:
            text += f" {runs_label(self.old_runs)} → {runs_label(self.new_runs)}"
        elif self.status is Status.CHANGED and self.new_runs is not None:
            text += f" {runs_label(self.old_runs)} → {runs_label(self.new_runs)}"
        elif self.status is Status.UNCHANGED and self.old_runs:
            text += f" {runs_label(self.old_runs)}"
        if self.note:
            text += f" ({self.note})"
        return text


def runs_label(runs: Runs | None) -> str:
    """``L81–L104, L110`` for runs, ``(none)`` for None or no runs (diff headers and report lines)."""
    return runs_label_of(runs) if runs else "(none)"


def format_runs(runs: Iterable[tuple[int, int]]) -> str:
    """``[(81, 104)]`` → ``"81-104"``; ``[(81, 90), (95, 95)]`` → ``"81-90,95"`` (the option form)."""
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def compress_lines(numbers: Iterable[int]) -> str:
    """Sorted line numbers as an ``:emphasize-lines:`` spec: ``[46, 47, 48, 50]`` → ``"46-48,50"``."""
    runs: list[list[int]] = []
    for n in sorted(set(numbers)):
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return format_runs((a, b) for a, b in runs)


def summarize(drifts: Iterable[Drift]) -> dict[Status, int]:
    """Count drifts per status, every status present (zero included), in :class:`Status` order."""
    counts = Counter(d.status for d in drifts)
    return {status: counts.get(status, 0) for status in Status}


def needs_writer(drifts: Iterable[Drift]) -> list[Drift]:
    """The drifts a re-pin leaves for the writer: ``changed``, ``gone`` and ``broken``."""
    return [d for d in drifts if d.status in NEEDS_WRITER]
