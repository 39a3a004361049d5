"""Relocation: where a cited block of lines is in the new file, and how its emphasized lines follow.

Pure functions over lists of lines and :mod:`difflib` opcodes (no store, no git): :func:`relocate` finds every
cited block verbatim, :func:`map_line` carries a line through the line diff when it is not found,
:func:`shift_emphasize` carries ``:emphasize-lines:`` along with the runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..excerpt import ExcerptError, parse_line_spec
from ..spans import span_label
from .model import Runs, compress_lines

__all__ = ["map_line", "map_range", "occurrences", "places", "relocate", "shift_emphasize"]

#: ``difflib.SequenceMatcher.get_opcodes()``: (tag, i1, i2, j1, j2), 0-based, half-open.
Opcodes = Sequence[tuple[str, int, int, int, int]]


def map_line(opcodes: Opcodes, line: int, edge: str) -> int:
    """Carry 1-based old ``line`` into the new file through the line diff.

    A line inside an equal block maps to its twin; a replaced or deleted line maps to the first
    line of its replacement (``edge="start"``) or the last one (``edge="end"``; one before the gap
    for a deletion).
    """
    i = line - 1
    for tag, i1, i2, j1, j2 in opcodes:
        if i1 <= i < i2:
            if tag == "equal":
                return j1 + (i - i1) + 1
            return j1 + 1 if edge == "start" else j2
    return opcodes[-1][4] + 1 if opcodes else line


def map_range(opcodes: Opcodes, a: int, b: int) -> tuple[int, int]:
    """The old lines ``a``–``b`` carried through the line diff (:func:`map_line` of each end)."""
    return map_line(opcodes, a, "start"), map_line(opcodes, b, "end")


def occurrences(new_lines: Sequence[str], block: Sequence[str]) -> list[int]:
    """1-based start lines where ``block`` occurs verbatim in ``new_lines``."""
    n = len(block)
    if n == 0:
        return []
    first = block[0]
    return [
        i + 1 for i in range(len(new_lines) - n + 1)
        if new_lines[i] == first and list(new_lines[i : i + n]) == list(block)
    ]


def relocate(
    old_lines: Sequence[str], new_lines: Sequence[str], runs: Runs,
    opcodes: Opcodes,
) -> tuple[Runs | None, str]:
    """Find every cited block verbatim in the new file.

    Preference: one shift for all runs (the selection moved as a whole); otherwise each run on its
    own, as long as the runs stay ascending and disjoint. A block still at its old lines stays there;
    otherwise, among several places the nearest to the old position wins — the old first line
    carried through the line diff (:func:`map_line`), ties going to the nearest old line number,
    then the earliest.

    Returns:
        ``(runs, note)``: the new runs or None when some block is not found (or the runs would
        overlap), and a note naming the alternatives when the choice was ambiguous.
    """
    found = [occurrences(new_lines, old_lines[a - 1 : b]) for a, b in runs]
    if any(not f for f in found):
        return None, ""
    anchors = [map_line(opcodes, a, "start") for a, _ in runs]
    shifts = set.intersection(*({s - a for s in f} for f, (a, _) in zip(found, runs, strict=True)))
    if shifts:
        return _moved_together(runs, shifts, anchors[0])
    return _moved_apart(runs, found, anchors)


def _rank(start: int, old_start: int, anchor: int) -> tuple[int, int, int]:
    """The order of preference among places: nearest the line diff's ``anchor``, then the old line, then first."""
    return abs(start - anchor), abs(start - old_start), start


def _moved_together(runs: Runs, shifts: set[int], anchor: int) -> tuple[Runs, str]:
    """Every run shifted by one of ``shifts`` (those that find all blocks): none if possible, else the best
    ranked for the first run, whose old first line the line diff carries to ``anchor``."""
    a0 = runs[0][0]
    best = min(shifts, key=lambda s: _rank(a0 + s, a0, anchor))
    shift = 0 if 0 in shifts else best  # still in place: the citation holds as written
    new_runs = tuple((a + shift, b + shift) for a, b in runs)
    if len(shifts) == 1:
        return new_runs, ""
    note = f"the cited text occurs {len(shifts)} times ({places(a0 + s for s in sorted(shifts))}); "
    if shift == 0:
        note += f"kept in place, although the line diff carries L{a0} to L{anchor}"
    else:
        note += f"chose L{a0 + shift}, nearest to the old position (L{a0} → L{anchor} by line diff)"
    return new_runs, note


def _moved_apart(runs: Runs, found: list[list[int]], anchors: list[int]) -> tuple[Runs | None, str]:
    """Each run at its own best place among ``found`` (its block's starts in the new file); None when the
    chosen runs are not ascending and disjoint."""
    chosen: list[tuple[int, int]] = []
    notes: list[str] = []
    for f, (a, b), anchor in zip(found, runs, anchors, strict=True):
        start = a if a in f else min(f, key=lambda s, a=a, anchor=anchor: _rank(s, a, anchor))
        chosen.append((start, start + (b - a)))
        if len(f) > 1:
            notes.append(f"{span_label(a, b)} occurs {len(f)} times ({places(f)}); chose L{start}, "
                         f"nearest to the old position")
    if any(chosen[k][0] <= chosen[k - 1][1] for k in range(1, len(chosen))):
        return None, ""
    return tuple(chosen), "; ".join(["runs moved separately", *notes])


def places(starts: Iterable[int], limit: int = 6) -> str:
    """``L1, L7`` — at most ``limit`` places, then ``…``."""
    starts = list(starts)
    shown = ", ".join(f"L{s}" for s in starts[:limit])
    return shown + (", …" if len(starts) > limit else "")


def shift_emphasize(spec: str | None, old_runs: Runs, new_runs: Runs) -> str | None:
    """Carry ``:emphasize-lines:`` from old to new runs (each line shifts with its run).

    The writer's spelling is kept (``138,139`` stays two items); only a range whose ends fall in
    runs that moved by different amounts is respelled. None when ``spec`` is empty or malformed,
    or names a line outside the old runs (the build rejects that already; it is left alone).
    """
    if not spec:
        return None
    try:
        parse_line_spec(spec)
    except ExcerptError:
        return None

    def shift(n: int) -> int | None:
        for (a, b), (c, _d) in zip(old_runs, new_runs, strict=True):
            if a <= n <= b:
                return c - a
        return None

    parts: list[str] = []
    for part in spec.split(","):
        ends = [int(x) for x in part.split("-")]
        deltas = [shift(n) for n in ends]
        if any(d is None for d in deltas):
            return None
        if len(set(deltas)) > 1:  # a range across runs that moved apart: respell the lines
            moved = [n + shift(n) for n in range(ends[0], ends[-1] + 1) if shift(n) is not None]
            parts.append(compress_lines(moved))
        else:
            parts.append("-".join(str(n + deltas[0]) for n in ends))
    return ",".join(parts)
