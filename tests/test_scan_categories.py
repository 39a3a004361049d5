"""The category table is consistent data (issue 8: 19 categories, one per record)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from slimebook.scan import categories as c


def test_nineteen_categories():
    assert len(c.CATEGORIES) == 19 == len(set(c.CATEGORIES))


def test_every_table_entry_has_a_known_category():
    assert set(c.API_PREFIXES.values()) | set(c.BUILTINS.values()) <= set(c.CATEGORIES)
    for type_name in c.TYPES:
        assert c.category_of(type_name) in c.CATEGORIES, type_name


def test_types_referenced_by_rules_are_tracked():
    assert set(c.TYPE_ALIASES.values()) <= set(c.TYPES)
    assert set(c.CONSTRUCTORS.values()) <= set(c.TYPES)
    assert set(c.AWAIT_CONSTRUCTORS.values()) <= set(c.TYPES)
    assert set(c.METHOD_RETURNS.values()) <= set(c.TYPES)
    assert {t for t, _ in c.METHOD_RETURNS} <= set(c.TYPES)
    assert c.ENTER_RETURNS_SELF <= set(c.TYPES)
    methods = {m for names in c.TYPES.values() for m in names}
    assert c.CANDIDATE_METHODS <= methods
    assert c.STRING_ARG_METHODS <= c.CANDIDATE_METHODS


def test_longest_prefix_wins():
    assert c.category_of("asyncio") == "asyncio"
    assert c.category_of("asyncio.subprocess.PIPE") == "asyncio"
    assert c.category_of("concurrent.futures.ThreadPoolExecutor") == "executors"
    assert c.category_of("concurrent") is None
    assert c.category_of("contextlib.AsyncExitStack.enter_async_context") == "contextlib-async"
    assert c.category_of("contextlib.contextmanager") is None
    assert c.category_of("os.getpid") == "os-process"
    assert c.category_of("os.path.join") is None
    assert c.category_of("time.sleep") == "time-sleep"
    assert c.category_of("time.time") is None
    assert c.category_of("collections.abc.AsyncIterator") == "async-typing"
    assert c.category_of("types.coroutine") == "coroutine-helpers"
    assert c.category_of("selectors.DefaultSelector") == "select"
    assert c.category_of("torch.multiprocessing.spawn") is None


def test_canonical_types_and_digest():
    assert c.canonical_type("asyncio.queues.Queue") == "asyncio.Queue"
    assert c.canonical_type("asyncio.Queue") == "asyncio.Queue"
    assert re.fullmatch(r"[0-9a-f]{8}", c.table_digest())


def test_digest_is_the_same_in_another_interpreter():
    """Set order differs between interpreters (hash randomization): the digest must not depend on it."""
    code = "from slimebook.scan.categories import table_digest; print(table_digest())"
    for seed in ("1", "2"):
        out = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONHASHSEED": seed},
                             capture_output=True, text=True, check=True).stdout.strip()
        assert out == c.table_digest()


@pytest.mark.parametrize("table", ["API_PREFIXES", "BUILTINS", "TYPES", "TYPE_ALIASES", "CONSTRUCTORS",
                                   "AWAIT_CONSTRUCTORS", "METHOD_RETURNS", "ENTER_RETURNS_SELF",
                                   "CANDIDATE_METHODS", "STRING_ARG_METHODS", "BUILTIN_TYPES", "CATEGORIES"])
def test_every_table_is_in_the_digest(table: str, monkeypatch: pytest.MonkeyPatch):
    before = c.table_digest()
    value = getattr(c, table)
    if isinstance(value, dict):
        key = ("zz_type", "zz_method") if table == "METHOD_RETURNS" else "zz_extra"
        changed = {**value, key: "zz_value"}
    elif isinstance(value, (set, frozenset)):
        changed = type(value)({*value, "zz_extra"})
    else:
        changed = type(value)([*value, "zz_extra"])
    monkeypatch.setattr(c, table, changed)
    assert c.table_digest() != before
