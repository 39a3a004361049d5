"""The one atomic writer: nothing half-written, permission bits kept, line endings untouched."""

from __future__ import annotations

import os
import stat
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


def test_an_interrupted_write_leaves_the_old_file_and_no_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C (``KeyboardInterrupt``, not an ``Exception``) between writing and replacing: no temp file is left."""
    import os

    target = tmp_path / "file.txt"
    target.write_text("old\n")

    def interrupted(src: str, dst: object) -> None:
        assert Path(src).read_text() == "new\n"  # the temp file was written in full, next to the target
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        atomic_write(target, "new\n")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["file.txt"]


def test_missing_parents_are_created_and_empty_text_is_written(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "new.txt"
    atomic_write(target, "")
    assert target.read_bytes() == b""
    assert [p.name for p in target.parent.iterdir()] == ["new.txt"]


def test_an_interrupt_just_after_the_replace_is_not_masked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The temp file is gone once replaced: cleaning up must not turn the interrupt into FileNotFoundError."""
    import os

    target = tmp_path / "file.txt"
    real = os.replace

    def replaced_then_interrupted(src: str, dst: object) -> None:
        real(src, dst)
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", replaced_then_interrupted)
    with pytest.raises(KeyboardInterrupt):
        atomic_write(target, "new\n")
    assert target.read_text() == "new\n"
    assert [p.name for p in tmp_path.iterdir()] == ["file.txt"]


@pytest.mark.parametrize(("mode", "kept"), [(0o755, 0o755), (0o601, 0o601), (0o4750, 0o750)])
def test_every_permission_bit_is_kept_and_nothing_else(tmp_path: Path, mode: int, kept: int) -> None:
    target = tmp_path / "run.sh"
    target.write_text("old\n")
    target.chmod(mode)
    atomic_write(target, "new\n")
    assert target.stat().st_mode & 0o7777 == kept


@pytest.mark.parametrize(("umask", "mode"), [(0o027, 0o640), (0o022, 0o644), (0o002, 0o664), (0o000, 0o666),
                                             (0o077, 0o600)])
def test_a_new_file_gets_the_umask_default_not_a_private_mode(tmp_path: Path, umask: int, mode: int) -> None:
    """0o666 less the umask, as ``open()`` gives (mkstemp gave 0o600); the umask is the process's again after."""
    old = os.umask(umask)
    try:
        atomic_write(tmp_path / "new.html", "x")
        assert os.umask(umask) == umask
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.html").stat().st_mode) == mode
