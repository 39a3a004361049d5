"""The source store against a git repository the test builds (two commits, a moved function)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import MODULE_V1, SourceRepo, git
from slimebook.lock import LockError, load_lock
from slimebook.store import (
    FetchError,
    GrepMatch,
    PinMissingError,
    RevisionError,
    SourceContentError,
    SourcePathError,
    SourceStore,
)
from slimebook.store import fetch as fetch_mod


def test_fetch_reads_the_pin_not_head(cache: Path, lock_file: Path, source_repo: SourceRepo) -> None:
    store = SourceStore(load_lock(lock_file))
    assert store.fetch() is True
    assert store.is_present()
    assert store.read_text("pkg/mod.py") == MODULE_V1
    assert store.read_lines("pkg/mod.py")[3] == "def helper(x):"
    assert store.git_dir.parent.parent == cache
    assert not [p for p in store.git_dir.parent.iterdir() if p.name.startswith(".tmp-")]


def test_second_fetch_does_nothing(cache: Path, lock_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = SourceStore(load_lock(lock_file))
    store.fetch()
    calls: list[tuple[str, ...]] = []
    real = fetch_mod.run_git

    def spy(*args: str, **kw):
        calls.append(args)
        return real(*args, **kw)

    monkeypatch.setattr(fetch_mod, "run_git", spy)
    assert store.fetch() is False
    assert calls and all(call[0] == "cat-file" for call in calls)  # only the presence probe ran


def test_url_override(cache: Path, tmp_path: Path, source_repo: SourceRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    lock = tmp_path / "lock.toml"
    lock.write_text(source_repo.lock_text(url="https://example.invalid/unreachable.git"))
    monkeypatch.setenv("SLIME_SOURCE_URL", str(source_repo.path / ".git"))  # a bare git dir works too
    store = SourceStore(load_lock(lock))
    assert store.fetch() is True
    assert store.read_text("pkg/mod.py") == MODULE_V1


def test_missing_pin_names_commit_and_command(cache: Path, lock_file: Path, source_repo: SourceRepo) -> None:
    store = SourceStore(load_lock(lock_file))
    with pytest.raises(PinMissingError) as info:
        store.read_text("pkg/mod.py")
    assert source_repo.pin in str(info.value)
    assert str(info.value).endswith("fetch it with: slimebook sources fetch")  # the default: works in any book
    with pytest.raises(PinMissingError, match=r"fetch it with: make sources\Z"):  # the book's slimebook_fetch_command
        SourceStore(load_lock(lock_file), fetch_command="make sources").require()


def test_missing_commit_upstream_is_a_fetch_error(cache: Path, tmp_path: Path, source_repo: SourceRepo) -> None:
    lock = tmp_path / "lock.toml"
    lock.write_text(source_repo.lock_text().replace(source_repo.pin, "0" * 40))
    store = SourceStore(load_lock(lock))
    with pytest.raises(FetchError) as info:
        store.fetch()
    assert "0" * 40 in str(info.value)
    assert "git fetch" in str(info.value)  # git's own message is carried
    assert not store.git_dir.exists()
    assert not list(store.git_dir.parent.iterdir())


def test_interrupted_fetch_leaves_nothing_valid(
    cache: Path, lock_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SourceStore(load_lock(lock_file))
    real = fetch_mod.run_git

    def interrupted(*args: str, **kw):
        if args[0] == "update-ref":  # the objects have arrived; the process dies before the rename
            raise KeyboardInterrupt
        return real(*args, **kw)

    monkeypatch.setattr(fetch_mod, "run_git", interrupted)
    with pytest.raises(KeyboardInterrupt):
        store.fetch()
    assert not store.is_present()
    assert not store.git_dir.exists()
    monkeypatch.setattr(fetch_mod, "run_git", real)
    assert store.fetch() is True  # a later fetch succeeds


def test_leftover_temp_dir_is_not_a_cache(cache: Path, lock_file: Path) -> None:
    store = SourceStore(load_lock(lock_file))
    (store.git_dir.parent / ".tmp-crashed").mkdir(parents=True)
    assert not store.is_present()
    with pytest.raises(PinMissingError):
        store.require()


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("../etc/passwd", "may not contain '..'"),
        ("/etc/passwd", "relative POSIX path"),
        ("pkg\\mod.py", "relative POSIX path"),
        ("pkg/./mod.py", "may not contain"),
        ("pkg", "is a directory"),
        ("pkg/nope.py", "does not exist"),
        ("pkg/escape.py", "resolving outside the repository"),
    ],
)
def test_bad_paths(cache: Path, lock_file: Path, path: str, message: str) -> None:
    store = SourceStore(load_lock(lock_file))
    store.fetch()
    with pytest.raises(SourcePathError, match=message.replace(".", r"\.")):
        store.read_text(path)


def test_symlink_inside_repo_is_followed(cache: Path, lock_file: Path) -> None:
    store = SourceStore(load_lock(lock_file))
    store.fetch()
    assert store.resolve("pkg/alias.py") == "pkg/mod.py"


@pytest.mark.parametrize(("path", "message"), [("pkg/blob.bin", "binary"), ("pkg/latin.py", "not valid UTF-8")])
def test_unreadable_content(cache: Path, lock_file: Path, path: str, message: str) -> None:
    store = SourceStore(load_lock(lock_file))
    store.fetch()
    with pytest.raises(SourceContentError, match=message):
        store.read_text(path)


def test_crlf_lines_are_numbered_like_git(cache: Path, lock_file: Path) -> None:
    store = SourceStore(load_lock(lock_file))
    store.fetch()
    assert store.read_lines("pkg/crlf.py") == ["def f():", "    return 1", "", "", "def g():", "    pass"]


def test_grep_lists_the_pins_matching_lines_in_the_books_numbering(cache: Path, lock_file: Path) -> None:
    store = SourceStore(load_lock(lock_file))
    store.fetch()
    assert store.grep(r"def (f|g)\(", ["pkg/crlf.py"]) == [
        GrepMatch("pkg/crlf.py", 1, "def f():"), GrepMatch("pkg/crlf.py", 5, "def g():")]
    # pkg/cr.py (the lone-CR case) has a CR-only line end inside a comment: git counts one line less after it
    target = next(n for n, line in enumerate(store.read_lines("pkg/cr.py"), 1) if line.startswith("def target"))
    assert store.grep("^def target", ["pkg/"]) == [GrepMatch("pkg/cr.py", target, "def target():")]
    assert store.grep("^DEF TARGET", ["pkg/cr.py"], ignore_case=True)[0].line == target
    assert store.grep("ret", ["pkg/crlf.py"], word=True) == []
    assert store.grep("(", fixed=True, pathspecs=["pkg/mod.py"]) != []
    assert store.grep("nowhere at all") == []
    with pytest.raises(RevisionError, match="Unmatched"):
        store.grep("(")


def test_grep_survives_odd_files_names_and_git_configuration(cache: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "odd"
    repo.mkdir()
    git("init", "--quiet", "--initial-branch=main", str(repo), cwd=tmp_path)
    (repo / "we:ird.py").write_bytes(b"a:b target\n")
    (repo / "\u00fcn.py").write_bytes(b"target\n")
    (repo / "lat.py").write_bytes(b"caf\xe9 target\n")
    (repo / "cr.py").write_bytes(b"one\rtwo target\nthree\r\nfour target\n")
    git("add", "-A", cwd=repo)
    git("commit", "--quiet", "-m", "odd", cwd=repo)
    lock = tmp_path / "odd.toml"
    lock.write_text(SourceRepo(repo, git("rev-parse", "HEAD", cwd=repo).strip(), "").lock_text())
    store = SourceStore(load_lock(lock))
    store.fetch()
    config = tmp_path / "gitconfig"  # a user's configuration must not change what is parsed
    config.write_text("[grep]\n\tcolumn = true\n\tlineNumber = false\n[core]\n\tquotePath = true\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    assert store.grep("target") == [
        GrepMatch("cr.py", 2, "two target"),  # inside git's line 1 ("one\rtwo target"): book line 2
        GrepMatch("cr.py", 4, "four target"),
        GrepMatch("lat.py", 1, "caf\ufffd target"),  # not UTF-8: shown with a replacement character
        GrepMatch("we:ird.py", 1, "a:b target"),
        GrepMatch("\u00fcn.py", 1, "target"),
    ]
    assert store.grep("one|two", ["cr.py"]) == [GrepMatch("cr.py", 1, "one"), GrepMatch("cr.py", 2, "two target")]


def test_reader_survives_fork(cache: Path, lock_file: Path) -> None:
    import multiprocessing

    store = SourceStore(load_lock(lock_file))
    store.fetch()
    store.read_text("README.md")  # start cat-file in this process
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(1) as pool:
        assert pool.apply(store.read_text, ("pkg/mod.py",)) == MODULE_V1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no [slime] table"),
        ("[slime]\nurl='x'\n", "lacks commit"),
        ("[slime]\nurl='x'\ncommit='abc'\nlicense='MIT'\nblob_url='u'\n", "full 40-hex"),
        ("[slime\n", "not valid TOML"),
    ],
)
def test_lock_errors(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "lock.toml"
    path.write_text(text)
    with pytest.raises(LockError, match=re.escape(message)):
        load_lock(path)


def test_real_lock_is_the_pin() -> None:
    lock = load_lock(Path(__file__).resolve().parent.parent / "sources" / "sources.toml")
    assert lock.commit == "624b824a898ab0ec1fcb4d373004c7f3852bf515"
    assert lock.permalink("a/b.py", 81, 104).endswith("/blob/624b824a898ab0ec1fcb4d373004c7f3852bf515/a/b.py#L81-L104")
    assert lock.permalink("a/b.py", 7).endswith("a/b.py#L7")
