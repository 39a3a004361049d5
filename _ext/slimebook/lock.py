"""The source lock: ``sources/sources.toml`` names each upstream repository and its pinned commit.

The lock is the first stage of the pipeline (sources → scan → store → directives/pages); nothing here
knows about Sphinx. :func:`load_lock` reads it (``tomllib``); :func:`repin_lock_text` and
:func:`update_lock_file` move it to another commit with ``tomlkit``, which keeps every comment, blank line
and spacing of the file.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

import tomlkit
from tomlkit.container import Container
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import String, Table

from .atomicio import atomic_write
from .names import DEFAULT_SOURCE

__all__ = ["DEFAULT_LOCK", "LockError", "SourceLock", "TomlFileError", "load_lock", "repin_lock_text",
           "toml_error_line", "toml_problem", "update_lock_file"]

#: The lock of a book that does not set ``slimebook_lock``, relative to its configuration directory.
DEFAULT_LOCK = "sources/sources.toml"

_SHA_RE = re.compile(r"[0-9a-f]{40}")
_REQUIRED = ("url", "commit", "license", "blob_url")


class TomlFileError(ValueError):
    """A TOML file the book reads is not valid; ``line`` is the 1-based line of the problem when known (the base of
    the notes' and the waivers' errors, which their readers raise with the line :func:`toml_error_line` finds)."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


def toml_error_line(exc: tomllib.TOMLDecodeError, text: str | None = None) -> int | None:
    """The 1-based line a TOML error points at: ``exc.lineno`` (Python ≥ 3.14), else the ``(at line N, …)`` that
    Python 3.11–3.13 write into the message; for an error "at end of document" (an unterminated string or array),
    the last line of ``text`` that holds anything, when ``text`` is given. None when nothing says."""
    lineno = getattr(exc, "lineno", None)
    if isinstance(lineno, int):
        return lineno
    found = re.search(r"at line (\d+)", str(exc))
    if found:
        return int(found.group(1))
    if text is not None and "at end of document" in str(exc):
        return text.rstrip().count("\n") + 1
    return None


def toml_problem(exc: tomllib.TOMLDecodeError, text: str) -> str:
    """What is wrong with a TOML ``text`` that :func:`tomllib.loads` refused with ``exc``, as an error says it: ``not
    valid TOML: <the parser's sentence>``, or, for a text that starts with a byte-order mark (U+FEFF, which TOML does
    not allow and some editors write), that sentence instead of the parser's "Invalid statement"."""
    if text.startswith("\ufeff"):
        return "starts with a byte-order mark (U+FEFF), which TOML does not allow: save it as UTF-8 without one"
    return f"not valid TOML: {exc}"


class LockError(ValueError):
    """The lock file is missing, malformed, or lacks a field; the message names the file and entry."""


@dataclass(frozen=True)
class SourceLock:
    """One pinned upstream repository.

    Attributes:
        name: the table name in the lock (``"slime"``).
        url: the canonical git URL of the upstream repository.
        commit: the full 40-hex sha of the pin.
        license: SPDX identifier of the upstream license.
        blob_url: permalink template with ``{commit}``, ``{path}`` and ``{anchor}`` fields.
        previous_commit: the full 40-hex sha of the pin before the last re-pin
            (``slimebook sources repin --write`` records it), or None when the lock has no
            ``previous_commit`` field. The generated source-check page compares against it.
    """

    name: str
    url: str
    commit: str
    license: str
    blob_url: str
    previous_commit: str | None = None

    @property
    def short(self) -> str:
        """The 7-hex abbreviation of the pin used in captions."""
        return self.commit[:7]

    def permalink(self, path: str, start: int | None = None, end: int | None = None) -> str:
        """Upstream permalink to ``path`` at the pin.

        Args:
            path: repo-relative POSIX path.
            start, end: 1-based inclusive line range; ``end`` may be omitted or equal ``start``
                for a single line (GitHub's ``#L81`` / ``#L81-L104`` anchor rule).
        Returns:
            The URL string.
        """
        if start is None:
            anchor = ""
        elif end is None or end == start:
            anchor = f"#L{start}"
        else:
            anchor = f"#L{start}-L{end}"
        return self.blob_url.format(commit=self.commit, path=path, anchor=anchor)


def load_lock(path: str | Path, name: str = DEFAULT_SOURCE) -> SourceLock:
    """Read entry ``name`` (the book's source name, ``slimebook_source``) from the TOML lock at ``path``.

    The optional ``previous_commit`` field, when present, must be a full 40-hex sha too.

    Raises:
        LockError: the file is missing, unreadable or not TOML, the entry or a field is missing, or the commit
            (or ``previous_commit``) is not a full lowercase 40-hex sha.
    """
    path = Path(path)
    text = ""
    try:
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text)
    except FileNotFoundError as exc:
        raise LockError(f"{path}: source lock not found") from exc
    except OSError as exc:  # a directory (an empty slimebook_lock), no permission
        raise LockError(f"{path}: the source lock cannot be read ({exc.strerror or exc})") from exc
    except tomllib.TOMLDecodeError as exc:
        line = toml_error_line(exc, text)  # path:line:, as the categories, candidate-notes and waiver files say it
        raise LockError(f"{path}{'' if line is None else f':{line}'}: {toml_problem(exc, text)}") from exc
    except UnicodeDecodeError as exc:
        raise LockError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    entry = data.get(name)
    if not isinstance(entry, dict):
        raise LockError(f"{path}: no [{name}] table (the book's slimebook_source names the table it quotes)")
    missing = [key for key in _REQUIRED if not isinstance(entry.get(key), str) or not entry[key]]
    if missing:
        raise LockError(f"{path}: [{name}] lacks {', '.join(missing)}")
    if not _SHA_RE.fullmatch(entry["commit"]):
        raise LockError(f"{path}: [{name}] commit must be a full 40-hex sha, got {entry['commit']!r}")
    previous = entry.get("previous_commit")
    if previous is not None and not (isinstance(previous, str) and _SHA_RE.fullmatch(previous)):
        raise LockError(f"{path}: [{name}] previous_commit must be a full 40-hex sha, got {previous!r}")
    return SourceLock(name=name, **{key: entry[key] for key in _REQUIRED}, previous_commit=previous)


# -- re-pin: the lock moved to another commit ---------------------------------------------------------------
def repin_lock_text(text: str, name: str, commit: str, previous: str) -> str:
    """The lock text with ``[name]``'s ``commit`` set to ``commit`` and ``previous_commit`` to ``previous``.

    The text is edited through ``tomlkit``'s document model: every comment, blank line, indentation, key
    spacing and quote style of the file stays as it was; only the two values change. An existing
    ``previous_commit`` is rewritten in place; otherwise one is added on the line after ``commit``, with the
    ``commit`` line's indentation and line ending.

    Args:
        text: the lock file's text.
        name: the table (``"slime"``).
        commit, previous: full 40-hex shas.
    Returns:
        The new text.
    Raises:
        LockError: a sha is not 40 hex digits, the text is not TOML, or ``[name]`` is not a table with a
            string ``commit``.
    """
    for sha in (commit, previous):
        if not _SHA_RE.fullmatch(sha):
            raise LockError(f"not a full 40-hex sha: {sha!r}")
    try:
        doc = tomlkit.parse(text)
    except TOMLKitError as exc:
        raise LockError(f"the lock is not valid TOML: {exc}") from exc
    table = doc.get(name)
    if not isinstance(table, Table):
        raise LockError(f"the lock has no [{name}] table")
    if not isinstance(table.get("commit"), String):
        raise LockError(f'[{name}] has no commit = "..." line')
    if "previous_commit" not in table:
        table = _with_previous_after_commit(table)
        doc[name] = table
    _set_string(table, "previous_commit", previous)
    _set_string(table, "commit", commit)
    return doc.as_string()


def _with_previous_after_commit(table: Table) -> Table:
    """A copy of ``table`` (same header, items and layout) with an empty ``previous_commit`` right after
    ``commit``. ``tomlkit`` adds a new key after the table's last value; the lock reads better with the previous
    pin beside the pin, so the table's items are appended again in their order through ``raw_append``, which
    keeps each item's own indentation, comment and line ending (a container marked as parsed keeps blank lines
    where they were)."""
    pin = table["commit"]
    rebuilt = Table(Container(True), table.trivia, table.is_aot_element(), name=table.name,
                    display_name=table.display_name)
    for key, item in table.value.body:
        rebuilt.raw_append(key, item)
        if key is not None and key.key == "commit":
            new = tomlkit.string("", literal=pin.type.is_literal())
            new.trivia.indent = pin.trivia.indent
            new.trivia.trail = pin.trivia.trail
            rebuilt.raw_append("previous_commit", new)
    return rebuilt


def _set_string(table: Table, key: str, value: str) -> None:
    """Set ``table[key]`` to ``value`` in the quote style of the string there (its comment and spacing stay)."""
    old = table[key]
    literal = isinstance(old, String) and old.type.is_literal()
    table[key] = tomlkit.string(value, literal=literal)


def update_lock_file(path: str | Path, name: str, commit: str, previous: str) -> None:
    """Re-pin the lock file at ``path`` in place with :func:`repin_lock_text`.

    The new text is read back with :func:`load_lock` rules before it is written (atomically), so a failed edit
    leaves the file as it was.

    Raises:
        LockError: see :func:`repin_lock_text`, or the edited text would not read back as ``commit`` /
            ``previous_commit``.
        OSError: the file cannot be read or written.
    """
    path = Path(path)
    with open(path, encoding="utf-8", newline="") as fh:
        original = fh.read()
    text = repin_lock_text(original, name, commit, previous)
    try:
        entry = tomllib.loads(text).get(name, {})
    except tomllib.TOMLDecodeError as exc:
        raise LockError(f"{path}: the re-pinned lock would not be valid TOML: {exc}") from exc
    if entry.get("commit") != commit or entry.get("previous_commit") != previous:
        raise LockError(f"{path}: could not re-pin [{name}]; edit commit and previous_commit by hand")
    atomic_write(path, text)
