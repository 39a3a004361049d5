"""The source lock (slimebook.lock): reading it, its permalinks, and the re-pin rewrite's refusals.

Every expected value is written out: the fields read, the URLs, the error messages word for word. The layout-keeping
rewrite itself is tested in test_drift.py (its re-pin tests), the store's use of the lock in test_store.py.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from slimebook import lock as lock_mod
from slimebook.lock import LockError, SourceLock, load_lock, repin_lock_text, update_lock_file

OLD = "0123456789abcdef0123456789abcdef01234567"
NEW = "89abcdef0123456789abcdef0123456789abcdef"
BLOB = "https://example.invalid/slime/blob/{commit}/{path}{anchor}"
LOCK = (
    "[other]\n"
    'url = "https://example.invalid/other.git"\n'
    f'commit = "{NEW}"\n'
    'license = "MIT"\n'
    'blob_url = "https://example.invalid/other/{commit}/{path}{anchor}"\n'
    "\n"
    "[slime]\n"
    'url = "https://example.invalid/slime.git"\n'
    f'commit = "{NEW}"\n'
    f'previous_commit = "{OLD}"\n'
    'license = "Apache-2.0"\n'
    f'blob_url = "{BLOB}"\n'
)


def write(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "sources.toml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_load_lock_reads_the_named_table(tmp_path: Path) -> None:
    path = write(tmp_path, LOCK)
    assert load_lock(path) == SourceLock(name="slime", url="https://example.invalid/slime.git", commit=NEW,
                                         license="Apache-2.0", blob_url=BLOB, previous_commit=OLD)
    assert load_lock(str(path), "other") == SourceLock(
        name="other", url="https://example.invalid/other.git", commit=NEW, license="MIT",
        blob_url="https://example.invalid/other/{commit}/{path}{anchor}", previous_commit=None)


def test_short_and_permalinks() -> None:
    lock = SourceLock(name="slime", url="u", commit=NEW, license="MIT", blob_url=BLOB)
    assert lock.short == "89abcde"
    blob = f"https://example.invalid/slime/blob/{NEW}/pkg/a.py"
    assert lock.permalink("pkg/a.py") == blob
    assert lock.permalink("pkg/a.py", 7) == blob + "#L7"
    assert lock.permalink("pkg/a.py", 7, 7) == blob + "#L7"
    assert lock.permalink("pkg/a.py", 7, 9) == blob + "#L7-L9"
    assert lock.permalink("pkg/a.py", 1, 2) == blob + "#L1-L2"
    # a line past 256 read from a file is another int object than the start, equal to it: still one line
    assert lock.permalink("pkg/a.py", 1000, int("1000")) == blob + "#L1000"
    with pytest.raises(dataclasses.FrozenInstanceError):
        lock.commit = OLD  # type: ignore[misc]  # one lock is shared by the whole build


FIELDS = 'url = "u"\nlicense = "MIT"\nblob_url = "b"\n'
NO_TABLE = "no [slime] table (the book's slimebook_source names the table it quotes)"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", NO_TABLE),
        ('slime = "x"\n', NO_TABLE),
        ("[other]\n" + FIELDS + f'commit = "{NEW}"\n', NO_TABLE),
        ("[slime]\nurl = 'u'\ncommit = 5\nlicense = ''\n", "[slime] lacks commit, license, blob_url"),
        ("[slime]\n" + FIELDS, "[slime] lacks commit"),
        ("[slime]\n" + FIELDS + 'commit = "abc"\n', "[slime] commit must be a full 40-hex sha, got 'abc'"),
        ("[slime]\n" + FIELDS + f'commit = "{NEW.upper()}"\n',
         f"[slime] commit must be a full 40-hex sha, got '{NEW.upper()}'"),
        ("[slime]\n" + FIELDS + f'commit = "{NEW}0"\n', f"[slime] commit must be a full 40-hex sha, got '{NEW}0'"),
        ("[slime]\n" + FIELDS + f'commit = "{NEW}"\nprevious_commit = 7\n',
         "[slime] previous_commit must be a full 40-hex sha, got 7"),
        ("[slime]\n" + FIELDS + f'commit = "{NEW}"\nprevious_commit = "{OLD}0"\n',
         f"[slime] previous_commit must be a full 40-hex sha, got '{OLD}0'"),
        ("[slime]\n" + FIELDS + f'commit = "{NEW}"\nprevious_commit = ""\n',
         "[slime] previous_commit must be a full 40-hex sha, got ''"),
        ("[slime\n", "not valid TOML: Expected ']' at the end of a table declaration (at line 1, column 7)"),
        ('[slime]\nurl = "x"\ncommit = = 1\n', "not valid TOML: Invalid value (at line 3, column 10)"),
        (b"[slime]\nurl = '\xff'\n", "not UTF-8 text (invalid start byte at byte 15)"),
    ],
)
def test_load_lock_errors_name_the_file_and_the_field(tmp_path: Path, text: str | bytes, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(LockError) as caught:
        load_lock(path)
    # a TOML error names its line as path:line:, as the categories, candidate-notes and waiver files do
    line = re.search(r"at line (\d+)", message)
    assert str(caught.value) == (f"{path}:{line[1]}: {message}" if line else f"{path}: {message}")


def test_a_missing_lock_is_named(tmp_path: Path) -> None:
    with pytest.raises(LockError) as caught:
        load_lock(tmp_path / "none.toml")
    assert str(caught.value) == f"{tmp_path / 'none.toml'}: source lock not found"


def test_a_lock_that_cannot_be_read_is_named(tmp_path: Path) -> None:
    # a directory (slimebook_lock = "" names the book's own directory): a LockError, not the OSError of the read
    with pytest.raises(LockError) as caught:
        load_lock(tmp_path)
    assert str(caught.value) == f"{tmp_path}: the source lock cannot be read (Is a directory)"


@pytest.mark.parametrize(
    ("text", "commit", "previous", "message"),
    [
        (LOCK, "abc", OLD, "not a full 40-hex sha: 'abc'"),
        (LOCK, NEW, OLD.upper(), f"not a full 40-hex sha: '{OLD.upper()}'"),
        (LOCK, NEW, OLD + "0", f"not a full 40-hex sha: '{OLD}0'"),
        ("[slime\n", NEW, OLD, "the lock is not valid TOML: Unexpected character: '\\n' at line 1 col 6"),
        (f'slime = {{commit = "{OLD}"}}\n', NEW, OLD, "the lock has no [slime] table"),
        (f'[[slime]]\ncommit = "{OLD}"\n', NEW, OLD, "the lock has no [slime] table"),
        ("[slime]\ncommit = 5\n", NEW, OLD, '[slime] has no commit = "..." line'),
    ],
)
def test_repin_lock_text_refusals_word_for_word(text: str, commit: str, previous: str, message: str) -> None:
    with pytest.raises(LockError) as caught:
        repin_lock_text(text, "slime", commit, previous)
    assert str(caught.value) == message


def test_each_value_keeps_its_own_quote_style() -> None:
    text = f"[slime]\ncommit = \"{OLD}\"\nprevious_commit = '{'f' * 40}'  # kept\n"
    assert repin_lock_text(text, "slime", NEW, OLD) == (
        f"[slime]\ncommit = \"{NEW}\"\nprevious_commit = '{OLD}'  # kept\n")
    text = f"[slime]\ncommit = '{OLD}'\nprevious_commit = \"{'f' * 40}\"\n"
    assert repin_lock_text(text, "slime", NEW, OLD) == (
        f"[slime]\ncommit = '{NEW}'\nprevious_commit = \"{OLD}\"\n")


@pytest.mark.parametrize(
    ("rewritten", "message"),
    [
        # what the edit must not produce: the file then stays as it was
        (LOCK.replace(f'previous_commit = "{OLD}"', f'previous_commit = "{NEW}"'),
         "could not re-pin [slime]; edit commit and previous_commit by hand"),
        (LOCK.replace(f'commit = "{NEW}"\nprevious', f'commit = "{OLD}"\nprevious'),
         "could not re-pin [slime]; edit commit and previous_commit by hand"),
        (LOCK.replace(f'previous_commit = "{OLD}"', f'previous_commit = "{"0" * 40}"'),
         "could not re-pin [slime]; edit commit and previous_commit by hand"),
        (LOCK.replace(f'previous_commit = "{OLD}"\n', ""),
         "could not re-pin [slime]; edit commit and previous_commit by hand"),
        ("", "could not re-pin [slime]; edit commit and previous_commit by hand"),
        ("[slime\n", "the re-pinned lock would not be valid TOML: "
                     "Expected ']' at the end of a table declaration (at line 1, column 7)"),
    ],
)
def test_update_lock_file_reads_the_edit_back_before_writing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rewritten: str, message: str,
) -> None:
    before = LOCK.replace(NEW, "f" * 40)
    path = write(tmp_path, before)
    monkeypatch.setattr(lock_mod, "repin_lock_text", lambda *args: rewritten)
    with pytest.raises(LockError) as caught:
        update_lock_file(path, "slime", NEW, OLD)
    assert str(caught.value) == f"{path}: {message}"
    assert path.read_text(encoding="utf-8") == before


def test_update_lock_file_writes_the_edit(tmp_path: Path) -> None:
    path = write(tmp_path, LOCK.replace(f'previous_commit = "{OLD}"\n', ""))
    update_lock_file(str(path), "slime", OLD, NEW)
    assert path.read_text(encoding="utf-8") == LOCK.replace(
        f'commit = "{NEW}"\nprevious_commit = "{OLD}"',
        f'commit = "{OLD}"\nprevious_commit = "{NEW}"')


BOM_SAYS = "starts with a byte-order mark (U+FEFF), which TOML does not allow: save it as UTF-8 without one"


def test_every_toml_file_the_book_reads_names_a_byte_order_mark(tmp_path: Path) -> None:
    """The lock, the candidate notes, the coverage waivers and a categories file: one saved by an editor that writes
    a byte-order mark says so, at line 1, instead of TOML's "Invalid statement (at line 1, column 1)"."""
    from slimebook.candidates import NotesError, parse_notes
    from slimebook.scan.categories import CategoryError, load_categories
    from slimebook.usage.waivers import WaiverError, parse_waivers

    lock = write(tmp_path, "\ufeff[slime]\n" + FIELDS + f'commit = "{NEW}"\n')
    with pytest.raises(LockError) as caught:
        load_lock(lock)
    assert str(caught.value) == f"{lock}:1: {BOM_SAYS}"
    for parse, error in ((parse_notes, NotesError), (parse_waivers, WaiverError)):
        with pytest.raises(error) as caught:
            parse("\ufeff[[left]]\n")
        assert (str(caught.value), caught.value.line) == (BOM_SAYS, 1)
    categories = tmp_path / "categories.toml"
    categories.write_text('\ufeffextends = "default"\n', encoding="utf-8")
    with pytest.raises(CategoryError) as caught:
        load_categories(categories)
    assert str(caught.value) == f"{categories}:1: {BOM_SAYS}"


@pytest.mark.parametrize(("text", "line"), [
    ('[slime]\nurl = "x\n', 2),  # an unterminated string: TOML says "at line 2"
    ("[slime]\nurls = [\n  1,\n  2,\n\n", 4),  # "at end of document": the last line that holds anything
])
def test_a_toml_error_at_the_end_of_the_document_has_a_line(tmp_path: Path, text: str, line: int) -> None:
    lock = write(tmp_path, text)
    with pytest.raises(LockError) as caught:
        load_lock(lock)
    assert str(caught.value).startswith(f"{lock}:{line}: not valid TOML: ")
