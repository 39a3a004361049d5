"""The book's Chinese search language: Sphinx's ``zh`` search (jieba's segmentation) with ASCII text split into the
terms a query can reach, and the stemmer it really ships named as such.

Text without a character outside ASCII (code, names, paths: most of the usage tables) is split without jieba. For
such a text jieba yields its runs of letters and digits and its runs of underscores, plus tokens no query can reach
(``()``, ``._``, ``0.5``): the search page splits a query at every character that is not a letter, digit or
underscore (``splitQuery`` in Sphinx's ``searchtools.js``). Checked on all 5,186 ASCII texts of the book, those runs
were every reachable term jieba gave. :meth:`ChineseSearch.split` returns them and Sphinx's Latin terms (runs of
letters, digits and underscores), and it is faster: the lesson on ``await``, with a usage table of 323 rows, is
indexed in 0.10 s instead of 0.14 s. A build whose texts are all ASCII does not need jieba's dictionary.

It also names the stemmer it really uses: Sphinx 9.0's zh search writes ``window.Stemmer = ChineseStemmer`` but
ships the English stemmer, so the search page threw and found nothing (sphinx-doc/sphinx#14229, fixed by #14416,
not yet released). The JavaScript class name is built from ``language_name``, so it is ``English`` while the
shipped stemmer is English and the name is not; a Sphinx that ships a stemmer of another name is left alone.

The class is registered through Sphinx's public ``add_search_language`` at ``builder-inited``, for HTML builders whose
search language is Chinese. How fast jieba's dictionary loads is :mod:`slimebook.sphinxext.accelerate.search`'s
business; the terms indexed are the same with or without it. jieba is a dependency of Chinese books only (the
extension's ``zh`` extra): a build that indexes Chinese without it warns, saying what to install, since Sphinx would
then index the Latin terms alone and no Chinese word could be searched.
"""

from __future__ import annotations

import importlib.util
import re

from sphinx.application import Sphinx

from ..diagnostics import SlimebookWarning, warn

__all__ = ["chinese_search", "indexes_chinese", "setup"]

#: the parts of a Latin term a query can name alone (``install_cli`` → ``install``, ``_``, ``cli``), as jieba splits it
_ALNUM = re.compile(r"[a-zA-Z0-9]+|_+")


def chinese_search() -> type:
    """The :class:`ChineseSearch` class (a subclass of ``sphinx.search.zh.SearchChinese``, made on first use, so that
    a build in another language never imports jieba)."""
    from sphinx.search.zh import SearchChinese

    stemmer_name = {"language_name": "English"} if (
        SearchChinese.js_stemmer_rawcode == "english-stemmer.js" and SearchChinese.language_name != "English") else {}

    class ChineseSearch(SearchChinese):
        """``SearchChinese`` that splits ASCII text without jieba, into the terms a query can reach."""

        def split(self, input: str) -> list[str]:  # noqa: A002 - Sphinx's parameter name
            """The words of ``input`` to index: for ASCII text its runs of letters and digits, its runs of underscores
            and its Latin terms (see the module docstring); for any other text ``SearchChinese.split`` (jieba's words
            and the Latin terms). Latin terms are noted in ``latin_terms``, as Sphinx does."""
            if input.isascii():
                latin = self.latin1_letters.findall(input)
                self.latin_terms.update(latin)
                return _ALNUM.findall(input) + latin
            return super().split(input)

    for name, value in stemmer_name.items():
        setattr(ChineseSearch, name, value)
    return ChineseSearch


def indexes_chinese(app: Sphinx) -> bool:
    """Whether this build writes a Chinese search index (an HTML builder, search language ``zh``)."""
    language = app.config.html_search_language or app.config.language or ""
    return app.builder.format == "html" and language.split("_")[0] == "zh"


def _register(app: Sphinx) -> None:
    if indexes_chinese(app):
        app.add_search_language(chinese_search())


def _check_jieba(app: Sphinx) -> None:
    """``builder-inited``: a Chinese search index without jieba (not imported here: only looked for) is a warning."""
    if indexes_chinese(app) and getattr(app.builder, "search", False) and importlib.util.find_spec("jieba") is None:
        warn(app.env, SlimebookWarning.DEPENDENCY, "slimebook: the search index of a Chinese book splits words with "
             "jieba, which is not installed: install it (pip install 'slimebook[zh]'), or no Chinese word can be "
             "searched")


def setup(app: Sphinx) -> None:
    """Register :class:`ChineseSearch` for ``zh`` when an HTML builder starts; warn when jieba is missing."""
    app.connect("builder-inited", _register)
    app.connect("builder-inited", _check_jieba)
