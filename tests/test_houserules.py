"""House rules as warnings (subtype ``house``): a guide chapter without a context box; a Slime definition named in
prose without a ``{slime}`` citation, with the role to write (issue 20)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SourceRepo, copy_root
from slimebook.lock import load_lock
from slimebook.sphinxext.gates.houserules import needs_context_box
from slimebook.store import SourceStore
from slimebook.symbols import pin_symbols, scan_definitions

_COLOUR = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture
def house(tmp_path: Path, fetched_cache: Path, source_repo: SourceRepo, monkeypatch: pytest.MonkeyPatch,
          sphinx_build):
    monkeypatch.setenv("SLIMEBOOK_CACHE", str(fetched_cache))
    src = copy_root("house", tmp_path)
    (src / "sources.toml").write_text(source_repo.lock_text())
    app = sphinx_build(src)
    return app, _COLOUR.sub("", app._warning.getvalue())


def test_guide_chapter_without_a_context_box_warns_at_its_title(house) -> None:
    _app, warnings = house
    assert re.search(r"guide/unboxed\.md:1: WARNING: house rule: a guide chapter opens with a context box; put "
                     r"```\{context-box\}``` with :main-line: .* \[slimebook\.house\]", warnings), warnings
    assert "boxed.md:1: WARNING: house rule: a guide" not in warnings.replace("unboxed", "")
    assert "guide/index.md" not in warnings


def test_uncited_slime_name_in_prose_warns_once_with_the_role_to_write(house) -> None:
    _app, warnings = house
    mentions = re.findall(r"guide/boxed\.md:(\d+): WARNING: house rule: `([^`]+)` is a slime definition at the pin"
                          r".*cite it once in this document: (\{slime\}`[^`]+`)", warnings)
    assert mentions == [("8", "Outer.Inner.method", "{slime}`Outer.Inner.method <pkg/mod.py>`")], warnings
    for fine in ("asyncio.gather", "create_task", "__aexit__", "`run`"):
        assert fine not in warnings


def test_the_suggested_role_builds_clean(tmp_path: Path, fetched_cache: Path, source_repo: SourceRepo,
                                         monkeypatch: pytest.MonkeyPatch, sphinx_build) -> None:
    monkeypatch.setenv("SLIMEBOOK_CACHE", str(fetched_cache))
    src = copy_root("house", tmp_path)
    (src / "sources.toml").write_text(source_repo.lock_text())
    boxed = src / "guide" / "boxed.md"
    boxed.write_text(boxed.read_text().replace("`Outer.Inner.method` is named",
                                               "{slime}`Outer.Inner.method <pkg/mod.py>` is named", 1))
    unboxed = src / "guide" / "unboxed.md"
    box = "# Unboxed\n\n```{context-box}\n:main-line: x\n```\n"
    unboxed.write_text(unboxed.read_text().replace("# Unboxed\n", box))
    assert "house rule" not in sphinx_build(src)._warning.getvalue()


def test_patterns_and_the_definition_scan() -> None:
    patterns = ["chapters/guide/*", "!chapters/guide/index"]
    assert needs_context_box("chapters/guide/action4", patterns)
    assert not needs_context_box("chapters/guide/index", patterns)
    assert not needs_context_box("chapters/async/01", patterns)
    text = ("class Box:\n    async def __aexit__(self):\n        def inner():\n            pass\n\n\n"
            "def helper():\n    pass\n")
    assert scan_definitions(text) == ["Box", "Box.__aexit__", "Box.__aexit__.inner", "helper"]


def test_the_pin_index_is_read_back_from_the_cache_without_reading_the_pin(
        tmp_path: Path, fetched_cache: Path, source_repo: SourceRepo) -> None:
    """One file per commit under ``<root>/symbols``; a fresh process answers from it without reading a blob."""
    root = tmp_path / "root"
    shutil.copytree(fetched_cache / "git", root / "git")  # the pin alone: other tests' cache entries stay behind
    lock = tmp_path / "sources.toml"
    lock.write_text(source_repo.lock_text())
    expected = ["helper", "Outer", "Outer.Inner", "Outer.Inner.method", "run"]
    symbols = pin_symbols(SourceStore(load_lock(lock), root=root))
    assert [q for q in symbols.qualified if symbols.qualified[q] == ("pkg/mod.py",)] == expected
    assert [p.name for p in (root / "symbols").rglob("*.json")] == [f"{source_repo.pin}.json"]
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from slimebook.lock import load_lock\n"
        "from slimebook.store import SourceStore\n"
        "from slimebook.symbols import pin_symbols\n"
        "def refuse(self, path):\n"
        "    raise AssertionError('read ' + path)\n"
        "SourceStore.read_text = refuse\n"
        f"symbols = pin_symbols(SourceStore(load_lock(Path({str(lock)!r})), root=Path({str(root)!r})))\n"
        "print(*[q for q in symbols.qualified if symbols.qualified[q] == ('pkg/mod.py',)])\n"
        "print(*symbols.lookup('method'))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == [" ".join(expected), "Outer.Inner.method"]


def test_an_undefined_label_warns_at_its_own_line_with_the_closest_labels(house) -> None:
    _app, warnings = house
    # the fourth option of a context box: its own line (7), not the directive's (3)
    assert re.search(r"guide/refs\.md:7: WARNING: undefined label: 'house-boxd'; did you mean 'house-boxed'\? "
                     r"\[ref\.ref\]", warnings), warnings
    assert re.search(r"guide/refs\.md:10: WARNING: undefined label: 'zzz-nothing-like-it'; no label of the book is "
                     r"close to it \[ref\.ref\]", warnings), warnings
    assert warnings.count("undefined label") == 2  # Sphinx's own warning is not repeated


def test_a_misspelled_directive_option_names_the_closest_option(house) -> None:
    _app, warnings = house
    assert re.search(r"guide/refs\.md:16: WARNING: 'slime-source': Unknown option key: 'emphasise-lines' "
                     r"\(allowed: \[[^]]*\]\); did you mean 'emphasize-lines'\? \[myst\.directive_option\]",
                     warnings), warnings
