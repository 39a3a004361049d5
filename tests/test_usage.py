"""The usage index through ``sphinx.testing``: filters, escaping, snapshot anchors, generated pages, coverage.

The fixture upstream is built here (one commit): a module with async code and a line full of characters
to escape, a module with more than 30 ``time.sleep`` calls (a collapsed table), threads, a thread queue,
an unresolved ``cache.get`` (a candidate) and a Markdown doc with a fenced Python block.
"""

from __future__ import annotations

import html as htmllib
import json
import re
import textwrap
from pathlib import Path
from urllib.parse import urljoin

import pytest
from sphinx.testing.util import SphinxTestApp

from conftest import ROOT, ROOTS, commit_all, git
from slimebook.lock import load_lock
from slimebook.scan.categories import default_table
from slimebook.scan.records import Occurrence
from slimebook.store import SourceStore
from slimebook.usage import Query

LOOP = textwrap.dedent('''\
    import asyncio
    import threading
    from queue import Queue


    async def main():
        await asyncio.sleep(0)  # <script>alert("x")</script> & ]]> 'q'
        results = await asyncio.gather(work(1), work(2))
        q = Queue()
        q.put(results)
        t = threading.Thread(target=print)
        t.start()
        cache.get(1)
        return results


    async def work(n):
        await asyncio.sleep(n)
        return n
    ''')

# names and paths in tables may break after ".", "/" and "_": the HTML holds <wbr> between the code's spans
WBR = '</span><wbr><span class="pre">'

MANY = "import time\n\n\ndef spin():\n" + "".join(f"    time.sleep({n})\n" for n in range(40))

GUIDE = textwrap.dedent('''\
    # Guide

    Some text.

    ```python
    import asyncio

    async def main():
        await asyncio.sleep(1)

    asyncio.run(main())
    ```
    ''')

LOCK = textwrap.dedent('''\
    [slime]
    url = "{url}"
    commit = "{commit}"
    license = "Apache-2.0"
    blob_url = "https://example.invalid/up/blob/{{commit}}/{{path}}{{anchor}}"
    ''')


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, Path]:
    """(work tree, pinned commit, a source cache holding it)."""
    base = tmp_path_factory.mktemp("usage-git")
    repo = base / "upstream"
    (repo / "app").mkdir(parents=True)
    (repo / "docs").mkdir()
    git("init", "--quiet", "--initial-branch=main", str(repo), cwd=base)
    (repo / "app" / "loop.py").write_text(LOOP)
    (repo / "app" / "many.py").write_text(MANY)
    (repo / "docs" / "guide.md").write_text(GUIDE)
    (repo / "README.md").write_text("# upstream\n")
    commit = commit_all(repo, "one")
    cache = tmp_path_factory.mktemp("usage-cache")
    lock = base / "sources.toml"
    lock.write_text(LOCK.format(url=repo.as_posix(), commit=commit))
    SourceStore(load_lock(lock), root=cache).fetch()
    return repo, commit, cache


@pytest.fixture
def build(tmp_path: Path, upstream, monkeypatch: pytest.MonkeyPatch, sphinx_build):
    """``build(root, buildername="html", parallel=0, srcdir=None) -> app`` against the fixture pin."""
    repo, commit, cache = upstream
    monkeypatch.setenv("SLIMEBOOK_CACHE", str(cache))

    def _build(name: str, buildername: str = "html", parallel: int = 0, srcdir: Path | None = None,
               **kwargs) -> SphinxTestApp:
        if srcdir is None:
            import shutil

            srcdir = tmp_path / f"{name}-{buildername}-{parallel}"
            shutil.copytree(ROOTS / f"test-{name}", srcdir)
            (srcdir / "sources.toml").write_text(LOCK.format(url=repo.as_posix(), commit=commit))
        return sphinx_build(srcdir, buildername, parallel=parallel, **kwargs)

    return _build


def _pinned(upstream, path: str) -> list[str]:
    repo, commit, cache = upstream
    lock = repo.parent / "sources.toml"
    store = SourceStore(load_lock(lock), root=cache)
    try:
        return store.read_lines(path)
    finally:
        store.close()


def _tables(page: str) -> list[str]:
    """The HTML of each usage table on a page, in order."""
    return re.findall(r'<table class="[^"]*slimebook-usage[ "].*?</table>', page, re.DOTALL)


def _locations(table: str) -> list[str]:
    return [htmllib.unescape(t) for t in re.findall(r'<code class="docutils literal notranslate"><span class="pre">'
                                                    r'([^<]+:\d+)</span></code>', table)]


# -- filters ---------------------------------------------------------------------------------------------
def test_filters_select_the_right_rows(build) -> None:
    app = build("usage")
    assert app._warning.getvalue() == ""
    page = (app.outdir / "index.html").read_text().replace(WBR, "")
    by_name, by_category, by_path, candidates, other_lesson = _tables(page)
    # :name: asyncio.sleep, three columns: loop.py twice, then the doc block
    assert _locations(by_name) == ["app/loop.py:7", "app/loop.py:18", "docs/guide.md:9"]
    assert re.findall(r'<th class="head slimebook-col-(\w+)"', by_name) == ["id", "location", "code"]
    assert re.findall(r'<th class="head slimebook-col-(\w+)"', by_category) == [
        "id", "location", "code", "scope", "name", "kind", "provenance"]
    # :category: threading queue -- imports excluded by default
    assert _locations(by_category) == ["app/loop.py:9", "app/loop.py:10", "app/loop.py:11", "app/loop.py:12"]
    # :path: + :kind: import
    assert _locations(by_path) == ["app/loop.py:1", "app/loop.py:2", "app/loop.py:3"]
    assert _locations(candidates) == ["app/loop.py:13"]
    # :lesson: lesson-a (another document) + :path: docs/ -- ordered by the lesson's declaration order
    assert _locations(other_lesson) == ["docs/guide.md:8", "docs/guide.md:9", "docs/guide.md:9"]
    assert "没有找到符合条件的出现位置（名称 nothing.here）" in page
    summaries = [htmllib.unescape(re.sub("<[^>]+>", "", s))
                 for s in re.findall(r'<p class="slimebook-usage-summary">(.*?)</p>', page, re.DOTALL)]
    assert "共 3 处，分布在 2 个文件中" in summaries[0]
    # lesson-a's names under :path: docs/: gather is used, but only outside that path; Queue.* nowhere
    assert "asyncio.gather 0（所选范围内没有；固定提交中范围外有 1 处）" in summaries[-1]
    assert "asyncio.Queue.* 0（Slime 没有用到）" in summaries[-1]


def test_lesson_tables_and_absent_names(build) -> None:
    app = build("usage")
    lesson_a = (app.outdir / "lesson-a.html").read_text().replace(WBR, "")
    text = htmllib.unescape(re.sub("<[^>]+>", "", lesson_a))
    assert "asyncio.Queue.* 0（Slime 没有用到）" in text
    assert "asyncio.gather 1" in text
    (table,) = _tables(lesson_a)
    # grouped by the order of the declaration: async_def first, then await, sleep, gather
    names = re.findall(r'name-([^"#]+)"><code', table)
    assert names[:3] == ["syntax-async_def"] * 3
    assert names[-1] == "asyncio.gather"
    # lesson-b declares after its table: the table still has the 40 calls, collapsed
    lesson_b = (app.outdir / "lesson-b.html").read_text().replace(WBR, "")
    assert '<details class="slimebook-usage-details"><summary>展开全部 40 处</summary>' in lesson_b
    assert len(_locations(_tables(lesson_b)[0])) == 40
    assert "<details" not in (app.outdir / "index.html").read_text().replace(WBR, "")


def test_code_lines_are_highlighted_and_escaped(build) -> None:
    app = build("usage")
    for page in (app.outdir / "index.html", app.outdir / "_slimebook/usage/category/asyncio.html"):
        html = page.read_text().replace(WBR, "")
        assert "<script>alert" not in html
        row = re.search(r'<tr[^>]*>(?:(?!</tr>).)*app/loop\.py:7<(?:(?!</tr>).)*</tr>', html, re.DOTALL)[0]
        assert 'class="code highlight python docutils literal' in row
        shown = htmllib.unescape(re.sub("<[^>]+>", "", row.split("code highlight python", 1)[1].split(">", 1)[1]))
        assert """await asyncio.sleep(0)  # <script>alert("x")</script> & ]]> 'q'""" in shown
        assert "&lt;script&gt;" in row and "&amp;" in row and "]]&gt;" in row


def test_every_location_lands_on_its_line(build, upstream) -> None:
    app = build("usage")
    out = app.outdir
    pages = [out / "index.html", out / "lesson-a.html", out / "lesson-b.html",
             *(out / "_slimebook/usage/category").glob("*.html")]
    checked = 0
    pinned: dict[str, list[str]] = {}
    for page in pages:
        html = page.read_text().replace(WBR, "")
        for href, where in re.findall(r'<a class="slime-snapshot reference internal" href="([^"]+)"[^>]*>'
                                      r'<code[^>]*><span class="pre">([^<]+)</span>', html):
            path, line = where.rsplit(":", 1)
            target = urljoin(page.as_uri(), href)
            file, anchor = target.split("#")
            assert file == (out / f"_snapshot/{path}.html").as_uri(), (page, href)
            assert anchor == f"L{line}"
            snapshot = Path(file.removeprefix("file://")).read_text().replace(WBR, "")
            if path not in pinned:
                pinned[path] = _pinned(upstream, path)
            assert _snapshot_line(snapshot, int(line)) == pinned[path][int(line) - 1]
            checked += 1
    assert checked > 100


def _snapshot_line(page: str, n: int) -> str:
    match = re.search(rf'<span id="L{n}">(.*?)(?=<span id="L{n + 1}">|</code></pre>)', page, re.DOTALL)
    text = re.sub("<[^>]+>", "", re.sub(r'<span class="linenos">\s*\d+</span>', "", match[1]))
    return htmllib.unescape(text).rstrip("\n")


def test_row_ids_are_occurrence_ids_and_unique(build) -> None:
    app = build("usage")
    data = json.loads((app.outdir / "_slimebook/usage/usage.json").read_text())
    ids = {r["id"] for r in data["records"]}
    assert len(ids) == len(data["records"]) > 0
    shown: set[str] = set()
    for page in app.outdir.rglob("*.html"):
        html = page.read_text().replace(WBR, "")
        rows = re.findall(r'<tr class="[^"]*" id="(occ-[0-9a-f]{12})"', html)
        assert len(rows) == len(set(rows)), page
        assert set(rows) <= ids
        for occ in rows:
            assert f'href="#{occ}"' in html
        shown.update(rows)
    assert shown == ids  # every record is a row with its id somewhere
    syntax = (app.outdir / "_slimebook/usage/category/syntax.html").read_text().replace(WBR, "")
    assert ids >= set(re.findall(r'id="(occ-[0-9a-f]{12})"', syntax))


# -- roles ----------------------------------------------------------------------------------------------
def test_roles_link_generated_pages_and_numbers_come_from_the_pin(build, upstream) -> None:
    app = build("usage")
    html = (app.outdir / "index.html").read_text().replace(WBR, "")
    assert 'href="_slimebook/usage/category/asyncio.html"' in html
    assert 'href="_slimebook/usage/category/asyncio.html#name-asyncio.gather"' in html
    assert 'href="_slimebook/usage/category/syntax.html#name-syntax-await"' in html
    assert 'href="_slimebook/usage/coverage.html"' in html
    assert re.search(r'href="_slimebook/usage/files.html">the files</a>', html)
    text = htmllib.unescape(re.sub("<[^>]+>", "", html))
    py_lines = len(LOOP.splitlines()) + len(MANY.splitlines())
    assert (f"py-files=2; py-lines={py_lines}; app-files=2; gather=1; await=4; asyncio-category=7; "
            "sleep-glob=43") in text.replace("\n", " ")
    for page, anchor in (("category/asyncio", "name-asyncio.gather"), ("category/syntax", "name-syntax-await")):
        assert f'id="{anchor}"' in (app.outdir / f"_slimebook/usage/{page}.html").read_text().replace(WBR, "")



def test_buildinfo_role_reads_the_lock_and_the_interpreter(build, upstream) -> None:
    import platform

    app = build("usage")
    text = htmllib.unescape(re.sub("<[^>]+>", "", (app.outdir / "index.html").read_text()))
    commit = upstream[1]
    assert f"pin={commit}; short={commit[:7]}; python={platform.python_version()}." in text.replace("\n", " ")


def test_buildinfo_facts_and_unknown_key() -> None:
    from slimebook.buildinfo import FACT_KEYS, FactError, build_facts, fact

    lock = load_lock(ROOT / "sources" / "sources.toml")
    facts = build_facts(lock)
    assert set(facts) == set(FACT_KEYS)
    assert facts["pin"] == lock.commit and facts["pin-short"] == lock.commit[:7]
    assert fact(lock, " python-minor ") == "{}.{}".format(*__import__("sys").version_info[:2])
    with pytest.raises(FactError, match="unknown key 'nope'; use one of pin, pin-short"):
        fact(lock, "nope")

# -- generated pages ------------------------------------------------------------------------------------
def test_generated_pages(build, upstream) -> None:
    app = build("usage")
    usage = app.outdir / "_slimebook" / "usage"
    assert sorted(p.stem for p in (usage / "category").glob("*.html")) == sorted(default_table().categories)
    overview = htmllib.unescape(re.sub("<[^>]+>", "", (usage / "index.html").read_text().replace(WBR, "")))
    assert upstream[1] in overview
    assert ("扫描的文件：4 个（2 个 .py 文件，2 个 Markdown 文件，其中 1 个 Python 代码块），"
            "其中 3 个文件有记录") in overview
    assert (usage / "usage.json").exists() and (usage / "usage.tsv").exists()
    data = json.loads((usage / "usage.json").read_text())
    assert data["commit"] == upstream[1]
    tsv = (usage / "usage.tsv").read_text().splitlines()
    assert len(tsv) == len(data["records"]) + 1
    empty = (usage / "category" / "fcntl.html").read_text().replace(WBR, "")
    assert "中没有这一类的出现位置" in empty
    candidates = (usage / "category" / "candidates.html").read_text().replace(WBR, "")
    assert 'id="name-get"' in candidates and "类型未知" in candidates
    files = (usage / "files.html").read_text().replace(WBR, "")
    assert 'href="../../_snapshot/docs/guide.md.html"' in files
    assert 'href="category/time-sleep.html">time-sleep 40</a>' in files
    # snapshot pages for every scanned file, the Markdown doc included
    assert (app.outdir / "_snapshot" / "docs" / "guide.md.html").exists()
    assert (app.outdir / "_snapshot" / "README.md.html").exists()


def test_coverage_page(build) -> None:
    app = build("usage")
    page = (app.outdir / "_slimebook/usage/coverage.html").read_text().replace(WBR, "")
    text = htmllib.unescape(re.sub("<[^>]+>", "", page))
    assert "未覆盖 0" in text
    assert "豁免：Lesson C (not written): threads and thread queues" in text
    assert "豁免：Lesson D (not written): running the loop" in text
    rows = re.findall(r'<tr class="row-(?:odd|even)"><td><p>(已讲解|豁免|未覆盖)</p>', page)
    assert rows == sorted(rows, key=["未覆盖", "豁免", "已讲解"].index)
    assert 'href="../../lesson-a.html">Lesson A</a>' in page
    assert "asyncio.Queue.*" in text  # taught, not used: listed, not a warning


def test_incremental_build_skips_pages_and_rereads_on_scanner_change(build, monkeypatch) -> None:
    app = build("usage")
    stamp = app.outdir / "_slimebook/usage/.stamp"
    page = app.outdir / "_slimebook/usage/category/asyncio.html"
    before = page.stat().st_mtime_ns
    read = dict(app.env.all_docs)
    again = build("usage", srcdir=app.srcdir)
    assert page.stat().st_mtime_ns == before and stamp.exists()
    assert again.env.all_docs == read  # nothing re-read
    stamp.unlink()  # pages stale, no document written in this build: the pages are rendered on their own
    build("usage", srcdir=app.srcdir)
    assert page.stat().st_mtime_ns != before and stamp.exists()
    assert 'id="name-asyncio.gather"' in page.read_text().replace(WBR, "")
    import slimebook.sphinxext.environment.scancache as scancache

    monkeypatch.setattr(scancache, "scanner_version", lambda table: "test-bump")
    third = build("usage", srcdir=app.srcdir)
    reread = {d for d in read if third.env.all_docs[d] != read[d]}
    assert reread == {"index", "lesson-a", "lesson-b"}


# -- breakable code -------------------------------------------------------------------------------------
def _search_terms(outdir: Path) -> set[str]:
    text = (outdir / "searchindex.js").read_text()
    return set(json.loads(text[text.index("(") + 1:text.rindex(")")])["terms"])


def test_breakable_code_is_whole_text_until_written(build) -> None:
    # the doctree and the search index hold a name whole; only the writers mark where it may wrap
    from slimebook.sphinxext.pages.usagetables import breakable_literal

    node = breakable_literal("app/loop_x.py")
    assert [type(child).__name__ for child in node.children] == ["Text"] and node.astext() == "app/loop_x.py"
    app = build("usage")
    lesson_a = (app.outdir / "lesson-a.html").read_text()
    assert f"asyncio.{WBR}gather" in lesson_a and f"async_{WBR}def" in lesson_a
    terms = _search_terms(app.outdir)
    assert "async_def" in terms and "async_" not in terms  # a piece between two breaks is no search term
    latex = next(build("usage", "latex").outdir.glob("*.tex")).read_text()
    assert r"app/\allowbreak{}many.\allowbreak{}py:5" in latex
    assert "app/many.py:5" in (build("usage", "text").outdir / "lesson-b.txt").read_text()


# -- other builders -------------------------------------------------------------------------------------
@pytest.mark.parametrize("buildername", ["text", "latex"])
def test_other_builders_degrade(build, buildername: str) -> None:
    app = build("usage", buildername)
    assert app._warning.getvalue() == ""
    out = next(app.outdir.glob("lesson-b.txt")) if buildername == "text" else next(app.outdir.glob("*.tex"))
    text = out.read_text().replace(r"\allowbreak{}", "")  # names and paths may break after ".", "/", "_"
    assert "共 40 处" in text
    assert "app/many.py:5" in text
    assert "_snapshot" not in text and "<details" not in text


# -- -j 1 and -j 2 ----------------------------------------------------------------------------------------
def test_parallel_build_gives_the_same_html(build) -> None:
    serial = build("usage", parallel=0)
    parallel = build("usage", parallel=2)
    pages = ["index.html", "lesson-a.html", "lesson-b.html",
             *(str(p.relative_to(serial.outdir)) for p in (serial.outdir / "_slimebook/usage").rglob("*.html")),
             *(str(p.relative_to(serial.outdir)) for p in (serial.outdir / "_snapshot").rglob("*.html"))]
    # the snapshot pages: app/loop.py, app/many.py, docs/guide.md, README.md
    assert len(pages) == 3 + 3 + len(default_table().categories) + 4
    for name in pages:
        assert (serial.outdir / name).read_text() == (parallel.outdir / name).read_text(), name
    for name in ("usage.json", "usage.tsv"):
        assert (serial.outdir / "_slimebook/usage" / name).read_bytes() == \
            (parallel.outdir / "_slimebook/usage" / name).read_bytes()


# -- warnings -------------------------------------------------------------------------------------------
def _line_of(path: Path, needle: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def test_errors_are_located(build) -> None:
    app = build("usage-errors")
    warnings = app._warning.getvalue()
    src = app.srcdir / "index.md"
    waivers = app.srcdir / "coverage-waivers.toml"
    lesson = app.srcdir / "lesson.md"
    expected = [
        (f"index.md:{_line_of(src, ':category: nope') - 1}", "usage-index: :category: unknown 'nope'"),
        (f"index.md:{_line_of(src, ':kind: bogus') - 1}", "usage-index: :kind: unknown 'bogus'"),
        (f"index.md:{_line_of(src, ':columns: id bogus') - 1}", "usage-index: :columns: unknown 'bogus'"),
        (f"index.md:{_line_of(src, ':lesson: missing-doc') - 1}", "document 'missing-doc' declares no names"),
        (f"index.md:{_line_of(src, ':lesson:') + 4 - 1}", "this document declares no names"),
        (f"index.md:{_line_of(src, 'Numbers:')}", "slimenum: unknown key 'nope'"),
        (f"index.md:{_line_of(src, 'Numbers:')}", "no file at the pin starts with 'nowhere/'"),
        (f"index.md:{_line_of(src, 'Numbers:')}", "'category:nope': unknown category"),
        (f"index.md:{_line_of(src, 'Role:')}", "usage: 'asyncio.nonexistent' is not a category"),
        (f"index.md:{_line_of(src, 'Facts:')}", "buildinfo: unknown key 'nope'; use one of pin"),
        (f"{waivers}:{_line_of(waivers, 'asyncio.nonexistent')}",
         "stale waiver 'asyncio.nonexistent': matches no API name"),
        (f"{waivers}:{_line_of(waivers, 'name = ')}",
         "stale waiver 'asyncio.sleep': every name it matches is taught by a lesson: asyncio.sleep"),
        (f"{waivers}:1", "coverage: threading.Thread (threading, 1 occurrence at the pin) is taught by no lesson"),
        (f"{waivers}:1", "coverage: syntax:async_def (syntax, 3 occurrences at the pin) is taught by no lesson"),
        (f"lesson.md:{_line_of(lesson, 'asyncio.gahter')}", "lesson-teaches: 'asyncio.gahter' can never match the "
         "usage scan: the standard library of this Python"),
        (f"lesson.md:{_line_of(lesson, 'syntax:awiat')}", "lesson-teaches: 'syntax:awiat' can never match the "
         "usage scan: unknown syntax kind 'awiat'"),
    ]
    for where, message in expected:
        assert re.search(rf"{re.escape(where)}: WARNING: .*{re.escape(message)}", warnings), (where, message, warnings)
    assert "asyncio.Queue.*" not in warnings  # a taught name Slime does not use is not a warning
    assert "queue.Queue" not in warnings  # waived


def test_no_waiver_file_no_gate(build, upstream, tmp_path: Path) -> None:
    import shutil

    repo, commit, _ = upstream
    src = tmp_path / "nogate"
    shutil.copytree(ROOTS / "test-usage", src)
    (src / "sources.toml").write_text(LOCK.format(url=repo.as_posix(), commit=commit))
    (src / "coverage-waivers.toml").unlink()
    app = build("usage", srcdir=src)
    assert app._warning.getvalue() == ""
    page = (app.outdir / "_slimebook/usage/coverage.html").read_text().replace(WBR, "")
    assert "没有豁免文件，所以构建不检查覆盖" in page
    assert "未覆盖 5" in page  # threading.Thread, .start, queue.Queue, .put, asyncio.run


def test_names_no_lesson_needs_are_one_summary_line_not_warnings(build) -> None:
    """A declared name the pin does not use is fine: one summary line in the status log, never a line in the shape
    of a warning (``path: coverage: …``); each name is only in the verbose log."""
    app = build("usage")
    status, warnings = (re.sub(r"\x1b\[[0-9;]*m", "", log.getvalue()) for log in (app._status, app._warning))
    assert re.search(r"(?:^|\.\.\. )coverage: 1 declared name is not used at the pin \(fine: .*-v lists them\)$",
                     status, re.M), status
    assert "declares 'asyncio.Queue.*'" not in status + warnings
    assert not re.search(r"^\S+: coverage: .*\(fine:", status + warnings, re.M)


def test_a_redirected_occurrence_id_keeps_its_generated_page(build, tmp_path: Path) -> None:
    """A redirect line naming an id of a generated page (an occurrence that changed its id) must not turn the page
    into a "本页已移动" stub: the page keeps its tables and sends the old id to the new one with a script."""
    import shutil

    srcdir = tmp_path / "redirected"
    shutil.copytree(ROOTS / "test-usage", srcdir)
    first = build("usage")
    (srcdir / "sources.toml").write_text((Path(first.srcdir) / "sources.toml").read_text())
    page = "_slimebook/usage/category/asyncio"
    new_id = re.search(r'id="(occ-[0-9a-f]{12})"', (first.outdir / f"{page}.html").read_text()).group(1)
    (srcdir / "redirects.txt").write_text(f"{page}#occ-000000000000 {page}#{new_id}\n")
    with (srcdir / "conf.py").open("a") as conf:
        conf.write('slimebook_anchors_redirects = "redirects.txt"\n')
    html = (build("usage", srcdir=srcdir).outdir / f"{page}.html").read_text()
    assert "本页已移动" not in html
    assert f'id="{new_id}"' in html
    assert f'var m={{"occ-000000000000": "#{new_id}"}}' in html  # same page: the script jumps to the new id


def test_a_new_redirect_line_renews_the_generated_pages(build, tmp_path: Path) -> None:
    """The redirect lines are part of every generated page's stamp: each page carries the script for its moved
    ids, so an incremental build after a new line writes the page again."""
    import shutil

    srcdir = tmp_path / "redirect-later"
    shutil.copytree(ROOTS / "test-usage", srcdir)
    first = build("usage")
    (srcdir / "sources.toml").write_text((Path(first.srcdir) / "sources.toml").read_text())
    (srcdir / "redirects.txt").write_text("")
    with (srcdir / "conf.py").open("a") as conf:
        conf.write('slimebook_anchors_redirects = "redirects.txt"\n')
    page = "_slimebook/usage/category/asyncio"
    out = build("usage", srcdir=srcdir).outdir
    new_id = re.search(r'id="(occ-[0-9a-f]{12})"', (out / f"{page}.html").read_text()).group(1)
    (srcdir / "redirects.txt").write_text(f"{page}#occ-000000000000 {page}#{new_id}\n")
    html = (build("usage", srcdir=srcdir).outdir / f"{page}.html").read_text()
    assert f'var m={{"occ-000000000000": "#{new_id}"}}' in html


def test_a_changed_template_renews_the_generated_pages(build, tmp_path: Path) -> None:
    """The templates and theme are part of every generated page's stamp: Sphinx writes every document again when a
    template changed, and the generated pages follow (a breaker found them keeping the old sidebar)."""
    import shutil

    srcdir = tmp_path / "template-later"
    shutil.copytree(ROOTS / "test-usage", srcdir)
    first = build("usage")
    (srcdir / "sources.toml").write_text((Path(first.srcdir) / "sources.toml").read_text())
    (srcdir / "_templates").mkdir()
    layout = '{%% extends "!layout.html" %%}{%% block extrahead %%}<meta name="mark" content="%s">{%% endblock %%}\n'
    (srcdir / "_templates" / "layout.html").write_text(layout % "one")
    with (srcdir / "conf.py").open("a") as conf:
        conf.write('templates_path = ["_templates"]\n')
    page = "_slimebook/usage/category/asyncio.html"
    out = build("usage", srcdir=srcdir).outdir
    assert '<meta name="mark" content="one">' in (out / page).read_text()
    (srcdir / "_templates" / "layout.html").write_text(layout % "two")
    out = build("usage", srcdir=srcdir).outdir
    assert '<meta name="mark" content="two">' in (out / page).read_text()
    assert '<meta name="mark" content="two">' in (out / "lesson-a.html").read_text()


def _digest(*directories: Path) -> str:
    from types import SimpleNamespace

    from slimebook.sphinxext.context import template_digest

    builder = SimpleNamespace(templates=SimpleNamespace(pathchain=list(directories)))
    return template_digest(SimpleNamespace(builder=builder))


def test_the_template_digest_follows_what_pages_are_rendered_from(tmp_path: Path, monkeypatch) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    (one / "sidebar").mkdir(parents=True)
    two.mkdir()
    (one / "sidebar" / "brand.html").write_text("a")
    (two / "layout.html").write_text("b")
    base = _digest(one, two)
    assert _digest(one, two) == base
    (one / "sidebar" / ".brand.html.swp").write_text("editor")  # an editor's swap file, a backup: nothing renewed
    (one / "sidebar" / "brand.html~").write_text("backup")
    (one / ".DS_Store").write_text("x")
    assert _digest(one, two) == base
    moved = tmp_path / "unpacked-elsewhere"  # a zipped theme is unpacked into a new directory each build
    (two).rename(moved)
    assert _digest(one, moved) == base
    (one / "sidebar" / "brand.html").write_text("changed")
    assert _digest(one, moved) != base
    assert _digest(moved, one) != _digest(one, moved)  # the order of the search path matters

    real = Path.read_bytes

    def vanishing(self: Path) -> bytes:
        if self.name == "layout.html":
            raise FileNotFoundError(self)  # removed between the listing and the read (an editor saving)
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", vanishing)
    _digest(one, moved)  # no error


def _occurrence(path: str, name: str, kind: str) -> Occurrence:
    return Occurrence(f"{path}-{name}-{kind}", path, 1, 0, 1, 1, "<module>", kind, name, "asyncio",
                      "import_resolution", "x", "code")


#: asyncio.Queue in a.py only: imported, and used through its instances (two method calls)
QUEUE_ELSEWHERE = [_occurrence("a.py", "asyncio.Queue", "import"),
                   _occurrence("a.py", "asyncio.Queue.put", "method_call"),
                   _occurrence("a.py", "asyncio.Queue.get", "method_call")]


@pytest.mark.parametrize(("records", "query", "says"), [
    # the directive without :path: counts no import (its default kinds): the import alone is no use outside
    (QUEUE_ELSEWHERE[:1], Query(names=("asyncio.Queue",), paths=("b/",)), " 0 (not used by Slime)"),
    # a :kind: narrowing: an import outside is one of the kinds it leaves out
    (QUEUE_ELSEWHERE[:1], Query(names=("asyncio.Queue",), kinds=("api_call",)),
     " 0 (none in this selection; 1 occurrence at the pin outside it)"),
    # used through its instances outside the selection: not "not used"
    (QUEUE_ELSEWHERE, Query(names=("asyncio.Queue",), paths=("b/",)),
     " 0 (none in this selection; outside it the class name does not appear, its instance methods have 2 uses)"),
    (QUEUE_ELSEWHERE, Query(names=("asyncio.Queue.*",), paths=("b/",)),
     " 0 (none in this selection; 2 occurrences at the pin outside it)"),
])
def test_a_zero_in_a_narrowed_selection_counts_what_the_whole_pin_has(records: list, query: Query, says: str) -> None:
    from slimebook.sphinxext.directives.usage import _count_sentence

    sentence = _count_sentence([], query.names, query, "Slime", records).astext()
    assert sentence == f"0 occurrences in 0 files: {query.names[0]}{says}."


#: a.py calls task.cancel() on a receiver the scanner cannot type; a person confirmed it as asyncio.Task.cancel
CONFIRMED_CANCEL = [_occurrence("a.py", "asyncio.Task.cancel", "method_call")]


@pytest.mark.parametrize(("records", "query", "says"), [
    # no use by name: the confirmed candidate is counted, not "not used"
    ([], Query(names=("asyncio.Task.cancel",)), " 0 by name (plus 1 instance candidate confirmed by hand)"),
    (CONFIRMED_CANCEL, Query(names=("asyncio.Task.*",)), " 0 by name (plus 1 instance candidate confirmed by hand)"),
    # the selection's filters apply to the confirmed candidates too
    ([], Query(names=("asyncio.Task.cancel",), paths=("b/",)), " 0 (not used by Slime)"),
])
def test_a_candidate_confirmed_by_hand_is_counted_beside_the_names(records: list, query: Query, says: str) -> None:
    from slimebook.sphinxext.directives.usage import _count_sentence

    confirmed = CONFIRMED_CANCEL if not records else records
    sentence = _count_sentence([], query.names, query, "Slime", [], confirmed).astext()
    assert sentence == f"0 occurrences in 0 files: {query.names[0]}{says}."
