"""The demo book (``tests/roots/test-demo-book``): the proof that the toolchain serves a book about another repository.

A small English book (``language = "en"``) about the demo repository (:func:`conftest.make_demo_repo`: a library
named ``demo`` with its own API, ``demo.Pool.submit`` and the rest, a script that uses it, a guide), quoted under the
source name ``demo``: its documents in ``docs/``, its lock in ``locks/``, ``drafts/`` and ``README.md`` left out. It
uses every generic feature — excerpts by lines and by symbol, the ``{demo}`` and ``{demonum}`` roles, snapshot pages,
a usage index over its own category (``categories.toml``: the demo library's API), a lesson whose ``lesson-teaches``
satisfies the coverage gate (with a waiver file), a confirmed candidate, the source-check page, the reading guide's
directives, an experiment, a question, a redirect — and

* builds ``-W`` clean, with no CJK character in any file the HTML build writes nor in the LaTeX build's ``.tex`` and
  ``.sty``, and no generated text naming Slime; its PDF compiles with pdfLaTeX, Sphinx's engine for English;
* inside it, with no flag, ``slimebook sources verify`` / ``diff`` / ``repin`` read its documents and names,
  ``slimebook scan`` gives the build's records, and ``DEMO_SOURCE_URL`` (not ``SLIME_SOURCE_URL``) says where the
  pin is fetched from.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from conftest import SourceRepo, blank_pdf, cjk_leaks, fresh_build, output_texts, unlabelled_references
from slimebook.cli import main
from slimebook.lock import load_lock

#: Every citation of the book, as ``sources verify`` and ``diff`` count them, and the documents they read.
CITATIONS = 17
DOCUMENTS = 5

USAGE = "_slimebook/usage"

#: The word "slime" standing alone (the project, a role ``{slime}``, a directive ``slime-source`` written as text), not
#: the extension's class names (``slime-snapshot-page``, ``slimenum``) nor ``slimebook``.
SLIME = re.compile(r"(?<![\w-])slime(?![\w-])", re.I)


def _visible(name: str, text: str) -> str:
    """What a reader of ``name`` sees: an HTML page without its tags, inline styles and scripts (class names are not
    text), each run of white space one space; other files as they are."""
    if not name.endswith(".html"):
        return text
    text = re.sub(r"<(style|script)\b.*?</\1>", "", text, flags=re.S)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", text)).split())


def _slime_mentions(texts: dict[str, str]) -> dict[str, str]:
    """Per file, the first place its visible text names Slime."""
    found = {}
    for name, text in texts.items():
        if name.endswith((".css", ".js")):
            continue  # the extension's class names, in selectors
        visible = _visible(name, text)
        match = SLIME.search(visible)
        if match:
            found[name] = visible[max(0, match.start() - 60):match.end() + 60].strip()
    return found


def _text(path: Path) -> str:
    return _visible(path.name, path.read_text(encoding="utf-8"))


def _mmdc(tmp_path: Path) -> str:
    """A stand-in for mermaid-cli (the LaTeX build draws the reading path's diagram with it): writes a blank one-page
    PDF where mmdc would write the diagram. Returns the ``mermaid_cmd`` that runs it."""
    pdf = tmp_path / "diagram.pdf"
    pdf.write_bytes(blank_pdf(300, 200))
    stub = tmp_path / "mmdc.py"
    stub.write_text(f"import shutil, sys\nshutil.copyfile({str(pdf)!r}, sys.argv[sys.argv.index('-o') + 1])\n")
    return f"{sys.executable} {stub}"


# -- the build ---------------------------------------------------------------------------------------------------
def test_the_book_builds_clean_under_its_own_names(demo_book: Path, demo_repo: SourceRepo, sphinx_build) -> None:
    app = sphinx_build(demo_book)
    assert app._warning.getvalue() == ""
    assert sum(len(records) for records in app.env.slimebook_citations.values()) == CITATIONS
    out = Path(app.outdir)
    tour = (out / "docs" / "tour.html").read_text(encoding="utf-8")
    assert 'id="src-demo-pool-py-l4-5"' in tour and 'id="src-demo-pool-py-pool-submit"' in tour  # by lines, by symbol
    assert "def submit(self, fn, arg=None):" in _visible("tour.html", tour)
    assert f"https://example.invalid/demo/blob/{demo_repo.pin}/demo/pool.py#L28" in tour  # the role's permalink
    assert '<span class="slimenum">3</span> Python files' in tour  # {demonum}`py-files`
    assert "demo/shown.py" in tour  # the example in a code fence is shown, not cited
    api = (out / "docs" / "reference" / "api.html").read_text(encoding="utf-8")
    assert 'id="src-demo-pool-py-l4-5"' in api and "demo/pool.py#L4" in api  # reStructuredText writes them too
    index = _text(out / "docs" / "index.html")
    assert "the scan counts 16 uses of the demo pool (demo-pool) and 3 calls of demo.Pool.submit" in index
    assert f"({demo_repo.pin[:7]}, upstream https://example.invalid/demo.git, license Apache-2.0)" in index
    assert (out / "docs" / "walkthrough.html").is_file()  # the redirect of a moved page

    # snapshot pages: every file the book cites or the scan found, with the sections citing it
    for path in ("demo/pool.py", "demo/__init__.py", "app/jobs.py", "docs/guide.md", "README.md"):
        assert (out / "_snapshot" / f"{path}.html").is_file(), path
    snapshot = _text(out / "_snapshot" / "demo" / "pool.py.html")
    assert "The whole file at the pinned commit" in snapshot and "L25–L28 ← A tour of the library" in snapshot


def test_the_usage_index_reads_the_book_s_category(demo_book: Path, sphinx_build) -> None:
    """The lesson's ``usage-index`` lists the demo library's category; every name the scan found is taught or waived
    (the coverage gate is on: a waiver file), and the lesson's citation of ``drain`` confirms its one candidate."""
    app = sphinx_build(demo_book)
    assert app._warning.getvalue() == ""
    out = Path(app.outdir)
    records = json.loads((out / USAGE / "usage.json").read_text())["records"]
    lesson = (out / "docs" / "lesson.html").read_text(encoding="utf-8")
    uses = lesson[:lesson.index('id="demo-lesson-taught"')]  # the section "Every use of the pool"
    assert set(re.findall(r'id="(occ-[0-9a-f]{12})"', uses)) == {
        r["id"] for r in records if r["category"] == "demo-pool" and r["kind"] != "import"}
    assert "This lesson teaches: demo.connect, demo.Pool.submit" in _visible("lesson.html", lesson)
    # the candidate confirmed as demo.Job.wait is counted beside the named uses, not said to be missing
    taught = re.findall(r'<p class="slimebook-usage-summary">(.*?)</p>', lesson, re.DOTALL)[-1]
    assert "demo.Job.wait 1 (plus 1 instance candidate confirmed by hand)," in html.unescape(
        re.sub("<[^>]+>", "", taught))
    category = _text(out / USAGE / "category" / "demo-pool.html")
    assert "The demo library's worker pool: connecting, submitting jobs, waiting for them." in category
    assert "16 occurrences of 10 names in 3 files" in category
    coverage = _text(out / USAGE / "coverage.html")
    assert "10 names in all: taught 6, waived 4, not covered 0." in coverage
    assert "Names the lessons teach that Demo does not use" in coverage  # the project, from the lock's table name
    candidates = _text(out / USAGE / "category" / "candidates.html")
    assert "1 candidate in all: 1 confirmed, 0 left as candidates (0 reasons), 0 not accounted for." in candidates
    overview = _text(out / USAGE / "index.html")
    assert "in 20 categories" in overview and "where Demo uses" in overview


def test_the_source_check_page_lists_every_citation(demo_book: Path, demo_repo: SourceRepo, sphinx_build,
                                                    monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    """The page lists the citations the command line finds (``sources diff`` reads the same documents), by place."""
    app = sphinx_build(demo_book)
    check = (Path(app.outdir) / "_slimebook" / "source-check.html").read_text(encoding="utf-8")
    listed = Counter(re.sub(r"<wbr>", "", place) for place in re.findall(r'>([\w/.<>]+?\.(?:md|rst):\d+)</a>', check))
    monkeypatch.chdir(demo_book)
    assert main(["sources", "diff", "--to", demo_repo.head, "--brief"]) == 0
    found = Counter(m.group(1) for m in re.finditer(r"^(\S+?:\d+): (?:role|directive) ", capsys.readouterr().out,
                                                    re.M))
    assert listed == found and sum(found.values()) == CITATIONS
    text = _visible("source-check.html", check)
    assert f"{CITATIONS} citations in all." in text and "The lock records no previous pin" in text
    assert "(the demo-source directive and the {demo} inline role)" in text  # the book's names, not slime-source


def test_no_page_holds_a_cjk_character_or_names_slime(demo_book: Path, tmp_path: Path) -> None:
    """Every file the HTML build writes: pages (generated ones too), scripts, styles, the search index, the usage
    data, the inventory (built in a fresh process, as a real build runs: :func:`conftest.fresh_build`)."""
    outdir, warnings = fresh_build(demo_book, tmp_path / "fresh")
    assert warnings == ""
    texts = output_texts(outdir)
    assert len([name for name in texts if name.endswith(".html")]) >= 40  # the documents and the generated pages
    assert {"_static/slimebook-reader.js", "searchindex.js", "objects.inv", f"{USAGE}/usage.json"} <= set(texts)
    assert cjk_leaks(texts) == {}
    assert _slime_mentions(texts) == {}


def test_the_latex_build_is_english(demo_book: Path, tmp_path: Path, sphinx_build) -> None:
    app = sphinx_build(demo_book, "latex", confoverrides={"mermaid_cmd": _mmdc(tmp_path)})
    assert app._warning.getvalue() == ""
    texts = output_texts(Path(app.outdir))
    assert {"demo.tex", "slimebook.sty"} <= set(texts)
    assert cjk_leaks({name: text for name, text in texts.items() if name.endswith((".tex", ".sty"))}) == {}
    assert _slime_mentions({"demo.tex": texts["demo.tex"]}) == {}
    assert r"\renewcommand{\chaptername}{Chapter}" in texts["slimebook.sty"]
    assert r"\DeclareUnicodeCharacter{2197}" in texts["slimebook.sty"]  # pdfLaTeX, English's engine: the ↗ of a table
    assert "xeCJK" not in texts["demo.tex"]
    # every internal link has its target in the PDF (the reading-order table's links to its entries included)
    assert "reading-entry-01" in texts["demo.tex"] and unlabelled_references(texts["demo.tex"]) == set()


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdfLaTeX is not installed")
def test_the_pdf_compiles_with_pdflatex(demo_book: Path, tmp_path: Path, sphinx_build) -> None:
    """Every character the extension writes is one pdfLaTeX's ``utf8`` input knows or ``slimebook.sty`` declares
    (the default fonts, TeX Gyre, are left out: they are Sphinx's choice, not always installed)."""
    app = sphinx_build(demo_book, "latex", confoverrides={"mermaid_cmd": _mmdc(tmp_path),
                                                          "latex_elements": {"fontpkg": ""}})
    proc = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "demo.tex"], cwd=app.outdir,
                          capture_output=True, text=True, check=False)
    log = (Path(app.outdir) / "demo.log").read_text(encoding="utf-8", errors="replace")
    assert proc.returncode == 0, "\n".join(line for line in log.splitlines() if line.startswith("!"))[:2000]
    assert (Path(app.outdir) / "demo.pdf").is_file()


# -- the command line inside the book ----------------------------------------------------------------------------
def test_scan_inside_the_book_needs_no_flag(demo_book: Path, tmp_path: Path, sphinx_build,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """``slimebook scan`` reads the book's categories file from its conf.py: the build's records, scanner version."""
    app = sphinx_build(demo_book)
    built = json.loads((Path(app.outdir) / USAGE / "usage.json").read_text())
    monkeypatch.chdir(demo_book / "docs")
    out = tmp_path / "scan.json"
    assert main(["scan", "--json", str(out), "--jobs", "1"]) == 0
    assert json.loads(out.read_text()) == built
    assert {r["category"] for r in built["records"]} == {"asyncio", "syntax", "candidates", "demo-pool"}


def test_verify_inside_the_book_needs_no_flag(demo_book: Path, demo_repo: SourceRepo,
                                              monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.chdir(demo_book / "docs" / "reference")  # anywhere inside the book
    assert main(["sources", "verify"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{CITATIONS} citations in {DOCUMENTS} files checked at {demo_repo.pin[:7]}: 0 failed"
    assert out[1].startswith("(only demo-source and {demo} are checked here;")


def test_fetch_goes_through_demo_source_url(demo_book: Path, tmp_path: Path, demo_repo: SourceRepo,
                                            monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.chdir(demo_book)
    monkeypatch.setenv("SLIMEBOOK_CACHE", str(tmp_path / "empty"))
    monkeypatch.delenv("DEMO_SOURCE_URL")
    monkeypatch.setenv("SLIME_SOURCE_URL", str(demo_repo.path))  # the Slime book's variable changes nothing here
    assert main(["sources", "verify"]) == 2
    assert capsys.readouterr().err.endswith("fetch it with: slimebook sources fetch\n")  # the default hint
    assert main(["sources", "fetch"]) == 2
    assert "offline? point DEMO_SOURCE_URL at a local clone" in capsys.readouterr().err
    monkeypatch.setenv("DEMO_SOURCE_URL", str(demo_repo.path))
    assert main(["sources", "fetch"]) == 0
    assert capsys.readouterr().out.startswith(f"demo@{demo_repo.pin}: fetched in ")


def test_diff_and_repin_inside_the_book_need_no_flag(demo_book: Path, demo_repo: SourceRepo, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.chdir(demo_book)
    notes = demo_book / "candidate-notes.toml"
    before = notes.read_text()
    assert main(["sources", "diff", "--to", demo_repo.head, "--brief"]) == 0
    # the chapters' citations and the one line the candidate notes name (its [[confirmed]] entry)
    assert capsys.readouterr().out.splitlines()[-1] == (
        f"{CITATIONS + 1} citations, {demo_repo.pin[:7]} → {demo_repo.head[:7]}: 4 unchanged, 14 moved, "
        "0 changed, 0 gone, 0 broken")  # demo/pool.py moved two lines down; app/jobs.py did not change
    assert main(["sources", "repin", demo_repo.head[:7], "--write"]) == 0
    out = capsys.readouterr().out
    assert "rewrite docs/tour.md:6: :lines: 4-5 → 6-7" in out and "rewrite docs/reference/api.rst:11: role" in out
    assert f"rewrite {Path('candidate-notes.toml')}:5: note line 46 → 48" in out
    assert "6 rewrites done, 0 citations left for the writer" in out
    assert notes.read_text() == before.replace("line = 46\n", "line = 48\n")  # the rest byte for byte
    lock = load_lock(demo_book / "locks" / "sources.toml", "demo")
    assert (lock.commit, lock.previous_commit) == (demo_repo.head, demo_repo.pin)
    assert ":lines: 6-7" in (demo_book / "docs" / "tour.md").read_text()
    assert main(["sources", "verify"]) == 0
    assert capsys.readouterr().out.startswith(
        f"{CITATIONS} citations in {DOCUMENTS} files checked at {demo_repo.head[:7]}")
    # at the new pin the book builds -W clean: its candidates gate finds the confirmed entry where the notes say
    assert fresh_build(demo_book, tmp_path / "repinned")[1] == ""


def test_finding_no_citation_is_an_error_that_says_where_it_looked(demo_book: Path, tmp_path: Path,
                                                                    demo_repo: SourceRepo,
                                                                    monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.chdir(demo_book)
    for command in (["sources", "verify"], ["sources", "diff", "--to", demo_repo.head]):
        assert main(["--source", "other", *command]) == 2  # names the book does not write
        err = capsys.readouterr().err
        assert err == (f"slimebook: no citations found: looked for other-source directives and {{other}} roles in "
                       f"{DOCUMENTS} files, the documents of the book in {demo_book.resolve()} (.rst, .md; left out: "
                       "_build, README.md, drafts)\n")
    empty = tmp_path / "empty-book"
    (empty / "docs").mkdir(parents=True)
    (empty / "conf.py").write_text('extensions = ["myst_parser"]\nslimebook_source = "demo"\n')
    (empty / "docs" / "page.md").write_text("# Page\n\nNo citation: {slime}`pkg/mod.py:4` is another book's.\n")
    assert main(["--book", str(empty), "sources", "verify"]) == 2
    assert "looked for demo-source directives and {demo} roles in 1 file, the documents of the book in" in (
        capsys.readouterr().err)
    monkeypatch.chdir(tmp_path)
    assert main(["sources", "verify"]) == 2
    assert "no conf.py in" in capsys.readouterr().err
