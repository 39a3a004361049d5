"""Reading order, call paths and the repository map (``slimebook.sphinxext.directives.readingorder``, ``readingpath``,
``repomap`` and ``slimebook.sphinxext.pages.repomappages``) on the fixture pin."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from conftest import ROOTS, SourceRepo, copy_root, git, unlabelled_references
from slimebook.citations import find_citations
from slimebook.lock import load_lock
from slimebook.names import SourceNames
from slimebook.repomap import ROOT_FILES, RepoMapError, count_lines, repo_map
from slimebook.store import SourceStore


@pytest.fixture
def build(tmp_path: Path, fetched_cache: Path, source_repo: SourceRepo, monkeypatch: pytest.MonkeyPatch,
          sphinx_build):
    """``build(root_name) -> app``: a copy of a test root built against the fixture pin."""
    monkeypatch.setenv("SLIMEBOOK_CACHE", str(fetched_cache))

    def _build(name: str, buildername: str = "html"):
        src = copy_root(name, tmp_path / buildername)
        (src / "sources.toml").write_text(source_repo.lock_text())
        return sphinx_build(src, buildername)

    return _build


@pytest.fixture
def store(tmp_path: Path, fetched_cache: Path, source_repo: SourceRepo) -> SourceStore:
    lock = tmp_path / "lock.toml"
    lock.write_text(source_repo.lock_text())
    return SourceStore(load_lock(lock), root=fetched_cache)


def _git_files(repo: SourceRepo, under: str = "") -> list[str]:
    """``git ls-tree -r --name-only <pin> [-- under]``: the ground truth the map must equal."""
    args = ["ls-tree", "-r", "--name-only", repo.pin] + (["--", under] if under else [])
    return [p for p in git(*args, cwd=repo.path).split("\n") if p]


def _git_lines(repo: SourceRepo, paths: list[str]) -> int:
    total = 0
    for path in paths:
        mode = git("ls-tree", repo.pin, "--", path, cwd=repo.path).split()[0]
        data = subprocess.run(["git", "cat-file", "blob", f"{repo.pin}:{path}"], cwd=repo.path,
                              capture_output=True, check=True).stdout
        if mode != "120000" and b"\0" not in data:
            total += len(data.splitlines())
    return total


# -- the reader ----------------------------------------------------------------------------------------
def test_repo_map_counts_equal_git_ls_tree(store: SourceStore, source_repo: SourceRepo) -> None:
    rows = {row.key: row for row in repo_map(store, ["pkg"])}
    assert list(rows) == ["pkg", "pkg/*", ROOT_FILES]
    everything = _git_files(source_repo)
    assert sum(r.files for r in rows.values() if r.depth == 0) == len(everything) == 11
    assert rows["pkg"].files == len(_git_files(source_repo, "pkg")) == 10
    assert rows["pkg/*"].files == rows["pkg"].files  # no subdirectories: the files row holds them all
    assert rows[ROOT_FILES].files == 1  # README.md
    # lines: every text blob, symlinks and the binary blob skipped (2 symlinks + blob.bin)
    assert rows["pkg"].skipped == 3
    assert rows["pkg"].lines == _git_lines(source_repo, _git_files(source_repo, "pkg"))
    assert rows[ROOT_FILES].lines == 3
    assert sum(r.lines for r in rows.values() if r.depth == 0) == _git_lines(source_repo, everything)


def test_repo_map_unexpanded_and_bad_expand(store: SourceStore) -> None:
    assert [(r.key, r.depth) for r in repo_map(store)] == [("pkg", 0), (ROOT_FILES, 0)]
    with pytest.raises(RepoMapError, match="'nowhere' is not a directory"):
        repo_map(store, ["nowhere"])


def test_count_lines() -> None:
    assert count_lines(b"") == 0
    assert count_lines(b"a\nb") == 2
    assert count_lines(b"a\nb\n") == 2
    assert count_lines(b"a\0") is None
    assert count_lines(b"a\rb\r\nc") == 3  # the book's line model: a lone CR ends a line too


# -- the directives --------------------------------------------------------------------------------------
def test_entries_table_paths_and_map(build, source_repo: SourceRepo) -> None:
    app = build("reading")
    assert app._warning.getvalue() == ""
    html = (app.outdir / "index.html").read_text()
    # the table on top links every entry box; the boxes carry stable ids
    assert html.index('href="#reading-entry-01"') < html.index('id="reading-entry-01"')
    assert 'href="#reading-entry-02"' in html and 'id="reading-entry-02"' in html
    table = html[html.index("reading-order-table"):html.index("</table>")]
    assert table.count("<tr") == 3 and 'href="other.html"' in table  # the covered-by link, copied
    # one layout: the fields in a fixed order; an entry without tests says so
    box = html[html.index('id="reading-entry-01"'):html.index('id="reading-entry-02"')]
    labels = re.findall(r'<dt class="field-\w+">(.*?)<', box)
    assert labels == ["入口", "先读的测试", "第一遍读到哪里停", "第二遍再看", "本书讲解"]
    second = html[html.index('id="reading-entry-02"'):]
    assert "钉住的提交里没有对应的测试文件" in second and "固定提交里没有的" in second
    # entry points and tests are verified citations, recorded like every other one
    cited = [(c["path"], c["symbol"] or c["lines"]) for c in app.env.slimebook_citations["index"]]
    assert cited[:4] == [("pkg/mod.py", "helper"), ("pkg/mod.py", "Outer.Inner.method"), ("pkg/crlf.py", "1-2"),
                         ("pkg/mod.py", "run")]
    # the path diagram: one node per step, each linked to the snapshot page at the step's first line
    doctree = app.env.get_doctree("index")
    from sphinxcontrib.mermaid import mermaid

    code = next(iter(doctree.findall(mermaid)))["code"]
    assert 's0["helper"]' in code and 's0 -- "returns x" --> s1' in code
    assert 'click s0 href "@@link0@@"' in code  # resolved per page at write time
    assert "click s0 href &quot;_snapshot/pkg/mod.py.html#L4&quot;" in html
    assert "click s1 href &quot;_snapshot/pkg/mod.py.html#L20&quot;" in html
    # the repository map: counts from the git tree
    assert "共 11 个文件" in html
    files = len(_git_files(source_repo, "pkg"))
    assert re.search(rf"<code[^>]*>.*?pkg/.*?</code>.*?</p></td>\s*<td><p>{files}</p>", html, re.S)


def test_the_latex_entries_are_the_targets_of_the_table_links(build) -> None:
    app = build("reading", "latex")
    tex = next(Path(app.outdir).glob("*.tex")).read_text(encoding="utf-8")
    assert r"\hyperref[\detokenize{index:reading-entry-01}]" in tex
    assert r"\phantomsection\label{\detokenize{index:reading-entry-01}}" in tex
    assert unlabelled_references(tex) == set()


def test_heatmap_cells_link_to_generated_record_pages(build) -> None:
    app = build("reading")
    html = (app.outdir / "index.html").read_text()
    heat = html[html.index("repo-heatmap"):]
    # pkg/mod.py uses asyncio: the pkg row's asyncio cell links that category's section of pkg's record page
    assert 'href="_slimebook/usage/dir/pkg.html#cat-asyncio"' in heat
    assert 'href="_slimebook/usage/category/asyncio.html"' in heat  # the column header
    assert re.search(r'class="repo-heat-[1-4]', heat)
    page = (app.outdir / "_slimebook" / "usage" / "dir" / "pkg.html").read_text()
    assert 'id="cat-asyncio"' in page
    records = [r for r in _scan(app).records
               if r.path.startswith("pkg/") and r.category == "asyncio"]
    assert records and all(f'id="{r.id}"' in page for r in records)  # every record is a row of the page
    assert (app.outdir / "_slimebook" / "usage" / "dir" / "_files.html").exists()  # the root's own files


def test_record_pages_are_stamped_and_carry_no_diagram_script(build, sphinx_build) -> None:
    app = build("reading")
    page = app.outdir / "_slimebook" / "usage" / "dir" / "pkg.html"
    stamps = app.outdir / "_slimebook" / "usage" / "dir" / ".stamps.json"
    assert sorted(json.loads(stamps.read_text())) == ["*", "pkg", "pkg/*"]
    before = page.stat().st_mtime_ns
    sphinx_build(app.srcdir)  # nothing changed: the record pages are not written again
    assert page.stat().st_mtime_ns == before
    stamps.write_text("{}")  # a stale stamp: written again
    sphinx_build(app.srcdir)
    assert page.stat().st_mtime_ns != before
    # the page's doctree reaches html-page-context: mermaid adds its script to the diagram's page only
    assert "mermaid.esm.min.mjs" in (app.outdir / "index.html").read_text()
    assert "mermaid" not in page.read_text()
    assert "mermaid" not in (app.outdir / "_snapshot" / "pkg" / "mod.py.html").read_text()


def _scan(app):
    from slimebook.sphinxext.directives.usage import get_scan

    return get_scan(app.env)


def test_every_bad_input_is_a_located_warning(build) -> None:
    app = build("reading-errors")
    warnings = app._warning.getvalue()
    expected = [
        (6, "two-digit entry number, got '1'"),
        (14, "reading-entry 02: missing :first-pass:"),
        (24, ":entry: items must each be one {slime} role"),
        (32, "no definition named 'nowhere'"),
        (33, "'tests/none.py' does not exist"),
        (40, ":unit: must be two digits, got 'x'"),
        (54, "reading-entry 05: duplicate entry number (first at line 46)"),
        (64, "reading-path: each line must be one {slime} role"),
        (68, ":expand: 'nowhere' is not a directory"),
        (74, "'ghost' is not a row of the map"),
        (75, "a role line reads 'dir: role', got 'bad line'"),
        (71, "the directory row 'pkg/*' (10 files"),
    ]
    for line, fragment in expected:
        assert re.search(rf"index\.md:{line}: WARNING: .*{re.escape(fragment)}", warnings), (line, fragment)
    assert warnings.count("WARNING") == 13  # the list above, and the root's files row without a role


def test_citation_scanner_sees_entry_options_and_path_steps() -> None:
    """``slimebook sources verify`` and re-pin read citations without Sphinx: they must see these too."""
    found = [(c.line, c.path, c.options)
             for c in find_citations(ROOTS / "test-reading" / "index.md", SourceNames("slime"))]
    assert (16, "pkg/mod.py", {"pyobject": "helper"}) in found
    assert (16, "pkg/mod.py", {"pyobject": "Outer.Inner.method"}) in found
    assert (17, "pkg/crlf.py", {"lines": "1-2"}) in found
    assert (37, "pkg/mod.py", {"pyobject": "helper"}) in found  # a reading-path step


def test_snapshot_pages_link_back_to_the_citing_sections(build) -> None:
    app = build("reading")
    page = (app.outdir / "_snapshot" / "pkg" / "mod.py.html").read_text()
    # mod.py is cited 5 times: helper + Outer.Inner.method (entry 01), run (entry 02), helper and run (path)
    assert "本书有 5 处引用这个文件，分布在 2 个小节中" in page
    assert 'href="../../index.html#unit-00">Reading § Unit 00</a>（3 处）' in page
    assert 'href="../../index.html#unit-paths">Reading § Paths</a>（2 处）' in page
    # every cited range is listed and marked: helper L4-L6, Outer.Inner.method L11-L15, run L20-L21
    for a, b in ((4, 6), (11, 15), (20, 21)):
        assert f'<li id="cited-L{a}-L{b}"><p><a class="reference internal" href="#L{a}">L{a}–L{b}</a> ← ' in page
        assert re.search(rf'<span id="L{a}"><a href="#L{a}"><span class="linenos">\s*{a}</span></a>'
                         rf'<a class="slime-cited-mark" href="#cited-L{a}-L{b}"', page)
    style = re.search(r"<style>(.*?) \{ background", page).group(1)
    assert style.split(",") == [f".slime-snapshot-page #L{n}" for n in [4, 5, 6, *range(11, 16), 20, 21]]
    crlf = (app.outdir / "_snapshot" / "pkg" / "crlf.py.html").read_text()
    assert "本书有 1 处引用这个文件" in crlf and 'id="cited-L1-L2"' in crlf
    assert "slime-backlinks" not in (app.outdir / "_snapshot" / "pkg" / "dup.py.html").read_text()


def test_text_builder_renders_without_generated_pages(build) -> None:
    """A builder that writes no generated pages: the entries render, nothing links into the missing pages."""
    app = build("reading", "text")
    assert app._warning.getvalue() == ""
    text = (app.outdir / "index.txt").read_text()
    assert "01 · The helper" in text and "第一遍读到哪里停" in text
    assert "_slimebook/usage/dir" not in text


def test_reading_path_loads_the_diagram_extension_itself(tmp_path: Path, fetched_cache: Path, source_repo: SourceRepo,
                                                         monkeypatch: pytest.MonkeyPatch, sphinx_build) -> None:
    """A book that does not list ``sphinxcontrib.mermaid`` still gets its ``reading-path`` diagrams (issue 34): the
    extension sets up what its directives need."""
    monkeypatch.setenv("SLIMEBOOK_CACHE", str(fetched_cache))
    src = copy_root("reading", tmp_path)
    (src / "sources.toml").write_text(source_repo.lock_text())
    conf = src / "conf.py"
    conf.write_text(conf.read_text().replace('"sphinxcontrib.mermaid", ', ""))
    assert "mermaid" not in conf.read_text()
    app = sphinx_build(src)
    assert app._warning.getvalue() == ""
    assert "sphinxcontrib.mermaid" in app.extensions
    assert "click s0 href &quot;_snapshot/pkg/mod.py.html#L4&quot;" in (app.outdir / "index.html").read_text()


def test_without_the_diagram_extension_the_build_says_what_to_install(tmp_path: Path, source_repo: SourceRepo,
                                                                       monkeypatch: pytest.MonkeyPatch,
                                                                       sphinx_build) -> None:
    import sys

    from sphinx.errors import ExtensionError

    src = copy_root("reading", tmp_path)
    (src / "sources.toml").write_text(source_repo.lock_text())
    conf = src / "conf.py"
    conf.write_text(conf.read_text().replace('"sphinxcontrib.mermaid", ', ""))
    monkeypatch.setitem(sys.modules, "sphinxcontrib.mermaid", None)  # as if it were not installed
    with pytest.raises(ExtensionError, match="install sphinxcontrib-mermaid"):
        sphinx_build(src)
