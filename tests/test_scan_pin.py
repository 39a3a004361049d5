"""Optional: the scanner on the pinned Slime commit (skipped when the pin is not in the cache)."""

from __future__ import annotations

import ast
import re
import warnings
from collections import Counter
from pathlib import Path

import pytest
from test_scan_properties import ast_syntax

from slimebook.lock import load_lock
from slimebook.scan import scan_store
from slimebook.scan.visitor import decode_source
from slimebook.store import SourceStore

LOCK = Path(__file__).resolve().parent.parent / "sources" / "sources.toml"


@pytest.mark.realbook
def test_pin_scans_without_errors_and_matches_ast_syntax():
    store = SourceStore(load_lock(LOCK))
    if not store.is_present():
        pytest.skip("the pinned Slime commit is not in the source cache; fetch it with: make sources")
    result = scan_store(store)
    assert result.errors == []
    assert {f.source for f in result.files} == {"code", "doc"}
    assert len(result.files) == len(store.files(".py")) + len(store.files(".md"))
    assert len({r.id for r in result.records}) == len(result.records)
    scanned = Counter((r.path, r.name, r.line, r.col, r.end_line, r.end_col)
                      for r in result.records if r.kind == "syntax" and r.source == "code")
    expected: Counter = Counter()
    for path in store.files(".py"):
        text = decode_source(store.read_bytes(path))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                ast.parse(text)
            except SyntaxError:
                continue
        for key, n in ast_syntax(text).items():
            expected[(path, *key)] += n
    assert scanned == expected
    assert re.fullmatch(r"\d+\.[0-9a-f]{8}\.libcst.+", result.version)
