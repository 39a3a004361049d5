"""Written-down expectations for the scanner: literal occurrence ids and which import a twice-bound name means.

The ids below were computed once, by hand, with ``hashlib.sha1`` over the documented key (path, scope, kind, name,
ordinal joined by NUL bytes), not by :func:`slimebook.scan.records.occurrence_id`; a change to the id rule (a field
dropped from the key, the ordinal counted per file instead of per (scope, kind, name)) fails here.
"""

from __future__ import annotations

import sys

import pytest

from slimebook.scan import scan_code
from slimebook.scan.records import assign_ids, occurrence_id
from slimebook.scan.visitor import deep_recursion

# Two functions with the same calls: the enclosing scope is what tells their records apart.
TWO_SCOPES = (
    "import asyncio\n"
    "\n"
    "\n"
    "async def f():\n"
    "    await asyncio.sleep(1)\n"
    "\n"
    "\n"
    "async def g():\n"
    "    await asyncio.sleep(1)\n"
    "    await asyncio.sleep(2)\n"
)


def test_occurrence_ids_are_pinned_literals() -> None:
    records = scan_code(TWO_SCOPES).records
    ids = [(occ, rec[0], rec[4], rec[5], rec[6]) for occ, rec in assign_ids("pkg/a.py", records)]
    assert ids == [
        ("occ-327ec7a2ff19", 1, "<module>", "import", "asyncio"),
        ("occ-109a8bd5bd9c", 4, "f", "syntax", "async_def"),
        ("occ-a0d21ec28b32", 5, "f", "syntax", "await"),
        ("occ-d0268cee9e98", 5, "f", "api_call", "asyncio.sleep"),
        ("occ-537e5732d0ee", 8, "g", "syntax", "async_def"),
        ("occ-a7eeac4271a4", 9, "g", "syntax", "await"),
        ("occ-0b22a4b5c793", 9, "g", "api_call", "asyncio.sleep"),
        ("occ-3233d453509a", 10, "g", "syntax", "await"),
        ("occ-9a5f5bf5cfca", 10, "g", "api_call", "asyncio.sleep"),
    ]


def test_occurrence_id_key_fields() -> None:
    assert occurrence_id("pkg/a.py", "f", "api_call", "asyncio.sleep", 0) == "occ-d0268cee9e98"
    assert occurrence_id("pkg/a.py", "g", "api_call", "asyncio.sleep", 1) == "occ-9a5f5bf5cfca"
    # the first record of g is ordinal 0 of its own scope, not ordinal 1 of the file
    assert occurrence_id("pkg/a.py", "g", "api_call", "asyncio.sleep", 0) == "occ-0b22a4b5c793"


def test_ids_survive_lines_inserted_above() -> None:
    moved = TWO_SCOPES.replace("import asyncio\n", "import asyncio\n# one\n# two\n", 1)
    before = [occ for occ, _ in assign_ids("pkg/a.py", scan_code(TWO_SCOPES).records)]
    after = [occ for occ, _ in assign_ids("pkg/a.py", scan_code(moved).records)]
    assert len(before) == 9 and after == before


def _api(text: str) -> list[tuple]:
    return [r[:9] for r in scan_code(text).records if r[5] != "syntax"]


def test_a_name_bound_by_two_different_imports_resolves_to_neither() -> None:
    text = "import asyncio as a\nimport threading as a\n\n\nasync def f():\n    await a.sleep(1)\n"
    # ``a`` is asyncio or threading depending on the flow: the scanner claims neither (no api record for a.sleep)
    assert _api(text) == [
        (1, 7, 1, 19, "<module>", "import", "asyncio", "asyncio", "import_statement"),
        (2, 7, 2, 21, "<module>", "import", "threading", "threading", "import_statement"),
    ]
    # the same order reversed: still neither (not "the last binding wins", not "the first")
    reverse = "import threading as a\nimport asyncio as a\n\n\nasync def f():\n    await a.sleep(1)\n"
    assert [r[6] for r in _api(reverse)] == ["threading", "asyncio"]


def test_a_name_bound_twice_by_the_same_import_resolves() -> None:
    text = "import asyncio\nimport asyncio\n\n\nasync def f():\n    await asyncio.sleep(1)\n"
    assert _api(text) == [
        (1, 7, 1, 14, "<module>", "import", "asyncio", "asyncio", "import_statement"),
        (2, 7, 2, 14, "<module>", "import", "asyncio", "asyncio", "import_statement"),
        (6, 10, 6, 23, "f", "api_call", "asyncio.sleep", "asyncio", "import_resolution"),
    ]


def test_an_import_and_an_assignment_of_one_name_resolve_to_nothing() -> None:
    text = "import asyncio\nasyncio = None\nasyncio.sleep(1)\n"
    assert [r[6] for r in _api(text)] == ["asyncio"]  # the import record only


def test_nonlocal_sends_an_import_to_the_enclosing_function_past_a_class():
    """``nonlocal`` in a method binds in the function around the class: there ``asyncio`` is then two different
    imports, so ``asyncio.sleep`` resolves to neither."""
    for text in ("def outer():\n    import asyncio\n    def inner():\n        nonlocal asyncio\n"
                 "        import threading as asyncio\n    return asyncio.sleep(0)\n",
                 "def outer():\n    import asyncio\n    class K:\n        def inner(self):\n"
                 "            nonlocal asyncio\n            import threading as asyncio\n"
                 "    return asyncio.sleep(0)\n"):
        assert [r[6] for r in _api(text)] == ["asyncio", "threading"]  # the two imports, no api_call


def test_global_sends_an_import_to_the_module():
    text = "def setup():\n    global aio\n    import asyncio as aio\n\n\ndef use():\n    return aio.sleep(0)\n"
    assert _api(text) == [
        (3, 11, 3, 25, "setup", "import", "asyncio", "asyncio", "import_statement"),
        (7, 11, 7, 20, "use", "api_call", "asyncio.sleep", "asyncio", "import_resolution"),
    ]
    assert _api("def f():\n    global asyncio\n    return asyncio.sleep(0)\n") == []  # global, but never bound


def test_a_global_declaration_in_an_enclosing_function_skips_its_binding():
    """``c`` reads ``x`` through ``b``, which declares it global: the module's import, not ``a``'s."""
    text = ("import asyncio as x\n\n\ndef a():\n    import threading as x\n    def b():\n        global x\n"
            "        def c():\n            return x.sleep(0)\n")
    assert _api(text)[-1] == (9, 19, 9, 26, "a.b.c", "api_call", "asyncio.sleep", "asyncio", "import_resolution")


def test_a_walrus_in_a_comprehension_binds_in_the_function():
    text = "import asyncio\n\n\ndef f():\n    [(asyncio := 1) for _ in range(1)]\n    return asyncio.sleep(0)\n"
    assert [r[6] for r in _api(text)] == ["asyncio"]  # the import record only: f's asyncio is the walrus's


def _rows(text: str) -> list[tuple]:
    return [r[:9] for r in scan_code(text).records]


@pytest.mark.parametrize(("text", "api"), [
    # a keyword-only parameter after a bare star: its annotation is read and gives the type
    ("import asyncio\nasync def f(*, q: asyncio.Queue):\n    await q.get()\n", [
        (1, 7, 1, 14, "<module>", "import", "asyncio", "asyncio", "import_statement"),
        (2, 18, 2, 31, "f", "api_reference", "asyncio.Queue", "asyncio", "import_resolution"),
        (3, 10, 3, 15, "f", "method_call", "asyncio.Queue.get", "asyncio", "annotation_evidence")]),
    # type parameters: a bound and a default are expressions of the definition (a parameter may have neither)
    ("import asyncio\ndef f[T: asyncio.Queue, U](x: T): ...\nclass K[T = asyncio.Event]: ...\n", [
        (1, 7, 1, 14, "<module>", "import", "asyncio", "asyncio", "import_statement"),
        (2, 9, 2, 22, "f", "api_reference", "asyncio.Queue", "asyncio", "import_resolution"),
        (3, 12, 3, 25, "K", "api_reference", "asyncio.Event", "asyncio", "import_resolution")]),
    # a class's decorators (enclosing scope), bases and keywords (the class's header)
    ("import asyncio, threading\n@asyncio.coroutine\nclass K(threading.Thread, metaclass=asyncio.Future): pass\n", [
        (1, 7, 1, 14, "<module>", "import", "asyncio", "asyncio", "import_statement"),
        (1, 16, 1, 25, "<module>", "import", "threading", "threading", "import_statement"),
        (2, 1, 2, 18, "<module>", "api_reference", "asyncio.coroutine", "asyncio", "import_resolution"),
        (3, 8, 3, 24, "K", "api_reference", "threading.Thread", "threading", "import_resolution"),
        (3, 36, 3, 50, "K", "api_reference", "asyncio.Future", "asyncio", "import_resolution")]),
    # unpacking a tuple of values pairs them; unpacking a call's result gives no evidence (and no error)
    ("import asyncio\na, b = asyncio.Queue(), 1\nc, d = f()\nasync def g():\n    await a.get()\n", [
        (1, 7, 1, 14, "<module>", "import", "asyncio", "asyncio", "import_statement"),
        (2, 7, 2, 20, "<module>", "api_call", "asyncio.Queue", "asyncio", "import_resolution"),
        (5, 10, 5, 15, "g", "method_call", "asyncio.Queue.get", "asyncio", "constructor_evidence")]),
    # match patterns: class patterns and mapping values are read; captures, stars and rests bind
    ("import asyncio\nmatch x:\n    case asyncio.Queue() as q:\n        pass\n    case [1, *rest]:\n        pass\n"
     "    case [*_]:\n        pass\n    case {'a': 1}:\n        pass\n    case {'a': asyncio.Event(), **kw}:\n"
     "        pass\n    case y:\n        pass\n    case _:\n        pass\n", [
        (1, 7, 1, 14, "<module>", "import", "asyncio", "asyncio", "import_statement"),
        (3, 9, 3, 22, "<module>", "api_reference", "asyncio.Queue", "asyncio", "import_resolution"),
        (11, 15, 11, 28, "<module>", "api_reference", "asyncio.Event", "asyncio", "import_resolution")]),
    # only assignments through the method's own first parameter are attributes of the class
    ("import asyncio\nclass K:\n    def m(self, other, x):\n        other.q = asyncio.Queue()\n"
     "        x.r = asyncio.Event()\n    def n(self):\n        self.q.get_nowait()\n        self.r.is_set()\n", [
        (1, 7, 1, 14, "<module>", "import", "asyncio", "asyncio", "import_statement"),
        (4, 18, 4, 31, "K.m", "api_call", "asyncio.Queue", "asyncio", "import_resolution"),
        (5, 14, 5, 27, "K.m", "api_call", "asyncio.Event", "asyncio", "import_resolution"),
        (7, 8, 7, 25, "K.n", "instance_candidate", "get_nowait", "candidates", "unresolved_receiver_candidate"),
        (8, 8, 8, 21, "K.n", "instance_candidate", "is_set", "candidates", "unresolved_receiver_candidate")]),
    # a string first argument (even with a keyword after it) and super() are not candidates; other calls are
    ("x.get('k', default=None)\nf().get(1)\nwrap().get(1)\nclass K(B):\n    def m(self):\n        super().get(1)\n"
     "x.get(1, 'k')\n", [
        (2, 0, 2, 7, "<module>", "instance_candidate", "get", "candidates", "unresolved_receiver_candidate"),
        (3, 0, 3, 10, "<module>", "instance_candidate", "get", "candidates", "unresolved_receiver_candidate"),
        (7, 0, 7, 5, "<module>", "instance_candidate", "get", "candidates", "unresolved_receiver_candidate")]),
])
def test_evidence_and_bindings_of_definitions_and_patterns(text: str, api: list[tuple]) -> None:
    assert _api(text) == api


def test_self_is_the_first_parameter_of_methods_that_are_not_static() -> None:
    text = ("import asyncio\nclass K:\n    def __init__(self):\n        self.q = asyncio.Queue()\n    @staticmethod\n"
            "    def f(self):\n        self.q.put_nowait(1)\n    @property\n    def g(self):\n"
            "        return self.q.get_nowait()\n    @tracked\n    def h(self):\n        return self.q.empty()\n")
    assert _api(text)[2:] == [
        (7, 8, 7, 25, "K.f", "instance_candidate", "put_nowait", "candidates", "unresolved_receiver_candidate"),
        (10, 15, 10, 32, "K.g", "method_call", "asyncio.Queue.get_nowait", "asyncio", "attribute_evidence"),
        (13, 15, 13, 27, "K.h", "method_call", "asyncio.Queue.empty", "asyncio", "attribute_evidence"),
    ]


def test_async_comprehension_ends_with_the_iterable_s_own_parentheses() -> None:
    """As in ``ast``: ``((a, b))`` is a tuple in its own parentheses (col 28-35) inside grouping ones (col 27-36)."""
    rows = _rows("async def f():\n    return [x async for x in ((a, b))]\n")
    assert rows[-1] == (2, 14, 2, 36, "f.<comprehension>", "syntax", "async_comprehension", "syntax", "syntax")
    # a name in grouping parentheses ends at the name, as ast.Name does
    rows = _rows("async def f():\n    return [x async for x in (y)]\n")
    assert rows[-1] == (2, 14, 2, 31, "f.<comprehension>", "syntax", "async_comprehension", "syntax", "syntax")


def test_a_yield_in_a_class_body_does_not_make_the_function_a_generator() -> None:
    """Not valid Python, but the scanner still reads it: the class, not ``f``, owns that yield."""
    assert _rows("async def f():\n    class K:\n        x = yield\n") == [
        (1, 0, 3, 17, "f", "syntax", "async_def", "syntax", "syntax")]
    # a yield in a comprehension (allowed until Python 3.7) belongs to the function around it
    assert _rows("async def f():\n    [(yield) for x in y]\n") == [
        (1, 0, 2, 24, "f", "syntax", "async_def", "syntax", "syntax"),
        (1, 0, 2, 24, "f", "syntax", "async_generator", "syntax", "syntax")]


@pytest.mark.parametrize(("text", "status"), [
    ("x = " + "(" * 200 + ")" * 200 + "\n", "ok"),
    ("x = " + "(" * 201 + ")" * 201 + "\n", "error"),
    ("x = " + "[" * 201 + "]" * 201 + "\n", "error"),
    ("x = " + "{" * 201 + "}" * 201 + "\n", "error"),
    ("x = " + "()" * 201 + "\n", "ok"),  # many brackets, none nested: depth 1
    ("x = " + "()" * 10 + "(" * 200 + ")" * 200 + "\n", "ok"),
    ("x = " + "()" * 10 + "(" * 201 + ")" * 201 + "\n", "error"),
])
def test_nesting_is_counted_exactly_at_the_limit(text: str, status: str) -> None:
    result = scan_code(text)
    assert (result.status, result.error) == (
        status, ("too many nested brackets (more than 200)", None) if status == "error" else None)


def test_deep_recursion_raises_the_limit_and_restores_it() -> None:
    previous = sys.getrecursionlimit()
    try:
        sys.setrecursionlimit(1000)
        with deep_recursion():
            assert sys.getrecursionlimit() == 10_000
        assert sys.getrecursionlimit() == 1000
        sys.setrecursionlimit(20_000)  # already higher: never lowered, left as it is
        with deep_recursion():
            assert sys.getrecursionlimit() == 20_000
        assert sys.getrecursionlimit() == 20_000
        sys.setrecursionlimit(10_000)  # equal: left as it is
        with deep_recursion():
            assert sys.getrecursionlimit() == 10_000
        assert sys.getrecursionlimit() == 10_000
    finally:
        sys.setrecursionlimit(previous)


def test_a_file_that_does_not_parse_says_what_libcst_says() -> None:
    assert scan_code("def (:\n").error == ("does not parse: parser error: error at 1:5: expected NAME", 1)


def _evidence(text: str) -> list[tuple]:
    return [r[:9] for r in scan_code(text).records if r[5] not in ("syntax", "import")]


@pytest.mark.parametrize(("text", "rows"), [
    # known but untracked receivers are never candidates: a class annotation, another module's CapWords class
    # (also a module imported whole), a lower-case module path annotation
    ("def f(q: Foo):\n    q.get(1)\n", []),
    ("import somemod\nx = somemod.Thing()\nx.get(1)\n", []),
    ("import Thing\nt = Thing()\nt.get(1)\n", []),
    ("def g(x: pkg.Foo):\n    x.get(1)\n", []),
    # unknown receivers are: a call of an assigned name, an object annotation, disagreeing annotations
    ("make = factory\nx = make()\nx.get(1)\n",
     [(3, 0, 3, 5, "<module>", "instance_candidate", "get", "candidates", "unresolved_receiver_candidate")]),
    ("def f(x: object):\n    x.get(1)\n",
     [(2, 4, 2, 9, "f", "instance_candidate", "get", "candidates", "unresolved_receiver_candidate")]),
    ("def f(x: pkg.Foo):\n    x: pkg.Bar\n    x.get(1)\n",
     [(3, 4, 3, 9, "f", "instance_candidate", "get", "candidates", "unresolved_receiver_candidate")]),
    # Optional's and Annotated's first argument is the type; a Union of two tracked types is not one type
    ("import asyncio, typing\ndef f(q: typing.Optional[asyncio.Queue, int], r: typing.Annotated[asyncio.Queue, 'm']):\n"
     "    q.get_nowait()\n    r.get_nowait()\n", [
        (2, 25, 2, 38, "f", "api_reference", "asyncio.Queue", "asyncio", "import_resolution"),
        (2, 66, 2, 79, "f", "api_reference", "asyncio.Queue", "asyncio", "import_resolution"),
        (3, 4, 3, 16, "f", "method_call", "asyncio.Queue.get_nowait", "asyncio", "annotation_evidence"),
        (4, 4, 4, 16, "f", "method_call", "asyncio.Queue.get_nowait", "asyncio", "annotation_evidence")]),
    ("import asyncio, typing\ndef f(q: typing.Union[asyncio.Queue, asyncio.Event]):\n    q.get_nowait()\n", [
        (2, 22, 2, 35, "f", "api_reference", "asyncio.Queue", "asyncio", "import_resolution"),
        (2, 37, 2, 50, "f", "api_reference", "asyncio.Event", "asyncio", "import_resolution"),
        (3, 4, 3, 16, "f", "instance_candidate", "get_nowait", "candidates", "unresolved_receiver_candidate")]),
    # a rebound self is no longer the instance
    ("import asyncio\nclass K:\n    def __init__(self):\n        self.q = asyncio.Queue()\n    def m(self, other):\n"
     "        self = other\n        self.q.get_nowait()\n", [
        (4, 17, 4, 30, "K.__init__", "api_call", "asyncio.Queue", "asyncio", "import_resolution"),
        (7, 8, 7, 25, "K.m", "instance_candidate", "get_nowait", "candidates", "unresolved_receiver_candidate")]),
    # two assignments of the same type agree
    ("import asyncio\nq = asyncio.Queue()\nq = asyncio.Queue()\nq.get_nowait()\n", [
        (2, 4, 2, 17, "<module>", "api_call", "asyncio.Queue", "asyncio", "import_resolution"),
        (3, 4, 3, 17, "<module>", "api_call", "asyncio.Queue", "asyncio", "import_resolution"),
        (4, 0, 4, 12, "<module>", "method_call", "asyncio.Queue.get_nowait", "asyncio", "constructor_evidence")]),
    # a lower-case factory of another module gives no type; a local class does, a parameter called like one does not
    ("import somemod\nx = somemod.make()\nx.get(1)\n",
     [(3, 0, 3, 5, "<module>", "instance_candidate", "get", "candidates", "unresolved_receiver_candidate")]),
    ("class K:\n    pass\nk = K()\nk.get(1)\ndef f(make):\n    x = make()\n    x.get(1)\n",
     [(7, 4, 7, 9, "f", "instance_candidate", "get", "candidates", "unresolved_receiver_candidate")]),
    ("class K:\n    pass\nK.get(1)\n", []),  # the class itself: known, untracked
    ("class K:\n    pass\nk = K()\nwith K() as k:\n    k.get(1)\n", []),  # with an untracked K: still a K
    # typing.Any says nothing; an unknown lower-case name in an annotation is a known, untracked type
    ("import typing\ndef f(x: typing.Any):\n    x.get(1)\n",
     [(3, 4, 3, 9, "f", "instance_candidate", "get", "candidates", "unresolved_receiver_candidate")]),
    ("def f(x: thing):\n    x.get(1)\n", []),
    # two different tracked types assigned to one name: no type
    ("import asyncio\nq = asyncio.Queue()\nq = asyncio.Event()\nq.get_nowait()\n", [
        (2, 4, 2, 17, "<module>", "api_call", "asyncio.Queue", "asyncio", "import_resolution"),
        (3, 4, 3, 17, "<module>", "api_call", "asyncio.Event", "asyncio", "import_resolution"),
        (4, 0, 4, 12, "<module>", "instance_candidate", "get_nowait", "candidates", "unresolved_receiver_candidate")]),
    # unpacking pairs values only when the counts match and nothing is starred
    ("import asyncio\na, b = asyncio.Queue(), 1, 2\nc, *d = asyncio.Queue(), 1\na.get_nowait()\nc.get_nowait()\n"
     "e, f, g = asyncio.Queue(), 1\n", [
        (2, 7, 2, 20, "<module>", "api_call", "asyncio.Queue", "asyncio", "import_resolution"),
        (3, 8, 3, 21, "<module>", "api_call", "asyncio.Queue", "asyncio", "import_resolution"),
        (4, 0, 4, 12, "<module>", "instance_candidate", "get_nowait", "candidates", "unresolved_receiver_candidate"),
        (5, 0, 5, 12, "<module>", "instance_candidate", "get_nowait", "candidates", "unresolved_receiver_candidate"),
        (6, 10, 6, 23, "<module>", "api_call", "asyncio.Queue", "asyncio", "import_resolution")]),
])
def test_receiver_evidence_rules(text: str, rows: list[tuple]) -> None:
    assert _evidence(text) == rows


def test_unpacking_more_than_256_names_still_pairs_them() -> None:
    names = ", ".join(f"v{i}" for i in range(300))
    text = f"import asyncio\n{names} = asyncio.Queue(), " + ", ".join(["1"] * 299) + "\nv0.get_nowait()\n"
    assert _evidence(text)[-1] == (3, 0, 3, 13, "<module>", "method_call", "asyncio.Queue.get_nowait", "asyncio",
                                   "constructor_evidence")


def _result():
    from slimebook.scan.records import Occurrence, ScanError, ScannedFile, ScanResult

    records = [
        Occurrence("occ-1", "a.py", 1, 7, 1, 16, "<module>", "import", "threading", "threading", "import_statement",
                   "import threading", "code"),
        Occurrence("occ-2", "d.md", 3, 2, 3, 9, "f", "api_call", "asyncio.sleep", "asyncio", "token_fallback",
                   "a\\b\tc\rd\ne é", "doc"),
    ]
    files = [ScannedFile("a.py", "code", "b1", "ok", 1), ScannedFile("bad.py", "code", "b2", "error", 0),
             ScannedFile("d.md", "doc", "b3", "tokens", 1, blocks=2)]
    errors = [ScanError("bad.py", "code", "does not parse: x", 3)]
    return ScanResult(records=records, files=files, errors=errors, version="1.abcdef12.libcst1.9.0",
                      commit="0123456789" * 4)


def test_tsv_escapes_backslashes_tabs_and_line_ends() -> None:
    import io

    from slimebook.scan.records import write_tsv

    stream = io.StringIO()
    write_tsv(_result(), stream)
    assert stream.getvalue().split("\n")[2] == (
        "occ-2\td.md\t3\t2\t3\t9\tf\tapi_call\tasyncio.sleep\tasyncio\ttoken_fallback\ta\\\\b\\tc\\rd\\ne é\tdoc")


def test_json_document_layout() -> None:
    import io

    from slimebook.scan.records import write_json

    stream = io.StringIO()
    write_json(_result(), stream)
    text = stream.getvalue()
    assert text.endswith("}\n") and '\n "schema": "slimebook-scan",\n "schema_version": 1,\n' in text
    assert '"code": "a\\\\b\\tc\\rd\\ne é"' in text  # not ASCII-escaped
    assert '"errors": [\n  {\n   "path": "bad.py",\n   "source": "code",\n   "message": "does not parse: x",\n' \
           '   "line": 3\n  }\n ]' in text
    assert '"commit": "' + "0123456789" * 4 + '"' in text and '"scanner_version": "1.abcdef12.libcst1.9.0"' in text


def test_stats_report() -> None:
    from slimebook.scan.records import format_stats

    assert format_stats(_result()).split("\n") == [
        "scanner 1.abcdef12.libcst1.9.0, schema 1 at 0123456",
        "files scanned: 3 (2 code, 1 doc with 2 Python blocks); status: error 1, ok 1, tokens 1",
        "records: 2 (1 from docs)",
        "by kind:",
        "  import                    1",
        "  api_call                  1",
        "by category:",
        "  asyncio                   1",
        "  threading                 1",
        "by category and kind:",
        "                        import  api_call",
        "  asyncio                    .         1",
        "  threading                  1         .",
        "distinct API names: 1",
        "errors: 1",
        "  bad.py: does not parse: x",
    ]
    import dataclasses

    assert format_stats(dataclasses.replace(_result(), commit=None)).split("\n")[0] == (
        "scanner 1.abcdef12.libcst1.9.0, schema 1")
    code, doc = _result().records
    assert format_stats(dataclasses.replace(_result(), records=[doc, doc, code])).split("\n")[2] == (
        "records: 3 (2 from docs)")


def test_records_files_and_errors_are_frozen_and_hashable() -> None:
    import dataclasses

    result = _result()
    for value in (result.records[0], result.files[0], result.errors[0]):
        assert hash(value) == hash(dataclasses.replace(value))
        with pytest.raises(dataclasses.FrozenInstanceError):
            value.path = "x"  # type: ignore[misc]


@pytest.mark.parametrize(("text", "rows"), [
    # a walrus in a function or a class body binds there, not in the module (only a comprehension's goes out)
    ("import asyncio\ndef f():\n    (asyncio := 1)\ndef g():\n    return asyncio.sleep(0)\n",
     [(5, 11, 5, 24, "g", "api_call", "asyncio.sleep", "asyncio", "import_resolution")]),
    ("import asyncio\nclass K:\n    x = (asyncio := 1)\ndef g():\n    return asyncio.sleep(0)\n",
     [(5, 11, 5, 24, "g", "api_call", "asyncio.sleep", "asyncio", "import_resolution")]),
    # a lookup walks past an enclosing function without the name to the one with it
    ("def a():\n    import asyncio\n    def b():\n        def c():\n            return asyncio.sleep(0)\n",
     [(5, 19, 5, 32, "a.b.c", "api_call", "asyncio.sleep", "asyncio", "import_resolution")]),
    # a loop target is another binding of the name: it resolves to nothing
    ("import asyncio\nfor asyncio in x:\n    pass\nasyncio.sleep(0)\n", []),
    ("for asyncio in x:\n    pass\nimport asyncio\nasyncio.sleep(0)\n", []),  # in either order
])
def test_scopes_of_bindings_and_lookups(text: str, rows: list[tuple]) -> None:
    assert _evidence(text) == rows


def test_a_record_positioned_only_by_whitespace_inclusive_spans() -> None:
    """An async comprehension over a parenthesized tuple: both ends are inclusive spans, no node is syntactic."""
    assert _rows("[x async for x in (a, b)]\n") == [
        (1, 3, 1, 24, "<comprehension>", "syntax", "async_comprehension", "syntax", "syntax")]
