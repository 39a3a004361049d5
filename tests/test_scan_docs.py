"""Doc blocks: fenced Python in Markdown, repairs that keep positions, and the token fallback."""

from __future__ import annotations

import dataclasses

import libcst as cst
import pytest

from slimebook.scan import scan_markdown
from slimebook.scan.docs import Block, fenced_python_blocks, repair, scan_block, token_records, tokenize


def test_fences_and_their_indentation():
    text = (
        "intro\n"
        "```python\nimport asyncio\n```\n"
        "- item\n\n"
        "    ~~~~ py title=x\n    await x\n      y\n  z\n    ~~~~\n"
        "```bash\nawait no\n```\n"
        "````markdown\n```python\nawait nested\n```\n````\n"
        "```Python3\nlast\n"
    )
    blocks = fenced_python_blocks(text)
    assert [(b.first_line, b.lines, b.removed) for b in blocks] == [
        (3, ("import asyncio",), (0,)),
        (8, ("await x", "  y", "z"), (4, 4, 2)),
        (21, ("last",), (0,)),
    ]


def test_backtick_fence_info_may_not_hold_backticks():
    assert fenced_python_blocks("```python `x`\nawait y\n```\n") == []


def test_repairs_keep_lines_and_report_shifts():
    code = "def f(x) -> int\nasync def g():\n    # only a comment\nclass C:\n    '''doc'''\n        ...\n"
    text, shifts = repair(code)
    assert text.split("\n") == [
        "def f(x) -> int: ...", "async def g(): ...", "    # only a comment", "class C:", "    '''doc'''",
        "    ...", "",
    ]
    assert shifts == [0, 0, 0, 0, 0, 4, 0]
    cst.parse_module(text)


def test_a_block_indented_as_a_whole_is_dedented():
    text, shifts = repair("    await x\n    if y:\n        z\n")
    assert text == "await x\nif y:\n    z\n"
    assert shifts == [4, 4, 4, 0]


def test_scan_block_status():
    assert scan_block("await x\n")[1] == "ok"
    records, status = scan_block("async def f(a) -> int\n")
    assert status == "repaired"
    assert [(r[0], r[1], r[2], r[3], r[6]) for r in records] == [(1, 0, 1, 21, "async_def")]
    records, status = scan_block("import asyncio\nprint 'x', await asyncio.sleep(1)\n")
    assert status == "tokens"
    assert [(r[5], r[6], r[8]) for r in records] == [
        ("import", "asyncio", "import_statement"),
        ("syntax", "await", "token_fallback"),
        ("api_call", "asyncio.sleep", "token_fallback"),
    ]


def test_token_fallback_finds_async_syntax_imports_and_scopes():
    text = (
        "from concurrent import futures as f\n"
        "import queue\n"
        "async def outer(:\n"
        "    async with f.ThreadPoolExecutor() as ex:\n"
        "        yield [x async for x in aiter(y)]\n"
        "    queue.Queue\n"
        "def g(\n"
        "    await z\n"
    )
    records = token_records(text, {}, line_offset=10)
    assert [(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7]) for r in sorted(records)] == [
        (11, 23, 11, 35, "<module>", "import", "concurrent.futures", "executors"),
        (12, 7, 12, 12, "<module>", "import", "queue", "queue"),
        (13, 0, 13, 15, "outer", "syntax", "async_def", "syntax"),
        (13, 0, 13, 15, "outer", "syntax", "async_generator", "syntax"),
        (14, 4, 14, 14, "outer", "syntax", "async_with", "syntax"),
        (14, 15, 14, 35, "outer", "api_call", "concurrent.futures.ThreadPoolExecutor", "executors"),
        (15, 17, 15, 26, "outer", "syntax", "async_comprehension", "syntax"),
        (15, 32, 15, 37, "outer", "api_call", "aiter", "async-builtins"),
        (16, 4, 16, 15, "outer", "api_reference", "queue.Queue", "queue"),
        (18, 4, 18, 9, "g", "syntax", "await", "syntax"),
    ]
    assert all(r[8] == "token_fallback" for r in records)


def test_markdown_positions_and_crlf():
    text = "Title\r\n\r\n  ```python\r\n  import asyncio\r\n  await asyncio.sleep(1)\r\n  ```\r\n"
    result = scan_markdown(text.encode())
    assert result.blocks == 1 and result.status == "ok"
    got = [(r[0], r[1], r[2], r[3], r[5], r[6], r[9]) for r in result.records]
    assert got == [
        (4, 9, 4, 16, "import", "asyncio", "  import asyncio"),
        (5, 2, 5, 24, "syntax", "await", "  await asyncio.sleep(1)"),
        (5, 8, 5, 21, "api_call", "asyncio.sleep", "  await asyncio.sleep(1)"),
    ]


def test_markdown_without_blocks():
    result = scan_markdown(b"\xef\xbb\xbf# nothing here\n")
    assert result.records == [] and result.blocks == 0 and result.status == "ok"


def test_the_tolerant_tokenizer_counts_lines_through_strings_and_continuations():
    text = 'x = f"a\\\nb" + """q\r\nr"""  # c\n\ty\\\n z'
    assert [(t.kind, t.text, t.line, t.col, t.end) for t in tokenize(text)] == [
        ("name", "x", 1, 0, (1, 1)), ("ws", " ", 1, 1, (1, 2)), ("op", "=", 1, 2, (1, 3)), ("ws", " ", 1, 3, (1, 4)),
        ("string", 'f"a\\\nb"', 1, 4, (2, 2)),  # a backslash-newline inside a string: the string goes on
        ("ws", " ", 2, 2, (2, 3)), ("op", "+", 2, 3, (2, 4)), ("ws", " ", 2, 4, (2, 5)),
        ("string", '"""q\r\nr"""', 2, 5, (3, 4)),  # CRLF inside: one line break
        ("ws", "  ", 3, 4, (3, 6)), ("comment", "# c", 3, 6, (3, 9)), ("nl", "\n", 3, 9, (4, 0)),
        ("ws", "\t", 4, 0, (4, 1)), ("name", "y", 4, 1, (4, 2)), ("cont", "\\\n", 4, 2, (5, 0)),
        ("ws", " ", 5, 0, (5, 1)), ("name", "z", 5, 1, (5, 2)),
    ]


def test_the_tolerant_tokenizer_never_fails():
    text = "a $ 1.5e3 ... -> := **= //= <<= != ` 'open\n\"x\r"
    assert [(t.kind, t.text, t.line, t.col) for t in tokenize(text) if t.kind != "ws"] == [
        ("name", "a", 1, 0), ("other", "$", 1, 2), ("number", "1.5e3", 1, 4), ("op", "...", 1, 10),
        ("op", "->", 1, 14), ("op", ":=", 1, 17), ("op", "**=", 1, 20), ("op", "//=", 1, 24), ("op", "<<=", 1, 28),
        ("op", "!=", 1, 32), ("other", "`", 1, 35), ("string", "'open", 1, 37),  # unterminated: up to the line end
        ("nl", "\n", 1, 42), ("string", '"x', 2, 0), ("nl", "\r", 2, 2),
    ]


def _rows(records):
    return [tuple(r[:9]) for r in records]


def test_an_unclosed_fence_keeps_its_last_line_without_a_final_newline():
    blocks = fenced_python_blocks("```python\n\nawait x")
    assert [(b.first_line, b.lines, b.removed) for b in blocks] == [(2, ("", "await x"), (0, 0))]


def test_a_tab_the_parser_expanded_cuts_only_the_whitespace_there_is():
    """In a list item indented 3, ``\\tx = 1`` is `` x = 1`` to the parser (the tab is 4 columns): the raw line loses
    its one whitespace character, not 3 characters."""
    blocks = fenced_python_blocks("1. a\n\n   ```python\n\tx = 1\n   ```\n")
    assert [(b.first_line, b.lines, b.removed) for b in blocks] == [(4, ("x = 1",), (1,))]
    with pytest.raises(dataclasses.FrozenInstanceError):
        blocks[0].first_line = 1  # type: ignore[misc]


def test_repair_leaves_code_alone_that_needs_nothing():
    assert repair("f(\nx") == ("f(\nx", [0, 0])  # an unclosed bracket up to the last token
    assert repair("def f(): return g(1)\n") == ("def f(): return g(1)\n", [0, 0])  # a one-line def has its body
    assert repair(" await x\n if y:\n  z\n") == ("await x\nif y:\n z\n", [1, 1, 1, 0])  # indented by one column


def test_a_block_ending_in_a_line_continuation_is_scanned_wrapped():
    """Only inside the wrapper ``async def`` does the final backslash find a line to continue: records map back."""
    records, status = scan_block("await a()\nasync def inner():\n    await b()\nx = 1 \\\n")
    assert status == "repaired"
    assert _rows(records) == [
        (1, 0, 1, 9, "<module>", "syntax", "await", "syntax", "syntax"),
        (2, 0, 3, 13, "inner", "syntax", "async_def", "syntax", "syntax"),
        (3, 4, 3, 13, "inner", "syntax", "await", "syntax", "syntax"),
    ]
    assert [r[9] for r in records] == ["await a()", "async def inner():", "    await b()"]  # the block's own lines


def test_chunks_after_one_that_fails_are_still_repaired():
    records, status = scan_block("print 'x', await y\nasync def h(a) -> int\n")
    assert status == "tokens"
    assert _rows(records) == [
        (1, 11, 1, 16, "<module>", "syntax", "await", "syntax", "token_fallback"),
        (2, 0, 2, 21, "h", "syntax", "async_def", "syntax", "syntax"),  # the chunk parsed once repaired
    ]


def test_a_chunk_starts_at_its_statement_s_first_line():
    records, status = scan_block("print 'bad'\nx = f(\n  await y)\n")
    assert status == "tokens"
    assert _rows(records) == [(3, 2, 3, 9, "<module>", "syntax", "await", "syntax", "syntax")]  # x = f(...) parsed


def test_token_fallback_async_generators_loops_and_import_lists():
    text = ("async def a():\n    yield 1\n    yield 2\n    async def b():\n        yield 3\n        yield 4\n"
            "    async for x in y:\n        pass\nimport asyncio, threading\n")
    assert _rows(token_records(text, {})) == [
        (1, 0, 1, 11, "a", "syntax", "async_def", "syntax", "token_fallback"),
        (1, 0, 1, 11, "a", "syntax", "async_generator", "syntax", "token_fallback"),  # once, for two yields
        (4, 4, 4, 15, "a.b", "syntax", "async_def", "syntax", "token_fallback"),
        (4, 4, 4, 15, "a.b", "syntax", "async_generator", "syntax", "token_fallback"),
        (7, 4, 7, 13, "a", "syntax", "async_for", "syntax", "token_fallback"),  # at the start of its line
        (9, 7, 9, 14, "<module>", "import", "asyncio", "asyncio", "token_fallback"),
        (9, 16, 9, 25, "<module>", "import", "threading", "threading", "token_fallback"),
    ]
    assert _rows(token_records("def a():\n    async def b():\n        yield 3\n        yield 4\n", {})) == [
        (2, 4, 2, 15, "a.b", "syntax", "async_def", "syntax", "token_fallback"),
        (2, 4, 2, 15, "a.b", "syntax", "async_generator", "syntax", "token_fallback"),
    ]


def test_token_fallback_a_line_in_an_open_bracket_continues_the_logical_line():
    """Only a statement keyword (or ``async def`` / ``async with``) starts a new logical line inside an unclosed
    bracket: ``x with y`` does not, so the ``await`` below stays in ``outer``'s logical line."""
    assert _rows(token_records("async def outer():\n    f(\nx with y\n    await q\n", {})) == [
        (1, 0, 1, 15, "outer", "syntax", "async_def", "syntax", "token_fallback"),
        (4, 4, 4, 9, "outer", "syntax", "await", "syntax", "token_fallback"),
    ]


def test_fences_without_an_info_string_or_content():
    assert fenced_python_blocks("```\nawait x\n```\n```python\n```\n") == [Block(5, (), ())]


def test_repair_headers():
    assert repair("x)\ndef g()\n") == ("x)\ndef g(): ...\n", [0, 0, 0])  # a stray bracket closes nothing
    # colons inside brackets are not the header's; a header followed by a deeper line has a body
    assert repair("def f(a: int, b={1: 2}) -> int\nclass C(B)\n    x = 1\nasync\n") == (
        "def f(a: int, b={1: 2}) -> int: ...\nclass C(B):\n    x = 1\nasync\n", [0, 0, 0, 0, 0])
    assert repair("def f(\n    a,\n    b)\nreturn 1\n") == ("def f(\n    a,\n    b): ...\nreturn 1\n", [0, 0, 0, 0, 0])


def test_chunks_keep_decorators_and_handlers_with_their_statement():
    code = "try:\n    await a()\nexcept E:\n    pass\n@d\nasync def f(:\n    await b()\nawait c()\n"
    records, status = scan_block(code)
    assert status == "tokens"
    assert _rows(records) == [
        (2, 4, 2, 13, "<module>", "syntax", "await", "syntax", "syntax"),  # try/except: one chunk, parsed
        (6, 0, 6, 11, "f", "syntax", "async_def", "syntax", "token_fallback"),  # @d and the broken def: one chunk
        (7, 4, 7, 9, "f", "syntax", "await", "syntax", "token_fallback"),
        (8, 0, 8, 5, "f", "syntax", "await", "syntax", "token_fallback"),  # still inside f's open bracket
    ]
    # a statement keyword ends the open bracket's line; the parsed chunks' imports serve the token scan
    records, status = scan_block("import asyncio\n@d\nasync def f(:\n    pass\nawait asyncio.sleep(1)\n")
    assert (status, _rows(records)) == ("tokens", [
        (1, 7, 1, 14, "<module>", "import", "asyncio", "asyncio", "import_statement"),
        (3, 0, 3, 11, "f", "syntax", "async_def", "syntax", "token_fallback"),
        (5, 0, 5, 22, "<module>", "syntax", "await", "syntax", "syntax"),
        (5, 6, 5, 19, "<module>", "api_call", "asyncio.sleep", "asyncio", "import_resolution"),
    ])


def test_token_fallback_import_forms_and_names():
    text = ("from concurrent.futures import (ThreadPoolExecutor as P, wait)\nfrom . import asyncio\n"
            "from queue import *\nimport asyncio.subprocess\nimport threading as\nasyncio.subprocess.PIPE\n"
            "P()\nwait(x)\nx.aiter(y)\naiter\n"
            "anext(z)\nasyncio.nothing_here()\ndef\nclass K:\n    await k\n")
    assert _rows(token_records(text, {})) == [
        (1, 32, 1, 55, "<module>", "import", "concurrent.futures.ThreadPoolExecutor", "executors", "token_fallback"),
        (1, 57, 1, 61, "<module>", "import", "concurrent.futures.wait", "executors", "token_fallback"),
        # from . import asyncio: relative, no record and no binding; from queue import *: no name
        (4, 7, 4, 25, "<module>", "import", "asyncio.subprocess", "asyncio", "token_fallback"),  # binds asyncio
        (5, 7, 5, 19, "<module>", "import", "threading", "threading", "token_fallback"),  # "as" with no name
        (6, 0, 6, 23, "<module>", "api_reference", "asyncio.subprocess.PIPE", "asyncio", "token_fallback"),
        (7, 0, 7, 1, "<module>", "api_call", "concurrent.futures.ThreadPoolExecutor", "executors", "token_fallback"),
        (8, 0, 8, 4, "<module>", "api_call", "concurrent.futures.wait", "executors", "token_fallback"),
        # x.aiter(y): an attribute, not the builtin; aiter without a call: no record
        (11, 0, 11, 5, "<module>", "api_call", "anext", "async-builtins", "token_fallback"),
        (12, 0, 12, 20, "<module>", "api_call", "asyncio.nothing_here", "asyncio", "token_fallback"),
        (15, 4, 15, 9, "K", "syntax", "await", "syntax", "token_fallback"),  # a class is a scope too
    ]


def test_markdown_status_is_the_worst_block_s_and_positions_follow_each_block():
    md = ("# t\n\n```python\nprint 'x', await y\n```\n\n- item\n\n  ```python\n  async def f(a) -> int\n  ```\n\n"
          "```python\nawait z\n```\n")
    result = scan_markdown(md)
    assert (result.status, result.blocks) == ("tokens", 3)  # tokens, then repaired, then ok
    assert [tuple(r[:10]) for r in result.records] == [
        (4, 11, 4, 16, "<module>", "syntax", "await", "syntax", "token_fallback", "print 'x', await y"),
        (10, 2, 10, 23, "f", "syntax", "async_def", "syntax", "syntax", "  async def f(a) -> int"),
        (14, 0, 14, 7, "<module>", "syntax", "await", "syntax", "syntax", "await z"),
    ]


def test_repair_dedents_every_over_indented_run():
    assert repair("x = 1\n    y = 2\n") == ("x = 1\ny = 2\n", [0, 4, 0])  # the second line already
    assert repair("x = 1\n    if a:\n        b\n") == ("x = 1\nif a:\n    b\n", [0, 4, 4, 0])  # deeper lines go along
    assert repair("x = 1\n    y = 2\nz = 3\n    w = 4\n") == ("x = 1\ny = 2\nz = 3\nw = 4\n", [0, 4, 0, 4, 0])
    text, shifts = repair("x = 1\n" + "    y = 1\n" * 299)  # a run of more than 256 logical lines, to the end
    assert text == "x = 1\n" + "y = 1\n" * 299 and shifts == [0] + [4] * 299 + [0]


def test_repair_stops_after_one_dedent_per_line():
    """A line that cannot be dedented (a form feed before its spaces is not stripped) uses up the budget of one
    attempt per line, so the over-indented ``w = 4`` after it is left as it is."""
    code = "x = 1\n\f    y = 2\nz = 3\n    w = 4\n"
    assert repair(code) == (code, [0, 0, 0, 0, 0])


def test_token_fallback_long_lines_nested_scopes_and_dots():
    records = token_records("x = [" + "a, " * 150 + "aiter(y)]\n", {})  # more than 256 tokens in one line
    assert _rows(records) == [(1, 455, 1, 460, "<module>", "api_call", "aiter", "async-builtins", "token_fallback")]
    text = "async def a():\n    async def b():\n        async def c():\n            await x\n        await y\n"
    assert _rows(token_records(text, {})) == [
        (1, 0, 1, 11, "a", "syntax", "async_def", "syntax", "token_fallback"),
        (2, 4, 2, 15, "a.b", "syntax", "async_def", "syntax", "token_fallback"),
        (3, 8, 3, 19, "a.b.c", "syntax", "async_def", "syntax", "token_fallback"),
        (4, 12, 4, 17, "a.b.c", "syntax", "await", "syntax", "token_fallback"),
        (5, 8, 5, 13, "a.b", "syntax", "await", "syntax", "token_fallback"),
    ]
    assert token_records(".anext(z)\n", {}) == []  # an attribute, even at the start of a line
    assert _rows(token_records("import asyncio\nasyncio.\n", {})) == [  # a trailing dot ends the name
        (1, 7, 1, 14, "<module>", "import", "asyncio", "asyncio", "token_fallback"),
        (2, 0, 2, 7, "<module>", "api_reference", "asyncio", "asyncio", "token_fallback"),
    ]


def test_markdown_status_repaired_after_ok_and_the_last_line_without_a_newline():
    result = scan_markdown("```python\nawait x\n```\n\n```python\nasync def f(a) -> int\n```\n\n```python\nawait x")
    assert result.status == "repaired"
    assert [tuple(r[:10]) for r in result.records] == [
        (2, 0, 2, 7, "<module>", "syntax", "await", "syntax", "syntax", "await x"),
        (6, 0, 6, 21, "f", "syntax", "async_def", "syntax", "syntax", "async def f(a) -> int"),
        (10, 0, 10, 7, "<module>", "syntax", "await", "syntax", "syntax", "await x"),  # the file's last line
    ]


def test_chunks_that_parse_alone_but_not_together_are_token_scanned_whole():
    """``    \\`` + ``await a`` parses (repaired) and ``x = 1 \\`` parses wrapped, but the two together neither way."""
    records, status = scan_block("    \\\nawait a\nx = 1 \\\n")
    assert (status, [tuple(r[:10]) for r in records]) == (
        "tokens", [(2, 0, 2, 5, "<module>", "syntax", "await", "syntax", "token_fallback", "await a")])


def test_blocks_longer_than_256_lines_chunks_and_tokens():
    """Counts past 256 are distinct int objects in CPython: every bound below is compared by value."""
    code = "f(\n" + "a,\n" * 200 + "x"  # an open bracket up to the last of 400 tokens
    assert repair(code) == (code, [0] * 202)
    text, shifts = repair("x = 1\n" * 300 + "def f()\n")  # a header as the last of 301 logical lines
    assert text == "x = 1\n" * 300 + "def f(): ...\n" and shifts == [0] * 302
    records, status = scan_block("await a\n" * 300 + "print 'bad'\n")  # 301 chunks
    assert status == "tokens" and len(records) == 300
    assert tuple(records[-1][:9]) == (300, 0, 300, 7, "<module>", "syntax", "await", "syntax", "syntax")
    assert token_records("x = [" + "a, " * 150 + "b] def\n", {}) == []  # a def ending a long line names nothing
    assert _rows(token_records("import asyncio\nx = " + "a, " * 150 + "asyncio\n", {})) == [  # a name ending it
        (1, 7, 1, 14, "<module>", "import", "asyncio", "asyncio", "token_fallback"),
        (2, 454, 2, 461, "<module>", "api_reference", "asyncio", "asyncio", "token_fallback"),
    ]


def test_a_header_followed_by_a_shallower_line_has_no_body():
    assert repair("class C:\n    def f()\nx = 1\n") == ("class C:\n    def f(): ...\nx = 1\n", [0, 0, 0, 0])


def test_token_fallback_def_without_a_name_and_a_parenthesized_import():
    assert _rows(token_records("async def (:\n    await x\n", {})) == [  # no name after def: no definition
        (2, 4, 2, 9, "<module>", "syntax", "await", "syntax", "token_fallback")]
    assert token_records("import (asyncio)\n", {}) == []  # not an import of asyncio (parentheses need "from")


def test_fenced_blocks_more_line_and_tab_cases():
    # a first line that is empty and a last line without a newline: the last line is kept
    assert fenced_python_blocks("\n```python\nawait x") == [Block(3, ("await x",), (0,))]
    # the parser gives "  x = 1" for "   \tx = 1" in a list item indented 2: only the fence's 2 characters are cut
    assert fenced_python_blocks("- a\n\n  ```python\n   \tx = 1\n  ```\n") == [Block(4, (" \tx = 1",), (2,))]


def test_tokens_spanning_three_lines_and_frozen_tokens():
    tokens = tokenize("'''a\nb\nc''' x")
    assert [(t.kind, t.line, t.col, t.end) for t in tokens] == [
        ("string", 1, 0, (3, 4)), ("ws", 3, 4, (3, 5)), ("name", 3, 5, (3, 6))]
    assert len({tokens[2], tokenize("x")[0]}) == 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        tokens[0].line = 2  # type: ignore[misc]


@pytest.mark.parametrize(("code", "repaired", "shifts"), [
    ("f(\nasync def", "f(\nasync def: ...", [0, 0]),  # "async def" inside an open bracket starts a line
    ("f(a, pass)\n  y = 1\n", "f(a, pass)\ny = 1\n", [0, 2, 0]),  # a keyword in the middle of a line does not
    ("def f() -> int | None\n", "def f() -> int | None: ...\n", [0, 0]),
    ("def f) x:\n", "def f) x:: ...\n", [0, 0]),  # a colon after an unmatched bracket is not the header's
    ("async def\n", "async def: ...\n", [0, 0]),
    ("async with x\n    y\n", "async with x\ny\n", [0, 4, 0]),  # async with is not a def header
    ("async a\n", "async a\n", [0, 0]), ("static def f()\n", "static def f()\n", [0, 0]),
    ("a def f()\n", "a def f()\n", [0, 0]),
    ("if a:\n    b\n", "if a:\n    b\n", [0, 0, 0]), ("", "", [0]), ("# c\n", "# c\n", [0, 0]),
    ("        a\n    b\n", "a\nb\n", [8, 4, 0]),  # the whole block by its first line's indentation
    ("    if a:\n            b", "if a:\n        b", [4, 4]),  # no final newline: the last line cut once
    ("x = a\n    y = 2\n", "x = a\ny = 2\n", [0, 4, 0]),
    ("a\n  b\n    c\n      d\n        e\n", "a\nb\nc\nd\ne\n", [0, 2, 4, 6, 8, 0]),  # four dedents, six lines
    ("x = 1\n    y = 2\nif a:\n        w = 4\n", "x = 1\ny = 2\nif a:\n        w = 4\n", [0, 4, 0, 0, 0]),
    ("a = 1\n    b = 2\n  c = f(\n    1)\n", "a = 1\nb = 2\nc = f(\n  1)\n", [0, 4, 2, 2, 0]),
    ("x = 1\n    y = f(\n        1)\n", "x = 1\ny = f(\n    1)\n", [0, 4, 4, 0]),
    ("def f()\n    pass\n", "def f():\n    pass\n", [0, 0, 0]),
    ("def f(): return x\n", "def f(): return x\n", [0, 0]),
    ("def f():\n    pass\ndef g()\n", "def f():\n    pass\ndef g(): ...\n", [0, 0, 0, 0]),
])
def test_repair_cases(code: str, repaired: str, shifts: list[int]):
    assert repair(code) == (repaired, shifts)


@pytest.mark.parametrize(("code", "status", "rows"), [
    # parses only wrapped and repaired (the last variant)
    ("async def f(a) -> int\nx = 1 \\\n", "repaired", [(1, 0, 1, 21, "f", "syntax", "async_def", "syntax", "syntax")]),
    # wrapped: ends are moved back as well as starts
    ("await a(); x = 1\nx = 1 \\\n", "repaired", [(1, 0, 1, 9, "<module>", "syntax", "await", "syntax", "syntax")]),
    # a dedented line: its own shift, not the line above's
    ("x = 1\n    await y\n", "repaired", [(2, 4, 2, 11, "<module>", "syntax", "await", "syntax", "syntax")]),
    ("x = 1\n    await y(\n1); z = 2\n", "repaired", [(2, 4, 3, 2, "<module>", "syntax", "await", "syntax", "syntax")]),
    # a chunk starts on its first token's line, and a decorator stays with its def
    ("print 'bad'\nawait \\\n  y\n", "tokens", [(2, 0, 3, 3, "<module>", "syntax", "await", "syntax", "syntax")]),
    ("import asyncio\nprint 'x'\n@asyncio.coroutine\nasync def f():\n    await g()\n", "tokens", [
        (1, 7, 1, 14, "<module>", "import", "asyncio", "asyncio", "import_statement"),
        (3, 1, 3, 18, "<module>", "api_reference", "asyncio.coroutine", "asyncio", "import_resolution"),
        (4, 0, 5, 13, "f", "syntax", "async_def", "syntax", "syntax"),
        (5, 4, 5, 13, "f", "syntax", "await", "syntax", "syntax"),
    ]),
])
def test_scan_block_cases(code: str, status: str, rows: list[tuple]):
    records, got = scan_block(code)
    assert (got, _rows(records)) == (status, rows)


def test_token_fallback_a_line_starting_with_a_capital_inside_a_bracket_continues():
    assert _rows(token_records("async def outer():\n    f(\nX with y\n    await q\n", {})) == [
        (1, 0, 1, 15, "outer", "syntax", "async_def", "syntax", "token_fallback"),
        (4, 4, 4, 9, "outer", "syntax", "await", "syntax", "token_fallback"),
    ]


@pytest.mark.parametrize(("text", "rows"), [
    # a dedent closes every deeper scope
    ("async def a():\n    async def b():\n        pass\nawait x\n", [
        (1, 0, 1, 11, "a", "syntax", "async_def", "syntax", "token_fallback"),
        (2, 4, 2, 15, "a.b", "syntax", "async_def", "syntax", "token_fallback"),
        (4, 0, 4, 5, "<module>", "syntax", "await", "syntax", "token_fallback")]),
    ("y import asyncio\n", []),  # "import" after another word is not an import line
    ("async with\n", [(1, 0, 1, 10, "<module>", "syntax", "async_with", "syntax", "token_fallback")]),
    ("async def f\n    await x\n", [  # the name as the line's last token
        (1, 0, 1, 11, "f", "syntax", "async_def", "syntax", "token_fallback"),
        (2, 4, 2, 9, "f", "syntax", "await", "syntax", "token_fallback")]),
    ("def f(): async\n", []), ("x def f():\n", []),  # async only right before def
    ("def anext(x):\n", []),  # the defined name is not a call of the builtin
    ("def f await x\n", [(1, 6, 1, 11, "f", "syntax", "await", "syntax", "token_fallback")]),
    ("[a for a in b]\n", []),
    ("def f():\n    yield 1\n", []), ("async def f():\n    zip(x)\n", [  # only a yield in an async def
        (1, 0, 1, 11, "f", "syntax", "async_def", "syntax", "token_fallback")]),
    ("async def a():\n    async def b():\n        yield 1\n    yield 2\n", [  # the inner generator, then the outer
        (1, 0, 1, 11, "a", "syntax", "async_def", "syntax", "token_fallback"),
        (2, 4, 2, 15, "a.b", "syntax", "async_def", "syntax", "token_fallback"),
        (2, 4, 2, 15, "a.b", "syntax", "async_generator", "syntax", "token_fallback"),
        (1, 0, 1, 11, "a", "syntax", "async_generator", "syntax", "token_fallback")]),
    ("import asyncio\nasyncio.(x)\n", [  # a dotted name goes on only through names
        (1, 7, 1, 14, "<module>", "import", "asyncio", "asyncio", "token_fallback"),
        (2, 0, 2, 7, "<module>", "api_reference", "asyncio", "asyncio", "token_fallback")]),
    ("aiter(\n", [(1, 0, 1, 5, "<module>", "api_call", "aiter", "async-builtins", "token_fallback")]),
    ("aiter '1'\n", []), ("aiter.x()\n", []),  # not called; an attribute of it is called
    ("from asyncio import 'a'\n", [  # whatever follows import is a name to the token scan
        (1, 20, 1, 23, "<module>", "import", "asyncio.'a'", "asyncio", "token_fallback")]),
    ("from asyncio import *, sleep\n", [  # names after a star are still read
        (1, 23, 1, 28, "<module>", "import", "asyncio.sleep", "asyncio", "token_fallback")]),
])
def test_token_fallback_cases(text: str, rows: list[tuple]):
    assert _rows(token_records(text, {})) == rows


def test_a_block_without_a_final_newline_and_list_item_columns():
    records, status = scan_block("x = 1\n    await y")  # the last line: its shift and its code
    assert [tuple(r[:10]) for r in records] == [
        (2, 4, 2, 11, "<module>", "syntax", "await", "syntax", "syntax", "    await y")]
    records, status = scan_block("await x\n")
    assert [tuple(r[:10]) for r in records] == [
        (1, 0, 1, 7, "<module>", "syntax", "await", "syntax", "syntax", "await x")]
    # the fence's content lines lost 4 and 2 characters in the list item: each record moves by its own line's count
    result = scan_markdown("- item\n\n    ~~~~ py\n    x = 1\n  await z(); y\n    ~~~~\n")
    assert [tuple(r[:10]) for r in result.records] == [
        (5, 2, 5, 11, "<module>", "syntax", "await", "syntax", "syntax", "  await z(); y")]
