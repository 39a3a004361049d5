"""The Sphinx-free half of the usage index (:mod:`slimebook.usage`): selections, waivers, coverage, figures."""

from __future__ import annotations

import textwrap

import pytest

from slimebook.scan import Occurrence, ScanResult
from slimebook.usage import (
    FigureError,
    Figures,
    Query,
    QueryError,
    WaiverError,
    coverage,
    declaration_problem,
    instance_uses,
    key_of,
    name_anchor,
    names_of,
    parse_list,
    parse_waivers,
    select,
)


def occ(n: int, kind: str, name: str, category: str, path: str = "a.py", source: str = "code") -> Occurrence:
    return Occurrence(f"occ-{n:012x}", path, n, 0, n, 1, "<module>", kind, name, category, "syntax", "x", source)


RECORDS = [
    occ(1, "import", "asyncio", "asyncio"),
    occ(2, "api_call", "asyncio.gather", "asyncio"),
    occ(3, "syntax", "await", "syntax"),
    occ(4, "method_call", "asyncio.Queue.get", "asyncio", "b/c.py"),
    occ(5, "instance_candidate", "get", "candidates", "b/c.py"),
    occ(6, "api_call", "threading.Thread", "threading", "b/d.py"),
    occ(7, "syntax", "await", "syntax", "doc.md", "doc"),
    occ(8, "api_call", "asyncio.sleep", "asyncio"),
]


def test_keys_anchors_lists() -> None:
    assert key_of(RECORDS[2]) == "syntax:await"
    assert key_of(RECORDS[1]) == "asyncio.gather"
    assert name_anchor("syntax:await") == "name-syntax-await"
    assert name_anchor("asyncio.Queue.get") == "name-asyncio.Queue.get"
    assert parse_list("a, b\n c") == ("a", "b", "c")
    assert parse_list(None) == ()


def test_select_filters_and_order() -> None:
    ids = lambda q: [r.line for r in select(RECORDS, q)]  # noqa: E731
    assert ids(Query()) == [2, 3, 4, 5, 6, 7, 8]  # default: everything but imports
    assert ids(Query(kinds=("all",))) == [1, 2, 3, 4, 5, 6, 7, 8]
    assert ids(Query(kinds=("import",))) == [1]
    assert ids(Query(categories=("asyncio",))) == [2, 4, 8]
    assert ids(Query(paths=("b/",))) == [4, 5, 6]
    assert ids(Query(names=("syntax:await",))) == [3, 7]
    assert ids(Query(names=("get",))) == [5]  # a candidate by its bare name
    assert ids(Query(names=("asyncio.Queue.*",))) == [4]
    # globs group the rows in the order the writer gave them
    assert ids(Query(names=("asyncio.sleep", "syntax:*", "asyncio.*"))) == [8, 3, 7, 4, 2]  # then by name
    assert ids(Query(names=("asyncio.*",), paths=("a.py",))) == [2, 8]


def test_query_validation() -> None:
    with pytest.raises(QueryError, match="unknown 'nope'"):
        Query(categories=("nope",)).validate()
    with pytest.raises(QueryError, match=":kind: unknown 'calls'"):
        Query(kinds=("calls",)).validate()
    Query(categories=("asyncio", "candidates"), kinds=("all",)).validate()


WAIVERS = textwrap.dedent('''\
    # comment with "a string"

    [[waiver]]
    reason = "threads, later"
    names = [
      "threading.*",
      "queue.*",
    ]

    [[waiver]]
    name = "asyncio.sleep"
    reason = "already taught"

    [[waiver]]
    reason = "nothing"
    names = ["asyncio.nothing"]
    ''')


def test_parse_waivers_with_lines() -> None:
    waivers = parse_waivers(WAIVERS)
    assert [(w.pattern, w.line) for w in waivers] == [
        ("threading.*", 6), ("queue.*", 7), ("asyncio.sleep", 11), ("asyncio.nothing", 16)]
    assert waivers[0].reason == "threads, later"


@pytest.mark.parametrize("text, message", [
    ("[[waiver]]\nnames = ['a']\n", "non-empty 'reason'"),
    ("[[waiver]]\nreason = 'r'\n", "give 'name' or a non-empty list"),
    ("[[waiver]]\nreason = 'r'\nnames = ['a']\nwhy = 1\n", "unknown key(s) why"),
    ("[other]\n", "unknown top-level key"),
    ("[[waiver]\n", "not valid TOML"),
])
def test_bad_waiver_files(text: str, message: str) -> None:
    with pytest.raises(WaiverError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_waivers(text)


def test_coverage_maps_lessons_waivers_and_stale_entries() -> None:
    teaches = {"l2": ["syntax:await", "asyncio.Queue.*"], "l1": ["asyncio.gather", "asyncio.sleep", "asyncio.wait"]}
    result = coverage(RECORDS, teaches, parse_waivers(WAIVERS), order=["index", "l1", "l2"])
    rows = {row.key: row for row in result.rows}
    assert set(rows) == {"asyncio.gather", "syntax:await", "asyncio.Queue.get", "threading.Thread", "asyncio.sleep"}
    assert rows["syntax:await"].lessons == ("l2",) and (rows["syntax:await"].code, rows["syntax:await"].doc) == (1, 1)
    assert rows["asyncio.Queue.get"].lessons == ("l2",)
    assert rows["threading.Thread"].status == "waived" and rows["threading.Thread"].waiver.reason == "threads, later"
    assert rows["asyncio.sleep"].status == "taught"  # a lesson wins over a waiver
    assert [row.status for row in result.rows] == ["waived", "taught", "taught", "taught", "taught"]
    stale = {w.pattern: why for w, why in result.stale}
    assert set(stale) == {"queue.*", "asyncio.sleep", "asyncio.nothing"}
    assert "taught by a lesson: asyncio.sleep" in stale["asyncio.sleep"]
    assert result.absent == [("l1", "asyncio.wait")]


def test_coverage_unmapped_first() -> None:
    result = coverage(RECORDS, {"l": ["asyncio.gather"]}, [])
    assert [row.status for row in result.rows][:4] == ["unmapped"] * 4
    assert result.rows[-1].key == "asyncio.gather"


# A method a subclass inherits (asyncio.Task from asyncio.Future), and classes only reached through instances.
INHERITED = [
    occ(1, "method_call", "asyncio.Task.add_done_callback", "asyncio"),
    occ(2, "method_call", "asyncio.Task.get_name", "asyncio"),
    occ(3, "method_call", "concurrent.futures.Future.result", "executors", "b.py"),
    occ(4, "method_call", "concurrent.futures.ThreadPoolExecutor.submit", "executors", "b.py"),
]


def test_a_subclass_use_counts_for_the_base_method_that_it_inherits() -> None:
    assert names_of(INHERITED[0]) == ["asyncio.Task.add_done_callback", "asyncio.Future.add_done_callback"]
    assert names_of(INHERITED[1]) == ["asyncio.Task.get_name"]  # Future has no get_name
    assert names_of(INHERITED[3]) == ["concurrent.futures.ThreadPoolExecutor.submit",
                                      "concurrent.futures.Executor.submit"]
    chosen = select(INHERITED, Query(names=("asyncio.Future.add_done_callback",)))
    assert [r.name for r in chosen] == ["asyncio.Task.add_done_callback"]  # the row keeps the receiver's class
    result = coverage(INHERITED, {"l13": ["asyncio.Future.add_done_callback", "concurrent.futures.Executor.*"]}, [])
    rows = {row.key: row for row in result.rows}
    assert rows["asyncio.Task.add_done_callback"].lessons == ("l13",)
    assert rows["concurrent.futures.ThreadPoolExecutor.submit"].lessons == ("l13",)
    assert rows["asyncio.Task.get_name"].status == "unmapped"
    assert result.absent == [] and result.instance_only == []


def test_a_class_never_named_but_used_through_instances_is_not_absent() -> None:
    teaches = {"l13": ["asyncio.Future", "concurrent.futures.Future", "asyncio.Event"]}
    result = coverage(INHERITED, teaches, [])
    assert result.instance_only == [("l13", "asyncio.Future", 1), ("l13", "concurrent.futures.Future", 1)]
    assert result.absent == [("l13", "asyncio.Event")]
    assert [r.name for r in instance_uses(INHERITED, "asyncio.Future")] == ["asyncio.Task.add_done_callback"]
    assert [r.name for r in instance_uses(INHERITED, "asyncio.Task")] == ["asyncio.Task.add_done_callback",
                                                                          "asyncio.Task.get_name"]


@pytest.mark.parametrize(("name", "problem"), [
    ("asyncio.gather", None), ("asyncio.Queue.*", None), ("syntax:await", None), ("anext", None),
    ("typing.Protocol", None), ("typing.runtime_checkable", None), ("collections.abc.AsyncIterator", None),
    ("asyncio.Task.add_done_callback", None), ("asyncio.Queue.shutdown", None),  # 3.13's, but in the table
    ("multiprocessing.context.BaseContext.Pool", None), ("signal.SIGKILL", None),
    ("asyncio.create_*", None), ("asyncio.run_*", None), ("typing.Async*", None), ("collections.abc.Await*", None),
    ("asyncio.gahter", "has no such name: a typo, or a newer Python's name"),
    ("asyncio.Quue.*", "the glob matches no name the scanner can record"),
    ("os.path.*", "the glob matches no name the scanner can record"),
    ("asyncio.Task.cancle", "asyncio.Task has no tracked method 'cancle'"),
    ("syntax:awiat", "unknown syntax kind 'awiat'"),
    ("os.path.join", "no category of the scanner's table holds it"),
])
def test_declaration_problem(name: str, problem: str | None) -> None:
    found = declaration_problem(name)
    assert found == problem if problem is None else problem in found


class FakeStore:
    FILES = {"slime/a.py": 10, "slime/b/c.py": 5, "tools/d.py": 2, "README.md": 3}

    def files(self, suffix: str = "") -> list[str]:
        return sorted(p for p in self.FILES if p.endswith(suffix))

    def read_lines(self, path: str) -> list[str]:
        return ["x"] * self.FILES[path]


def test_figures() -> None:
    figures = Figures(FakeStore(), ScanResult(RECORDS, [], [], "v"))
    assert figures.get("py-files") == 3
    assert figures.get("py-lines") == 17
    assert figures.get("files") == 4
    assert figures.get("files:slime/") == 2
    assert figures.get("lines:slime/") == 15
    assert figures.get("occurrences:syntax:await") == 2
    assert figures.get("occurrences:asyncio.*") == 3
    assert figures.get("category:asyncio") == 4  # imports included, as on the overview page
    assert figures.get("kind:syntax") == 2
    assert figures.get("api-names") == 4
    for bad, message in (("nope", "unknown key"), ("files:zzz/", "no file"), ("category:x", "unknown category"),
                         ("kind:x", "unknown kind"), ("files:", "unknown key")):
        with pytest.raises(FigureError, match=message):
            figures.get(bad)
