"""Every warning repeats: a second build of an unchanged book emits the same warnings as the first, for every
subtype of :class:`slimebook.sphinxext.diagnostics.SlimebookWarning` (issue 15, "every warning repeats")."""

from __future__ import annotations

import re
import sys
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
    monkeypatch.setitem(sys.modules, "jieba", None)  # as if not installed: the root's Chinese index warns (dependency)
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


_ANY = re.compile(r"^(.*?): WARNING: (.*)$", re.M)


def test_warnings_of_sphinx_and_myst_repeat_too(tmp_path: Path, fetched_cache: Path, source_repo: SourceRepo,
                                                 monkeypatch: pytest.MonkeyPatch, sphinx_build) -> None:
    """An undefined label (Sphinx's warning, with the book's suggestion) and an unknown directive option (MyST's
    warning) mark their document like the extension's own warnings: the second build warns again."""
    monkeypatch.setenv("SLIMEBOOK_CACHE", str(fetched_cache))
    src = copy_root("warnings", tmp_path)
    (src / "sources.toml").write_text(source_repo.lock_text())
    (src / "foreign.md").write_text("---\norphan: true\n---\n# Foreign\n\nSee {ref}`no-such-label`.\n\n"
                                    "```{code-block} python\n:linenos:\n:emphasise-lines: 1\n\nx = 1\n```\n")
    first = sphinx_build(src)
    second = sphinx_build(src)

    def foreign(app) -> list[str]:
        return sorted(f"{where.rsplit('/', 1)[-1]}: {message}"
                      for where, message in _ANY.findall(_COLOUR.sub("", app._warning.getvalue()))
                      if "foreign.md" in where)

    assert foreign(first) == [
        "foreign.md:10: 'code-block': Unknown option key: 'emphasise-lines' (allowed: ['caption', 'class', 'dedent', "
        "'emphasize-lines', 'force', 'lineno-start', 'linenos', 'name']); did you mean 'emphasize-lines'? "
        "[myst.directive_option]",
        "foreign.md:6: undefined label: 'no-such-label'; no label of the book is close to it [ref.ref]",
    ]
    assert foreign(second) == foreign(first)
