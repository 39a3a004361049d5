"""The demo book (``tests/roots/test-demo-book``): a small English book about the fixture repository under the
source name ``demo``, its documents in ``docs/``, its lock in ``locks/``. It builds clean with ``demo-source``,
``{demo}`` and ``{demonum}``, and the command line run inside it with no flag reads the same book: the lock, the
names, the documents (not ``drafts/`` nor ``README.md``, which ``exclude_patterns`` leaves out).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import SourceRepo
from slimebook.cli import main
from slimebook.lock import load_lock

#: Every citation of the book: (file, line, kind) as ``sources verify`` and ``diff`` report them.
CITATIONS = 6


def test_the_book_builds_clean_under_its_own_names(demo_book: Path, source_repo: SourceRepo, sphinx_build) -> None:
    app = sphinx_build(demo_book)
    assert app._warning.getvalue() == ""
    assert sum(len(records) for records in app.env.slimebook_citations.values()) == CITATIONS
    tour = (app.outdir / "docs" / "tour.html").read_text(encoding="utf-8")
    assert 'id="src-pkg-mod-py-l4-6"' in tour and 'id="src-pkg-mod-py-run"' in tour  # the two excerpts
    assert f"https://example.invalid/demo/blob/{source_repo.pin}/pkg/mod.py#L21" in tour  # the role's permalink
    assert '<span class="slimenum">6</span>' in tour  # {demonum}`py-files`
    assert "pkg/shown.py" in tour  # the example in a code fence is shown, not cited
    api = (app.outdir / "docs" / "reference" / "api.html").read_text(encoding="utf-8")
    assert 'id="src-pkg-mod-py-l4-6"' in api and "pkg/mod.py#L4" in api
    check = (app.outdir / "_slimebook" / "source-check.html").read_text(encoding="utf-8")
    assert "demo-source" in check and "{demo}" in check and "slime-source" not in check.replace(
        'class="slime-source', "")  # the page names the book's directive (a CSS class is not a name)


def test_verify_inside_the_book_needs_no_flag(demo_book: Path, source_repo: SourceRepo,
                                              monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.chdir(demo_book / "docs" / "reference")  # anywhere inside the book
    assert main(["sources", "verify"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{CITATIONS} citations in 3 files checked at {source_repo.pin[:7]}: 0 failed"
    assert out[1].startswith("(only demo-source and {demo} are checked here;")


def test_fetch_goes_through_demo_source_url(demo_book: Path, tmp_path: Path, source_repo: SourceRepo,
                                            monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.chdir(demo_book)
    monkeypatch.setenv("SLIMEBOOK_CACHE", str(tmp_path / "empty"))
    monkeypatch.delenv("DEMO_SOURCE_URL")
    monkeypatch.setenv("SLIME_SOURCE_URL", str(source_repo.path))  # the Slime book's variable changes nothing here
    assert main(["sources", "verify"]) == 2
    assert capsys.readouterr().err.endswith("fetch it with: slimebook sources fetch\n")  # the default hint
    assert main(["sources", "fetch"]) == 2
    assert "offline? point DEMO_SOURCE_URL at a local clone" in capsys.readouterr().err
    monkeypatch.setenv("DEMO_SOURCE_URL", str(source_repo.path))
    assert main(["sources", "fetch"]) == 0
    assert capsys.readouterr().out.startswith(f"demo@{source_repo.pin}: fetched in ")


def test_diff_and_repin_inside_the_book_need_no_flag(demo_book: Path, source_repo: SourceRepo,
                                                     monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.chdir(demo_book)
    assert main(["sources", "diff", "--to", source_repo.head, "--brief"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        f"{CITATIONS} citations, {source_repo.pin[:7]} → {source_repo.head[:7]}: 0 unchanged, {CITATIONS} moved, "
        "0 changed, 0 gone, 0 broken")
    assert main(["sources", "repin", source_repo.head[:7], "--write"]) == 0
    out = capsys.readouterr().out
    assert "rewrite docs/tour.md:5: :lines: 4-6 → 8-10" in out and "rewrite docs/reference/api.rst:9: role" in out
    assert "4 rewrites done, 0 citations left for the writer" in out
    lock = load_lock(demo_book / "locks" / "sources.toml", "demo")
    assert (lock.commit, lock.previous_commit) == (source_repo.head, source_repo.pin)
    assert ":lines: 8-10" in (demo_book / "docs" / "tour.md").read_text()
    assert main(["sources", "verify"]) == 0
    assert capsys.readouterr().out.startswith(f"{CITATIONS} citations in 3 files checked at {source_repo.head[:7]}")


def test_finding_no_citation_is_an_error_that_says_where_it_looked(demo_book: Path, tmp_path: Path,
                                                                    source_repo: SourceRepo,
                                                                    monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.chdir(demo_book)
    for command in (["sources", "verify"], ["sources", "diff", "--to", source_repo.head]):
        assert main(["--source", "other", *command]) == 2  # names the book does not write
        err = capsys.readouterr().err
        assert err == (f"slimebook: no citations found: looked for other-source directives and {{other}} roles in 3 "
                       f"files, the documents of the book in {demo_book.resolve()} (.rst, .md; left out: _build, "
                       "README.md, drafts)\n")
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
