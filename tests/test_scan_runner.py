"""The scan runner: cache, processes, errors, ids, writers, the store and the CLI (no Slime needed)."""

from __future__ import annotations

import faulthandler
import hashlib
import io
import json
import os
import re
import signal
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from slimebook import cli
from slimebook.lock import load_lock
from slimebook.scan import ScanItem, scan_code, scan_items, scan_store, scanner_version, write_json, write_tsv
from slimebook.scan import runner as runner_module
from slimebook.scan.records import RECORD_FIELDS, SCHEMA_VERSION
from slimebook.store import SourceStore

GOOD = b"import asyncio\n\n\nasync def main():\n    await asyncio.sleep(1)\n"
BAD = b"import asyncio\ndef broken(:\n    pass\n"
DOC = b"# Doc\n\n```python\nawait asyncio.gather()\n```\n"


def _items(files: dict[str, bytes], fail_load: bool = False) -> list[ScanItem]:
    def loader(data: bytes):
        def load() -> bytes:
            if fail_load:
                raise AssertionError("a warm scan must not read sources")
            return data
        return load
    return [
        ScanItem(path, "doc" if path.endswith(".md") else "code", hashlib.sha1(data).hexdigest(), loader(data))
        for path, data in files.items()
    ]


FILES = {"a.py": GOOD, "pkg/b.py": GOOD.replace(b"sleep(1)", b"sleep(2)"), "bad.py": BAD, "README.md": DOC}


def test_cold_then_warm_reads_only_the_cache(tmp_path: Path):
    cold = scan_items(_items(FILES), jobs=1, cache_dir=tmp_path)
    entries = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.json"))
    assert len(entries) == 4 and all(e.startswith(scanner_version() + "/") for e in entries)
    assert not list(tmp_path.rglob("*.tmp"))
    warm = scan_items(_items(FILES, fail_load=True), jobs=1, cache_dir=tmp_path)
    assert warm.records == cold.records and warm.files == cold.files and warm.errors == cold.errors
    assert warm.version == cold.version == scanner_version()


def test_same_content_at_two_paths_shares_one_entry_but_not_ids(tmp_path: Path):
    result = scan_items(_items({"x.py": GOOD, "y.py": GOOD}), jobs=1, cache_dir=tmp_path)
    assert len(list(tmp_path.rglob("*.json"))) == 1
    by_path = {p: [r for r in result.records if r.path == p] for p in ("x.py", "y.py")}
    assert [r.name for r in by_path["x.py"]] == [r.name for r in by_path["y.py"]]
    assert not {r.id for r in by_path["x.py"]} & {r.id for r in by_path["y.py"]}


def test_all_cores_equal_one_process():
    many = {f"m{i}.py": GOOD + f"x = {i}\n".encode() for i in range(6)} | FILES
    parallel = scan_items(_items(many), jobs=2, cache=False)
    assert parallel.records == scan_items(_items(many), jobs=1, cache=False).records


def test_a_negative_job_count_scans_in_this_process():
    """``slimebook scan --jobs -1`` scans in this process, as ``--jobs 1`` does (a pool needs at least one worker)."""
    assert scan_items(_items(FILES), jobs=-1, cache=False).records == scan_items(_items(FILES), jobs=1,
                                                                                  cache=False).records


def test_a_file_that_does_not_parse_is_an_error_and_the_scan_goes_on():
    result = scan_items(_items(FILES), jobs=1, cache=False)
    assert [(e.path, e.source, e.line) for e in result.errors] == [("bad.py", "code", 3)]  # libcst's location
    assert "does not parse" in result.errors[0].message
    status = {f.path: f.status for f in result.files}
    assert status == {"a.py": "ok", "pkg/b.py": "ok", "bad.py": "error", "README.md": "ok"}
    assert {r.path for r in result.records} == {"a.py", "pkg/b.py", "README.md"}
    assert [f.path for f in result.files] == ["a.py", "bad.py", "pkg/b.py", "README.md"]
    doc = [r for r in result.records if r.source == "doc"]
    assert [(r.line, r.kind, r.name) for r in doc] == [(4, "syntax", "await")]


def test_internal_errors_are_reported_and_not_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    def explode(data, table=None):
        raise RuntimeError("boom")
    monkeypatch.setattr(runner_module, "scan_code", explode)
    result = scan_items(_items({"a.py": GOOD}), jobs=1, cache_dir=tmp_path)
    assert [e.message for e in result.errors] == ["internal scanner error: RuntimeError('boom')"]
    assert not list(tmp_path.rglob("*.json"))


def test_a_crashing_parser_costs_only_its_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    real = runner_module.scan_code

    def crash_on_marker(data, table=None):
        if b"CRASH" in data:
            faulthandler.disable()  # pytest's handler would print the crash; it is expected here
            os.kill(os.getpid(), signal.SIGSEGV)
        return real(data, table)
    monkeypatch.setattr(runner_module, "scan_code", crash_on_marker)
    files = {"a.py": GOOD, "crash.py": b"CRASH = 1\n", "c.py": GOOD + b"x = 1\n"}
    result = scan_items(_items(files), jobs=2, cache_dir=tmp_path)
    assert [(e.path, e.message) for e in result.errors] == [
        ("crash.py", f"the parser crashed on this file (exit code {-signal.SIGSEGV})")]
    assert {r.path for r in result.records} == {"a.py", "c.py"}
    assert len(list(tmp_path.rglob("*.json"))) == 3


def test_an_unwritable_cache_costs_speed_not_results(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """No entry can be written, neither by a worker nor for the file whose parser crashed: the scan still ends."""
    real = runner_module.scan_code

    def crash_on_marker(data, table=None):
        if b"CRASH" in data:
            faulthandler.disable()
            os.kill(os.getpid(), signal.SIGSEGV)
        return real(data, table)

    def read_only(path, text):
        raise PermissionError(f"read-only: {path}")
    monkeypatch.setattr(runner_module, "scan_code", crash_on_marker)
    monkeypatch.setattr(runner_module, "atomic_write", read_only)
    files = {"a.py": GOOD, "crash.py": b"CRASH = 1\n"}
    result = scan_items(_items(files), jobs=2, cache_dir=tmp_path)
    assert [(e.path, e.message) for e in result.errors] == [
        ("crash.py", f"the parser crashed on this file (exit code {-signal.SIGSEGV})")]
    assert {r.path for r in result.records} == {"a.py"}
    assert not list(tmp_path.rglob("*.json"))


def test_deeply_nested_brackets_are_refused_before_parsing():
    result = scan_code(b"x = " + b"(" * 3000 + b"1" + b")" * 3000 + b"\n")
    assert result.status == "error" and "nested" in result.error[0]
    assert scan_code(b"x = " + b"(" * 200 + b"1" + b")" * 200 + b"\n").status == "ok"


def test_ids_survive_lines_inserted_above_and_are_unique():
    source = "import asyncio\n\nasync def f():\n    await asyncio.sleep(1)\n    await asyncio.sleep(2)\n"
    moved = "import os\n\n\ndef g():\n    pass\n\n" + source
    first = scan_items(_items({"m.py": source.encode()}), jobs=1, cache=False).records
    second = scan_items(_items({"m.py": moved.encode()}), jobs=1, cache=False).records
    assert [r.id for r in first] == [r.id for r in second]
    assert [r.line + 6 for r in first] == [r.line for r in second]
    assert len({r.id for r in first}) == len(first)
    sleeps = [r for r in first if r.name == "asyncio.sleep"]
    assert sleeps[0].id != sleeps[1].id
    # written down (sha1 of "m.py\0f\0api_call\0asyncio.sleep\0<ordinal>", computed by hand with hashlib)
    assert [sleeps[0].id, sleeps[1].id] == ["occ-3b3ad5ccc211", "occ-3f17ed49613f"]
    assert all(len(r.id) == 16 and r.id.startswith("occ-") for r in first)


def test_json_and_tsv_writers():
    result = scan_items(_items({"t.py": b"import asyncio\nx = 1;\tawait asyncio.sleep(0)\n"}), jobs=1, cache=False)
    stream = io.StringIO()
    write_json(result, stream)
    data = json.loads(stream.getvalue())
    assert data["schema_version"] == SCHEMA_VERSION and data["fields"] == list(RECORD_FIELDS)
    assert data["records"][0] == result.records[0].as_dict()
    assert data["files"][0]["path"] == "t.py" and data["errors"] == []
    stream = io.StringIO()
    write_tsv(result, stream)
    rows = stream.getvalue().splitlines()
    assert rows[0].split("\t") == list(RECORD_FIELDS)
    assert len(rows) == 1 + len(result.records)
    assert all(len(row.split("\t")) == len(RECORD_FIELDS) for row in rows)
    assert "x = 1;\\tawait asyncio.sleep(0)" in rows[-1]


def test_scanned_code_is_never_imported_or_executed(tmp_path: Path):
    marker = tmp_path / "executed"
    code = f"open({str(marker)!r}, 'w').close()\nraise SystemExit(3)\nimport no_such_module_anywhere\n"
    assert scan_code(code.encode()).status == "ok"
    assert not marker.exists()


def test_the_scanner_imports_neither_sphinx_nor_the_sphinx_layer():
    probe = ("import sys, slimebook.scan, slimebook.scan.runner\n"
             "print(sorted(m for m in sys.modules if m.startswith(('sphinx', 'slimebook.sphinxext'))))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# -- the real store, built from a git repository made here ------------------------------------------------
def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@e", *args], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout.strip()


@pytest.fixture
def pinned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    repo = tmp_path / "upstream"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "a.py").write_bytes(GOOD)
    (repo / "pkg" / "bad.py").write_bytes(BAD)
    (repo / "docs.md").write_bytes(DOC)
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "fixture")
    sha = _git(repo, "rev-parse", "HEAD")
    lock = tmp_path / "sources.toml"
    lock.write_text(
        f'[slime]\nurl = "{repo}"\ncommit = "{sha}"\nlicense = "Apache-2.0"\n'
        'blob_url = "https://example.invalid/{commit}/{path}{anchor}"\n', encoding="utf-8")
    monkeypatch.setenv("SLIMEBOOK_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("SLIME_SOURCE_URL", str(repo))
    SourceStore(load_lock(lock)).fetch()
    return lock


def test_scan_store_reads_the_pin_and_caches_under_cache_root(pinned: Path, tmp_path: Path):
    store = SourceStore(load_lock(pinned))
    result = scan_store(store, jobs=2)
    assert result.commit == store.lock.commit
    assert [(f.path, f.source, f.status) for f in result.files] == [
        ("pkg/a.py", "code", "ok"), ("pkg/bad.py", "code", "error"), ("docs.md", "doc", "ok")]
    assert [f.blob for f in result.files] == [store.blob_id(f.path) for f in result.files]
    assert {(r.path, r.source) for r in result.records} == {("pkg/a.py", "code"), ("docs.md", "doc")}
    assert len(list((tmp_path / "cache" / "scan" / scanner_version()).rglob("*.json"))) == 3
    assert scan_store(SourceStore(load_lock(pinned))).records == result.records


def test_cli_scan_writes_json_tsv_and_stats(pinned: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    out, tsv = tmp_path / "out" / "scan.json", tmp_path / "scan.tsv"
    missing = cli.main(["--lock", str(pinned), "scan", "--json", str(out), "--jobs", "1"])
    assert missing == 2 and "is not a directory" in capsys.readouterr().err  # no directories made for you
    assert not out.parent.exists()
    out.parent.mkdir()
    code = cli.main(["--lock", str(pinned), "scan", "--json", str(out), "--tsv", str(tsv), "--stats", "--jobs", "1"])
    assert code == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    assert {r["kind"] for r in data["records"]} == {"import", "syntax", "api_call"}
    assert [e["path"] for e in data["errors"]] == ["pkg/bad.py"]
    assert tsv.read_text(encoding="utf-8").splitlines()[0].split("\t") == list(RECORD_FIELDS)
    stats = capsys.readouterr().out
    for needle in ("by kind:", "by category:", "files scanned: 3 (2 code, 1 doc with 1 Python blocks)",
                   "distinct API names: 1", "errors: 1", "pkg/bad.py: does not parse"):
        assert needle in stats


def test_cli_scan_without_the_pin_is_a_store_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]):
    monkeypatch.setenv("SLIMEBOOK_CACHE", str(tmp_path / "empty-cache"))
    lock = tmp_path / "sources.toml"
    lock.write_text('[slime]\nurl = "x"\ncommit = "' + "0" * 40 + '"\nlicense = "MIT"\nblob_url = "x"\n',
                    encoding="utf-8")
    assert cli.main(["--lock", str(lock), "scan"]) == 2
    assert "not in the source cache" in capsys.readouterr().err


def test_progress_sees_every_cold_file_once_and_a_warm_scan_not_at_all(tmp_path: Path):
    seen: list[tuple[int, list[str]]] = []

    def progress(paths, count):
        shown: list[str] = []
        seen.append((count, shown))
        for path in paths:
            shown.append(path)
            yield path

    warm_first = {"a.py": GOOD}
    scan_items(_items(warm_first), jobs=1, cache_dir=tmp_path)
    scan_items(_items(FILES), jobs=2, cache_dir=tmp_path, progress=progress)
    assert [(count, sorted(shown)) for count, shown in seen] == [(3, ["README.md", "bad.py", "pkg/b.py"])]
    scan_items(_items(FILES, fail_load=True), jobs=1, cache_dir=tmp_path, progress=progress)
    assert len(seen) == 1


def test_a_progress_display_that_stops_early_loses_no_result(tmp_path: Path):
    def first_only(paths, count):
        yield next(iter(paths))

    result = scan_items(_items(FILES), jobs=1, cache_dir=tmp_path, progress=first_only)
    assert [f.path for f in result.files] == ["a.py", "bad.py", "pkg/b.py", "README.md"]
    assert len(list(tmp_path.rglob("*.json"))) == 4


def test_a_warm_scan_imports_no_libcst(tmp_path: Path):
    """The scanner (and libcst) is imported on a cache miss only: a warm scan in a fresh process reads JSON."""
    scan_items(_items(FILES), jobs=1, cache_dir=tmp_path)
    script = (
        "import sys, hashlib\n"
        "from slimebook.scan import ScanItem, scan_items\n"
        f"files = {FILES!r}\n"
        "items = [ScanItem(p, 'doc' if p.endswith('.md') else 'code', hashlib.sha1(d).hexdigest(), lambda: 1 / 0)\n"
        "         for p, d in files.items()]\n"
        f"result = scan_items(items, jobs=1, cache_dir=__import__('pathlib').Path({str(tmp_path)!r}))\n"
        "print(len(result.files), 'libcst' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["4", "False"]


def test_cache_entries_are_named_by_blob_and_source_and_bad_ones_are_rescanned(tmp_path: Path):
    items = [ScanItem("a.py", "code", "d9" + "b" * 38, lambda: GOOD),
             ScanItem("r.md", "doc", "ab" * 20, lambda: b"```python\nawait x\n```\n")]
    version = scanner_version()
    assert re.fullmatch(r"1\.[0-9a-f]{8}\.libcst" + re.escape(metadata.version("libcst")), version)
    first = scan_items(items, jobs=1, cache_dir=tmp_path)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.json")) == [
        f"{version}/ab/{'ab' * 19}.doc.json", f"{version}/d9/{'b' * 38}.code.json"]
    assert [(f.path, f.status, f.records, f.blocks) for f in first.files] == [("a.py", "ok", 4, None),
                                                                             ("r.md", "ok", 1, 1)]
    code_entry = tmp_path / version / "d9" / f"{'b' * 38}.code.json"
    for bad in ("not json", "[1, 2]", '{"status": "ok"}'):  # unreadable, not an object, no records: scanned again
        code_entry.write_text(bad, encoding="utf-8")
        again = scan_items(items, jobs=1, cache_dir=tmp_path)
        assert again.records == first.records
        assert json.loads(code_entry.read_text(encoding="utf-8"))["status"] == "ok"


def test_scan_store_without_docs(pinned: Path):
    result = scan_store(SourceStore(load_lock(pinned)), jobs=1, cache=False, docs=False)
    assert [(f.path, f.source) for f in result.files] == [("pkg/a.py", "code"), ("pkg/bad.py", "code")]


def test_errors_list_code_before_docs(monkeypatch: pytest.MonkeyPatch):
    def explode(data, table=None):
        raise RuntimeError("doc")
    monkeypatch.setattr(runner_module, "scan_markdown", explode)
    result = scan_items(_items({"a.md": DOC, "z.py": BAD}), jobs=1, cache=False)
    assert [(e.path, e.source) for e in result.errors] == [("z.py", "code"), ("a.md", "doc")]


def test_all_available_cores_and_an_unwritable_cache(tmp_path: Path):
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory")
    result = scan_items(_items(FILES), jobs=None, cache_dir=blocked)  # one worker per core; entries cannot be written
    assert result.records == scan_items(_items(FILES), jobs=1, cache=False).records
    assert blocked.read_text() == "not a directory"


def test_the_scanner_version_digests_the_table_and_the_scanner_s_sources():
    """The rule of scanner_version, computed here from the files: a change to any scanner source renews the cache."""
    from slimebook.scan.categories import default_table

    here = Path(runner_module.__file__).parent
    digest = hashlib.sha1(default_table().digest.encode())
    for source in [*sorted(here.glob("*.py")), here.parent / "lines.py"]:
        digest.update(source.name.encode() + b"\0" + source.read_bytes())
    assert scanner_version() == f"1.{digest.hexdigest()[:8]}.libcst{metadata.version('libcst')}"
    assert scanner_version(default_table()) == scanner_version()


def test_another_table_is_another_scanner_version_and_cache(tmp_path: Path):
    """A book's categories file is part of the version: changing it renews the cache; its records follow it."""
    from slimebook.scan.categories import parse_categories

    text = 'extends = "default"\n[categories.demo]\nprefixes = ["demo"]\n'
    table = parse_categories(text, "c.toml")
    again = parse_categories(text, "elsewhere.toml")
    changed = parse_categories(text.replace('["demo"]', '["demo", "demolib"]'), "c.toml")
    assert scanner_version(table) == scanner_version(again)  # the content counts, not where the file is
    assert len({scanner_version(), scanner_version(table), scanner_version(changed)}) == 3
    items = [ScanItem("a.py", "code", "ab" * 20, lambda: b"import demo\ndemo.run()\n")]
    plain = scan_items(items, jobs=1, cache_dir=tmp_path)
    book = scan_items(items, jobs=1, cache_dir=tmp_path, table=table)
    assert [r.name for r in plain.records] == [] and book.version == scanner_version(table)
    assert [(r.kind, r.name, r.category) for r in book.records] == [("import", "demo", "demo"),
                                                                    ("api_call", "demo.run", "demo")]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([scanner_version(), scanner_version(table)])
    pooled = scan_items(items * 2, jobs=2, cache=False, table=table)  # the workers get the table too
    assert [r.name for r in pooled.records] == ["demo", "demo.run"] * 2


def test_scan_items_are_frozen():
    import dataclasses

    item = _items({"a.py": GOOD})[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        item.path = "b.py"  # type: ignore[misc]
