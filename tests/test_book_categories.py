"""A book's own category table (issue 34): the build and ``slimebook scan`` read the file the book names the same way.

The fixture upstream (built here, one commit) uses a library named ``demo`` beside asyncio; the root
``test-categories`` names ``categories.toml``, which extends the default table with a ``demo-pool`` category and the
classes ``demo.Pool`` and ``demo.Job``. Its lesson teaches the demo API and lists its uses with ``usage-index``.
"""

from __future__ import annotations

import json
import re
import shutil
import textwrap
from pathlib import Path

import pytest
from sphinx.errors import ExtensionError

from conftest import ROOTS, git
from slimebook import cli
from slimebook.lock import load_lock
from slimebook.scan import load_categories, scanner_version
from slimebook.store import SourceStore

JOBS = textwrap.dedent('''\
    import asyncio

    import demo
    from demo import Pool


    async def run(n):
        pool = demo.connect("tcp://x")
        job = pool.submit(n)
        await asyncio.sleep(0)
        return job.wait()


    def stop(p: Pool):
        p.close()
        with demo.pool.Pool() as other:
            other.submit(2).cancel()
    ''')

GUIDE = textwrap.dedent('''\
    # Guide

    ```python
    import demo

    demo.connect("tcp://y").submit(1)
    ```
    ''')

LOCK = textwrap.dedent('''\
    [slime]
    url = "{url}"
    commit = "{commit}"
    license = "Apache-2.0"
    blob_url = "https://example.invalid/up/blob/{{commit}}/{{path}}{{anchor}}"
    ''')

USAGE = "_slimebook/usage"


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, Path]:
    """(work tree, pinned commit, a source cache holding it)."""
    base = tmp_path_factory.mktemp("categories-git")
    repo = base / "upstream"
    (repo / "app").mkdir(parents=True)
    (repo / "docs").mkdir()
    git("init", "--quiet", "--initial-branch=main", str(repo), cwd=base)
    (repo / "app" / "jobs.py").write_text(JOBS)
    (repo / "docs" / "guide.md").write_text(GUIDE)
    git("add", "-A", cwd=repo)
    git("commit", "--quiet", "-m", "one", cwd=repo)
    commit = git("rev-parse", "HEAD", cwd=repo).strip()
    cache = tmp_path_factory.mktemp("categories-cache")
    lock = base / "sources.toml"
    lock.write_text(LOCK.format(url=repo.as_posix(), commit=commit))
    SourceStore(load_lock(lock), root=cache).fetch()
    return repo, commit, cache


@pytest.fixture
def book(tmp_path: Path, upstream, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the root ``test-categories`` whose lock points at the fixture upstream."""
    repo, commit, cache = upstream
    monkeypatch.setenv("SLIMEBOOK_CACHE", str(cache))
    srcdir = tmp_path / "book"
    shutil.copytree(ROOTS / "test-categories", srcdir)
    (srcdir / "sources.toml").write_text(LOCK.format(url=repo.as_posix(), commit=commit))
    return srcdir


def _cli_scan(tmp_path: Path, *args: str) -> dict:
    out = tmp_path / "scan.json"
    assert cli.main([*args, "--json", str(out), "--jobs", "1"]) == 0
    return json.loads(out.read_text())


def test_the_build_and_the_command_line_scan_with_the_book_s_table_alike(book: Path, tmp_path: Path, sphinx_build,
                                                                          monkeypatch: pytest.MonkeyPatch):
    app = sphinx_build(book)
    assert app._warning.getvalue() == ""  # lesson-teaches knows the demo names; the coverage gate is satisfied
    built = json.loads(Path(app.outdir, USAGE, "usage.json").read_text())
    monkeypatch.chdir(book / "_build")  # inside the book: its conf.py names the categories file, no flag needed
    assert _cli_scan(tmp_path, "scan") == built  # the same records, the same scanner version
    monkeypatch.chdir(tmp_path)  # outside it: the flags say it all
    scanned = _cli_scan(tmp_path, "--lock", str(book / "sources.toml"), "scan", "--categories",
                        str(book / "categories.toml"))
    assert scanned == built
    assert built["scanner_version"] == scanner_version(load_categories(book / "categories.toml"))

    demo = {(r["kind"], r["name"], r["path"]) for r in built["records"] if r["category"] == "demo-pool"}
    assert demo == {
        ("import", "demo", "app/jobs.py"), ("import", "demo.Pool", "app/jobs.py"),
        ("api_call", "demo.connect", "app/jobs.py"), ("method_call", "demo.Pool.submit", "app/jobs.py"),
        ("method_call", "demo.Job.wait", "app/jobs.py"), ("api_reference", "demo.Pool", "app/jobs.py"),
        ("method_call", "demo.Pool.close", "app/jobs.py"), ("api_call", "demo.pool.Pool", "app/jobs.py"),
        ("method_call", "demo.Job.cancel", "app/jobs.py"),
        ("import", "demo", "docs/guide.md"), ("api_call", "demo.connect", "docs/guide.md"),
        ("method_call", "demo.Pool.submit", "docs/guide.md"),
    }

    page = Path(app.outdir, USAGE, "category", "demo-pool.html").read_text()
    assert "The demo library&#39;s worker pool" in page or "The demo library's worker pool" in page
    overview = Path(app.outdir, USAGE, "index.html").read_text()
    assert "in 20 categories" in overview  # the default's 19 and the book's own (an English book)
    lesson = Path(app.outdir, "pool.html").read_text()
    ids = set(re.findall(r'id="(occ-[0-9a-f]{12})"', lesson))
    listed = {r["id"] for r in built["records"] if r["category"] == "demo-pool" and r["kind"] != "import"}
    assert ids == listed  # the usage-index table of the lesson shows the book's category
    index = Path(app.outdir, "index.html").read_text()
    count = sum(r["category"] == "demo-pool" for r in built["records"])  # two submits in jobs.py: 13
    assert f'The scan counts <span class="slimenum">{count}</span> uses' in index and count == 13

    default = _cli_scan(tmp_path, "--lock", str(book / "sources.toml"), "scan")  # no book, no file: the default
    assert not any(r["category"] == "demo-pool" for r in default["records"])
    assert default["scanner_version"] == scanner_version() != built["scanner_version"]


def test_an_edit_of_the_categories_file_renews_what_it_changes(book: Path, sphinx_build):
    first = sphinx_build(book)
    version = json.loads(Path(first.outdir, USAGE, "usage.json").read_text())["scanner_version"]
    categories = book / "categories.toml"

    # a description changes no record: same scanner version (and cache), the category page says the new sentence
    categories.write_text(categories.read_text().replace("worker pool:", "pool of workers:"))
    second = sphinx_build(book)
    data = json.loads(Path(second.outdir, USAGE, "usage.json").read_text())
    assert data["scanner_version"] == version
    assert "pool of workers" in Path(second.outdir, USAGE, "category", "demo-pool.html").read_text()

    # a rule changes records: another scanner version, the lesson read again and its table drawn from the new scan
    categories.write_text(categories.read_text().replace('returns = { submit = "demo.Job" }\n', ""))
    third = sphinx_build(book)
    data = json.loads(Path(third.outdir, USAGE, "usage.json").read_text())
    assert data["scanner_version"] != version
    names = {(r["kind"], r["name"]) for r in data["records"]}
    assert ("method_call", "demo.Job.wait") not in names and ("instance_candidate", "wait") in names
    ids = set(re.findall(r'id="(occ-[0-9a-f]{12})"', Path(third.outdir, "pool.html").read_text()))
    assert ids == {r["id"] for r in data["records"] if r["category"] == "demo-pool" and r["kind"] != "import"}


def test_a_bad_categories_file_stops_the_build_and_the_scan_at_its_line(book: Path, tmp_path: Path, sphinx_build,
                                                                          capsys: pytest.CaptureFixture):
    categories = book / "categories.toml"
    lines = categories.read_text().splitlines()
    at = lines.index('[types."demo.Job"]') + 2
    lines.insert(at - 1, 'base = "demo.Nothing"')
    categories.write_text("\n".join(lines) + "\n")
    expected = f"{categories}:{at}: [types.\"demo.Job\"] base 'demo.Nothing' is not a tracked class"
    with pytest.raises(ExtensionError) as caught:
        sphinx_build(book)
    assert expected in str(caught.value)
    assert cli.main(["--book", str(book), "scan"]) == 2  # the book's own file, as the build read it
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
