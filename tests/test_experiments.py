"""Every course experiment runs, exits as its page says, prints the same thing twice, and is shown."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from slimebook.experiments import ExperimentError, ExperimentResult, run_experiment

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "chapters").rglob("examples/*.py"))
_DIRECTIVE = re.compile(r"^```\{experiment\}\s+(\S+)\s*\n((?::[\w-]+:.*\n)*)", re.MULTILINE)


def _pages_using(script: Path) -> list[tuple[Path, int]]:
    found = []
    for page in script.parent.parent.glob("*.md"):
        for match in _DIRECTIVE.finditer(page.read_text(encoding="utf-8")):
            if (page.parent / match.group(1)).resolve() == script.resolve():
                code = re.search(r":returncode:\s*(\d+)", match.group(2))
                found.append((page, int(code.group(1)) if code else 0))
    return found


@pytest.mark.parametrize("script", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_experiment_is_deterministic_and_shown(script: Path) -> None:
    pages = _pages_using(script)
    assert pages, f"{script.relative_to(ROOT)} is not shown by any page's experiment directive"
    expected = pages[0][1]
    first = run_experiment(script, expect_returncode=expected, use_cache=False)
    second = run_experiment(script, expect_returncode=expected, use_cache=False)
    assert first.output == second.output, "the output differs between two runs"
    assert first.output.strip(), "an experiment must print something to narrate"


def test_experiment_failures_are_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLIMEBOOK_CACHE", str(tmp_path / "cache"))
    bad = tmp_path / "bad.py"
    bad.write_text("import sys\nprint('before')\nsys.exit(3)\n")
    with pytest.raises(ExperimentError, match=r"exited with 3, expected 0:\nbefore"):
        run_experiment(bad)
    assert run_experiment(bad, expect_returncode=3).output == "before\n"
    cached = run_experiment(bad, expect_returncode=3)
    assert cached.cached and cached.output == "before\n"
    # the cached failure still fails a page that promises exit code 0
    with pytest.raises(ExperimentError, match=r"exited with 3, expected 0:\nbefore"):
        run_experiment(bad)
    slow = tmp_path / "slow.py"
    slow.write_text("import time\ntime.sleep(5)\n")
    with pytest.raises(ExperimentError, match="did not finish within 0.5 s"):
        run_experiment(slow, timeout=0.5)
    with pytest.raises(ExperimentError, match="cannot read"):
        run_experiment(tmp_path / "missing.py")
    assert not list((tmp_path / "cache" / "experiments").glob("*.tmp"))  # no half-written cache entry


def test_experiment_runs_a_copy_outside_the_source_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLIMEBOOK_CACHE", str(tmp_path / "cache"))
    source = tmp_path / "src"
    source.mkdir()
    script = source / "writes_beside_itself.py"
    script.write_text(
        "from pathlib import Path\n"
        "here = Path(__file__).resolve().parent\n"
        "(here / 'written_beside_file.txt').write_text('x')\n"
        "(here / '__pycache__').mkdir(exist_ok=True)\n"
        "Path('written_in_cwd.txt').write_text('y')\n"
        "print(Path(__file__).name)\n"
    )

    def snapshot() -> dict[str, bytes | None]:
        return {str(p.relative_to(source)): p.read_bytes() if p.is_file() else None for p in source.rglob("*")}

    before = snapshot()
    result = run_experiment(script)
    assert result.output == "writes_beside_itself.py\n"  # same file name, so tracebacks read the same
    assert snapshot() == before  # the source directory is unchanged
    assert run_experiment(script).cached  # the copy has the same bytes, so the same cache key


def test_cache_is_keyed_by_content_and_holds_the_exact_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLIMEBOOK_CACHE", str(tmp_path / "cache"))
    script = tmp_path / "three.py"
    script.write_text("print('one')\nprint('two', flush=True)\nimport sys\nsys.stderr.write('three\\r\\n')\n")
    first = run_experiment(script)
    assert first == ExperimentResult("one\ntwo\nthree\n", 0, cached=False)
    assert run_experiment(script) == ExperimentResult("one\ntwo\nthree\n", 0, cached=True)
    assert len(list((tmp_path / "cache" / "experiments").glob("*.json"))) == 1
    script.write_text("print('changed')\n")
    assert run_experiment(script) == ExperimentResult("changed\n", 0, cached=False)
    assert run_experiment(script, use_cache=False) == ExperimentResult("changed\n", 0, cached=False)
    assert len(list((tmp_path / "cache" / "experiments").glob("*.json"))) == 2
    silent = tmp_path / "silent.py"
    silent.write_text("import sys\nsys.exit(0)\n")
    assert run_experiment(silent, use_cache=False) == ExperimentResult("", 0, cached=False)
    assert len(list((tmp_path / "cache" / "experiments").glob("*.json"))) == 2  # use_cache=False writes nothing


def test_an_unexpected_success_and_the_tail_of_a_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLIMEBOOK_CACHE", str(tmp_path / "cache"))
    ok = tmp_path / "ok.py"
    ok.write_text("print('fine')\n")
    with pytest.raises(ExperimentError, match="exited with 0, expected 2"):  # a lower code than promised fails too
        run_experiment(ok, expect_returncode=2)
    noisy = tmp_path / "noisy.py"
    noisy.write_text("import sys\nfor i in range(1, 11):\n    print(f'row-{i:02d}')\nsys.exit(1)\n")
    with pytest.raises(ExperimentError) as info:
        run_experiment(noisy)
    # the message ends with the last eight lines of the output, and only those
    assert str(info.value).endswith("\n" + "\n".join(f"row-{i:02d}" for i in range(3, 11)))
    assert "row-02" not in str(info.value)


def test_the_script_gets_the_environment_without_python_variables(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLIMEBOOK_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("SLIMEBOOK_PROBE", "kept")
    monkeypatch.setenv("PYTHONOPTIMIZE", "1")
    script = tmp_path / "env.py"
    script.write_text("import os, sys\nprint(os.environ.get('SLIMEBOOK_PROBE'), sys.flags.optimize, "
                      "os.environ['PYTHONHASHSEED'], os.getcwd() != os.path.dirname(os.path.abspath(__file__)))\n")
    assert run_experiment(script, use_cache=False).output == "kept 0 0 True\n"


def test_results_are_frozen_and_the_default_timeout_is_a_minute() -> None:
    import dataclasses
    import inspect

    result = ExperimentResult("x\n", 0, cached=False)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.output = "y\n"  # type: ignore[misc]
    assert inspect.signature(run_experiment).parameters["timeout"].default == 60.0
