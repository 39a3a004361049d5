"""The real book, built once per session (``realbook_html`` in conftest.py, shared with the browser tests); runs only
when the pinned Slime commit is in the source cache. Every excerpt is checked against the pin, every experiment's
shown output against a run of the script."""

from __future__ import annotations

import html as htmllib
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from docutils import nodes
from markdown_it import MarkdownIt
from mdit_py_plugins.colon_fence import colon_fence_plugin

from slimebook.experiments import run_experiment
from slimebook.lines import expand_tabs
from slimebook.lock import load_lock
from slimebook.names import SourceNames
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
_OUTPUT = re.compile(r'<div class="[^"]*experiment-output[^"]*" id="(exp-[^"]+)-output">.*?<pre>(.*?)</pre>', re.DOTALL)

_MD = MarkdownIt("commonmark").use(colon_fence_plugin)
_DIRECTIVE = re.compile(r"^\{([\w-]+)\}\s*(.*)$")
#: Directives whose content is not Markdown (their fences are not searched for directives inside).
_LITERAL = {"code-block", "code", "sourcecode", "literalinclude", "slime-source", "experiment", "mermaid", "math",
            "eval-rst", "usage-index"}


def directives(text: str) -> Iterator[tuple[str, str, str]]:
    """``(name, argument, content)`` of every MyST directive in ``text``, nested ones included, found with the
    markdown-it parser MyST uses (so a directive shown inside a ````markdown example fence is not one)."""
    for token in _MD.parse(text):
        match = _DIRECTIVE.match(token.info.strip()) if token.type in ("fence", "colon_fence") else None
        if match:
            yield match[1], match[2], token.content
            if match[1] not in _LITERAL:
                yield from directives(token.content)


def _book_pages() -> list[Path]:
    return sorted([ROOT / "index.md", *(ROOT / "chapters").rglob("*.md")])


def _html(built: Path, page: Path) -> str:
    return (built / page.relative_to(ROOT).with_suffix(".html")).read_text(encoding="utf-8")


def _text(html: str) -> str:
    return htmllib.unescape(re.sub(r"<[^>]+>", "", html))


@pytest.fixture(scope="module")
def built(realbook_html: Path) -> Path:
    """The session's one real-book build (``realbook_html`` in conftest.py)."""
    return realbook_html


def test_every_excerpt_equals_the_pinned_lines(built: Path) -> None:
    expected = sum(name == "slime-source" for page in _book_pages()
                   for name, _, _ in directives(page.read_text(encoding="utf-8")))
    assert expected >= 150  # the book's excerpts (190 when this test was written), not a handful
    excerpts = runs = 0
    for page in built.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        for block in _BLOCK.finditer(text):
            assert block["sha"] == STORE.lock.commit
            lines = STORE.read_lines(block["path"])
            shown_numbers = []
            for run in _RUN.findall(block["runs"]):
                numbers = [int(n) for n in _LINENO.findall(run)]
                shown = _text(_LINENO.sub("", run)).split("\n")
                if shown and shown[-1] == "":
                    shown.pop()
                assert numbers and numbers == list(range(numbers[0], numbers[0] + len(numbers)))
                assert shown == [expand_tabs(line) for line in lines[numbers[0] - 1 : numbers[-1]]], (
                    page.name, block["path"], numbers[0])
                shown_numbers += numbers
                runs += 1
            # the permalink's range is what the blocks show: from the first run's first line to the last run's last
            first, last = int(block["a"]), int(block["b"] or block["a"])
            assert (shown_numbers[0], shown_numbers[-1]) == (first, last), (page.name, block["path"])
            excerpts += 1
    assert excerpts == expected
    assert runs >= excerpts


def test_every_experiment_shows_its_real_output(built: Path) -> None:
    checked = 0
    for page in _book_pages():
        found = [(arg, content) for name, arg, content in directives(page.read_text(encoding="utf-8"))
                 if name == "experiment"]
        if not found:
            continue
        html = _html(built, page)
        shown = _OUTPUT.findall(html)
        assert len(shown) == len(found), page
        # the HTML keeps each script's download link ("（下载）"; the PDF drops it)
        assert html.count('<span class="slimebook-download">（<a class="reference download') == len(found), page
        for (arg, content), (anchor, pre) in zip(found, shown, strict=True):
            script = page.parent / arg.strip()
            code = re.search(r"^:returncode:\s*(\d+)", content, re.MULTILINE)
            result = run_experiment(script, expect_returncode=int(code[1]) if code else 0)
            assert anchor == "exp-" + nodes.make_id(script.stem)
            assert _text(pre).rstrip("\n") == (result.output.rstrip("\n") or "（没有输出）"), script.name
            checked += 1
    assert checked == len(sorted((ROOT / "chapters").rglob("examples/*.py")))


def test_action4_chapter_is_built(built: Path) -> None:
    page = built / "chapters" / "guide" / "action4-harness-run.html"
    assert page.exists()
    assert page.read_text(encoding="utf-8").count('class="slime-permalink') >= 5


def test_sources_verify_passes(capsys: pytest.CaptureFixture[str]) -> None:
    """In this book the command line needs no flag: conf.py names the lock and the source, and its documents are
    the build's (``chapters/`` and ``index.md``)."""
    from slimebook.cli import main

    assert main(["--book", str(ROOT), "sources", "verify"]) == 0
    files = len([ROOT / "index.md", *(ROOT / "chapters").rglob("*.md")])
    assert f" citations in {files} files checked at {STORE.lock.short}: 0 failed" in capsys.readouterr().out


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


#: The training walk's entry points (issues 30 and 31): each must be covered by a slime-source excerpt or a {slime}
#: range in chapters/training/, as path → qualified names.
TRAINING_ENTRY_POINTS = {
    "train.py": ["train"],
    "train_async.py": ["train"],
    "slime/ray/placement_group.py": ["create_placement_groups", "allocate_train_group", "create_training_models",
                                     "create_rollout_manager"],
    "slime/ray/actor_group.py": ["RayTrainGroup.async_train"],
    "slime/ray/rollout.py": ["RolloutManager.generate", "RolloutManager.offload", "RolloutManager.onload_weights"],
    "slime/backends/megatron_utils/actor.py": [
        "MegatronTrainRayActor._get_rollout_data", "MegatronTrainRayActor.train",
        "MegatronTrainRayActor.update_weights", "MegatronTrainRayActor.sleep", "MegatronTrainRayActor.wake_up"],
    "slime/backends/megatron_utils/data.py": ["get_batch"],
    "slime/backends/megatron_utils/loss.py": ["compute_advantages_and_returns", "policy_loss_function"],
    "slime/utils/ppo_utils.py": ["get_grpo_returns", "compute_approx_kl"],
    "slime/backends/megatron_utils/update_weight/update_weight_from_tensor.py": [
        "UpdateWeightFromTensor.update_weights"],
    "slime/backends/megatron_utils/update_weight/update_weight_from_distributed.py": [
        "UpdateWeightFromDistributed.update_weights"],
    "slime/backends/megatron_utils/update_weight/update_weight_from_disk.py": ["UpdateWeightFromDisk.update_weights"],
    "slime/backends/megatron_utils/update_weight/update_weight_from_disk_delta.py": [
        "UpdateWeightFromDiskDelta.update_weights"],
}


def test_the_training_walk_cites_its_entry_points() -> None:
    from slimebook.citations import book_files, find_citations
    from slimebook.excerpt import read_excerpt
    from slimebook.pyranges import definitions

    runs: dict[str, list[tuple[int, int]]] = {}
    for file in book_files([ROOT / "chapters" / "training"]):
        for citation in find_citations(file, SourceNames("slime")):
            assert citation.error is None, (file, citation.line, citation.error)
            excerpt = read_excerpt(STORE, citation.path, lines=citation.options.get("lines"),
                                   pyobject=citation.options.get("pyobject"))
            runs.setdefault(excerpt.path, []).extend(excerpt.runs)
    missing = []
    for path, names in TRAINING_ENTRY_POINTS.items():
        starts = {d.qualname: d.start for d in definitions(STORE.read_text(path))}
        for name in names:
            line = starts[name]
            if not any(a <= line <= b for a, b in runs.get(path, [])):
                missing.append(f"{path}:{line} {name}")
    assert missing == []


def test_every_reading_order_entry_links_a_section_that_explains_it(built: Path) -> None:
    text = (ROOT / "chapters" / "guide" / "reading-order.md").read_text(encoding="utf-8")
    entries = [(argument, content) for name, argument, content in directives(text) if name == "reading-entry"]
    assert len(entries) == 26
    assert [argument for argument, content in entries if ":covered-by:" not in content] == []
