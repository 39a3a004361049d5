"""The ``slimebook`` command line against the fixture repository."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from conftest import SourceRepo
from slimebook.cli import main, tty_progress
from slimebook.names import SourceNames


def run(lock: Path, *args: str) -> int:
    return main(["--lock", str(lock), *args])


@pytest.fixture(autouse=True)
def _outside_any_book(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The command line reads the book around the working directory; these tests name the lock and the files, so
    they run outside any book (not in this repository, whose conf.py is the Slime book's)."""
    monkeypatch.chdir(tmp_path)


def test_fetch_then_show(cache: Path, lock_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(lock_file, "sources", "fetch") == 0
    assert "fetched" in capsys.readouterr().out
    assert run(lock_file, "sources", "fetch") == 0
    assert "already present" in capsys.readouterr().out
    assert run(lock_file, "sources", "show", "pkg/mod.py:4-5") == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1:] == ["4  def helper(x):", '5      """Return x."""']


def test_fetch_failure_exits_nonzero_with_gits_message(
    cache: Path, tmp_path: Path, source_repo: SourceRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    lock = tmp_path / "l.toml"
    lock.write_text(source_repo.lock_text(url=str(tmp_path / "no-such-repo")))
    assert run(lock, "sources", "fetch") == 2
    err = capsys.readouterr().err
    assert "could not fetch" in err and "fatal:" in err


def test_show_without_pin(cache: Path, lock_file: Path, source_repo: SourceRepo, capsys) -> None:
    assert run(lock_file, "sources", "show", "pkg/mod.py") == 2
    assert source_repo.pin in capsys.readouterr().err


def test_verify_reports_each_bad_citation(cache: Path, lock_file: Path, tmp_path: Path, capsys) -> None:
    run(lock_file, "sources", "fetch")
    chapters = tmp_path / "chapters"
    chapters.mkdir()
    (chapters / "a.md").write_text(
        "# A\n\n```{slime-source} pkg/mod.py\n:pyobject: helper\n```\n\n"
        "```{slime-source} pkg/mod.py\n:lines: 90-99\n```\n\n"
        "See {slime}`Nope <pkg/mod.py>` and {slime}`pkg/mod.py:4`.\n"
    )
    (chapters / "b.rst").write_text("B\n=\n\n.. slime-source:: pkg/gone.py\n\n:slime:`pkg/mod.py:1`\n")
    capsys.readouterr()
    assert run(lock_file, "sources", "verify", str(chapters)) == 1
    out = capsys.readouterr().out
    assert f"{chapters / 'a.md'}:7: directive pkg/mod.py:" in out and "past the end" in out
    assert f"{chapters / 'a.md'}:11: role pkg/mod.py:" in out and "no definition named 'Nope'" in out
    assert f"{chapters / 'b.rst'}:4: directive pkg/gone.py:" in out
    assert "6 citations in 2 files checked" in out and "3 failed" in out



def test_verify_counts_one_citation_in_one_file_in_the_singular(cache: Path, lock_file: Path, tmp_path: Path,
                                                                capsys) -> None:
    run(lock_file, "sources", "fetch")
    page = tmp_path / "a.md"
    page.write_text("# A\n\nSee {slime}`pkg/mod.py:4`.\n")
    capsys.readouterr()
    assert run(lock_file, "sources", "verify", str(page)) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith("1 citation in 1 file checked at ")


@pytest.mark.parametrize("command", [["sources", "fetch"], ["sources", "show", "pkg/mod.py"], ["scan"]])
def test_outside_any_book_without_a_lock_the_command_says_so(command: list[str], tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(command) == 2
    assert capsys.readouterr().err == (
        f"slimebook: no conf.py in {tmp_path.resolve()} or any directory above it, and no sources/sources.toml "
        "here: run inside a book, or give --book DIR or --lock LOCK\n")

@pytest.mark.parametrize("command", [["sources", "verify"], ["sources", "diff", "--to", "HEAD"],
                                     ["sources", "repin", "HEAD"]])
def test_a_chapter_that_is_not_utf8_is_named_not_a_traceback(command: list[str], cache: Path, lock_file: Path,
                                                            tmp_path: Path, capsys) -> None:
    run(lock_file, "sources", "fetch")
    good, bad = tmp_path / "a.md", tmp_path / "b.md"
    good.write_text("# A\n\nSee {slime}`pkg/mod.py:4`.\n")
    bad.write_bytes("# B\n\ncaf\u00e9 {slime}`pkg/mod.py:4`\n".encode("latin-1"))
    capsys.readouterr()
    assert run(lock_file, *command, str(good), str(bad)) == 2
    assert capsys.readouterr().err == f"slimebook: {bad}: not UTF-8 text (invalid continuation byte at byte 8)\n"


@pytest.mark.parametrize(("jobs", "says"), [
    ("0", "0 is not a number of workers (1 or more; leave it out for all cores)"),
    ("-2", "-2 is not a number of workers (1 or more; leave it out for all cores)"),
    ("two", "'two' is not a whole number"),
])
def test_scan_refuses_a_count_of_workers_below_one(jobs: str, says: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["scan", "--jobs", jobs])
    assert stopped.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1].endswith(f"argument --jobs: {says}")


def test_examples_in_code_are_not_citations(tmp_path: Path) -> None:
    from slimebook.citations import find_citations

    page = tmp_path / "p.md"
    page.write_text(
        "Use `` {slime}`path:1` `` or `{slime}` like so: {slime}`pkg/mod.py:4`, then `code`.\n"
        "````markdown\n```{slime-source} pkg/shown.py\n:lines: 1\n```\n{slime}`pkg/shown.py:2`\n````\n"
        "```{dropdown} Q\nSee {slime}`pkg/mod.py:5`.\n```\n"
        "```{slime-source} pkg/mod.py\n:lines: 6\n```\n"
    )
    found = [(c.line, c.kind, c.path, c.options) for c in find_citations(page, SourceNames("slime"))]
    assert found == [
        (1, "role", "pkg/mod.py", {"lines": "4"}),
        (9, "role", "pkg/mod.py", {"lines": "5"}),
        (11, "directive", "pkg/mod.py", {"lines": "6"}),
    ]


def test_show_symbols_lists_every_definition_with_its_range(cache: Path, lock_file: Path, capsys) -> None:
    run(lock_file, "sources", "fetch")
    capsys.readouterr()
    assert run(lock_file, "sources", "show", "pkg/mod.py", "--symbols") == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("# pkg/mod.py · 5 definitions · ")
    rows = [line.split() for line in out[1:]]
    assert rows == [["4-6", "function", "helper"], ["9-17", "class", "Outer"], ["10-15", "class", "Outer.Inner"],
                    ["11-15", "function", "Outer.Inner.method"], ["20-21", "function", "run"]]
    assert run(lock_file, "sources", "show", "pkg/mod.py:1-2", "--symbols") == 2
    assert run(lock_file, "sources", "show", "pkg/gone.py", "--symbols") == 2
    assert "'pkg/gone.py' does not exist" in capsys.readouterr().err


def test_verify_names_the_path_once_and_proposes_the_closest_symbol(cache: Path, lock_file: Path, tmp_path: Path,
                                                                    capsys) -> None:
    run(lock_file, "sources", "fetch")
    page = tmp_path / "c.md"
    page.write_text("# C\n\n```{slime-source} pkg/mod.py\n:pyobject: method\n```\n\n{slime}`pkg/gone.py:1`\n")
    capsys.readouterr()
    assert run(lock_file, "sources", "verify", str(page)) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (f"{page}:3: directive pkg/mod.py: :pyobject: no definition named 'method'; closest: "
                      "Outer.Inner.method (`slimebook sources show pkg/mod.py --symbols` lists them all)")
    assert out[1].startswith(f"{page}:7: role pkg/gone.py: does not exist at ")
    assert all(line.count("pkg/gone.py") == 1 for line in out[1:2])


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_line_on_a_terminal_only() -> None:
    assert tty_progress("scanning", io.StringIO()) is None  # a log or a pipe stays quiet
    out = _Terminal()
    display = tty_progress("scanning", out)
    assert display is not None
    assert list(display(iter(["a.py", "b/c.py"]), 2)) == ["a.py", "b/c.py"]
    assert out.getvalue() == "\r\x1b[2Kscanning [1/2] a.py\r\x1b[2Kscanning [2/2] b/c.py\r\x1b[2K"


def test_fetch_shows_gits_progress_on_a_stream_and_keeps_it_out_of_errors(
    cache: Path, lock_file: Path, tmp_path: Path, source_repo: SourceRepo
) -> None:
    from slimebook.lock import load_lock
    from slimebook.store import FetchError, SourceStore

    shown = io.StringIO()
    assert SourceStore(load_lock(lock_file)).fetch(progress=shown) is True
    assert re.search(r"objects: +100% \(", shown.getvalue())  # git's own progress lines
    lock = tmp_path / "l.toml"
    lock.write_text(source_repo.lock_text().replace(source_repo.pin, "0" * 40))
    failing = SourceStore(load_lock(lock))
    with pytest.raises(FetchError) as info:
        failing.fetch(progress=io.StringIO())
    assert "0" * 40 in str(info.value) and "%" not in str(info.value)
    assert not failing.git_dir.exists()


def test_grep_prints_matches_and_exits_like_git_grep(cache: Path, lock_file: Path, capsys) -> None:
    assert run(lock_file, "sources", "fetch") == 0
    capsys.readouterr()
    assert run(lock_file, "sources", "grep", "-w", "def", "pkg/crlf.py") == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == ["pkg/crlf.py:1: def f():", "pkg/crlf.py:5: def g():"]
    assert "2 lines in 1 file(s) match 'def'" in err and "(pkg/crlf.py)" in err
    assert run(lock_file, "sources", "grep", "no such text anywhere") == 1
    assert capsys.readouterr().out == ""
    assert run(lock_file, "sources", "grep", "(") == 2
    assert "slimebook: git grep '(' at" in capsys.readouterr().err


def test_livehtml_without_sphinx_autobuild_says_what_to_install(monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture) -> None:
    """sphinx-autobuild is this book's choice (the ``book`` extra), not a dependency of the extension (issue 34)."""
    import sys

    from slimebook import livehtml

    monkeypatch.setitem(sys.modules, "sphinx_autobuild", None)  # find_spec then finds nothing
    assert livehtml.main([".", "_build/html"]) == 2
    assert "sphinx-autobuild is not installed" in capsys.readouterr().err
