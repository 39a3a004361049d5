"""The book's Chinese search (``slimebook.sphinxext.accelerate.search``): jieba's dictionary is loaded by the first
text that
needs it, never by a build that indexes nothing; text beyond ASCII is segmented as Sphinx does, and ASCII text keeps
every term a query can reach."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import sphinx.search.zh as zh

from conftest import copy_root
from slimebook.sphinxext.accelerate.search import lazy_chinese_search


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The user dictionaries loaded (each load is what makes jieba read its own dictionary first)."""
    seen: list[str] = []
    real = zh.jieba_load_userdict
    monkeypatch.setattr(zh, "jieba_load_userdict", lambda path: (seen.append(path), real(path))[1])
    return seen


def test_the_dictionary_is_loaded_by_the_first_split_only(loads: list[str], tmp_path: Path) -> None:
    words = tmp_path / "words.txt"
    words.write_text("事件循环\n", encoding="utf-8")
    search = lazy_chinese_search()({"dict": str(words)})
    assert loads == []  # constructed in prepare_writing of every HTML build: no load there
    first = search.split("事件循环里的任务")
    assert loads == [str(words)]
    assert "事件循环" in first and "任务" in first
    search.split("再一段")
    assert loads == [str(words)]


def test_same_words_as_sphinxs_search(loads: list[str], tmp_path: Path) -> None:
    words = tmp_path / "words.txt"
    words.write_text("事件循环\n", encoding="utf-8")
    text = "asyncio 的事件循环在一个线程里运行协程，gather 等待所有任务。"
    assert lazy_chinese_search()({"dict": str(words)}).split(text) == zh.SearchChinese({"dict": str(words)}).split(text)


def test_the_stemmer_is_named_for_the_script_sphinx_ships() -> None:
    cls = lazy_chinese_search()
    assert issubclass(cls, zh.SearchChinese) and cls.lang == "zh"
    if zh.SearchChinese.js_stemmer_rawcode == "english-stemmer.js":
        assert cls.language_name == "English"  # window.Stemmer = EnglishStemmer (sphinx-doc/sphinx#14229)


ASCII_TEXTS = [
    "await cand.__aenter__()", "examples/coding_agent_rl/generate.py:109", "asyncio.run_coroutine_threadsafe",
    "qwen2.5B", "python3.11 -m pytest -q", "x = {'a': 0.05, 'b': [1, 2]}  # 50%", "--rollout-batch-size 32",
]


@pytest.mark.parametrize("text", ASCII_TEXTS)
def test_ascii_text_keeps_every_term_a_query_can_reach(loads: list[str], text: str) -> None:
    # the search page splits a query at every character that is not a letter, digit or underscore, so only such
    # runs can be found; jieba's other tokens ("()", "._", "0.05") are unreachable and need not be indexed
    import re

    def reachable(words: list[str]) -> set[str]:
        return {w for w in words if re.fullmatch(r"\w+", w) and len(w) > 1}  # len: SearchChinese.word_filter

    ours = lazy_chinese_search()({}).split(text)
    assert loads == []  # no jieba for ASCII text
    assert reachable(ours) >= reachable(zh.SearchChinese({}).split(text))
    assert set(ours) == set(re.findall(r"[a-zA-Z0-9_]+", text)) | set(re.findall(r"[a-zA-Z0-9]+|_+", text))


def test_ascii_text_notes_its_latin_terms() -> None:
    # the stemmer leaves a Latin term of three letters or more alone when stemming would make it shorter than three
    search = lazy_chinese_search()({})
    search.split("ies ok_go")
    assert search.latin_terms == {"ies", "ok_go"}
    assert search.stem("ies") == "ies"


def _app(language: str = "zh_CN", fmt: str = "html", search: bool = True, search_language: str | None = None,
         registered: bool = True):
    """An application as the hooks read it; ``registered``: the lazy search was registered at builder-inited."""
    from types import SimpleNamespace

    from slimebook.sphinxext.accelerate.search import _REGISTERED

    config = SimpleNamespace(html_search_language=search_language, language=language)
    return SimpleNamespace(config=config, builder=SimpleNamespace(format=fmt, search=search,
                                                                  **{_REGISTERED: registered}))


@pytest.mark.parametrize(("app", "loads"), [
    (_app(), True),
    (_app(search_language="zh"), True),
    (_app(language="en"), False),
    (_app(search_language="en"), False),
    (_app(fmt="latex"), False),
    (_app(search=False), False),  # epub: no search index
    (_app(registered=False), False),  # the module stepped aside at builder-inited (or was not set up)
])
def test_the_dictionary_is_loaded_while_reading_only_for_a_chinese_index(monkeypatch: pytest.MonkeyPatch, app,
                                                                          loads: bool) -> None:
    import jieba

    from slimebook.sphinxext.accelerate import search

    calls: list[int] = []

    def initialize(*_args) -> None:
        calls.append(1)
        jieba.dt.initialized = True

    monkeypatch.setattr(jieba.dt, "initialized", False)
    monkeypatch.setattr(jieba.dt, "initialize", initialize)
    assert search.loads_while_reading(app) is loads
    search.load_while_reading(app, None, [], None)
    search.load_while_reading(app, None, [], None)  # a second reader's merge: jieba's own flag says loaded
    assert len(calls) == (1 if loads else 0)
    assert search.loads_while_reading(app) is False


@pytest.mark.parametrize(("chunks", "workers", "merge"), [(3, 2, 2), (2, 2, 1), (1, 2, 1), (8, 4, 5), (0, 2, 1)])
def test_the_merge_that_leaves_a_core_free(chunks: int, workers: int, merge: int) -> None:
    from slimebook.sphinxext.accelerate import search

    assert search.merge_with_a_free_core(chunks, workers) == merge


def test_the_dictionary_waits_for_the_merge_that_leaves_a_core_free(monkeypatch: pytest.MonkeyPatch) -> None:
    import jieba

    from slimebook.sphinxext.accelerate import search

    calls: list[int] = []
    monkeypatch.setattr(jieba.dt, "initialized", False)
    monkeypatch.setattr(jieba.dt, "initialize", lambda *_args: calls.append(1))
    app = _app()
    app.parallel = 2
    search._count_readers(app, None, [f"d{i:02d}" for i in range(37)])  # Sphinx's chunks: 13, 13, 11
    search.load_while_reading(app, None, set(), None)  # the third chunk starts after this merge: not yet
    assert calls == []
    search.load_while_reading(app, None, set(), None)  # nothing waits now; one reader runs, a core is free
    assert calls == [1]


def test_the_dictionary_read_whole_is_jiebas_own(tmp_path: Path) -> None:
    # both with jieba's cache file made here (missing: jieba builds the dictionary and writes the file through the
    # swapped module's dump) and read from it
    import marshal

    import jieba

    from slimebook.sphinxext.accelerate.search import load_dictionary

    own = jieba.Tokenizer()
    own.tmp_dir = str(tmp_path)
    own.initialize()  # jieba alone: builds the dictionary, writes its cache file
    assert (tmp_path / "jieba.cache").is_file()
    fast = jieba.Tokenizer()
    fast.tmp_dir = str(tmp_path)
    load_dictionary(fast)  # from the cache file, read whole
    assert fast.initialized and fast.total == own.total and fast.FREQ == own.FREQ
    assert jieba.marshal is marshal
    (tmp_path / "jieba.cache").unlink()
    made = jieba.Tokenizer()
    made.tmp_dir = str(tmp_path)
    load_dictionary(made)  # no cache file: built, and the file written through the swapped module
    assert made.FREQ == own.FREQ and (tmp_path / "jieba.cache").is_file()
    assert jieba.marshal is marshal
    load_dictionary(made)  # loaded: nothing to do


def test_the_swapped_marshal_is_put_back_when_the_load_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    import marshal

    import jieba

    from slimebook.sphinxext.accelerate.search import load_dictionary

    tokenizer = jieba.Tokenizer()

    def initialize(*_args) -> None:
        raise OSError("disk gone")

    monkeypatch.setattr(tokenizer, "initialize", initialize)
    with pytest.raises(OSError, match="disk gone"):
        load_dictionary(tokenizer)
    assert jieba.marshal is marshal


def test_threads_loading_at_once_put_marshal_back() -> None:
    # each thread swaps jieba.marshal around its own tokenizer's load; without one swap at a time, a thread that
    # swapped second restores the first one's stand-in (a breaker's repro: 8 threads, 3 runs of 3)
    import marshal
    import threading

    import jieba

    from slimebook.sphinxext.accelerate.search import load_dictionary

    threads = [threading.Thread(target=load_dictionary, args=(jieba.Tokenizer(),)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert jieba.marshal is marshal


def test_jieba_is_imported_without_pkg_resources(tmp_path: Path) -> None:
    ext = Path(__file__).resolve().parent.parent / "_ext"
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ext)!r})
        from slimebook.sphinxext.accelerate.search import lazy_chinese_search
        lazy_chinese_search()
        import jieba, jieba._compat, os
        assert "pkg_resources" not in sys.modules, "pkg_resources imported"
        with jieba._compat.get_module_res("dict.txt") as stream:  # the files jieba opens without pkg_resources
            same = stream.read() == open(os.path.join(os.path.dirname(jieba.__file__), "dict.txt"), "rb").read()
        assert same, "another dict.txt"
        jieba.dt.tmp_dir = {str(tmp_path)!r}  # no cache file there: jieba reads its dictionary through those files
        print(" ".join(jieba.lcut("事件循环在等待任务")))
        import pkg_resources  # still importable afterwards
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["事件", "循环", "在", "等待", "任务"]


def _run(script: str) -> subprocess.CompletedProcess:
    ext = Path(__file__).resolve().parent.parent / "_ext"
    return subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {str(ext)!r})\n" + script],
                          capture_output=True, text=True, check=False)


def test_jieba_finds_its_files_after_the_working_directory_is_gone(tmp_path: Path) -> None:
    gone, cache = tmp_path / "gone", tmp_path / "cache"
    gone.mkdir()
    cache.mkdir()
    done = _run(textwrap.dedent(f"""
        import os
        from slimebook.sphinxext.accelerate.search import lazy_chinese_search
        os.chdir({str(gone)!r})
        os.rmdir({str(gone)!r})
        lazy_chinese_search()
        import jieba
        jieba.dt.tmp_dir = {str(cache)!r}  # no cache file: jieba opens its dictionary file
        print(" ".join(jieba.lcut("事件循环在等待任务")))
    """))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["事件", "循环", "在", "等待", "任务"]


@pytest.mark.parametrize("parallel", [0, 2])
def test_a_chinese_book_builds_without_jieba(tmp_path: Path, parallel: int) -> None:
    src = copy_root("parallelwrite", tmp_path / "src")
    done = _run(textwrap.dedent(f"""
        sys.modules["jieba"] = None  # not installed
        sys.path.insert(0, {str(src)!r})
        from io import StringIO
        from pathlib import Path
        from sphinx.testing.util import SphinxTestApp
        app = SphinxTestApp("html", srcdir=Path({str(src)!r}), status=StringIO(), warning=StringIO(),
                            parallel={parallel})
        app.build()
        print(app.statuscode, "gather_1" in (app.outdir / "searchindex.js").read_text(encoding="utf-8"))
    """))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "True"]  # built, the Latin terms indexed


@pytest.mark.parametrize("installed", [True, False])
def test_a_chinese_index_without_jieba_says_what_to_install(installed: bool, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch, sphinx_build) -> None:
    """jieba is the ``zh`` extra, not a dependency of every book (issue 34): a Chinese search index without it is a
    warning naming the extra; a book in another language never looks for it."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text('extensions = ["slimebook.sphinxext.output.search"]\nlanguage = "zh_CN"\n')
    (src / "index.rst").write_text("标题\n====\n\n事件循环里的任务。\n", encoding="utf-8")
    if not installed:
        monkeypatch.setitem(sys.modules, "jieba", None)  # find_spec then finds nothing, as without the package
    app = sphinx_build(src)
    warnings = app._warning.getvalue()
    assert ("pip install 'slimebook[zh]'" in warnings) is not installed
    english = tmp_path / "en"
    english.mkdir()
    (english / "conf.py").write_text('extensions = ["slimebook.sphinxext.output.search"]\nlanguage = "en"\n')
    (english / "index.rst").write_text("Title\n=====\n\nText.\n")
    assert "jieba" not in sphinx_build(english)._warning.getvalue()
