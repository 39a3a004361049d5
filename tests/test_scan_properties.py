"""Property tests: on generated programs the scanner never crashes, and its syntax records equal,
span for span, what the stdlib ``ast`` module finds (the oracle below, written independently of the
scanner). Example counts are small (``max_examples=30``) so ``make test`` stays fast.

Hypothesis' health checks are on (only ``too_slow`` is off: the machine is shared). The programs of
:data:`PROGRAMS` are constructed to hold async syntax (every one has an ``async def`` with an ``await`` in
it), so the comparison with ``ast`` is never vacuous; the tests over hypothesmith's programs and arbitrary
bytes mostly see text without async syntax and are named ``crash_only``: what they check is that the
scanner returns a status instead of raising (and, for the texts that compile, that it agrees with ``ast``).
``hypothesmith.from_node()`` is not used: its strategy filters out most of what it draws, which the
``filter_too_much`` health check rightly fails.
"""

from __future__ import annotations

import ast
import bisect
import re
import warnings
from collections import Counter

import hypothesmith
import libcst as cst
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from slimebook.scan import scan_code
from slimebook.scan.positions import node_spans

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
NEWLINE = re.compile(r"\r\n|\r|\n")
ASYNC_FOR = re.compile(r"\basync(?:\s|\\)+for(?:\s|\\|\()*$")


# -- the oracle ------------------------------------------------------------------------------------------
def _char_col(lines: list[str], line: int, byte_col: int) -> int:
    return len(lines[line - 1].encode("utf-8")[:byte_col].decode("utf-8", "replace"))


def _span(lines: list[str], node: ast.AST) -> tuple[int, int, int, int]:
    return (node.lineno, _char_col(lines, node.lineno, node.col_offset),
            node.end_lineno, _char_col(lines, node.end_lineno, node.end_col_offset))


def _owns_yield(func: ast.AsyncFunctionDef) -> bool:
    todo = list(func.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return True
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))
    return False


def ast_syntax(text: str) -> Counter:
    """``Counter`` of ``(name, line, col, end_line, end_col)`` syntax records found with ``ast``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tree = ast.parse(text)
    lines = NEWLINE.split(text)
    found: Counter = Counter()
    comprehension_iters = []
    for node in ast.walk(tree):
        if isinstance(node, ast.AsyncFunctionDef):
            found[("async_def", *_span(lines, node))] += 1
            if _owns_yield(node):
                found[("async_generator", *_span(lines, node))] += 1
        elif isinstance(node, ast.Await):
            found[("await", *_span(lines, node))] += 1
        elif isinstance(node, ast.AsyncWith):
            found[("async_with", *_span(lines, node))] += 1
        elif isinstance(node, ast.AsyncFor):
            found[("async_for", *_span(lines, node))] += 1
        elif isinstance(node, ast.comprehension) and node.is_async:
            comprehension_iters.append((node.iter, node.target))
    starts = [0, *(m.end() for m in NEWLINE.finditer(text))]
    for it, target in comprehension_iters:
        # ast gives a comprehension no position: its ``async`` keyword is the last one before the target
        prefix = text[:starts[target.lineno - 1] + _char_col(lines, target.lineno, target.col_offset)]
        keyword = ASYNC_FOR.search(prefix)
        assert keyword is not None
        line = bisect.bisect_right(starts, keyword.start())
        end = _span(lines, it)
        found[("async_comprehension", line, keyword.start() - starts[line - 1], end[2], end[3])] += 1
    return found


def scanner_syntax(text: str) -> Counter:
    result = scan_code(text)
    assert result.status == "ok", result.error
    return Counter((r[6], r[0], r[1], r[2], r[3]) for r in result.records if r[5] == "syntax")


def _compilable(text: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, "<generated>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


# -- generated programs -----------------------------------------------------------------------------------
_NAMES = st.sampled_from(["a", "b", "c", "queue", "asyncio", "loop", "x", "é"])
_SIMPLE = st.one_of(
    _NAMES,
    _NAMES.map(lambda n: f"{n}.get()"),
    _NAMES.map(lambda n: f"asyncio.sleep({n!s})"),
    st.just("(1, 2)"),
    st.just('"s"'),
)


def _expressions(in_async: bool) -> st.SearchStrategy[str]:
    base = _SIMPLE
    if not in_async:
        return st.one_of(base, base.map(lambda e: f"[v for v in {e}]"), base.map(lambda e: f"lambda: {e}"))
    return st.recursive(
        base,
        lambda inner: st.one_of(
            inner.map(lambda e: f"await ({e})" if e.startswith("await") else f"await {e}"),  # no `await await`
            inner.map(lambda e: f"(await ({e}))" if e.startswith("await") else f"(await {e})"),
            inner.map(lambda e: f"[v async for v in {e}]"),
            st.tuples(inner, inner).map(lambda p: f"{{k: await {p[0]} async for k in {p[1]} if k}}"),
            inner.map(lambda e: f"(w async for w in {e})"),
            inner.map(lambda e: f"f'{{await {e}}}'"),
            st.tuples(inner, inner).map(lambda p: f"call({p[0]}, key=await {p[1]})"),
        ),
        max_leaves=4,
    )


def _block(depth: int, in_async: bool, in_function: bool) -> st.SearchStrategy[list[str]]:
    expr = _expressions(in_async)
    simple = [expr.map(lambda e: [e]), expr.map(lambda e: [f"x = {e}"]), st.just(["# comment", ""])]
    if in_function:
        simple.append(expr.map(lambda e: [f"yield {e}"]))
    if depth <= 0:
        return st.lists(st.one_of(simple), min_size=1, max_size=3).map(lambda ls: [line for s in ls for line in s])

    def nested(header: str, body: st.SearchStrategy[list[str]]) -> st.SearchStrategy[list[str]]:
        return body.map(lambda lines: [header, *("    " + line if line else "" for line in lines)])

    compound = [
        nested("async def agen(p):", _block(depth - 1, True, True)),
        nested("def sync(p):", _block(depth - 1, False, True)),
        nested("class K:", _block(depth - 1, False, False)),
    ]
    if in_async:
        compound += [
            nested("async with a as b, c:", _block(depth - 1, True, in_function)),
            nested("async for i in b:", _block(depth - 1, True, in_function)),
        ]
    return st.lists(st.one_of(*simple, *compound), min_size=1, max_size=4).map(
        lambda ls: [line for s in ls for line in s])


#: A module: ``import asyncio``, a generated top-level block, then an ``async def main()`` whose body starts with
#: an ``await`` and goes on with a generated async block, so every program holds ``async_def`` and ``await``.
PROGRAMS = st.tuples(_block(2, False, False), _block(1, True, True), st.sampled_from(["\n", "\r\n"])).map(
    lambda p: p[2].join(["import asyncio", *p[0], "async def main():", "    await asyncio.sleep(0)",
                         *("    " + line if line else "" for line in p[1])]) + p[2])


@SETTINGS
@given(PROGRAMS)
def test_generated_async_programs_match_ast(text: str):
    # nested same-quote f-strings need Python 3.12: the few such programs are skipped (the filter_too_much health
    # check fails the test if that ever becomes most of them)
    assume(_compilable(text))
    expected = ast_syntax(text)
    assert {name for name, *_ in expected} >= {"async_def", "await"}, expected
    assert scanner_syntax(text) == expected


def _crash_only(text: str | bytes) -> None:
    result = scan_code(text)  # must not raise, whatever the text
    assert result.status in ("ok", "error")
    if result.status == "ok" and isinstance(text, str) and _compilable(text):
        assert scanner_syntax(text) == ast_syntax(text)


@SETTINGS
@given(hypothesmith.from_grammar())
def test_crash_only_grammar_programs(text: str):
    _crash_only(text)


@SETTINGS
@given(st.binary(max_size=200))
def test_crash_only_arbitrary_bytes(data: bytes):
    _crash_only(data)


# -- positions against libcst's own providers ---------------------------------------------------------------
POSITION_SOURCE = (
    "import asyncio  # é\r\n"
    "@deco(  # c\n"
    "    1)\n"
    "async def f(a: 'x' = (b), *c) -> int:  # trailing\n"
    "\tx = ((await (asyncio . sleep)(1)))\n"
    "\tfor i in [j async for j in k if j]: pass\n"
    "\tclass C:\n"
    "\t\tdef g(self): return f'{self.x!r:>{w}}'\n"
    "\n"
    "    # footer comment\n"
)


@pytest.mark.parametrize("text", [POSITION_SOURCE, "x = 1", "", "\n\n", "if a:\n    b\nelse:\n    c  # c\n"])
def test_node_spans_equal_position_provider(text: str):
    module = cst.parse_module(text)
    wrapper = cst.metadata.MetadataWrapper(module, unsafe_skip_copy=True)
    syntactic = wrapper.resolve(cst.metadata.PositionProvider)
    inclusive = wrapper.resolve(cst.metadata.WhitespaceInclusivePositionProvider)
    nodes = list(syntactic)
    spans = node_spans(module, text, nodes, [n for n in inclusive if isinstance(n, cst.Asynchronous)])
    n_lines = len(NEWLINE.split(text))
    for node in nodes:
        r = syntactic[node]
        if isinstance(node, cst.Asynchronous):
            r = inclusive[node]
        if r.end.line > n_lines:  # libcst counts the newline it adds to a file without one
            continue
        assert spans[id(node)] == (r.start.line, r.start.column, r.end.line, r.end.column), node
