"""Settling instance candidates: the notes file parser, :func:`settle` on hand-made records, and the gate and the
candidates page through ``sphinx.testing`` (the usage fixture upstream, whose ``cache.get(1)`` at
``app/loop.py:13`` is the one candidate)."""

from __future__ import annotations

import html as htmllib
import re
import textwrap
from pathlib import Path

import pytest
from test_usage import build, upstream  # noqa: F401 - fixtures

from slimebook.candidates import NotesError, parse_notes, settle
from slimebook.scan.records import Occurrence

NOTES = textwrap.dedent('''\
    [[confirmed]]
    path = "a.py"
    line = 3
    api = "queue.Queue.get"
    lesson = "les"
    evidence = "q is queue.Queue() at line 1"

    [[left]]
    names = ["get"]
    reason = "mapping lookups"

    [[left]]
    paths = ["tools/"]
    reason = "tools"
    ''')


def _cand(path: str, line: int, name: str) -> Occurrence:
    return Occurrence(f"occ-{path}-{line}-{name}", path, line, 0, line, 1, "<module>", "instance_candidate", name,
                      "candidates", "unresolved_receiver_candidate", f"x.{name}()", "code")


def test_parse_notes_reads_entries_with_their_lines() -> None:
    notes = parse_notes(NOTES)
    (conf,) = notes.confirmed
    assert (conf.path, conf.line, conf.api, conf.lesson, conf.method, conf.at) == \
        ("a.py", 3, "queue.Queue.get", "les", "get", 1)
    assert [(r.names, r.paths, r.reason, r.at) for r in notes.left] == \
        [(("get",), (), "mapping lookups", 8), ((), ("tools/",), "tools", 12)]


def test_parse_notes_counts_lines_as_toml_does() -> None:
    # a header written in a multi-line string is no header; U+2028 (in a string) ends no line
    text = '[[left]]\nnames = ["get"]\nreason = """a\n[[left]]\nb\u2028c"""\n\n[[left]]\npaths = ["t/"]\nreason = "r"\n'
    assert [rule.at for rule in parse_notes(text).left] == [1, 7]


@pytest.mark.parametrize(("text", "message", "line"), [
    ("[[confirmed]]\npath = 'a.py'\nline = 0\napi = 'x.get'\nlesson = 'l'\nevidence = 'e'\n",
     "'line' must be a positive integer", 1),
    ("\n[[confirmed]]\npath = 'a.py'\nline = 3\napi = 'x.get'\nlesson = 'l'\n", "'evidence' is required", 2),
    ("[[left]]\nreason = 'r'\n", "give 'names', 'paths' or 'places'", 1),
    ("[[left]]\nplaces = ['a.py']\nreason = 'r'\n", "'places' entries are \"path:line\", got 'a.py'", 1),
    ("[[left]]\nnames = ['get']\nreason = 'r'\nwhy = 1\n", "unknown key(s) why", 1),
    ("[[left]]\nnames = 'get'\nreason = 'r'\n", "'names' must be a list", 1),
    ("[[waiver]]\nname = 'x'\n", "unknown top-level key(s) waiver", None),
    ("[[left]\n", "not valid TOML", 1),  # the line from exc.lineno, or from the message on Python < 3.14
    ("a = 1\nb = = 2\n", "not valid TOML", 2),
])
def test_parse_notes_rejects_malformed_entries(text: str, message: str, line: int | str | None) -> None:
    with pytest.raises(NotesError, match=re.escape(message)) as info:
        parse_notes(text)
    assert line == "any" or info.value.line == line


def test_settle_confirms_leaves_and_reports() -> None:
    records = [_cand("a.py", 3, "get"), _cand("b.py", 5, "get"), _cand("tools/c.py", 7, "result"),
               _cand("d.py", 9, "wait")]
    citations = {"les": [("a.py", [(1, 4)])]}
    result = settle(records, parse_notes(NOTES), citations, {"les"})
    assert [(r.path, c.api) for r, c in result.confirmed] == [("a.py", "queue.Queue.get")]
    assert [(r.path, rule.reason) for r, rule in result.left] == [("b.py", "mapping lookups"), ("tools/c.py", "tools")]
    assert [r.path for r in result.open] == ["d.py"]
    assert result.problems == []
    assert [(rule.reason, [r.path for r in items]) for rule, items in result.by_reason()] == \
        [("mapping lookups", ["b.py"]), ("tools", ["tools/c.py"])]


def test_settle_rejects_a_confirmation_that_does_not_hold() -> None:
    records = [_cand("a.py", 3, "get")]
    notes = parse_notes(NOTES.replace('names = ["get"]', 'names = ["put"]'))
    uncited = settle(records, notes, {"les": [("a.py", [(4, 9)])]}, {"les"})
    assert [p.message for p in uncited.problems] == [
        "a.py:3: lesson 'les' cites no range of a.py containing line 3",
        "this [[left]] rule covers no candidate that is not already confirmed or covered by an earlier rule",
        "this [[left]] rule covers no candidate that is not already confirmed or covered by an earlier rule",
    ]
    assert [p.at for p in uncited.problems] == [1, 8, 12]
    assert [r.path for r in uncited.open] == ["a.py"]  # a confirmation that fails settles nothing
    twice = parse_notes(NOTES + NOTES.split("[[left]]")[0])
    result = settle(records, twice, {"les": [("a.py", [(3, 3)])]}, {"les"})
    assert "a.py:3: the candidate 'get' is already confirmed at line 1" in [p.message for p in result.problems]
    wrong = parse_notes(NOTES.replace("queue.Queue.get", "queue.Queue.put"))
    result = settle(records, wrong, {"les": [("a.py", [(3, 3)])]}, {"les"})
    assert result.problems[0].message == "a.py:3: no instance candidate 'put' there at the pin (candidates there: get)"


# -- through Sphinx --------------------------------------------------------------------------------------
def _line_of(path: Path, needle: str, start: int = 0) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if n > start and needle in line)


def test_gate_warns_at_each_bad_entry(build) -> None:  # noqa: F811 - fixture
    app = build("candidates")
    warnings = app._warning.getvalue()
    notes = app.srcdir / "candidate-notes.toml"
    headers = [n for n, line in enumerate(notes.read_text().splitlines(), 1) if line.startswith("[[")]
    expected = [
        (headers[0], "app/loop.py:12: no instance candidate 'get' there at the pin (candidates there: none)"),
        (headers[1], "app/loop.py:13: api 'nosuch.Thing.get' is not a name the scanner's category table knows"),
        (headers[2], "app/loop.py:13: lesson 'index' cites no range of app/loop.py containing line 13"),
        (headers[3], "app/loop.py:13: lesson 'missing' is not a document of the book"),
        (headers[4], "this [[left]] rule covers no candidate"),
        (1, "app/loop.py:13 'get' (occ-"),
    ]
    for line, message in expected:
        assert re.search(rf"{re.escape(f'{notes}:{line}')}: WARNING: candidate notes: {re.escape(message)}",
                         warnings), (line, message, warnings)


def _page(app) -> str:
    page = (app.outdir / "_slimebook/usage/category/candidates.html").read_text()
    return htmllib.unescape(re.sub("<[^>]+>", "", page))


@pytest.mark.parametrize(("notes", "summary", "shown"), [
    ('[[confirmed]]\npath = "app/loop.py"\nline = 13\napi = "queue.Queue.get"\nlesson = "lesson"\n'
     'evidence = "pretend cache is a queue.Queue"\n',
     "共 1 处候选：已确认 1 处，留作候选 0 处（0 条理由），未说明 0 处。", "pretend cache is a queue.Queue"),
    ('[[left]]\nnames = ["get"]\nreason = "a dict lookup"\n',
     "共 1 处候选：已确认 0 处，留作候选 1 处（1 条理由），未说明 0 处。", "a dict lookup"),
], ids=["confirmed", "left"])
def test_page_counts_confirmed_and_left(build, upstream, tmp_path: Path, notes: str, summary: str,  # noqa: F811
                                        shown: str) -> None:
    import shutil

    from test_usage import LOCK

    repo, commit, _ = upstream
    src = tmp_path / "good"
    shutil.copytree(Path(__file__).parent / "roots" / "test-candidates", src)
    (src / "sources.toml").write_text(LOCK.format(url=repo.as_posix(), commit=commit))
    (src / "candidate-notes.toml").write_text(notes)
    app = build("candidates", srcdir=src)
    assert app._warning.getvalue() == ""
    text = _page(app)
    assert summary in text and shown in text


def test_a_line_a_teaching_lesson_cites_is_settled_only_by_a_confirmation_or_its_place() -> None:
    records = [_cand("a.py", 3, "get"), _cand("a.py", 9, "get"), _cand("b.py", 3, "get")]
    citations = {"les": [("a.py", [(1, 5)]), ("b.py", [(3, 3)])], "other": [("a.py", [(9, 9)])]}
    teaches = {"les": ["queue.Queue.get"], "other": ["asyncio.sleep"]}
    broad = parse_notes("[[left]]\nnames = ['get']\nreason = 'dict lookups'\n")
    result = settle(records, broad, citations, {"les", "other"}, teaches)
    # a.py:3 and b.py:3 are read by "les", which teaches a get; a.py:9 only by a lesson that teaches no get
    assert [(r.path, r.line, lessons) for r, lessons in result.read] == [("a.py", 3, ("les",)), ("b.py", 3, ("les",))]
    assert [(r.path, r.line) for r, _ in result.left] == [("a.py", 9)]
    named = parse_notes("[[left]]\nplaces = ['a.py:3', 'b.py:3']\nreason = 'dict lookups, read'\n"
                        "[[left]]\nnames = ['get']\nreason = 'dict lookups'\n")
    result = settle(records, named, citations, {"les", "other"}, teaches)
    assert result.read == [] and result.open == [] and result.problems == []
    assert [(r.line, rule.at) for r, rule in result.left] == [(3, 1), (9, 4), (3, 1)]


def test_an_edit_of_the_notes_alone_runs_the_gate_again(build, upstream, tmp_path: Path) -> None:  # noqa: F811
    import shutil

    from test_usage import LOCK

    repo, commit, _ = upstream
    src = tmp_path / "edited"
    shutil.copytree(Path(__file__).parent / "roots" / "test-candidates", src)
    (src / "sources.toml").write_text(LOCK.format(url=repo.as_posix(), commit=commit))
    notes = src / "candidate-notes.toml"
    notes.write_text('[[left]]\nnames = ["get"]\nreason = "a dict lookup"\n')
    assert build("candidates", srcdir=src)._warning.getvalue() == ""
    notes.write_text("# every entry removed\n")
    again = build("candidates", srcdir=src)  # incremental: no document changed, only the notes file
    assert "app/loop.py:13 'get'" in again._warning.getvalue() and "neither confirmed nor left" in \
        again._warning.getvalue()


def test_a_rule_naming_the_place_wins_over_an_earlier_pattern() -> None:
    records = [_cand("a.py", 3, "get")]
    notes = parse_notes("[[left]]\nnames = ['get']\nreason = 'dict lookups'\n"
                        "[[left]]\nplaces = ['a.py:3']\nreason = 'this one, read'\n")
    result = settle(records, notes, {"les": [("a.py", [(3, 3)])]}, {"les"}, {"les": ["queue.Queue.get"]})
    assert result.read == [] and [rule.reason for _, rule in result.left] == ["this one, read"]
    assert [p.message for p in result.problems] == [
        "this [[left]] rule covers no candidate that is not already confirmed or covered by an earlier rule"]
