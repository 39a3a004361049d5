"""Symbol definitions parsed once per blob: an on-disk cache of :func:`slimebook.pyranges.definitions`.

``:pyobject:`` and ``{slime}`Name <path>``` need the line ranges of a file's definitions, and computing them is a
libcst parse plus its position metadata (a few hundred milliseconds for a large file). A git blob's text never
changes, so the ranges are computed once per (blob id, :func:`ranges_version`) and kept beside the scan cache:

    ``<root>/ranges/<ranges version>/<blob[:2]>/<blob[2:]>.json``

where ``<root>`` is the source store's cache root (:func:`slimebook.store.cache_root` unless the store was given
another). An entry holds ``{"definitions": [[qualname, kind, start, end], …]}``, or ``{"error": message}`` for a
text that does not parse (as deterministic as the ranges). Entries are written with
:func:`slimebook.atomicio.atomic_write`, so a reader never sees half of one and concurrent builds (``-j N``
readers, two worktrees) race harmlessly. Within a process, entries read are also kept in memory, so a chapter citing
ten symbols of one file reads its entry once.

Why not in the usage scanner's pass, which parses every file at the pin anyway: the scanner positions only the
nodes it records (:mod:`slimebook.scan.positions`, to avoid libcst's ``PositionProvider`` on 400-odd files), while
the range rule is :mod:`slimebook.pyranges` over ``PositionProvider`` and Python's tokenizer; doing it in the scan
would pay that for every file although the book cites a few dozen, and tie the two caches' versions together (a
change of the range rule would rescan the pin, a change of the scanner would recompute the ranges). Kept apart,
each cache is renewed only by changes to its own code.
"""

from __future__ import annotations

import hashlib
import json
import sys
from functools import lru_cache
from importlib import metadata
from pathlib import Path

from .atomicio import atomic_write
from .pyranges import Definition, SymbolError, definitions

__all__ = ["RANGES_VERSION", "blob_definitions", "ranges_version"]

#: Bump when the meaning of an entry changes without a change to the digested sources (see :func:`ranges_version`).
RANGES_VERSION = "1"

#: entries read in this process: (entry file) → definitions, or the message of a text that does not parse
_MEMO: dict[Path, tuple[Definition, ...] | str] = {}
_MEMO_LIMIT = 4096


@lru_cache(maxsize=1)
def ranges_version() -> str:
    """The cache key's version: :data:`RANGES_VERSION`, a digest of the rule's sources (``pyranges.py``, the line
    model ``lines.py`` and this module, which writes the entries), the Python minor version (the rule classifies
    lines with Python's tokenizer) and the libcst version, e.g. ``1.3f2a9c01.py3.11.libcst1.9.0``.

    Any edit of the rule's code changes it by itself, so a stale entry is never read.
    """
    try:
        libcst_version = metadata.version("libcst")
    except metadata.PackageNotFoundError:  # pragma: no cover
        libcst_version = "unknown"
    here = Path(__file__).parent
    digest = hashlib.sha1()
    for source in (here / "pyranges.py", here / "lines.py", here / "rangecache.py"):
        try:
            digest.update(source.name.encode() + b"\0" + source.read_bytes())
        except OSError:  # pragma: no cover - an installation without sources
            pass
    python = f"py{sys.version_info.major}.{sys.version_info.minor}"
    return f"{RANGES_VERSION}.{digest.hexdigest()[:8]}.{python}.libcst{libcst_version}"


def _entry_path(root: Path, blob: str) -> Path:
    return root / "ranges" / ranges_version() / blob[:2] / f"{blob[2:]}.json"


def _read(path: Path) -> tuple[Definition, ...] | str | None:
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    try:
        if isinstance(data.get("error"), str):
            return data["error"]
        return tuple(Definition(str(q), str(k), int(a), int(b)) for q, k, a, b in data["definitions"])
    except (AttributeError, KeyError, TypeError, ValueError):  # not an entry this code wrote: compute it again
        return None


def _write(path: Path, found: tuple[Definition, ...] | str) -> None:
    entry = {"error": found} if isinstance(found, str) else {
        "definitions": [[d.qualname, d.kind, d.start, d.end] for d in found]}
    try:
        atomic_write(path, json.dumps(entry, ensure_ascii=False, separators=(",", ":")))
    except OSError:  # an unwritable cache costs speed, not results
        pass


def blob_definitions(root: Path | None, blob: str, text: str) -> list[Definition]:
    """:func:`slimebook.pyranges.definitions` of ``text``, the text of git blob ``blob``, parsed once per blob.

    Args:
        root: the cache root (the store's ``root``); None keeps no disk cache (the result is still computed by
            :func:`~slimebook.pyranges.definitions`, memoised per text).
        blob: the blob id of ``text`` (40 hex digits); the cache trusts it to name exactly this text.
        text: the file's text, as :meth:`slimebook.store.SourceStore.read_text` returns it.
    Returns:
        Every class and function definition, in source order (a new list each call).
    Raises:
        SymbolError: the text does not parse (the same message as :func:`~slimebook.pyranges.definitions`, from the
            cache as well).
    """
    if root is None:
        return definitions(text)
    path = _entry_path(Path(root), blob)
    found = _MEMO.get(path)
    if found is None:
        found = _read(path)
        if found is None:
            try:
                found = tuple(definitions(text))
            except SymbolError as exc:
                found = str(exc)
            _write(path, found)
        if len(_MEMO) >= _MEMO_LIMIT:
            _MEMO.clear()
        _MEMO[path] = found
    if isinstance(found, str):
        raise SymbolError(found)
    return list(found)
