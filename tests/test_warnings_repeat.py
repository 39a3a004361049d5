"""Every warning repeats: a second build of an unchanged book emits the same warnings as the first, for every
subtype of :class:`slimebook.sphinxext.diagnostics.SlimebookWarning` (issue 15, "every warning repeats")."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from conftest import SourceRepo, copy_root
from slimebook.sphinxext.diagnostics import WARNED_FILE, SlimebookWarning

_TYPED = re.compile(r"^(?:(.*?): )?WARNING: (.*) \[slimebook\.([\w-]+)\]$", re.M)
_COLOUR = re.compile(r"\x1b\[[0-9;]*m")


def _warnings(text: str) -> Counter[tuple[str, str, str]]:
    """``(location, message, subtype)`` of every warning of the extension, counted."""
    return Counter(_TYPED.findall(_COLOUR.sub("", text)))


@pytest.mark.parametrize("parallel", [0, 2], ids=["serial", "j2"])
def test_every_subtype_warns_again_in_a_second_build(tmp_path: Path, fetched_cache: Path, source_repo: SourceRepo,
                                                      monkeypatch: pytest.MonkeyPatch, sphinx_build,
                                                      parallel: int) -> None:
    monkeypatch.setenv("SLIMEBOOK_CACHE", str(fetched_cache))
    src = copy_root("warnings", tmp_path)
    (src / "sources.toml").write_text(source_repo.lock_text())
    first = sphinx_build(src, parallel=parallel)
    assert (Path(first.doctreedir) / WARNED_FILE).is_file()
    second = sphinx_build(src, parallel=parallel)
    one, two = _warnings(first._warning.getvalue()), _warnings(second._warning.getvalue())
    expected = {member.value for member in SlimebookWarning}
    if not parallel:  # a label two documents define: Sphinx's own warning in a serial read (not typed)
        expected.discard(SlimebookWarning.DUPLICATE.value)
    assert {subtype for _, _, subtype in one} == expected
    assert two == one
    # the second build was incremental: it read only the documents that warned, not the whole book again
    status = _COLOUR.sub("", second._status.getvalue())
    read = set(re.findall(r"reading sources\.\.\. \[\s*\d+%\] (\S+)", status))
    assert read == {"index", "more"}, status
