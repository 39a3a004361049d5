"""The one atomic writer: nothing half-written, permission bits kept, line endings untouched."""

from __future__ import annotations

from pathlib import Path

import pytest

from slimebook.atomicio import atomic_write


def test_writes_exactly_and_keeps_mode(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "file.md"
    atomic_write(target, "a\r\nb\n")
    assert target.read_bytes() == b"a\r\nb\n"
    target.chmod(0o640)
    atomic_write(target, "c\n")
    assert target.read_text() == "c\n" and target.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in target.parent.iterdir()] == ["file.md"]


def test_a_failed_write_leaves_the_old_file_and_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "file.txt"
    target.write_text("old\n")
    with pytest.raises(UnicodeEncodeError):
        atomic_write(target, "bad \udc80 surrogate\n")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["file.txt"]
