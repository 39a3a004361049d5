"""The category table is consistent data (issue 8: 19 categories, one per record), read from a categories file
(issue 34: a book's own file extends or replaces the default; a bad file is an error at its line)."""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from slimebook.scan import categories as c
from slimebook.scan.categories import CategoryError, default_table, load_categories, parse_categories

T = default_table()


def test_nineteen_categories():
    assert len(T.categories) == 19 == len(set(T.categories))
    assert T.categories[-2:] == c.SCANNER_CATEGORIES
    assert all(T.descriptions[name] for name in T.categories)


def test_every_table_entry_has_a_known_category():
    assert set(T.api_prefixes.values()) | set(T.builtins.values()) <= set(T.categories)
    for type_name in T.types:
        assert T.category_of(type_name) in T.categories, type_name


def test_types_referenced_by_rules_are_tracked():
    assert set(T.type_aliases.values()) <= set(T.types)
    assert set(T.constructors.values()) <= set(T.types)
    assert set(T.await_constructors.values()) <= set(T.types)
    assert set(T.method_returns.values()) <= set(T.types)
    assert {t for t, _ in T.method_returns} <= set(T.types)
    assert set(T.type_bases) | set(T.type_bases.values()) <= set(T.types)
    assert T.enter_returns_self <= set(T.types)
    methods = {m for names in T.types.values() for m in names}
    assert T.candidate_methods <= methods
    assert T.string_arg_methods <= T.candidate_methods


def test_longest_prefix_wins():
    assert T.category_of("asyncio") == "asyncio"
    assert T.category_of("asyncio.subprocess.PIPE") == "asyncio"
    assert T.category_of("concurrent.futures.ThreadPoolExecutor") == "executors"
    assert T.category_of("concurrent") is None
    assert T.category_of("contextlib.AsyncExitStack.enter_async_context") == "contextlib-async"
    assert T.category_of("contextlib.contextmanager") is None
    assert T.category_of("os.getpid") == "os-process"
    assert T.category_of("os.path.join") is None
    assert T.category_of("time.sleep") == "time-sleep"
    assert T.category_of("time.time") is None
    assert T.category_of("collections.abc.AsyncIterator") == "async-typing"
    assert T.category_of("types.coroutine") == "coroutine-helpers"
    assert T.category_of("selectors.DefaultSelector") == "select"
    assert T.category_of("torch.multiprocessing.spawn") is None


def test_canonical_types_bases_and_digest():
    assert T.canonical_type("asyncio.queues.Queue") == "asyncio.Queue"
    assert T.canonical_type("asyncio.Queue") == "asyncio.Queue"
    assert T.ancestors("asyncio.Task") == ["asyncio.Future"]
    assert T.inherited_names("asyncio.Task.add_done_callback") == ["asyncio.Future.add_done_callback"]
    assert T.inherited_names("asyncio.Task.get_name") == []
    assert T.members("async-builtins") == ["aiter", "anext"]
    assert re.fullmatch(r"[0-9a-f]{12}", T.digest)


def test_digest_is_the_same_in_another_interpreter():
    """Set order differs between interpreters (hash randomization): the digest must not depend on it."""
    code = "from slimebook.scan.categories import default_table; print(default_table().digest)"
    for seed in ("1", "2"):
        out = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONHASHSEED": seed},
                             capture_output=True, text=True, check=True).stdout.strip()
        assert out == T.digest


@pytest.mark.parametrize("name", [f.name for f in dataclasses.fields(c.CategoryTable)
                                  if f.name not in ("descriptions", "path")])
def test_every_rule_is_in_the_digest(name: str):
    value = getattr(T, name)
    if isinstance(value, dict):
        changed = {**value, (("zz_type", "zz_method") if name == "method_returns" else "zz_extra"): "zz_value"}
    elif isinstance(value, frozenset):
        changed = value | {"zz_extra"}
    else:
        changed = (*value, "zz_extra")
    assert dataclasses.replace(T, **{name: changed}).digest != T.digest


def test_descriptions_and_path_are_not_rules():
    """A description changes no record: the scanner version (and its cache) stays."""
    assert dataclasses.replace(T, descriptions={}, path="elsewhere").digest == T.digest


def test_the_default_file_is_the_default_table():
    assert load_categories(None) is T is load_categories("")
    assert load_categories(c.DEFAULT_FILE).digest == T.digest
    assert T.path == str(c.DEFAULT_FILE)


# -- a book's file --------------------------------------------------------------------------------------------
DEMO = '''\
extends = "default"

[categories.demo-pool]
description = "The demo library's pool."
prefixes = ["demo"]

[types."demo.Pool"]
methods = ["submit", "close"]
returns = { submit = "demo.Job" }
enter_returns_self = true

[types."demo.Job"]
methods = ["wait"]
aliases = ["demo.Pool.Job"]

[constructors]
"demo.connect" = "demo.Pool"

[candidates]
methods = ["submit"]
'''


def test_a_file_that_extends_the_default_adds_to_it():
    table = parse_categories(DEMO, "book/categories.toml")
    assert table.categories == (*T.categories, "demo-pool")
    assert table.descriptions["demo-pool"] == "The demo library's pool."
    assert table.descriptions["asyncio"] == T.descriptions["asyncio"]
    assert table.category_of("demo.Pool.submit") == "demo-pool" and table.category_of("asyncio.gather") == "asyncio"
    assert table.types["demo.Pool"] == ("submit", "close") and "asyncio.Task" in table.types
    assert table.method_returns[("demo.Pool", "submit")] == "demo.Job"
    assert table.constructors["demo.connect"] == "demo.Pool" and "asyncio.create_task" in table.constructors
    assert "demo.Pool" in table.enter_returns_self
    assert table.candidate_methods == T.candidate_methods  # submit was one already
    assert table.digest != T.digest and table.path == "book/categories.toml"


def test_an_entry_of_the_same_name_replaces_the_default_s_in_its_place():
    table = parse_categories('extends = "default"\n[categories.fcntl]\ndescription = "locks"\n'
                             'prefixes = ["fcntl.flock"]\n', "c.toml")
    assert table.categories == T.categories
    assert table.descriptions["fcntl"] == "locks"
    assert table.category_of("fcntl.flock") == "fcntl" and table.category_of("fcntl.lockf") is None


def test_a_file_without_extends_is_the_whole_table():
    text = ('[categories.demo]\nprefixes = ["demo"]\n[categories.syntax]\n[categories.candidates]\n'
            '[types."demo.Pool"]\nmethods = ["submit"]\n[candidates]\nmethods = ["submit"]\n')
    table = parse_categories(text, "c.toml")
    assert table.categories == ("demo", "syntax", "candidates")
    assert table.category_of("asyncio.gather") is None
    assert table.descriptions == {"demo": "", "syntax": "", "candidates": ""}


@pytest.mark.parametrize(("text", "line", "message"), [
    ('extends = "default"\n[categories.demo]\nprefixes = ["demo",,]\n', 3, "not valid TOML"),
    ('extends = "stdlib"\n', 1, "the only table a file can extend"),
    ('extends = "default"\nfoo = 1\n', 2, "unknown top-level key 'foo'"),
    ('extends = "default"\n\n[categories.demo]\nprefix = ["demo"]\n', 4, "unknown key 'prefix'"),
    ('extends = "default"\n[categories.demo]\ndescription = "x"\nprefixes = "demo"\n', 4,
     "prefixes must be a list of dotted names"),
    ('extends = "default"\n[categories.demo]\nprefixes = ["demo..x"]\n', 3, "'demo..x' is not one"),
    ('extends = "default"\n[categories."demo pool"]\n', 2, "letters, digits"),
    ('extends = "default"\n[categories.mine]\nprefixes = ["asyncio"]\n', 3,
     "'asyncio' is in two categories, 'asyncio' and 'mine'"),
    ('extends = "default"\n[categories.syntax]\nprefixes = ["demo"]\n', 2, "takes no prefixes"),
    ('extends = "default"\n[types."demo.Pool"]\nmethods = ["submit"]\n', 2, "lies under no category's prefixes"),
    ('extends = "default"\n[categories.demo]\nprefixes = ["demo"]\n\n[types."demo.Pool"]\nmethods = ["submit"]\n'
     'base = "demo.Base"\n', 7, "base 'demo.Base' is not a tracked class"),
    ('extends = "default"\n[categories.demo]\nprefixes = ["demo"]\n[types."demo.A"]\nbase = "demo.B"\n'
     '[types."demo.B"]\nbase = "demo.A"\n', 5, "go round in a circle"),
    ('extends = "default"\n[categories.demo]\nprefixes = ["demo"]\n[types."demo.Pool"]\nmethods = ["submit"]\n'
     'returns = { sbumit = "demo.Pool" }\n', 6, "'sbumit' is not one of its methods"),
    ('extends = "default"\n[categories.demo]\nprefixes = ["demo"]\n[types."demo.Pool"]\nmethods = ["submit"]\n'
     'enter_returns_self = "yes"\n', 6, "enter_returns_self must be true or false"),
    ('extends = "default"\n[constructors]\n"demo.connect" = "demo.Pool"\n', 3, "'demo.Pool' is not a tracked class"),
    ('extends = "default"\n[candidates]\nmethods = ["frobnicate"]\n', 3, "is no tracked class's method"),
    ('[categories.demo]\nprefixes = ["demo"]\n[categories.syntax]\n', None, "the category 'candidates' is missing"),
])
def test_a_bad_file_is_an_error_at_its_line(text: str, line: int | None, message: str):
    with pytest.raises(CategoryError) as caught:
        parse_categories(text, "book/categories.toml")
    error = caught.value
    assert (error.path, error.line) == ("book/categories.toml", line)
    assert message in error.message
    assert str(error).startswith(f"book/categories.toml:{line}: " if line else "book/categories.toml: ")


def test_a_missing_file_is_an_error_naming_it(tmp_path: Path):
    with pytest.raises(CategoryError, match="no such categories file") as caught:
        load_categories(tmp_path / "nope.toml")
    assert caught.value.path == str(tmp_path / "nope.toml")


def test_the_scanner_reads_the_table_it_is_given():
    from slimebook.scan import scan_code

    code = "import demo\n\nasync def main(pool: demo.Pool):\n    pool.submit(1)\n    demo.connect()\n"
    table = parse_categories(DEMO, "c.toml")
    names = {(r.kind, r.name, r.category) for r in scan_code(code, table).records}
    assert ("method_call", "demo.Pool.submit", "demo-pool") in names
    assert ("api_call", "demo.connect", "demo-pool") in names
    default = {(r.kind, r.name) for r in scan_code(code).records}
    assert default == {("syntax", "async_def")}  # demo.Pool is an annotation of an untracked class there
    assert c.current_table() is T  # the binding ended with the scan
