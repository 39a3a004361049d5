"""Names defined at the pin, for the house-rules lint: which backticked names in prose are Slime symbols.

A cheap, line-based index (no parse: the lint asks about every inline code span of the book, and a libcst parse of
every file at the pin costs seconds): each ``def``/``async def``/``class`` line of every ``.py`` file, nested by
indentation into qualified names (``E2BSandbox.__aexit__``). For exact ranges use :mod:`slimebook.pyranges`.

The index of a commit is kept under the store's cache root, ``symbols/<version>/<commit>.json`` (the version is a
digest of this module and of the store, so an edit of the rule renews it; written atomically): an incremental build
that lints one chapter reads one file instead of every ``.py`` file at the pin.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from .atomicio import atomic_write
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


@functools.lru_cache(maxsize=1)
def _version() -> str:
    """A digest of this module and of the store package's modules (the store decodes the files): an edit of any
    renews the cache."""
    digest = hashlib.sha1()
    for source in (Path(__file__), *sorted(Path(__file__).with_name("store").glob("*.py"))):
        digest.update(source.read_bytes())
    return digest.hexdigest()[:12]


def _cached(path: Path) -> dict[str, list[str]] | None:
    try:
        data = json.loads(path.read_bytes())
        qualified = data["qualified"]
    except (OSError, ValueError, TypeError, KeyError):
        return None
    ok = isinstance(qualified, dict) and all(isinstance(v, list) for v in qualified.values())
    return qualified if ok else None


@functools.lru_cache(maxsize=4)
def _index(store: SourceStore, commit: str) -> PinSymbols:
    root = getattr(store, "root", None)
    entry = Path(root) / "symbols" / _version() / f"{commit}.json" if root is not None else None
    qualified = _cached(entry) if entry is not None else None
    if qualified is None:
        qualified = _scan_pin(store)
        if entry is not None:
            try:
                atomic_write(entry, json.dumps({"qualified": qualified}, ensure_ascii=False, separators=(",", ":")))
            except OSError:  # an unwritable cache costs speed, not results
                pass
    last: dict[str, list[str]] = {}
    for name in qualified:
        last.setdefault(name.rsplit(".", 1)[-1], []).append(name)
    return PinSymbols({k: tuple(v) for k, v in qualified.items()}, {k: tuple(v) for k, v in last.items()})


def _scan_pin(store: SourceStore) -> dict[str, list[str]]:
    qualified: dict[str, list[str]] = {}
    for path in store.files(".py"):
        try:
            text = store.read_text(path)
        except Exception:  # noqa: BLE001 - a binary or undecodable file defines nothing we can cite
            continue
        for name in scan_definitions(text):
            qualified.setdefault(name, []).append(path)
    return qualified


def pin_symbols(store: SourceStore) -> PinSymbols:
    """The definitions of every Python file at the store's pin (memoised per store and commit, and on disk under
    the store's cache root per commit and version of this module).

    Raises:
        SourceError: the pin is not in the cache.
    """
    return _index(store, store.lock.commit)
