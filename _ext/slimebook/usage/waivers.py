"""The waiver file (``sources/coverage-waivers.toml``): names the scan finds that no lesson needs to teach, each
pattern with its reason and its line in the file.

Pipeline position: in :mod:`slimebook.usage`, beside :mod:`.query`; :func:`.coverage.coverage` applies the
waivers, and the Sphinx layer's coverage gate reads the file and places its warnings at a waiver's line.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from fnmatch import fnmatchcase

from ..lock import TomlFileError, toml_error_line, toml_problem

__all__ = ["Waiver", "WaiverError", "parse_waivers"]


class WaiverError(TomlFileError):
    """The waiver file is not valid; ``line`` is the 1-based line of the problem when known."""


@dataclass(frozen=True)
class Waiver:
    """One waived name pattern: ``pattern`` (a name, ``syntax:…`` or a glob), ``reason``, its ``line``."""

    pattern: str
    reason: str
    line: int

    def matches(self, key: str) -> bool:
        return fnmatchcase(key, self.pattern)


_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"|\'([^\']*)\'')


def _pattern_lines(text: str) -> list[dict[str, int]]:
    """Per ``[[waiver]]`` table, in order: each quoted string in it → its first line."""
    tables: list[dict[str, int]] = []
    for n, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("[[") and stripped.replace(" ", "").startswith("[[waiver]]"):
            tables.append({})
            continue
        if not tables or stripped.startswith("#"):
            continue
        for match in _STRING.finditer(line):
            value = match.group(1) if match.group(1) is not None else match.group(2)
            tables[-1].setdefault(value.replace('\\"', '"'), n)
    return tables


def parse_waivers(text: str) -> list[Waiver]:
    """The waivers of a waiver file's text.

    Format (TOML)::

        [[waiver]]
        reason = "第 11 课（未写）：线程"
        names = ["threading.*", "queue.Queue.*"]   # or: name = "threading.Thread"

    Every table needs a non-empty ``reason`` and at least one name; no other keys. Patterns are globs
    (:func:`fnmatch.fnmatchcase`) over names as lessons declare them (``syntax:async_for``).

    Raises:
        WaiverError: not TOML, or a table is malformed (the message says which, with its line).
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise WaiverError(toml_problem(exc, text), toml_error_line(exc, text)) from exc
    unknown = sorted(set(data) - {"waiver"})
    if unknown:
        raise WaiverError(f"unknown top-level key(s) {', '.join(unknown)}; use [[waiver]] tables")
    tables = data.get("waiver", [])
    if not isinstance(tables, list):
        raise WaiverError("'waiver' must be an array of tables ([[waiver]])")
    lines = _pattern_lines(text)
    waivers: list[Waiver] = []
    for index, table in enumerate(tables):
        where = lines[index] if index < len(lines) else {}
        first = min(where.values(), default=None)
        extra = sorted(set(table) - {"name", "names", "reason"})
        if extra:
            raise WaiverError(f"waiver #{index + 1}: unknown key(s) {', '.join(extra)}", first)
        reason = table.get("reason")
        if not isinstance(reason, str) or not reason.strip():
            raise WaiverError(f"waiver #{index + 1}: a non-empty 'reason' is required", first)
        names = table.get("names", [])
        if "name" in table:
            names = [table["name"], *names]
        if not isinstance(names, list) or not names or not all(isinstance(n, str) and n.strip() for n in names):
            raise WaiverError(f"waiver #{index + 1}: give 'name' or a non-empty list 'names' of strings", first)
        for name in names:
            waivers.append(Waiver(name.strip(), reason.strip(), where.get(name, first or 1)))
    return waivers
