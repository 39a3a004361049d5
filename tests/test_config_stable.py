"""A second build of an unchanged book does not report "The configuration has changed" (issue 20): values the
extensions set at ``builder-inited`` are set at ``config-inited``
(:mod:`slimebook.sphinxext.accelerate.stableconfig`)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import SourceRepo, copy_root

_COLOUR = re.compile(r"\x1b\[[0-9;]*m")


def test_second_build_keeps_the_configuration(tmp_path: Path, fetched_cache: Path, source_repo: SourceRepo,
                                              monkeypatch: pytest.MonkeyPatch, sphinx_build) -> None:
    monkeypatch.setenv("SLIMEBOOK_CACHE", str(fetched_cache))
    src = copy_root("config-stable", tmp_path)
    (src / "sources.toml").write_text(source_repo.lock_text())
    first = sphinx_build(src)
    assert first._warning.getvalue() == ""
    second = sphinx_build(src)
    status = _COLOUR.sub("", second._status.getvalue())
    assert "loading pickled environment" in status
    assert "configuration has changed" not in status, status
    # the static directories are there once each, the book's own first
    paths = [Path(p).name for p in second.config.html_static_path]
    assert paths[0] == "_static" and len(paths) == len(set(second.config.html_static_path))
    assert (second.outdir / "_static" / "copybutton.js").is_file()
    assert (second.outdir / "_static" / "extra.css").is_file()
