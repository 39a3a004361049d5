"""The excerpt reader: a pipeline from a citation to verified lines at the pin.

Stages, each a small function (the shape of ``sphinx.directives.code.LiteralIncludeReader``):
resolve path → read blob at pin → select range (``lines`` or ``pyobject``) → emphasize. Errors are
:class:`ExcerptError` whose message the Sphinx layer turns into a warning at ``docname:line``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from .lines import expand_tabs
from .pyranges import SymbolError, select_definition
from .rangecache import blob_definitions
from .spans import runs_label
from .store import SourceError, SourceStore

__all__ = ["Excerpt", "ExcerptError", "parse_line_spec", "read_excerpt", "INVALID_OPTION_PAIRS"]

#: Options that may not be given together, with the reason (a declared table, not scattered ifs).
INVALID_OPTION_PAIRS: dict[frozenset[str], str] = {
    frozenset({"lines", "pyobject"}): "give either :lines: or :pyobject:, not both",
}

_RUN_RE = re.compile(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?")


class ExcerptError(ValueError):
    """A citation cannot be resolved at the pin; ``str()`` says why in one sentence.

    Attributes:
        reason: the problem alone (``malformed line range 'abc' (expected N or N-M)``).
        path: the cited path as the author wrote it, when known.
        option: the option at fault, written as in a chapter (``:emphasize-lines:``), when one is.

    ``str()`` is ``path: option reason`` (the parts that are known), so a warning built from it names the cited
    path and the option; the Sphinx layer adds the document and line.
    """

    def __init__(self, reason: str, *, path: str | None = None, option: str | None = None) -> None:
        self.reason, self.path, self.option = reason, path, option
        named = path and repr(path) not in reason  # store errors already quote the path
        super().__init__(" ".join(part for part in (f"{path}:" if named else "", option or "", reason) if part))

    def located(self, *, path: str | None = None, option: str | None = None) -> ExcerptError:
        """A copy with ``path`` and ``option`` filled in where this error has none."""
        return ExcerptError(self.reason, path=self.path or path, option=self.option or option)


@dataclass(frozen=True)
class Excerpt:
    """Verified lines of one file at the pin.

    Attributes:
        path: the repo-relative path actually read (symlinks resolved).
        blob: the git blob id read.
        runs: sorted, disjoint ``(start, end)`` line ranges (1-based, inclusive).
        texts: the lines of each run, without line ends, tabs expanded (:func:`slimebook.lines.expand_tabs`).
        emphasize: source line numbers to highlight, all inside ``runs``.
        symbol: the qualified name when selected by ``pyobject``.
    """

    path: str
    blob: str
    runs: list[tuple[int, int]]
    texts: list[list[str]]
    emphasize: frozenset[int] = field(default_factory=frozenset)
    symbol: str | None = None

    @property
    def start(self) -> int:
        return self.runs[0][0]

    @property
    def end(self) -> int:
        return self.runs[-1][1]

    def label(self) -> str:
        """``L81–L104`` or ``L81–L90, L95`` (en dash, the caption form)."""
        return runs_label(self.runs)


def parse_line_spec(spec: str, total: int | None = None) -> list[tuple[int, int]]:
    """Parse ``"81-104"`` or ``"81-90,95"`` into sorted disjoint runs; adjacent parts (``"1-2,3"``) merge into one
    run, so a contiguous selection is always one block.

    Args:
        spec: comma-separated single lines or ``a-b`` ranges, 1-based, inclusive.
        total: number of lines in the file; runs past it are errors when given.
    Raises:
        ExcerptError: empty or malformed spec, a zero line, a reversed range, overlapping or
            unordered runs, or a line past ``total``.
    """
    runs: list[tuple[int, int]] = []
    if not spec or not spec.strip():
        raise ExcerptError("empty line range")
    for part in spec.split(","):
        match = _RUN_RE.fullmatch(part)
        if not match:
            raise ExcerptError(f"malformed line range {part.strip()!r} (expected N or N-M)")
        start = int(match.group(1))
        end = int(match.group(2)) if match.group(2) else start
        if start == 0 or end == 0:
            raise ExcerptError(f"line numbers start at 1, got {part.strip()!r}")
        if end < start:
            raise ExcerptError(f"reversed line range {part.strip()!r}")
        if runs and start <= runs[-1][1]:
            raise ExcerptError(f"line ranges must be ascending and disjoint: {spec!r}")
        if total is not None and end > total:
            raise ExcerptError(f"line range {part.strip()!r} is past the end of the file ({total} lines)")
        if runs and start == runs[-1][1] + 1:  # adjacent: a contiguous selection is one run
            runs[-1] = (runs[-1][0], end)
            continue
        runs.append((start, end))
    return runs


def _check_options(options: dict[str, object]) -> None:
    given = {key for key, value in options.items() if value not in (None, "")}
    for pair, reason in INVALID_OPTION_PAIRS.items():
        if pair <= given:
            raise ExcerptError(reason, option=" ".join(f":{name}:" for name in sorted(pair)))


def _select(lines: list[str], text: str, spec: str | None, pyobject: str | None,
            path: str = "PATH", blob: str = "", cache: Path | None = None) -> list[tuple[int, int]]:
    if pyobject:
        try:  # the ranges of a blob are parsed once and kept on disk (slimebook.rangecache)
            return [select_definition(blob_definitions(cache if blob else None, blob, text), pyobject)]
        except SymbolError as exc:
            hint = f" (`slimebook sources show {path} --symbols` lists them all)" if "no definition" in str(exc) else ""
            raise ExcerptError(f"{exc}{hint}", option=":pyobject:") from exc
    if spec:
        try:
            return parse_line_spec(spec, total=len(lines))
        except ExcerptError as exc:
            raise exc.located(option=":lines:") from exc
    if not lines:
        raise ExcerptError("the file is empty")
    return [(1, len(lines))]


def _emphasis(spec: str | None, runs: list[tuple[int, int]]) -> frozenset[int]:
    if not spec:
        return frozenset()
    try:
        wanted = {n for a, b in parse_line_spec(spec) for n in range(a, b + 1)}
    except ExcerptError as exc:
        raise exc.located(option=":emphasize-lines:") from exc
    outside = sorted(n for n in wanted if not any(a <= n <= b for a, b in runs))
    if outside:
        raise ExcerptError(f"lines {outside} fall outside the excerpt", option=":emphasize-lines:")
    return frozenset(wanted)


def read_excerpt(
    store: SourceStore,
    path: str,
    *,
    lines: str | None = None,
    pyobject: str | None = None,
    emphasize: str | None = None,
) -> Excerpt:
    """Resolve a citation against the pin.

    Lines are numbered by the book's one line model (:mod:`slimebook.lines`: ``\\r\\n``, lone ``\\r`` and ``\\n``
    end lines), the same numbering as the symbol ranges, the snapshot pages and the scanner; the returned texts
    have their tabs expanded to 8-column stops (:func:`slimebook.lines.expand_tabs`), as every rendering shows them.

    Args:
        store: the source store holding the pin.
        path: repo-relative path as written by the author.
        lines: a line spec (see :func:`parse_line_spec`), or None.
        pyobject: a qualified definition name (see :mod:`slimebook.pyranges`), or None; the file's definitions are
            read from the range cache under the store's ``root`` (:mod:`slimebook.rangecache`: parsed once per blob).
        emphasize: a line spec in *source* line numbers; every line must be inside the selection.
    Returns:
        The :class:`Excerpt`; the whole file when neither ``lines`` nor ``pyobject`` is given.
    Raises:
        ExcerptError: any store, range or symbol problem; ``path`` is always set, ``option`` names the option at
            fault (``:lines:``, ``:pyobject:``, ``:emphasize-lines:``) when the problem is in one.
    """
    try:
        _check_options({"lines": lines, "pyobject": pyobject})
        try:
            real = store.resolve(path)
            text = store.read_text(real)
            file_lines = store.read_lines(real)
            blob = store.blob_id(real)
        except SourceError as exc:
            raise ExcerptError(str(exc)) from exc
        runs = _select(file_lines, text, lines, pyobject, path, blob, getattr(store, "root", None))
        marked = _emphasis(emphasize, runs)
    except ExcerptError as exc:
        raise exc.located(path=path) from exc
    texts = [[expand_tabs(line) for line in file_lines[a - 1 : b]] for a, b in runs]
    return Excerpt(real, blob, runs, texts, marked, pyobject or None)
