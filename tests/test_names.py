"""One source name gives every public name (:mod:`slimebook.names`), and every reader asks it.

The rule (``<name>-source``, ``{<name>}``, ``{<name>num}``, ``<NAME>_SOURCE_URL``), its validation in the build, the
store's URL override by table name, the citation finder and the re-pin writer under another name, and the command
line's reading of a book (:mod:`slimebook.book`) against this book's own ``conf.py``.
"""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest

from conftest import ROOT, SourceRepo, copy_root
from slimebook.book import BOOK_SETTINGS, BookError, find_book, read_book
from slimebook.citations import find_citations, role_text
from slimebook.drift import Edit, apply_edits
from slimebook.lock import load_lock
from slimebook.names import SourceNames, source_url_variable
from slimebook.store import FetchError, SourceStore

SLIME, DEMO = SourceNames("slime"), SourceNames("demo")


def test_the_slime_names_are_this_books() -> None:
    assert (SLIME.directive, SLIME.role, SLIME.number_role, SLIME.url_variable) == (
        "slime-source", "slime", "slimenum", "SLIME_SOURCE_URL")
    assert SLIME.describe() == "slime-source directives and {slime} roles"


@pytest.mark.parametrize(("source", "names"), [
    ("demo", ("demo-source", "demo", "demonum", "DEMO_SOURCE_URL")),
    ("my-lib", ("my-lib-source", "my-lib", "my-libnum", "MY_LIB_SOURCE_URL")),
    ("a_b2", ("a_b2-source", "a_b2", "a_b2num", "A_B2_SOURCE_URL")),
])
def test_one_name_gives_every_name(source: str, names: tuple[str, str, str, str]) -> None:
    derived = SourceNames(source)
    assert (derived.directive, derived.role, derived.number_role, derived.url_variable) == names


@pytest.mark.parametrize("source", ["", "Slime", "9lives", "my lib", "x.y", "-x", "über", None])
def test_a_name_docutils_or_a_shell_cannot_use_is_refused(source) -> None:
    with pytest.raises(ValueError, match="lower-case ASCII letters, digits"):
        SourceNames(source)


def test_any_lock_table_has_an_override_variable() -> None:
    assert source_url_variable("weird.name+1") == "WEIRD_NAME_1_SOURCE_URL"


def test_a_bad_source_name_stops_the_build_with_a_sentence(tmp_path: Path, fetched_cache: Path,
                                                           source_repo: SourceRepo,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from sphinx.errors import ConfigError
    from sphinx.testing.util import SphinxTestApp

    monkeypatch.setenv("SLIMEBOOK_CACHE", str(fetched_cache))
    src = copy_root("source", tmp_path)
    (src / "sources.toml").write_text(source_repo.lock_text())
    with pytest.raises(ConfigError, match=r"slimebook_source: the source name 'Demo' must be lower-case"):
        SphinxTestApp("html", srcdir=src, status=StringIO(), warning=StringIO(),
                      confoverrides={"slimebook_source": "Demo"})



@pytest.mark.parametrize(("source", "taken"), [
    ("ref", "the role {ref}, which is Sphinx's std:ref"),     # Sphinx's role would win: no citation would run
    ("func", "the role {func}, which is Sphinx's py:func"),   # the primary domain's, likewise
    ("code", "the role {code}, which is docutils' own"),      # the citation role would replace it
    ("kbd", "the role {kbd}, which sphinx.roles registers"),  # refused by add_role with a bare warning before
])
def test_a_source_name_that_takes_a_known_role_stops_the_build(source: str, taken: str, tmp_path: Path,
                                                                fetched_cache: Path, source_repo: SourceRepo,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from sphinx.errors import ConfigError
    from sphinx.testing.util import SphinxTestApp

    monkeypatch.setenv("SLIMEBOOK_CACHE", str(fetched_cache))
    src = copy_root("source", tmp_path)
    (src / "sources.toml").write_text(source_repo.lock_text(name=source))
    with pytest.raises(ConfigError) as caught:
        SphinxTestApp("html", srcdir=src, status=StringIO(), warning=StringIO(),
                      confoverrides={"slimebook_source": source})
    assert str(caught.value) == (f"{src / 'conf.py'}: slimebook_source = {source!r} would give {taken}; choose "
                                 "another source name (and rename the lock table to match)")

# -- the store: the override variable follows the table --------------------------------------------------------
def test_the_url_override_is_named_after_the_lock_table(cache: Path, tmp_path: Path, source_repo: SourceRepo,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    lock = tmp_path / "lock.toml"
    lock.write_text(source_repo.lock_text(url="https://example.invalid/demo.git", name="demo"))
    store = SourceStore(load_lock(lock, "demo"))
    monkeypatch.setenv("SLIME_SOURCE_URL", str(source_repo.path))  # another table's variable: not this one's
    assert store.source_url() == "https://example.invalid/demo.git"
    with pytest.raises(FetchError, match=r"offline\? point DEMO_SOURCE_URL at a local clone"):
        store.fetch()
    monkeypatch.setenv("DEMO_SOURCE_URL", str(source_repo.path))
    assert store.source_url() == str(source_repo.path)
    assert store.fetch() is True


# -- readers under another name ----------------------------------------------------------------------------------
PAGE = """\
# P

```{demo-source} pkg/mod.py
:lines: 4-6
```

```{slime-source} pkg/mod.py
:lines: 4-6
```

See {demo}`pkg/mod.py:4` and {slime}`pkg/mod.py:4`, {demonum}`py-files` and {demo}`helper <pkg/mod.py>`.
"""


def test_the_citation_finder_sees_the_books_names_and_no_other(tmp_path: Path) -> None:
    page = tmp_path / "p.md"
    page.write_text(PAGE)
    demo = [(c.line, c.kind, c.options) for c in find_citations(page, DEMO)]
    assert demo == [(3, "directive", {"lines": "4-6"}), (11, "role", {"lines": "4"}),
                    (11, "role", {"pyobject": "helper"})]
    assert [(c.line, c.kind) for c in find_citations(page, SLIME)] == [(7, "directive"), (11, "role")]
    rst = tmp_path / "p.rst"
    rst.write_text("P\n=\n\n.. demo-source:: pkg/mod.py\n   :lines: 4\n\n:demo:`pkg/mod.py:5` :slime:`pkg/mod.py:6`\n")
    assert [(c.line, c.kind, c.options) for c in find_citations(rst, DEMO)] == [
        (4, "directive", {"lines": "4"}), (7, "role", {"lines": "5"})]
    assert role_text("{demo}`pkg/mod.py:4`", DEMO) == "pkg/mod.py:4"
    assert role_text("{slime}`pkg/mod.py:4`", DEMO) is None


def test_a_repin_rewrites_only_the_books_citations(tmp_path: Path) -> None:
    doc = tmp_path / "p.md"
    doc.write_text("{slime}`pkg/mod.py:4` {demo}`pkg/mod.py:4`\n\n```{demo-source} pkg/mod.py\n:lines: 4-6\n```\n")
    results = apply_edits([Edit(doc, 1, "role", 0, "pkg/mod.py", "4", "8"),
                           Edit(doc, 3, "lines", 0, "pkg/mod.py", "4-6", "8-10")], DEMO)
    assert [problem for _, problem in results] == [None, None]
    assert doc.read_text() == ("{slime}`pkg/mod.py:4` {demo}`pkg/mod.py:8`\n\n"
                               "```{demo-source} pkg/mod.py\n:lines: 8-10\n```\n")
    [(_, problem)] = apply_edits([Edit(doc, 3, "lines", 0, "pkg/mod.py", "8-10", "1-2")], SLIME)
    assert problem == "line 3 is no longer a slime-source directive for pkg/mod.py"


# -- the command line's view of a book ---------------------------------------------------------------------------
def test_the_command_line_reads_the_settings_the_build_declares() -> None:
    from slimebook.sphinxext.config import SETTINGS

    declared = {s.name: s.default for s in SETTINGS}
    assert {name: declared[name] for name in BOOK_SETTINGS} == BOOK_SETTINGS


def test_this_book_read_as_the_build_reads_it() -> None:
    """Inside this repository the command line finds this book's settings and exactly the documents the old default
    (``chapters`` and ``index.md``) named."""
    book = read_book(ROOT)
    assert book.names == SLIME
    assert book.lock == ROOT / "sources" / "sources.toml"
    assert book.fetch_command == "make sources"
    expected = sorted([ROOT / "index.md", *(ROOT / "chapters").rglob("*.md")])
    assert book.documents() == expected


def test_a_book_is_the_nearest_directory_holding_conf_py(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "book" / "docs" / "deep").mkdir(parents=True)
    (tmp_path / "book" / "conf.py").write_text("")
    monkeypatch.chdir(tmp_path / "book" / "docs" / "deep")
    assert find_book(Path(".")) == Path("../..")
    assert find_book(tmp_path / "book" / "docs") == tmp_path / "book"
    monkeypatch.chdir(tmp_path / "book")
    assert find_book(Path(".")) == Path(".")
    assert find_book(Path("docs")) == Path(".")
    assert find_book(tmp_path) is None


def test_a_book_whose_conf_py_fails_is_a_sentence(tmp_path: Path) -> None:
    (tmp_path / "conf.py").write_text("slimebook_source = 5\n")
    with pytest.raises(BookError, match=r"conf.py: slimebook_source must be a str, not 5"):
        read_book(tmp_path)
    (tmp_path / "conf.py").write_text("raise RuntimeError('no')\n")
    with pytest.raises(BookError, match=r"(?s)conf.py: There is a programmable error.*RuntimeError: no"):
        read_book(tmp_path)
    with pytest.raises(BookError, match="holds no conf.py"):
        read_book(tmp_path / "nowhere")
