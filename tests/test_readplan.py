"""The reading plan (``slimebook.sphinxext.accelerate.readplan``): Sphinx's chunk sizes kept, every document read
once, the
chunks of about equal work per reader, and a parallel build that reads in the planned order gives a serial build's
pages."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sphinx.util.parallel import make_chunks

from conftest import copy_root
from slimebook.names import SourceNames
from slimebook.sphinxext.accelerate import readplan


def test_makespan_follows_parallel_tasks_order() -> None:
    # two workers: chunks 0 and 1 start at once, then the last added (3) before 2
    assert readplan.makespan([4.0, 1.0, 1.0, 2.0], 2, startup=0.0) == 4.0  # 1 → 3 (ends 3) → 2 (ends 4)
    assert readplan.makespan([1.0, 1.0, 5.0, 1.0], 2, startup=0.0) == 6.0  # 3 after 0, 2 after 1: 1 + 5
    assert readplan.makespan([1.0, 2.0, 1.0, 3.0], 2, startup=0.0) == 4.0  # 3 at 1 (ends 4), 2 at 2 (ends 3); FIFO: 5
    assert readplan.makespan([1.0, 1.0], 2, startup=0.5) == 1.5
    assert readplan.makespan([], 2) == 0.0
    # the main process busy for 2 s (jieba's dictionary) from the end after which no chunk waits: the second of
    # three, the first of two; no reader waits for it, the read ends when both are done
    assert readplan.makespan([4.0, 1.0, 1.0], 2, startup=0.0, main_work=2.0) == 4.0  # ends 1, 2, 4: 2 + 2
    assert readplan.makespan([1.0, 1.0, 1.0], 2, startup=0.0, main_work=2.0) == 3.0  # ends 1, 1, 2: 1 + 2
    assert readplan.makespan([1.0, 3.0, 1.0], 2, startup=0.0, main_work=0.5) == 3.0  # ends 1, 2, 3: 2 + 0.5
    assert readplan.makespan([1.0, 1.0], 2, startup=0.0, main_work=2.0) == 3.0


def test_the_plan_balances_what_sorted_chunks_leave_to_one_reader() -> None:
    # the book's shape: the costly documents sort last, so Sphinx's last chunk takes the longest
    costs = {f"a{i:02d}": 0.06 for i in range(26)} | {f"z{i:02d}": 0.2 for i in range(11)}
    docs = sorted(costs)
    sizes = [len(chunk) for chunk in make_chunks(docs, 2)]
    default = readplan.makespan([sum(costs[d] for d in chunk) for chunk in make_chunks(docs, 2)], 2)
    plan = readplan.plan_chunks(costs, sizes, 2)
    planned = readplan.makespan([sum(costs[d] for d in chunk) for chunk in plan], 2)
    assert [len(chunk) for chunk in plan] == sizes
    ideal = (sum(costs.values()) + readplan.SECONDS_PER_READER * len(sizes)) / 2
    assert planned < default - 0.5
    assert planned <= ideal + max(costs.values())


@given(st.dictionaries(st.text("abcdef", min_size=1, max_size=4), st.floats(0.0, 5.0), min_size=1, max_size=30),
       st.integers(1, 4))
def test_every_document_once_in_chunks_of_sphinxs_sizes(costs: dict[str, float], workers: int) -> None:
    docs = sorted(costs)
    sizes = [len(chunk) for chunk in make_chunks(docs, workers)]
    plan = readplan.plan_chunks(costs, sizes, workers)
    assert [len(chunk) for chunk in plan] == sizes
    assert sorted(name for chunk in plan for name in chunk) == docs
    assert plan == readplan.plan_chunks(dict(reversed(list(costs.items()))), sizes, workers)  # deterministic


def test_sizes_that_do_not_add_up_are_refused() -> None:
    with pytest.raises(ValueError, match="hold 3 documents, not 2"):
        readplan.plan_chunks({"a": 1.0, "b": 1.0}, [2, 1], 2)


def test_a_parallel_read_uses_the_plan_and_a_serial_read_does_not(tmp_path: Path, sphinx_build,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    import sphinx.builders

    chunked: list[list[str]] = []
    real = sphinx.builders.make_chunks

    def spy(docnames, nproc, *args):
        chunks = real(docnames, nproc, *args)
        chunked.append(list(docnames))
        return chunks

    monkeypatch.setattr(sphinx.builders, "make_chunks", spy)
    src = copy_root("parallelwrite", tmp_path / "serial")
    (src / "d9.md").write_text((src / "d9.md").read_text() + "\n" + "长的一章。" * 4000, encoding="utf-8")
    serial = sphinx_build(src, "html", parallel=0)
    assert chunked == []
    src2 = copy_root("parallelwrite", tmp_path / "parallel")
    (src2 / "d9.md").write_text((src / "d9.md").read_text(encoding="utf-8"), encoding="utf-8")
    two = sphinx_build(src2, "html", parallel=2)
    read_order = chunked[0]
    assert read_order != sorted(read_order)  # d9 (the long one) no longer shares the last chunk with d8 …
    sizes = [len(chunk) for chunk in make_chunks(read_order, 2)]
    first = read_order[: sizes[0]]
    assert "d9" in first or len(sizes) == 1
    for name in ("d1.html", "d9.html", "index.html", "searchindex.js"):
        assert (serial.outdir / name).read_bytes() == (two.outdir / name).read_bytes(), name


def test_a_big_book_is_planned_within_the_budgets(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = 0
    real = readplan.makespan

    def counted(*args, **kwargs):
        nonlocal calls
        calls += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(readplan, "makespan", counted)
    costs = {f"d{i:04d}": (i * 7919 % 1000) / 1000 for i in range(1000)}
    docs = sorted(costs)
    for workers in (2, 4):
        sizes = [len(chunk) for chunk in make_chunks(docs, workers)]
        calls = 0
        plan = readplan.plan_chunks(costs, sizes, workers)
        assert [len(chunk) for chunk in plan] == sizes
        assert sorted(name for chunk in plan for name in chunk) == docs
        assert calls <= readplan.PLACE_BUDGET + readplan.SWAP_BUDGET + len(docs)
    # beyond the placement budget: Sphinx's own cut, with no trial at all
    many = {f"d{i:05d}": 1.0 for i in range(3000)}
    chunks = make_chunks(sorted(many), 8)
    calls = 0
    assert readplan.plan_chunks(many, [len(chunk) for chunk in chunks], 8) == chunks
    assert calls == 0


def test_a_document_listed_twice_is_read_as_listed(tmp_path: Path, sphinx_build,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import sphinx.builders

    chunked: list[list[str]] = []
    real = sphinx.builders.make_chunks
    monkeypatch.setattr(sphinx.builders, "make_chunks",
                        lambda docnames, nproc, *args: chunked.append(list(docnames)) or real(docnames, nproc, *args))
    src = copy_root("parallelwrite", tmp_path)
    (src / "twice_ext.py").write_text(
        "def _twice(app, env, docnames):\n"
        "    docnames.append(sorted(docnames)[0])\n\n\n"
        "def setup(app):\n"
        "    app.connect('env-before-read-docs', _twice, priority=500)\n"
        "    return {'parallel_read_safe': True, 'parallel_write_safe': True}\n", encoding="utf-8")
    conf = src / "conf.py"
    conf.write_text(conf.read_text(encoding="utf-8").replace('"search_ext"]', '"search_ext", "twice_ext"]'),
                    encoding="utf-8")
    sphinx_build(src, "html", parallel=2)
    listed = chunked[0]
    assert len(listed) == len(set(listed)) + 1
    assert listed[:-1] == sorted(set(listed)) and listed[-1] == listed[0]  # Sphinx's order, as the handler left it


def test_the_estimate_counts_what_is_slow_to_read() -> None:
    marks = readplan.marks(SourceNames("slime"))
    prose = "一段没有引用的文字。" * 400  # 12 kB of plain prose
    cited = "见 {slime}`slime/agent/base.py`。" * 100  # 3.5 kB citing Slime a hundred times
    assert readplan.estimate_seconds("", marks) == readplan.SECONDS_PER_DOCUMENT
    assert (readplan.estimate_seconds(cited, marks) > readplan.estimate_seconds(prose, marks)
            > readplan.estimate_seconds("", marks))
    assert readplan.estimate_seconds("```{repo-map}\n```\n", marks) >= readplan.SECONDS_PER_MARK["{repo-map}"]


def test_the_citation_marks_are_the_books_names() -> None:
    marks = readplan.marks(SourceNames("demo"))
    assert marks["{demo}`"] == readplan.SECONDS_PER_MARK["{role}`"]
    assert marks["{demo-source}"] == readplan.SECONDS_PER_MARK["{directive}"]
    assert "{slime}`" not in marks and marks["{repo-map}"] == readplan.SECONDS_PER_MARK["{repo-map}"]
    cited = "{demo}`pkg/mod.py:4` " * 10
    assert readplan.estimate_seconds(cited, marks) > readplan.estimate_seconds(cited, readplan.marks(SourceNames("x")))
