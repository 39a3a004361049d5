"""How a line range is written for a reader: ``L81``, ``L81–L104``, ``L81–L90, L95`` (en dash, 1-based lines)."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["runs_label", "span_label"]


def span_label(a: int, b: int) -> str:
    """``L81`` when ``a == b``, else ``L81–L104``."""
    return f"L{a}" if a == b else f"L{a}–L{b}"


def runs_label(runs: Iterable[tuple[int, int]]) -> str:
    """Runs joined by ``", "``: ``[(81, 90), (95, 95)]`` → ``L81–L90, L95``; ``""`` for no runs."""
    return ", ".join(span_label(a, b) for a, b in runs)
