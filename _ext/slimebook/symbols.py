"""Names defined at the pin, for the house-rules lint: which backticked names in prose are Slime symbols.

A cheap, line-based index (no parse: the lint asks about every inline code span of the book, and a libcst parse of
every file at the pin costs seconds): each ``def``/``async def``/``class`` line of every ``.py`` file, nested by
indentation into qualified names (``E2BSandbox.__aexit__``). For exact ranges use :mod:`slimebook.pyranges`.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from .store import SourceStore

__all__ = ["PinSymbols", "pin_symbols", "scan_definitions"]

_DEF = re.compile(r"^(?P<indent>[ \t]*)(?:async[ \t]+)?(?P<kind>def|class)[ \t]+(?P<name>[A-Za-z_]\w*)")


def scan_definitions(text: str) -> list[str]:
    """Qualified names of the ``def``/``class`` lines of ``text``, nested by indentation, in source order.

    A line-based approximation: a ``def`` inside a multi-line string counts too. Returns e.g.
    ``["Box", "Box.__aexit__", "helper"]``.
    """
    stack: list[tuple[int, str]] = []  # (indent width, name)
    found: list[str] = []
    for line in text.splitlines():
        match = _DEF.match(line)
        if not match:
            continue
        width = len(match.group("indent").expandtabs(8))
        while stack and stack[-1][0] >= width:
            stack.pop()
        qualname = ".".join([*(name for _, name in stack), match.group("name")])
        found.append(qualname)
        stack.append((width, match.group("name")))
    return found


@dataclass(frozen=True)
class PinSymbols:
    """Every definition at the pin: ``qualified`` maps a qualified name to the paths defining it; ``last`` maps the
    last part of a name (``run`` for ``BaseHarness.run``) to its qualified names."""

    qualified: dict[str, tuple[str, ...]]
    last: dict[str, tuple[str, ...]]

    def lookup(self, name: str) -> list[str]:
        """Qualified names ``name`` may mean: itself when defined, then every definition whose last part it is
        (``read_file`` → ``read_file``, ``Sandbox.read_file``, …)."""
        found = [name] if name in self.qualified else []
        if "." not in name:
            found += [q for q in self.last.get(name, ()) if q != name]
        return found


@functools.lru_cache(maxsize=4)
def _index(store: SourceStore, commit: str) -> PinSymbols:
    qualified: dict[str, list[str]] = {}
    for path in store.files(".py"):
        try:
            text = store.read_text(path)
        except Exception:  # noqa: BLE001 - a binary or undecodable file defines nothing we can cite
            continue
        for name in scan_definitions(text):
            qualified.setdefault(name, []).append(path)
    last: dict[str, list[str]] = {}
    for name in qualified:
        last.setdefault(name.rsplit(".", 1)[-1], []).append(name)
    return PinSymbols({k: tuple(v) for k, v in qualified.items()}, {k: tuple(v) for k, v in last.items()})


def pin_symbols(store: SourceStore) -> PinSymbols:
    """The definitions of every Python file at the store's pin (memoised per store and commit).

    Raises:
        SourceError: the pin is not in the cache.
    """
    return _index(store, store.lock.commit)
