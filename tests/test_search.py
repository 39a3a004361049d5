"""The book's Chinese search (``slimebook.sphinxext.search``): jieba's dictionary is loaded by the first text indexed,
never by a build that indexes nothing; the segmentation is Sphinx's."""

from __future__ import annotations

from pathlib import Path

import pytest
import sphinx.search.zh as zh

from slimebook.sphinxext.search import chinese_search


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
    search = chinese_search()({"dict": str(words)})
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
    assert chinese_search()({"dict": str(words)}).split(text) == zh.SearchChinese({"dict": str(words)}).split(text)


def test_the_stemmer_is_named_for_the_script_sphinx_ships() -> None:
    cls = chinese_search()
    assert issubclass(cls, zh.SearchChinese) and cls.lang == "zh"
    if zh.SearchChinese.js_stemmer_rawcode == "english-stemmer.js":
        assert cls.language_name == "English"  # window.Stemmer = EnglishStemmer (sphinx-doc/sphinx#14229)
