"""A full ``-W`` build of the real book; runs only when the pinned Slime commit is in the source cache."""

from __future__ import annotations

import html as htmllib
import re
import subprocess
import sys
from pathlib import Path

import pytest

from slimebook.lock import load_lock
from slimebook.store import SourceStore

ROOT = Path(__file__).resolve().parent.parent
STORE = SourceStore(load_lock(ROOT / "sources" / "sources.toml"))

pytestmark = [
    pytest.mark.realbook,
    pytest.mark.skipif(
        not STORE.is_present(),
        reason=f"the pinned Slime commit {STORE.lock.commit} is not in the source cache {STORE.root} "
        "(run `make sources`, with SLIME_SOURCE_URL set when offline)",
    ),
]

_BLOCK = re.compile(
    r'<a class="slime-permalink[^"]*" href="[^"]+/blob/(?P<sha>[0-9a-f]{40})/(?P<path>[^"#]+)'
    r'#L(?P<a>\d+)(?:-L(?P<b>\d+))?"'
    r".*?</div>\n(?P<runs>(?:<div class=\"slime-run.*?</pre></div>\n</div>\n)+)",
    re.DOTALL,
)
_RUN = re.compile(r"<pre>(.*?)</pre>", re.DOTALL)
_LINENO = re.compile(r'<span class="linenos">\s*(\d+)</span>')


def _git_status() -> str:
    return subprocess.run(["git", "status", "--porcelain", "--ignored=no"], cwd=ROOT, capture_output=True,
                          text=True, check=False).stdout


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("book")
    before = _git_status()
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", "-d", str(out / "doctrees"),
         str(ROOT), str(out / "html")],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert _git_status() == before, "the build wrote into the source tree"
    return out / "html"


def test_every_excerpt_equals_the_pinned_lines(built: Path) -> None:
    checked = 0
    for page in built.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        for block in _BLOCK.finditer(text):
            assert block["sha"] == STORE.lock.commit
            lines = STORE.read_lines(block["path"])
            for run in _RUN.findall(block["runs"]):
                numbers = [int(n) for n in _LINENO.findall(run)]
                body = _LINENO.sub("", run)
                shown = htmllib.unescape(re.sub(r"<[^>]+>", "", body)).split("\n")
                if shown and shown[-1] == "":
                    shown.pop()
                assert numbers == list(range(numbers[0], numbers[0] + len(numbers)))
                assert shown == lines[numbers[0] - 1 : numbers[-1]], (page.name, block["path"], numbers[0])
                checked += 1
    assert checked >= 5


def test_action4_chapter_is_built(built: Path) -> None:
    page = built / "chapters" / "guide" / "action4-harness-run.html"
    assert page.exists()
    assert page.read_text(encoding="utf-8").count('class="slime-permalink') >= 5


def test_sources_verify_passes() -> None:
    from slimebook.cli import main

    assert main(["--lock", str(ROOT / "sources" / "sources.toml"), "sources", "verify",
                 str(ROOT / "chapters"), str(ROOT / "index.md")]) == 0


def test_reading_order_has_26_entries(built: Path) -> None:
    text = (built / "chapters" / "guide" / "reading-order.html").read_text(encoding="utf-8")
    numbers = re.findall(r'<div class="admonition reading-entry" id="reading-entry-(\d\d)"', text)
    assert numbers == [f"{n:02d}" for n in range(1, 27)]
    table = text[text.index("reading-order-table"):]
    assert all(f'href="#reading-entry-{n}"' in table for n in numbers)


def test_repository_map_equals_git_ls_tree(built: Path) -> None:
    """The map's top-level rows add up to ``git ls-tree -r`` at the pin, directory by directory."""
    text = (built / "chapters" / "guide" / "reuse-roadmap.html").read_text(encoding="utf-8")
    table = text[text.index('<table class="repo-map'):]
    table = table[:table.index("</table>")]
    shown: dict[str, int] = {}
    for row in re.findall(r"<tr.*?</tr>", table, re.DOTALL)[1:]:
        cells = [htmllib.unescape(re.sub(r"<[^>]+>", "", c)).strip()
                 for c in re.findall(r"<td.*?</td>", row, re.DOTALL)]
        if cells and not cells[0].startswith(("└", "合计")):  # sub-rows are indented with └
            shown[cells[0]] = int(cells[1])
        if cells and cells[0] == "合计":
            total = int(cells[1])
    listed = subprocess.run(["git", "ls-tree", "-r", "--name-only", STORE.lock.commit], cwd=STORE.git_dir,
                            capture_output=True, text=True, check=True).stdout.split("\n")
    listed = [p for p in listed if p]
    expected: dict[str, int] = {}
    for path in listed:
        key = path.split("/", 1)[0] + "/" if "/" in path else "（根目录下的文件）"
        expected[key] = expected.get(key, 0) + 1
    assert shown == expected
    assert total == len(listed)
