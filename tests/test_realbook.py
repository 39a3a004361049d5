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
