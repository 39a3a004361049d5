"""Fixed text through Sphinx's message catalogs (:mod:`slimebook.sphinxext.locale`).

The catalog is complete and compiled (every message the code and templates ask for has a Chinese entry, every entry is
asked for, each translation keeps its fields, the committed ``.mo`` is its ``.po`` compiled with Babel), names no
upstream project, and chooses the words by ``language``: an English book (``tests/roots/test-english``) writes no CJK
character into any page, script, ``.tex`` or ``.sty``, and a second build in the same process gets its own language.
The Chinese text itself is pinned by the tests of each page and directive (their roots set ``language = "zh_CN"``)
and by the real book, whose build is byte-identical to the one before the catalog.
"""

from __future__ import annotations

import ast
import io
import re
import string
from pathlib import Path

import pytest
from babel.messages.mofile import read_mo, write_mo
from babel.messages.pofile import read_po
from docutils import nodes

from conftest import CJK, SourceRepo, cjk_leaks, fresh_build, output_texts, root_at_pin
from slimebook.scan.categories import default_table
from slimebook.sphinxext.locale import LOCALE_DIR, fill, source_title

SPHINXEXT = LOCALE_DIR.parent
PO = LOCALE_DIR / "zh_CN" / "LC_MESSAGES" / "slimebook.po"

CJK_RUNS = re.compile(CJK.pattern + "+")


def _catalog():
    with PO.open("rb") as handle:
        return read_po(handle, locale="zh_CN")


# -- the catalog ------------------------------------------------------------------------------------------------
def _messages(catalog) -> list[tuple]:
    """Every message of a Babel catalog as ``(context, id, string)``, the header's fields but Babel's version."""
    fields = [(k, v) for k, v in catalog.mime_headers if k != "Generated-By"]
    return [*fields, *sorted(((m.context or "", str(m.id), str(m.string)) for m in catalog if m.id), key=str)]


def test_the_committed_mo_is_the_po_compiled() -> None:
    for po in sorted(LOCALE_DIR.glob("*/LC_MESSAGES/*.po")):
        with po.open("rb") as handle:
            catalog = read_po(handle, locale=po.parent.parent.name)
        compiled = io.BytesIO()
        write_mo(compiled, catalog)
        committed = po.with_suffix(".mo").read_bytes()
        hint = f"{po.with_suffix('.mo').name} is not {po.name} compiled: run python -m slimebook.sphinxext.locale"
        # the same messages; and the same bytes, unless the .mo was compiled by another Babel version
        assert _messages(read_mo(io.BytesIO(committed))) == _messages(read_mo(io.BytesIO(compiled.getvalue()))), hint
        same_babel = dict(read_mo(io.BytesIO(committed)).mime_headers).get("Generated-By") == \
            dict(read_mo(io.BytesIO(compiled.getvalue())).mime_headers).get("Generated-By")
        assert committed == compiled.getvalue() or not same_babel, hint


#: Calls whose string arguments are messages: name → how many leading arguments are (context and) messages.
_CALLS = {"_": ("msgid",), "text": ("msgid",), "js_text": ("msgid",), "ngettext": ("msgid", "plural"),
          "pgettext": ("context", "msgid")}
_TEMPLATE_CALL = re.compile(r"""slimebook_(?:js_)?text\(\s*"((?:[^"\\]|\\.)*)"\s*\)""")


def _asked() -> set[tuple[str | None, str, str | None]]:
    """``(context, msgid, plural)`` of every message the Sphinx layer asks for with literal arguments, and the
    descriptions of the shipped default category table."""
    found: set[tuple[str | None, str, str | None]] = set()
    for path in sorted(SPHINXEXT.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _CALLS):
                continue
            roles = _CALLS[node.func.id]
            args = node.args[:len(roles)]
            if len(args) < len(roles) or not all(isinstance(a, ast.Constant) and isinstance(a.value, str)
                                                 for a in args):
                continue  # a call with a variable (the helpers' own definitions): not a message
            values = dict(zip(roles, (a.value for a in args), strict=True))
            found.add((values.get("context"), values["msgid"], values.get("plural")))
    for path in sorted(SPHINXEXT.rglob("*.html")) + sorted(SPHINXEXT.rglob("*.jinja")):
        for match in _TEMPLATE_CALL.finditer(path.read_text(encoding="utf-8")):
            found.add((None, match.group(1), None))
    # the shipped default category table's descriptions are message ids too (categorypages.category_description)
    found.update((None, text, None) for text in default_table().descriptions.values() if text)
    return found


def _entries() -> set[tuple[str | None, str, str | None]]:
    entries = set()
    for message in _catalog():
        if not message.id:
            continue
        msgid, plural = (message.id[0], message.id[1]) if message.pluralizable else (message.id, None)
        entries.add((message.context, msgid, plural))
    return entries


def test_every_message_asked_for_is_in_the_catalog() -> None:
    asked = _asked()
    assert len(asked) > 200  # the scan finds the code's messages
    missing = sorted(asked - _entries(), key=str)
    assert not missing, f"messages without a zh_CN entry: {missing}"


def test_every_entry_of_the_catalog_is_asked_for() -> None:
    unused = sorted(_entries() - _asked(), key=str)
    assert not unused, f"zh_CN entries no code asks for: {unused}"


def _fields(text: str) -> set[str]:
    return {name for _literal, name, _spec, _conversion in string.Formatter().parse(text) if name is not None}


def test_translations_keep_their_fields_and_are_complete() -> None:
    for message in _catalog():
        if not message.id:
            continue
        ids = message.id if message.pluralizable else (message.id,)
        strs = message.string if message.pluralizable else (message.string,)
        assert all(strs), f"{ids[0]!r} has no translation"
        for translated in strs:
            assert _fields(translated) == _fields(ids[0]), f"{ids[0]!r} → {translated!r}: the fields differ"
        assert not message.fuzzy, f"{ids[0]!r} is fuzzy"


def test_no_message_names_the_upstream_project() -> None:
    for message in _catalog():
        texts = [*(message.id if message.pluralizable else (message.id,)),
                 *(message.string if message.pluralizable else (message.string,))]
        for text in texts:
            assert not re.search(r"\bslime\b", text, re.I), f"{text!r} names the project instead of a {{field}}"


def test_fill_puts_nodes_where_the_sentence_has_them() -> None:
    link = nodes.reference("", "index", refuri="index.html")
    parts = fill("回到{overview}，或看 {n:,} 处{{原文}}", overview=link, n=1234)
    assert [type(p) for p in parts] == [nodes.Text, nodes.reference, nodes.Text]
    assert parts[0] == "回到" and parts[1] is link and parts[2] == "，或看 1,234 处{原文}"
    items = fill("{names}.", names=[nodes.literal("a", "a"), ", ", nodes.literal("b", "b")])
    assert "".join(p.astext() for p in items) == "a, b."
    with pytest.raises(KeyError):
        fill("{missing}")


def test_the_project_is_named_from_the_lock(lock_file: Path) -> None:
    from slimebook.lock import load_lock

    assert source_title(load_lock(lock_file)) == "Slime"


# -- an English book --------------------------------------------------------------------------------------------
@pytest.fixture
def english(tmp_path: Path, source_repo: SourceRepo, monkeypatch: pytest.MonkeyPatch):
    """``build(buildername="html", in_process=False, **confoverrides) -> app`` of the English book at the fixture pin.

    A build runs in a fresh ``python -m sphinx`` process, as a real build does (the result has the ``outdir`` and
    ``_warning`` of a test app): Sphinx's own words ("Python Module Index"…) in a process where a test has built a
    Chinese book before can stay Chinese (Sphinx's state, not the extension's). ``in_process=True`` builds with a
    :class:`SphinxTestApp` here, for the test of two languages in one process."""
    from io import StringIO
    from types import SimpleNamespace

    from sphinx.testing.util import SphinxTestApp

    src, cache = root_at_pin("english", tmp_path, source_repo)
    monkeypatch.setenv("SLIMEBOOK_CACHE", str(cache))
    apps: list[SphinxTestApp] = []
    count = [0]

    def build(buildername: str = "html", in_process: bool = False, **overrides):
        out = tmp_path / f"out-{count[0]}"
        count[0] += 1
        if in_process:
            app = SphinxTestApp(buildername, srcdir=src, builddir=out, status=StringIO(), warning=StringIO(),
                                confoverrides=overrides)
            apps.append(app)
            app.build()
            return app
        outdir, warnings = fresh_build(src, out, buildername, **overrides)
        return SimpleNamespace(outdir=outdir, _warning=StringIO(warnings))

    yield build
    for app in apps:
        app.cleanup()


def test_an_english_book_writes_no_cjk_character(english) -> None:
    app = english("html")
    assert app._warning.getvalue() == ""
    texts = output_texts(Path(app.outdir))
    pages = [name for name in texts if name.endswith(".html")]
    # the generated pages are all there: usage pages, source check, snapshots, a repository-map page, a redirect
    for page in ("_slimebook/usage/index.html", "_slimebook/usage/coverage.html", "_slimebook/usage/files.html",
                 "_slimebook/usage/category/candidates.html", "_slimebook/source-check.html",
                 "_snapshot/pkg/mod.py.html", "_slimebook/usage/dir/pkg.html", "moved.html"):
        assert page in pages, page
    assert cjk_leaks(texts) == {}
    index, lesson, guide = (texts[f"{name}.html"] for name in ("index", "lesson", "guide"))
    assert re.search(r"\d+ occurrences? in \d+ files?: ", index)
    assert "0 (not used by Slime)" in index
    assert "The usage index found no occurrence at the pinned commit" in index
    assert ">snapshot</a>" in index and "Usage index by file" in index
    assert "This lesson teaches: " in lesson and "Experiment hello.py" in lesson and "(no output)" in lesson
    assert "Output of python hello.py" in lesson and ">download<" in lesson
    assert "You are here" in guide and "Main line" in guide and "Tests to read first" in guide
    assert "Covered in the book" in guide
    assert "Read at build time from the git tree of the pinned commit" in guide
    usage = texts["_slimebook/usage/index.html"]
    assert "Usage index" in usage and "Counts by category and kind" in usage
    assert "Names the lessons teach that Slime does not use" in texts["_slimebook/usage/coverage.html"]
    assert "The lock records no previous pin" in texts["_slimebook/source-check.html"]
    assert "Cited" in texts["_snapshot/pkg/mod.py.html"]
    assert "This page has moved to" in texts["moved.html"]
    assert "Generated pages" in index  # the sidebar template
    reader = texts["_static/slimebook-reader.js"]
    assert '"Copy the link to this excerpt"' in reader and "{{" not in reader


def test_an_english_pdf_has_english_fixed_names(english) -> None:
    app = english("latex")
    assert app._warning.getvalue() == ""
    texts = output_texts(Path(app.outdir))
    assert "english.tex" in texts and "slimebook.sty" in texts
    assert cjk_leaks(texts) == {}
    sty = texts["slimebook.sty"]
    assert r"\renewcommand{\chaptername}{Chapter}" in sty and "\\def\\@chappos{}" in sty
    assert r"\begin{sphinxadmonition}{note}{Question \theslimebookquestion}" in sty
    assert r"\renewcommand{\contentsname}{Contents}" in sty
    assert r"\begin{slimebookquestion}" in texts["english.tex"]


def test_the_language_chooses_the_words_build_by_build(english) -> None:
    """A Chinese build and then an English one in the same process: each gets its own language. (Sphinx merges a
    catalog into the translator an earlier build registered; the extension starts each build from its own. Sphinx's
    own words, "索引" in a page's head, stay Chinese in such a second build: ``SphinxTestApp.cleanup`` resets them.)"""
    chinese = english("html", in_process=True, language="zh_CN")
    guide = (Path(chinese.outdir) / "guide.html").read_text(encoding="utf-8")
    assert "你在这里" in guide and "生成的页面" in guide
    latex = english("latex", in_process=True, language="zh_CN")
    sty = (Path(latex.outdir) / "slimebook.sty").read_text(encoding="utf-8")
    assert "\\renewcommand{\\chaptername}{第}" in sty and "\\def\\@chappos{章\\enspace}" in sty
    assert "{问题 \\theslimebookquestion}" in sty
    again = english("html", in_process=True)
    guide = (Path(again.outdir) / "guide.html").read_text(encoding="utf-8")
    assert "You are here" in guide and "Generated pages" in guide
    assert not {"你在这里", "生成的页面", "当前主线", "用法索引"} & set(CJK_RUNS.findall(guide))
    reader = (Path(again.outdir) / "_static" / "slimebook-reader.js").read_text(encoding="utf-8")
    assert not CJK.search(reader)


def test_the_preview_box_is_english(english) -> None:
    app = english("html", slimebook_preview=True, exclude_patterns=["_build"])
    page = (Path(app.outdir) / "warns.html").read_text(encoding="utf-8")
    # the build that fails on the warnings: slimebook_build_command, not this book's `make html`
    assert "Preview: building this page gave 2 warnings (sphinx-build -W fails on them)" in page
    assert "Line 4: slime: " in page
    assert not CJK.search(page)
