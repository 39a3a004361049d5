"""The range cache (``slimebook.rangecache``): definitions parsed once per blob and read back without libcst.

A warm read happens in a fresh process (``_in_child``), where ``libcst.parse_module`` raises: the cache, not a
parse and not this process's memo, has to answer. Expected ranges are written down literally.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import ROOT, SourceRepo
from slimebook.excerpt import read_excerpt
from slimebook.lock import load_lock
from slimebook.pyranges import Definition, SymbolError
from slimebook.rangecache import blob_definitions, ranges_version
from slimebook.store import SourceStore

SOURCE = textwrap.dedent("""\
    import functools


    @functools.cache
    def f():
        return 1


    class A:
        def m(self):
            # inside m
            pass
    """)
EXPECTED = [Definition("f", "function", 4, 6), Definition("A", "class", 9, 12),
            Definition("A.m", "function", 10, 12)]
BROKEN = "def broken(:\n    pass\n"


def _blob(text: str) -> str:
    data = text.encode()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _in_child(root: Path, blob: str, text: str, package: Path = ROOT / "_ext") -> str:
    """Run ``blob_definitions`` in a new process whose libcst cannot parse; return what it printed."""
    script = textwrap.dedent(f"""\
        import sys
        sys.path.insert(0, {str(package)!r})
        import libcst

        def refuse(*args, **kwargs):
            raise AssertionError("a warm read parsed")

        libcst.parse_module = refuse
        from slimebook.pyranges import SymbolError
        from slimebook.rangecache import blob_definitions
        try:
            found = blob_definitions({str(root)!r}, {blob!r}, {text!r})
        except SymbolError as exc:
            print("SymbolError:", exc)
        else:
            print([(d.qualname, d.kind, d.start, d.end) for d in found])
        """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_a_cold_read_writes_one_entry_and_a_warm_read_parses_nothing(tmp_path: Path) -> None:
    blob = _blob(SOURCE)
    assert blob_definitions(tmp_path, blob, SOURCE) == EXPECTED
    entries = list((tmp_path / "ranges").rglob("*.json"))
    assert [p.relative_to(tmp_path).as_posix() for p in entries] == [
        f"ranges/{ranges_version()}/{blob[:2]}/{blob[2:]}.json"]
    assert json.loads(entries[0].read_text()) == {
        "definitions": [["f", "function", 4, 6], ["A", "class", 9, 12], ["A.m", "function", 10, 12]]}
    assert not list(tmp_path.rglob("*.tmp"))
    assert _in_child(tmp_path, blob, SOURCE) == (
        "[('f', 'function', 4, 6), ('A', 'class', 9, 12), ('A.m', 'function', 10, 12)]")


def test_a_text_that_does_not_parse_is_cached_as_its_error(tmp_path: Path) -> None:
    blob = _blob(BROKEN)
    with pytest.raises(SymbolError) as cold:
        blob_definitions(tmp_path, blob, BROKEN)
    assert str(cold.value).startswith("does not parse: ")
    assert _in_child(tmp_path, blob, BROKEN) == f"SymbolError: {cold.value}"


def test_an_entry_that_is_not_ours_is_computed_again(tmp_path: Path) -> None:
    blob = _blob(SOURCE)
    entry = tmp_path / "ranges" / ranges_version() / blob[:2] / f"{blob[2:]}.json"
    entry.parent.mkdir(parents=True)
    entry.write_text('{"definitions": [["f", "function"')  # half an entry, as a crash without atomic writes left it
    assert blob_definitions(tmp_path, blob, SOURCE) == EXPECTED
    assert json.loads(entry.read_text())["definitions"][0] == ["f", "function", 4, 6]


def test_without_a_root_nothing_is_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert blob_definitions(None, _blob(SOURCE), SOURCE) == EXPECTED
    assert not list(tmp_path.rglob("*"))


def test_the_version_changes_when_the_rule_changes(tmp_path: Path) -> None:
    """An edited ``pyranges.py`` (or line model) gives another version, so a stale entry is never read."""
    package = tmp_path / "ext"
    shutil.copytree(ROOT / "_ext" / "slimebook", package / "slimebook",
                    ignore=shutil.ignore_patterns("__pycache__"))
    script = f"import sys; sys.path.insert(0, {str(package)!r}); from slimebook.rangecache import ranges_version; " \
             "print(ranges_version())"

    def version() -> str:
        return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout

    assert version().strip() == ranges_version()
    for name in ("pyranges.py", "lines.py"):
        before = version()
        with (package / "slimebook" / name).open("a", encoding="utf-8") as handle:
            handle.write("\n# an edit of the rule\n")
        assert version() != before


def test_excerpts_read_symbols_through_the_cache(tmp_path: Path, fetched_cache: Path,
                                                 source_repo: SourceRepo) -> None:
    """``:pyobject:`` is answered from ``<store root>/ranges``; the store's root decides where the cache is."""
    lock = tmp_path / "sources.toml"
    lock.write_text(source_repo.lock_text())
    root = tmp_path / "root"
    shutil.copytree(fetched_cache / "git", root / "git")  # the pin alone: other tests' cache entries stay behind
    store = SourceStore(load_lock(lock), root=root)
    excerpt = read_excerpt(store, "pkg/mod.py", pyobject="helper")
    assert excerpt.runs == [(4, 6)]
    blob = store.blob_id("pkg/mod.py")
    assert [p.name for p in (root / "ranges").rglob("*.json")] == [f"{blob[2:]}.json"]
    assert _in_child(root, blob, store.read_text("pkg/mod.py")).startswith("[('helper', 'function', 4, 6)")
