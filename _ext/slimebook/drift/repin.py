"""Re-pin writing: moved citations rewritten in the book's files (chapters and candidate notes).

:func:`plan_edits` turns drifts into :class:`Edit` s, :func:`apply_edits` applies them (each checked against the
line it rewrites, files written atomically). The lock itself is moved by :func:`slimebook.lock.update_lock_file`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..atomicio import atomic_write
from ..excerpt import ExcerptError, parse_line_spec
from ..names import SourceNames
from .model import Drift, Status
from .notes import NOTE_LINE, NOTE_PLACE, line_token, place_token, unquoted

__all__ = ["Edit", "apply_edits", "plan_edits"]


# -- re-pin: edits of the book ------------------------------------------------------------------------
@dataclass(frozen=True)
class Edit:
    """One textual rewrite in a book file.

    Attributes:
        file: the book file.
        line: the 1-based line of the directive or role (:attr:`Cited.line`).
        option: ``"lines"`` or ``"emphasize-lines"`` (a directive option), ``"role"`` (the line
            numbers in a role's target), ``"note"`` (a candidate note's ``line = N``) or ``"place"`` (one
            ``"path:N"`` of a note's ``places``).
        index: for a role, its position among the roles on that line; for a place, among the strings on it.
        path: the cited path (checked against the line before rewriting).
        old: the spec as written; new: the spec to write.
    """

    file: Path
    line: int
    option: str
    index: int
    path: str
    old: str
    new: str

    def describe(self) -> str:
        """``file:line: :lines: 200-213 → 204-217`` (or ``role …``)."""
        what = {"role": "role lines", "note": "note line", "place": "note place"}.get(self.option,
                                                                                   f":{self.option}:")
        return f"{self.file}:{self.line}: {what} {self.old} → {self.new}"


#: the kinds of citation a re-pin rewrites → the :attr:`Edit.option` that rewrites their line numbers
_OPTIONS = {"directive": "lines", "role": "role", NOTE_LINE: "note", NOTE_PLACE: "place"}


def plan_edits(drifts: Iterable[Drift]) -> list[Edit]:
    """The rewrites that carry ``moved`` citations to their new lines.

    ``:lines:`` of directives, the line numbers of roles (``{slime}``) and the lines the candidate notes name
    (:mod:`.notes`) follow the text; ``:emphasize-lines:`` follow it for ``:lines:`` and ``:pyobject:``
    directives alike. Citations without a file (e.g. occurrence ids) are never edited.

    Returns:
        Edits sorted by file and line.
    """
    edits: list[Edit] = []
    for d in drifts:
        c = d.cited
        if d.status is not Status.MOVED or c.file is None or c.kind not in _OPTIONS:
            continue
        new_lines = d.new_lines
        if c.lines and new_lines and new_lines != c.lines:
            option = _OPTIONS[c.kind]
            edits.append(Edit(c.file, c.line, option, c.index, c.path, c.lines, new_lines))
        if c.kind == "directive" and c.emphasize and d.new_emphasize and d.new_emphasize != c.emphasize:
            edits.append(Edit(c.file, c.line, "emphasize-lines", 0, c.path, c.emphasize, d.new_emphasize))
    return sorted(edits, key=lambda e: (str(e.file), e.line, e.index, e.option))


_OPTION_LINE = re.compile(r"^(?P<head>\s*:(?P<key>[\w-]+):\s*)(?P<value>.*?)(?P<tail>\s*)$")
_ROLE_LINES = re.compile(r":(?P<lines>\d+(?:-\d+)?)(?P<tail>\s*>?\s*)$")


def _same_spec(a: str, b: str) -> bool:
    try:
        return parse_line_spec(a) == parse_line_spec(b)
    except ExcerptError:
        return a.strip() == b.strip()


def _role_pattern(names: SourceNames, rst: bool) -> re.Pattern[str]:
    """A citation role of ``names`` on a line: ``:slime:`text``` in rST, ``{slime}`text``` in Markdown."""
    opening = f":{names.role}:" if rst else f"{{{names.role}}}"
    return re.compile(re.escape(opening) + r"`(?P<text>[^`]+)`")


def _apply_one(lines: list[str], edit: Edit, names: SourceNames) -> str | None:
    """Apply ``edit`` to ``lines`` in place; return a problem sentence instead when it no longer fits."""
    if not 1 <= edit.line <= len(lines):
        return f"line {edit.line} is past the end of the file"
    head = lines[edit.line - 1]
    if edit.option in ("note", "place"):
        return _apply_to_note(lines, edit)
    if edit.option == "role":
        matches = list(_role_pattern(names, edit.file.suffix == ".rst").finditer(head))
        if edit.index >= len(matches):
            return "the role is no longer on that line"
        role = matches[edit.index]
        text = role.group("text")
        found = _ROLE_LINES.search(text)
        if edit.path not in text or not found or not _same_spec(found.group("lines"), edit.old):
            return f"the role now reads {text!r}, expected {edit.path}:{edit.old}"
        new_text = text[: found.start()] + f":{edit.new}" + found.group("tail")
        start, end = role.span("text")
        lines[edit.line - 1] = head[:start] + new_text + head[end:]
        return None
    if names.directive not in head or edit.path not in head:
        return f"line {edit.line} is no longer a {names.directive} directive for {edit.path}"
    for n in range(edit.line, len(lines)):
        match = _OPTION_LINE.match(lines[n].rstrip("\r"))
        if not match:
            break
        if match.group("key") != edit.option:
            continue
        if not _same_spec(match.group("value"), edit.old):
            return f":{edit.option}: now reads {match.group('value')!r}, expected {edit.old!r}"
        cr = "\r" if lines[n].endswith("\r") else ""
        lines[n] = match.group("head") + edit.new + match.group("tail") + cr
        return None
    return f"the directive has no :{edit.option}: option any more"


def _apply_to_note(lines: list[str], edit: Edit) -> str | None:
    """Rewrite a candidate note's ``line = N`` or the ``index``-th string of the line, a ``"path:N"`` (its quotes
    kept; :func:`.notes.line_token`, :func:`.notes.place_token`); a problem sentence when the line no longer reads
    as expected."""
    head = lines[edit.line - 1]
    if edit.option == "note":
        token = line_token(head)
        if token is None or token.text != edit.old:
            return f"line {edit.line} now reads {head.strip()!r}, expected 'line = {edit.old}'"
        lines[edit.line - 1] = head[:token.column] + edit.new + head[token.column + len(token.text):]
        return None
    token = place_token(head, edit.index)
    old = f"{edit.path}:{edit.old}"
    quote, written = unquoted(token) if token is not None else ("", None)
    if written != old:
        return f'line {edit.line} no longer holds "{old}"'
    lines[edit.line - 1] = (head[:token.column] + f"{quote}{edit.path}:{edit.new}{quote}"
                            + head[token.column + len(token.text):])
    return None


def apply_edits(edits: Iterable[Edit], names: SourceNames) -> list[tuple[Edit, str | None]]:
    """Rewrite the book files; each edit is checked against the current text first.

    ``names`` are the book's source names: an edit rewrites only its directive (``slime-source``) or role
    (``{slime}``).

    An edit whose directive, role or option value no longer reads as expected (the file changed
    since the report) is skipped with a reason. Files are rewritten atomically (temporary file and
    ``os.replace``), byte for byte except the edited specs; untouched files are not written.

    Returns:
        ``(edit, problem)`` pairs in input order; ``problem`` is None for an applied edit.
    Raises:
        OSError: a file cannot be read or written.
    """
    edits = list(edits)
    results: dict[int, str | None] = {}
    by_file: dict[Path, list[int]] = {}
    for k, e in enumerate(edits):
        by_file.setdefault(e.file, []).append(k)
    for file, indices in by_file.items():
        with open(file, encoding="utf-8", newline="") as fh:
            original = fh.read()
        lines = original.split("\n")
        for k in indices:
            results[k] = _apply_one(lines, edits[k], names)
        text = "\n".join(lines)
        if text != original:
            atomic_write(file, text)
    return [(e, results[k]) for k, e in enumerate(edits)]

