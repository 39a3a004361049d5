"""Instance candidates, settled: each is confirmed by a lesson that reads it, or left listed with a reason.

Pipeline position: ``scan`` → **candidates** → Sphinx layer (:mod:`slimebook.sphinxext.gates.candidates` for the
gate, :mod:`slimebook.sphinxext.pages.usagepages` for the counts on the candidates page). Nothing here knows about
Sphinx: :func:`parse_notes` reads the notes file (``sources/candidate-notes.toml``), :func:`settle` matches
it against the scan's ``instance_candidate`` records and the lessons' citations, and returns plain data.

The scanner lists ``receiver.method(...)`` as a candidate when ``method`` is a concurrency method name
(the category table's ``[candidates] methods``) and the receiver's type is unknown to it. A person
who has read the code settles each one:

* ``[[confirmed]]``: one occurrence (``path`` and ``line``), the API it really is (``api``, a name the
  scanner's category table knows, ending in the candidate's method name), the lesson that reads that line
  (``lesson``, a docname whose ``slime-source`` or ``{slime}`` citations cover the line) and the
  ``evidence`` (where the receiver's type comes from);
* ``[[left]]``: candidates that stay candidates, selected by method-name globs (``names``) and/or path
  prefixes (``paths``), with the ``reason``.

A confirmation wins over a left rule; among left rules the first that matches gives the reason.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

from .lock import TomlFileError, toml_error_line, toml_problem
from .scan.categories import CategoryTable, default_table
from .scan.records import Occurrence
from .tomltext import tables

__all__ = [
    "Confirmation",
    "LeftRule",
    "Notes",
    "NotesError",
    "Problem",
    "Settled",
    "parse_notes",
    "settle",
]


class NotesError(TomlFileError):
    """The notes file is not valid; ``line`` is the 1-based line of the problem when known."""


@dataclass(frozen=True)
class Confirmation:
    """One ``[[confirmed]]`` entry: ``path``, ``line``, ``api``, ``lesson`` (docname), ``evidence`` and
    ``at`` (the entry's line in the notes file)."""

    path: str
    line: int
    api: str
    lesson: str
    evidence: str
    at: int

    @property
    def method(self) -> str:
        """The last component of ``api``: the method name the candidate must carry."""
        return self.api.rpartition(".")[2]


@dataclass(frozen=True)
class LeftRule:
    """One ``[[left]]`` entry: method-name globs ``names``, path prefixes ``paths`` and occurrences ``places``
    (``"path:line"``; an empty tuple matches everything; at least one of the three is given), the ``reason``,
    and ``at`` (its line)."""

    names: tuple[str, ...]
    paths: tuple[str, ...]
    reason: str
    at: int
    places: tuple[str, ...] = ()

    def matches(self, record: Occurrence) -> bool:
        return ((not self.names or any(fnmatchcase(record.name, n) for n in self.names))
                and (not self.paths or any(record.path.startswith(p) for p in self.paths))
                and (not self.places or f"{record.path}:{record.line}" in self.places))

    def names_place(self, record: Occurrence) -> bool:
        """True when this rule lists ``record``'s occurrence itself in ``places`` (not only a pattern)."""
        return f"{record.path}:{record.line}" in self.places


@dataclass(frozen=True)
class Notes:
    """The parsed notes file."""

    confirmed: tuple[Confirmation, ...] = ()
    left: tuple[LeftRule, ...] = ()


_CONFIRMED_KEYS = {"path", "line", "api", "lesson", "evidence"}
_LEFT_KEYS = {"names", "paths", "places", "reason"}


def _table_lines(text: str) -> dict[str, list[int]]:
    """Per array-of-tables name, the line of each ``[[name]]`` header, in order (:func:`slimebook.tomltext.tables`:
    not a header written in a string, lines ending at ``"\\n"`` only)."""
    lines: dict[str, list[int]] = {}
    for table in tables(text):
        if table.array:
            lines.setdefault(table.name, []).append(table.line)
    return lines


def _text(table: dict, key: str, what: str, at: int) -> str:
    value = table.get(key)
    if not isinstance(value, str) or not value.strip():
        raise NotesError(f"{what}: a non-empty string {key!r} is required", at)
    return value.strip()


def _strings(table: dict, key: str, what: str, at: int) -> tuple[str, ...]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise NotesError(f"{what}: {key!r} must be a list of non-empty strings", at)
    return tuple(v.strip() for v in value)


def parse_notes(text: str) -> Notes:
    """The entries of a notes file's text.

    Format (TOML)::

        [[confirmed]]
        path = "slime_plugins/rollout_buffer/generator/base_generator.py"
        line = 138
        api = "multiprocessing.Queue.put"
        lesson = "chapters/async/18-process-lifecycle"
        evidence = "done_queue is the multiprocessing Queue made at line 193"

        [[left]]
        names = ["get"]                  # method-name globs; optional
        paths = ["tools/"]               # path prefixes; optional
        places = ["tools/a.py:12"]       # occurrences; optional (one of the three is required)
        reason = "mapping lookups: the receivers are dicts"

    A candidate on a line a lesson cites, for a method that lesson teaches, is left only by a rule that lists
    it in ``places`` (see :func:`settle`).

    Raises:
        NotesError: not TOML, an unknown top-level key, or a malformed entry (with the entry's line).
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise NotesError(toml_problem(exc, text), toml_error_line(exc, text)) from exc
    unknown = sorted(set(data) - {"confirmed", "left"})
    if unknown:
        raise NotesError(f"unknown top-level key(s) {', '.join(unknown)}; use [[confirmed]] and [[left]] tables")
    lines = _table_lines(text)
    entries: dict[str, list] = {"confirmed": [], "left": []}
    for kind, keys, read in (("confirmed", _CONFIRMED_KEYS, _confirmation), ("left", _LEFT_KEYS, _left_rule)):
        tables = data.get(kind, [])
        if not isinstance(tables, list):
            raise NotesError(f"{kind!r} must be an array of tables ([[{kind}]])")
        for index, table in enumerate(tables):
            at = lines.get(kind, [])[index] if index < len(lines.get(kind, [])) else 1
            what = f"[[{kind}]] #{index + 1}"
            extra = sorted(set(table) - keys)
            if extra:
                raise NotesError(f"{what}: unknown key(s) {', '.join(extra)}; allowed: {', '.join(sorted(keys))}", at)
            entries[kind].append(read(table, what, at))
    return Notes(tuple(entries["confirmed"]), tuple(entries["left"]))


def _confirmation(table: dict, what: str, at: int) -> Confirmation:
    """A ``[[confirmed]]`` table (``what`` names it in errors, ``at`` is its line)."""
    line = table.get("line")
    if not isinstance(line, int) or isinstance(line, bool) or line < 1:
        raise NotesError(f"{what}: 'line' must be a positive integer", at)
    return Confirmation(_text(table, "path", what, at), line, _text(table, "api", what, at),
                        _text(table, "lesson", what, at).strip("/"), _text(table, "evidence", what, at), at)


def _left_rule(table: dict, what: str, at: int) -> LeftRule:
    """A ``[[left]]`` table (``what`` names it in errors, ``at`` is its line)."""
    names, paths = _strings(table, "names", what, at), _strings(table, "paths", what, at)
    places = _strings(table, "places", what, at)
    if not names and not paths and not places:
        raise NotesError(f"{what}: give 'names', 'paths' or 'places'", at)
    bad = [p for p in places if not re.fullmatch(r"[^:]+:[1-9]\d*", p)]
    if bad:
        raise NotesError(f"{what}: 'places' entries are \"path:line\", got {', '.join(map(repr, bad))}", at)
    return LeftRule(names, paths, _text(table, "reason", what, at), at, places)


@dataclass(frozen=True)
class Problem:
    """A notes entry that does not hold: ``at`` (its line in the notes file) and the ``message``."""

    at: int
    message: str


@dataclass
class Settled:
    """What :func:`settle` returns.

    Attributes:
        confirmed: ``(record, confirmation)`` for each candidate a valid confirmation settles, in scan order.
        left: ``(record, rule)`` for each other candidate a left rule covers, in scan order.
        open: candidates neither confirmed nor covered by a left rule.
        read: ``(record, lessons)`` for each candidate that a lesson's citation covers and whose method that
            lesson teaches (``lessons``: those docnames), when it is neither confirmed nor left by a rule that
            names its occurrence in ``places``: a pattern is not enough for a line the book reads.
        problems: invalid confirmations and rules that settle nothing, by line in the notes file.
    """

    confirmed: list[tuple[Occurrence, Confirmation]] = field(default_factory=list)
    left: list[tuple[Occurrence, LeftRule]] = field(default_factory=list)
    open: list[Occurrence] = field(default_factory=list)
    read: list[tuple[Occurrence, tuple[str, ...]]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    def by_reason(self) -> list[tuple[LeftRule, list[Occurrence]]]:
        """The left candidates grouped by rule, in the rules' order."""
        groups: dict[int, tuple[LeftRule, list[Occurrence]]] = {}
        for record, rule in self.left:
            groups.setdefault(rule.at, (rule, []))[1].append(record)
        return [groups[at] for at in sorted(groups)]


def _covers(runs: Iterable[Sequence[int]], line: int) -> bool:
    return any(start <= line <= end for start, end in runs)


def settle(records: Iterable[Occurrence], notes: Notes,
           citations: Mapping[str, Iterable[tuple[str, Sequence[Sequence[int]]]]],
           docs: Iterable[str], teaches: Mapping[str, Sequence[str]] | None = None,
           table: CategoryTable | None = None) -> Settled:
    """Match the notes against the candidates of a scan.

    Args:
        records: scan records; only ``instance_candidate`` ones are settled.
        notes: from :func:`parse_notes`.
        citations: docname → ``(path, runs)`` per citation in it, ``runs`` being inclusive line ranges
            (what ``slime-source`` and ``{slime}`` record on the environment).
        docs: every docname of the book.
        teaches: docname → the names its ``lesson-teaches`` declares; a candidate on a line a lesson cites,
            whose method is the last component of a name that lesson declares (``asyncio.Queue.put`` → ``put``),
            must be confirmed or left by a rule naming its place (else it is in ``read``).
        table: the category table of the scan, which a confirmation's ``api`` must belong to (None: the default).
    Returns:
        A :class:`Settled`. A confirmation is a problem (and settles nothing) when no candidate is at its
        path and line with its method name, when its ``api`` is not in the category table, when its lesson
        is not a document, or when that lesson cites no range containing the line. Two confirmations of
        one occurrence: the second is a problem. A left rule that covers no open candidate is a problem.
    """
    candidates = [r for r in records if r.kind == "instance_candidate"]
    docs = set(docs)
    by_place: dict[tuple[str, int], list[Occurrence]] = {}
    for record in candidates:
        by_place.setdefault((record.path, record.line), []).append(record)
    result = Settled()
    taken: dict[str, Confirmation] = {}
    for conf in notes.confirmed:
        found = _confirm(conf, by_place.get((conf.path, conf.line), []), taken, docs, citations,
                         table or default_table())
        if isinstance(found, str):
            result.problems.append(Problem(conf.at, found))
        else:
            taken[found.id] = conf
    _sort_out(candidates, taken, notes.left, result)
    _read_by_lessons(result, citations, teaches or {})
    result.problems.sort(key=lambda p: p.at)
    return result


def _read_by_lessons(result: Settled, citations: Mapping[str, Iterable[tuple[str, Sequence[Sequence[int]]]]],
                     teaches: Mapping[str, Sequence[str]]) -> None:
    """Move the left candidates that a teaching lesson reads, and whose rule does not name them, into ``read``."""
    methods = {doc: {name.rpartition(".")[2] for name in names if "." in name} for doc, names in teaches.items()}
    cited = {doc: list(items) for doc, items in citations.items() if doc in methods}
    kept = []
    for record, rule in result.left:
        lessons = tuple(sorted(doc for doc, items in cited.items() if record.name in methods[doc]
                               and any(p == record.path and _covers(runs, record.line) for p, runs in items)))
        if lessons and not rule.names_place(record):
            result.read.append((record, lessons))
        else:
            kept.append((record, rule))
    result.left = kept


def _confirm(conf: Confirmation, here: list[Occurrence], taken: Mapping[str, Confirmation], docs: set[str],
             citations: Mapping[str, Iterable[tuple[str, Sequence[Sequence[int]]]]],
             table: CategoryTable) -> Occurrence | str:
    """The candidate among ``here`` (those at the confirmation's path and line) that ``conf`` settles, or the
    sentence saying why it settles none; ``taken`` maps the ids already confirmed to their confirmation."""
    where = f"{conf.path}:{conf.line}"
    record = next((r for r in here if r.name == conf.method and r.id not in taken), None)
    if record is None:
        if any(r.name == conf.method for r in here):
            first = taken[next(r.id for r in here if r.name == conf.method)]
            return f"{where}: the candidate '{conf.method}' is already confirmed at line {first.at}"
        found = ", ".join(sorted({r.name for r in here})) or "none"
        return f"{where}: no instance candidate '{conf.method}' there at the pin (candidates there: {found})"
    if table.category_of(conf.api) is None:
        return f"{where}: api {conf.api!r} is not a name the scanner's category table knows"
    if conf.lesson not in docs:
        return f"{where}: lesson {conf.lesson!r} is not a document of the book"
    if not any(path == conf.path and _covers(runs, conf.line) for path, runs in citations.get(conf.lesson, ())):
        return f"{where}: lesson {conf.lesson!r} cites no range of {conf.path} containing line {conf.line}"
    return record


def _sort_out(candidates: list[Occurrence], taken: Mapping[str, Confirmation], rules: Sequence[LeftRule],
              result: Settled) -> None:
    """Each candidate into ``result``: confirmed, else left by the first rule that matches it, else open; a rule
    that matches no candidate is a problem."""
    rules_used: set[int] = set()
    for record in candidates:
        if record.id in taken:
            result.confirmed.append((record, taken[record.id]))
            continue
        # a rule that names this occurrence in places wins over an earlier pattern rule
        rule = next((rule for rule in rules if rule.names_place(record) and rule.matches(record)), None) \
            or next((rule for rule in rules if rule.matches(record)), None)
        if rule is None:
            result.open.append(record)
        else:
            rules_used.add(rule.at)
            result.left.append((record, rule))
    for rule in rules:
        if rule.at not in rules_used:
            result.problems.append(Problem(rule.at, "this [[left]] rule covers no candidate that is not already "
                                                    "confirmed or covered by an earlier rule"))
