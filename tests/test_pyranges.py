"""``:pyobject:`` range rules (issue 2): first decorator line to last body line, comments inside kept."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import textwrap
import tokenize

import pytest

from slimebook.pyranges import Definition, SymbolError, definitions, select_definition, symbol_range


def rng(source: str, name: str) -> tuple[int, int]:
    return symbol_range(textwrap.dedent(source), name)


def test_stacked_decorators_start_the_range() -> None:
    src = """\
        import functools

        @functools.cache
        @staticmethod
        def f():
            return 1
        """
    assert rng(src, "f") == (3, 6)


def test_nested_classes() -> None:
    src = """\
        class Outer:
            class Inner:
                def method(self):
                    return 1

            def other(self):
                pass
        """
    assert rng(src, "Outer.Inner.method") == (3, 4)
    assert rng(src, "Outer.Inner") == (2, 4)
    assert rng(src, "Outer") == (1, 7)


def test_comment_after_class_at_outer_indentation_is_excluded() -> None:
    src = """\
        class A:
            x = 1

        # about B, at module level
        class B:
            pass
        """
    assert rng(src, "A") == (1, 2)


def test_comments_at_the_end_of_a_body_are_included() -> None:
    src = """\
        def f():
            x = 1
            # TODO: more
                # deeper still

        # outer comment
        y = 2
        """
    assert rng(src, "f") == (1, 4)


def test_trailing_blank_lines_excluded_at_end_of_file() -> None:
    assert rng("def f():\n    pass\n\n\n\n", "f") == (1, 2)


def test_crlf() -> None:
    assert symbol_range("def f():\r\n    return 1\r\n\r\n# x\r\ndef g():\r\n    pass\r\n", "g") == (5, 6)
    assert symbol_range("def f():\r\n    return 1\r\n\r\n# x\r\ndef g():\r\n    pass\r\n", "f") == (1, 2)


def test_tabs() -> None:
    src = "class A:\n\tdef m(self):\n\t\treturn 1\n\t\t# inside m\n\t# inside A only\n\nz = 0\n"
    assert symbol_range(src, "A.m") == (2, 4)
    assert symbol_range(src, "A") == (1, 5)


def test_async_def_and_nested_function() -> None:
    src = """\
        async def outer():
            async def _drain():
                await x
            return _drain
        """
    assert rng(src, "outer._drain") == (2, 3)


def test_one_line_body() -> None:
    assert rng("def f(): return 1\nx = 2\n", "f") == (1, 1)


def test_unknown_symbol() -> None:
    with pytest.raises(SymbolError, match="no definition named 'nope'"):
        rng("def f():\n    pass\n", "nope")


def test_ambiguous_symbol_lists_lines() -> None:
    src = """\
        class A:
            @property
            def x(self):
                return 1

            @x.setter
            def x(self, v):
                pass
        """
    with pytest.raises(SymbolError, match=r"ambiguous: 2 definitions at L2–L4, L6–L8"):
        rng(src, "A.x")


def test_unparsable() -> None:
    with pytest.raises(SymbolError, match="does not parse"):
        symbol_range("def (:\n", "f")


def test_definitions_in_source_order() -> None:
    names = [d.qualname for d in definitions("class A:\n    def m(self): pass\ndef f(): pass\n")]
    assert names == ["A", "A.m", "f"]


def test_a_hash_line_inside_a_string_is_code_not_a_trailing_comment() -> None:
    """The tokenizer decides what a comment is: a string's last line starting with ``#`` ends the function."""
    src = 's = 0\n\n\ndef f():\n    x = """text\n# inside the string"""\n\n# a comment at module level\n'
    assert symbol_range(src, "f") == (4, 6)


def test_a_deeper_hash_line_inside_a_following_string_is_not_taken_in() -> None:
    src = 'def f():\n    return 1\n    # inside f\nx = """\n    # inside a string\n"""\n'
    assert symbol_range(src, "f") == (1, 3)


def test_comment_lines_counted_with_a_lone_cr() -> None:
    """Lines are the book's line model: a lone CR ends a line for libcst and for the tokenizer alike."""
    src = "# a\rb = 1\n\ndef f():\n    pass\n    # kept\r\n# dropped\n"
    assert symbol_range(src, "f") == (4, 6)


@pytest.mark.parametrize(("wrong", "closest"), [
    ("__aexit__", ["Box.__aexit__", "Other.__aexit__"]),  # unqualified: every class that defines it
    ("Box.__aexitt__", ["Box.__aexit__"]),  # a typo in the qualified name
    ("__aexitt__", ["Box.__aexit__", "Other.__aexit__"]),  # a typo in the last part
])
def test_unknown_symbol_names_the_closest_qualified_names(wrong: str, closest: list[str]) -> None:
    src = ("class Box:\n    async def __aenter__(self):\n        pass\n\n    async def __aexit__(self, *a):\n"
           "        pass\n\n\nclass Other:\n    async def __aexit__(self, *a):\n        pass\n")
    with pytest.raises(SymbolError) as info:
        rng(src, wrong)
    message = str(info.value)
    assert message.startswith(f"no definition named {wrong!r}; closest: ")
    shown = message.split("closest: ", 1)[1].split(", ")
    assert shown[: len(closest)] == closest and len(shown) <= 3


def test_unknown_symbol_with_nothing_close_names_none() -> None:
    with pytest.raises(SymbolError) as info:
        rng("def helper():\n    pass\n", "zzz")
    assert str(info.value) == "no definition named 'zzz'"


#: Every rule in one file; the expected ranges below are written down from reading it (line numbers on the left).
RULES = (
    'import functools\n'  # 1
    '\n'  # 2
    '\n'  # 3
    '@functools.cache\n'  # 4
    '# a comment between decorator and def\n'  # 5
    '@staticmethod\n'  # 6
    'def decorated():\n'  # 7
    '    return 1\n'  # 8
    '    # inside: deeper than the def\n'  # 9
    '\n'  # 10
    '\n'  # 11
    "# outside: at the def's indentation\n"  # 12
    'class Outer:\n'  # 13
    '    """Doc."""\n'  # 14
    '\n'  # 15
    '    class Inner:\n'  # 16
    '        async def method(self):\n'  # 17
    '            text = """\n'  # 18
    '# not a comment: inside a string\n'  # 19
    '"""\n'  # 20
    '            return text\n'  # 21
    "        # at method's indentation: in Inner, not in method\n"  # 22
    '\n'  # 23
    '    def last(self): pass\n'  # 24
    '\n'  # 25
    '\n'  # 26
    '\n'  # 27
    'def tail():\n'  # 28
    '    x = 1\n'  # 29
    '  # shallower than the body but deeper than the def\n'  # 30
    '    # deeper\n'  # 31
)


def test_every_rule_in_one_file_with_written_down_ranges() -> None:
    assert definitions(RULES) == [
        Definition("decorated", "function", 4, 9),  # first decorator; a deeper comment after the body taken in
        Definition("Outer", "class", 13, 24),  # the comment above the class is not in it
        Definition("Outer.Inner", "class", 16, 22),
        Definition("Outer.Inner.method", "function", 17, 21),  # '# ...' inside the string is code
        Definition("Outer.last", "function", 24, 24),  # one-line def; the blank lines after it are not taken
        Definition("tail", "function", 28, 31),  # comments deeper than the def, even shallower than its body
    ]
    assert symbol_range(RULES, "Outer.Inner.method") == (17, 21)
    with pytest.raises(SymbolError):
        symbol_range(RULES, "Inner")  # qualified names only
    defs = definitions(RULES)
    with pytest.raises(dataclasses.FrozenInstanceError):
        defs[0].end = 1  # type: ignore[misc]
    assert select_definition([*defs, Definition("tail", "function", 40, 41)], "decorated") == (4, 9)
    with pytest.raises(SymbolError):
        select_definition([*defs, Definition("tail", "function", 40, 41)], "tail")


def test_a_deeper_comment_after_a_blank_line_is_taken_in() -> None:
    """Blank lines (the tokenizer's NL tokens) are neither code nor comments: the scan goes on past them."""
    assert symbol_range("def f():\n    x = 1\n\n    # deeper, after a blank line\ny = 2\n", "f") == (1, 4)


def test_an_outer_comment_right_after_the_body_is_left_out() -> None:
    """The comment's own indentation decides, not the line above it."""
    assert symbol_range("def f():\n    x = 1\n# outer, no blank line before it\ny = 2\n", "f") == (1, 2)


#: A PEP 701 f-string (3.12 grammar, which libcst reads whatever Python runs): a quote nested in its replacement
#: field. Python 3.11's tokenizer ends the f-string at that quote and then meets an unterminated triple quote.
PEP701 = "def f():\n    return f'{'\"\"\"'}'\n    # deeper than the def: taken in when the tokenizer reads the file\n"


def test_a_text_the_tokenizer_cannot_read_keeps_libcst_s_range() -> None:
    """The tokenizer fallback: every non-blank line counts as code, so no comment after the body is taken in."""
    expected = (1, 2) if sys.version_info < (3, 12) else (1, 3)  # 3.12's tokenizer reads PEP 701
    assert symbol_range(PEP701, "f") == expected


@pytest.mark.parametrize("error", [tokenize.TokenError("EOF in multi-line string", (2, 15)),
                                   IndentationError("unindent does not match any outer indentation level")])
def test_the_tokenizer_fallback_whatever_the_tokenizer_raises(monkeypatch: pytest.MonkeyPatch,
                                                               error: Exception) -> None:
    """Both errors Python's tokenizer raises lead to the fallback (each text is new to the parse memo)."""

    def refuse(readline):
        raise error
        yield  # a generator, as tokenize.generate_tokens is

    monkeypatch.setattr(tokenize, "generate_tokens", refuse)
    tag = type(error).__name__
    # blank lines around the last statement (line 3): numbering the non-blank lines from 1 keeps it in the range
    src = f"def f():\n\n    x = 1  # {tag}\n\n    # deeper comment\ny = 2\n"
    assert symbol_range(src, "f") == (1, 3)
    assert symbol_range(f"class C:  # {tag}\n    def m(self):\n        return 1\n        # in m\n", "C.m") == (2, 3)


def test_deeper_is_decided_on_wide_indentation_too() -> None:
    """A comment at the def's own indentation is left out, also when that indentation is 300 columns wide."""
    src = "if True:\n" + " " * 300 + "def f():\n" + " " * 304 + "return 1\n" + " " * 300 + "# the def's column\n"
    assert symbol_range(src, "f") == (2, 3)


def test_the_def_line_sets_the_outer_indentation() -> None:
    """The indentation compared with is the def line's, not that of the line above it (a comment at column 0)."""
    src = "class A:\n# at column 0, above the method\n    def m(self):\n        return 1\n    # at m's indentation\n"
    assert symbol_range(src, "A.m") == (3, 4)
    assert symbol_range(src, "A") == (1, 5)
    # the line above is indented deeper (a bracket's continuation): the comment is still deeper than the def
    src = "class B:\n    x = [\n            1]\n    def m(self):\n        return 1\n        # in m\n"
    assert symbol_range(src, "B.m") == (4, 6)


#: A class with a long name: a wrong method name is far from every qualified name, close only to a last part.
LONG_CLASS = ("class VeryLongClassName:\n    async def __aenter__(self):\n        pass\n\n"
              "    async def __aexit__(self, *a):\n        pass\n\n    def shutdown(self):\n        pass\n\n\n"
              "def zeta():\n    pass\n")


@pytest.mark.parametrize("wrong", ["__aexitt__", "Qzqzqz.__aexitt__"])
def test_a_typo_in_the_last_part_is_matched_on_last_parts_only(wrong: str) -> None:
    """Only the last parts are close (``__aexitt__`` ~ ``__aexit__``): exactly the one definition ending so."""
    with pytest.raises(SymbolError) as info:
        symbol_range(LONG_CLASS, wrong)
    assert str(info.value) == f"no definition named {wrong!r}; closest: VeryLongClassName.__aexit__"


def test_at_most_three_closest_names() -> None:
    src = "".join(f"class {c}:\n    async def __aexit__(self, *a):\n        pass\n\n\n" for c in "ABCD")
    with pytest.raises(SymbolError) as info:
        symbol_range(src, "__aexit__")
    assert str(info.value) == "no definition named '__aexit__'; closest: A.__aexit__, B.__aexit__, C.__aexit__"


def test_selecting_among_known_definitions_imports_no_libcst() -> None:
    """libcst is imported where a text is parsed, not with the module: a read answered from the range cache
    selects among known definitions and never needs it."""
    script = (
        "import sys\n"
        "from slimebook.pyranges import Definition, closest_names, definitions, select_definition\n"
        "defs = [Definition('A', 'class', 1, 3), Definition('A.run', 'function', 2, 3)]\n"
        "print(select_definition(defs, 'A.run'), closest_names(defs, 'B.run'), 'libcst' in sys.modules)\n"
        "print(definitions('def f():\\n    pass\\n'), 'libcst' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out == ("(2, 3) ['A.run'] False\n"
                   "[Definition(qualname='f', kind='function', start=1, end=2)] True\n")
