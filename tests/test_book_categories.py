"""A book's own category table (issue 34): the build and ``slimebook scan`` read the file the book names the same way.

The book is the demo book (``tests/roots/test-demo-book``, on the demo repository of :func:`conftest.make_demo_repo`,
whose library ``demo`` is used beside asyncio): its ``categories.toml`` extends the default table with a ``demo-pool``
category and the classes ``demo.Pool`` and ``demo.Job``, and its lesson teaches the demo API. That the command line
inside the book needs no flag is in ``tests/test_demo_book.py``; here: the flags outside it, the default table, edits
and errors of the file.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from sphinx.errors import ExtensionError

from slimebook import cli
from slimebook.scan import load_categories, scanner_version

USAGE = "_slimebook/usage"


def _cli_scan(tmp_path: Path, *args: str) -> dict:
    out = tmp_path / "scan.json"
    assert cli.main([*args, "--json", str(out), "--jobs", "1"]) == 0
    return json.loads(out.read_text())


def _lesson_ids(outdir: Path) -> set[str]:
    """The occurrence ids of the lesson's first table (``usage-index :category: demo-pool``)."""
    lesson = Path(outdir, "docs", "lesson.html").read_text()
    return set(re.findall(r'id="(occ-[0-9a-f]{12})"', lesson[:lesson.index('id="demo-lesson-taught"')]))


def test_the_build_and_the_command_line_scan_with_the_book_s_table_alike(demo_book: Path, tmp_path: Path,
                                                                          sphinx_build,
                                                                          monkeypatch: pytest.MonkeyPatch):
    app = sphinx_build(demo_book)
    assert app._warning.getvalue() == ""  # lesson-teaches knows the demo names; the coverage gate is satisfied
    built = json.loads(Path(app.outdir, USAGE, "usage.json").read_text())
    categories = demo_book / "categories.toml"
    lock = demo_book / "locks" / "sources.toml"
    monkeypatch.chdir(tmp_path)  # outside the book: the flags say it all
    flags = ["--lock", str(lock), "--source", "demo"]
    assert _cli_scan(tmp_path, *flags, "scan", "--categories", str(categories)) == built
    assert built["scanner_version"] == scanner_version(load_categories(categories))

    demo = {(r["kind"], r["name"], r["path"]) for r in built["records"] if r["category"] == "demo-pool"}
    assert demo == {
        ("import", "demo", "app/jobs.py"), ("import", "demo.Pool", "app/jobs.py"),
        ("api_call", "demo.connect", "app/jobs.py"), ("method_call", "demo.Pool.submit", "app/jobs.py"),
        ("method_call", "demo.Job.wait", "app/jobs.py"), ("api_reference", "demo.Pool", "app/jobs.py"),
        ("method_call", "demo.Pool.close", "app/jobs.py"), ("api_call", "demo.pool.Pool", "app/jobs.py"),
        ("method_call", "demo.Job.cancel", "app/jobs.py"),
        ("import", "demo", "docs/guide.md"), ("api_call", "demo.connect", "docs/guide.md"),
        ("method_call", "demo.Pool.submit", "docs/guide.md"),
        ("import", "demo.pool.Job", "demo/__init__.py"), ("import", "demo.pool.Pool", "demo/__init__.py"),
        ("import", "demo.pool.connect", "demo/__init__.py"),
    }
    count = sum(r["category"] == "demo-pool" for r in built["records"])  # two submits in app/jobs.py: 16
    index = Path(app.outdir, "docs", "index.html").read_text()
    assert f'the scan counts <span class="slimenum">{count}</span> uses' in index and count == 16

    default = _cli_scan(tmp_path, *flags, "scan")  # no book, no categories file: the default table
    assert not any(r["category"] == "demo-pool" for r in default["records"])
    assert default["scanner_version"] == scanner_version() != built["scanner_version"]


def test_an_edit_of_the_categories_file_renews_what_it_changes(demo_book: Path, sphinx_build):
    first = sphinx_build(demo_book)
    version = json.loads(Path(first.outdir, USAGE, "usage.json").read_text())["scanner_version"]
    categories = demo_book / "categories.toml"

    # a description changes no record: same scanner version (and cache), the category page says the new sentence
    categories.write_text(categories.read_text().replace("worker pool:", "pool of workers:"))
    second = sphinx_build(demo_book)
    data = json.loads(Path(second.outdir, USAGE, "usage.json").read_text())
    assert data["scanner_version"] == version
    assert "pool of workers" in Path(second.outdir, USAGE, "category", "demo-pool.html").read_text()

    # a rule changes records: another scanner version, the lesson read again and its table drawn from the new scan
    categories.write_text(categories.read_text().replace('returns = { submit = "demo.Job" }\n', ""))
    third = sphinx_build(demo_book)
    data = json.loads(Path(third.outdir, USAGE, "usage.json").read_text())
    assert data["scanner_version"] != version
    names = {(r["kind"], r["name"]) for r in data["records"]}
    assert ("method_call", "demo.Job.wait") not in names and ("instance_candidate", "wait") in names
    assert _lesson_ids(Path(third.outdir)) == {
        r["id"] for r in data["records"] if r["category"] == "demo-pool" and r["kind"] != "import"}


def test_a_bad_categories_file_stops_the_build_and_the_scan_at_its_line(demo_book: Path, sphinx_build,
                                                                          capsys: pytest.CaptureFixture):
    categories = demo_book / "categories.toml"
    lines = categories.read_text().splitlines()
    at = lines.index('[types."demo.Job"]') + 2
    lines.insert(at - 1, 'base = "demo.Nothing"')
    categories.write_text("\n".join(lines) + "\n")
    expected = f"{categories}:{at}: [types.\"demo.Job\"] base 'demo.Nothing' is not a tracked class"
    with pytest.raises(ExtensionError) as caught:
        sphinx_build(demo_book)
    assert expected in str(caught.value)
    assert cli.main(["--book", str(demo_book), "scan"]) == 2  # the book's own file, as the build read it
    assert capsys.readouterr().err == f"slimebook: {expected}\n"


#: Functions whose answer depends on the category table → the position of their ``table`` argument (None: keyword
#: only). Each defaults to the default table, which is right only for a book without its own file.
TABLE_TAKERS = {"names_of": 1, "receiver_types": 1, "instance_uses": 2, "declaration_problem": 1,
                "category_members": 1, "coverage": 5, "Figures": 2, "Query": None, "settle": 5, "scan_store": None,
                "scan_items": None, "format_stats": 1, "scanner_version": 0}


def _calls_without_a_table(path: Path) -> list[str]:
    import ast

    missing = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.id if isinstance(node.func, ast.Name) else \
            node.func.attr if isinstance(node.func, ast.Attribute) else None
        if name not in TABLE_TAKERS:
            continue
        position = TABLE_TAKERS[name]
        if any(k.arg == "table" for k in node.keywords) or (position is not None and len(node.args) > position):
            continue
        missing.append(f"{path.name}:{node.lineno}: {name}(…) without the book's table")
    return missing


def test_the_sphinx_layer_and_the_command_line_always_pass_the_book_s_table():
    """A call that left the table out would silently use the default one in a book with its own file."""
    ext = Path(__file__).parents[1] / "_ext" / "slimebook"
    files = [*sorted((ext / "sphinxext").rglob("*.py")), ext / "cli.py"]
    missing = [problem for path in files for problem in _calls_without_a_table(path)]
    assert missing == []
