"""Compiled templates kept between builds (``slimebook.sphinxext.accelerate.templatecache``): a second build compiles
no page
template, a changed template is compiled again, the pages are the same, and the cache lives under the doctree
directory, in a directory named after how the environment compiles."""

from __future__ import annotations

import textwrap
from pathlib import Path
from types import SimpleNamespace

import jinja2
import pytest
from jinja2.sandbox import SandboxedEnvironment
from sphinx.testing.util import SphinxTestApp

from slimebook.sphinxext.accelerate import templatecache

CONF = textwrap.dedent('''\
    extensions = ["slimebook.sphinxext.accelerate.templatecache"]
    templates_path = ["_templates"]
    exclude_patterns = ["_build"]
    ''')
LAYOUT = '{%% extends "!layout.html" %%}{%% block extrahead %%}<meta name="mark" content="%s">{%% endblock %%}\n'


def _project(tmp_path: Path, mark: str = "first") -> Path:
    src = tmp_path / "src"
    (src / "_templates").mkdir(parents=True)
    (src / "conf.py").write_text(CONF, encoding="utf-8")
    (src / "index.rst").write_text("Title\n=====\n\nText.\n", encoding="utf-8")
    (src / "_templates" / "layout.html").write_text(LAYOUT % mark, encoding="utf-8")
    return src


@pytest.fixture
def compiled(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the templates Jinja compiles from a loader (a miss of the bytecode cache, or no cache)."""
    names: list[str] = []
    real = jinja2.Environment.compile

    def compile(self, source, name=None, filename=None, raw=False, defer_init=False):  # noqa: A001
        if name is not None:
            names.append(name)
        return real(self, source, name, filename, raw, defer_init)

    monkeypatch.setattr(jinja2.Environment, "compile", compile)
    return names


def _build(src: Path, out: Path) -> str:
    app = SphinxTestApp("html", srcdir=src, builddir=out)
    try:
        app.build(force_all=True)
    finally:
        app.cleanup()
    return (out / "html" / "index.html").read_text(encoding="utf-8")


def test_a_second_build_compiles_no_page_template(tmp_path: Path, compiled: list[str]) -> None:
    src = _project(tmp_path)
    first = _build(src, tmp_path / "out")
    assert "layout.html" in compiled and "page.html" in compiled  # the first build compiles them and keeps them
    kept = list((tmp_path / "out" / "doctrees" / templatecache.CACHE_DIRNAME).glob("*/__jinja2_*.cache"))
    assert kept
    compiled.clear()
    second = _build(src, tmp_path / "out")
    assert compiled == []
    assert second == first and '<meta name="mark" content="first">' in second
    assert sorted(p.name for p in src.rglob("*")) == ["_templates", "conf.py", "index.rst", "layout.html"]


def test_a_changed_template_is_compiled_again(tmp_path: Path, compiled: list[str]) -> None:
    src = _project(tmp_path)
    _build(src, tmp_path / "out")
    (src / "_templates" / "layout.html").write_text(LAYOUT % "second", encoding="utf-8")
    compiled.clear()
    page = _build(src, tmp_path / "out")
    assert '<meta name="mark" content="second">' in page and "first" not in page
    assert compiled == ["layout.html"]  # the others were kept


def test_the_directory_is_named_after_how_the_environment_compiles(tmp_path: Path) -> None:
    plain = SandboxedEnvironment()
    assert templatecache.environment_digest(plain) == templatecache.environment_digest(SandboxedEnvironment())
    assert templatecache.environment_digest(plain) != templatecache.environment_digest(
        SandboxedEnvironment(extensions=["jinja2.ext.i18n"]))
    assert templatecache.environment_digest(plain) != templatecache.environment_digest(
        SandboxedEnvironment(trim_blocks=True))
    assert templatecache.environment_digest(plain) != templatecache.environment_digest(jinja2.Environment())
    assert templatecache.cache_directory(tmp_path, plain) == (
        tmp_path / "slimebook-templates" / templatecache.environment_digest(plain))


def _environment(kept: templatecache.KeptTemplates, **templates: str) -> SandboxedEnvironment:
    return SandboxedEnvironment(loader=jinja2.DictLoader(templates), bytecode_cache=kept)


def test_the_directory_is_named_at_the_first_load_and_others_are_removed(tmp_path: Path,
                                                                         compiled: list[str]) -> None:
    base = tmp_path / templatecache.CACHE_DIRNAME
    stale = base / "0123456789abcdef"
    stale.mkdir(parents=True)
    kept = templatecache.KeptTemplates(base, "ctx")
    environment = _environment(kept, page="{{ 1 + 1 }}")
    assert stale.exists()  # nothing named before a template is loaded
    assert environment.get_template("page").render() == "2"
    assert not stale.exists()
    assert kept.directory == str(templatecache.cache_directory(tmp_path, environment, "ctx"))
    again = _environment(templatecache.KeptTemplates(base, "ctx"), page="{{ 1 + 1 }}")
    compiled.clear()
    assert again.get_template("page").render() == "2" and compiled == []  # read from the file


def test_a_damaged_file_is_compiled_again(tmp_path: Path, compiled: list[str]) -> None:
    base = tmp_path / templatecache.CACHE_DIRNAME
    _environment(templatecache.KeptTemplates(base), page="{{ 'a' ~ 'b' }}").get_template("page")
    for path in base.glob("*/__jinja2_*.cache"):
        path.write_bytes(path.read_bytes()[:24])  # inside the pickled checksum: Jinja's own load raises
    compiled.clear()
    environment = _environment(templatecache.KeptTemplates(base), page="{{ 'a' ~ 'b' }}")
    assert environment.get_template("page").render() == "ab" and compiled == ["page"]


def test_a_directory_that_cannot_be_written_leaves_the_templates_compiled(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    def read_only(self, bucket) -> None:
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(jinja2.FileSystemBytecodeCache, "dump_bytecode", read_only)
    kept = templatecache.KeptTemplates(tmp_path / templatecache.CACHE_DIRNAME)
    environment = _environment(kept, one="1", two="2")
    assert environment.get_template("one").render() == "1"
    assert environment.get_template("two").render() == "2"
    (tmp_path / "blocked").write_text("a file where the directory goes", encoding="utf-8")
    blocked = _environment(templatecache.KeptTemplates(tmp_path / "blocked" / templatecache.CACHE_DIRNAME), one="1")
    assert blocked.get_template("one").render() == "1"


def test_a_read_only_cache_directory_does_not_fail_the_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = _project(tmp_path)
    _build(src, tmp_path / "out")
    (src / "_templates" / "layout.html").write_text(LAYOUT % "second", encoding="utf-8")

    def read_only(self, bucket) -> None:
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(jinja2.FileSystemBytecodeCache, "dump_bytecode", read_only)
    assert '<meta name="mark" content="second">' in _build(src, tmp_path / "out")


def test_a_filter_folded_into_the_code_follows_the_configuration(tmp_path: Path) -> None:
    # Jinja's code generator calls a filter applied to a constant when it compiles; its result may depend on the
    # configuration (this filter's does), which is part of the directory's name
    src = _project(tmp_path)
    (src / "conf.py").write_text(CONF + textwrap.dedent('''\
        shout = "hello"

        def setup(app):
            app.add_config_value("shout", "hello", "html")

            def add_filter(app):
                app.builder.templates.environment.filters["shout"] = lambda s: f"{s}-{app.config.shout}"

            app.connect("builder-inited", add_filter)
        '''), encoding="utf-8")
    (src / "_templates" / "layout.html").write_text(
        '{% extends "!layout.html" %}{% block extrahead %}<meta name="mark" content="{{ "x"|shout }}">{% endblock %}',
        encoding="utf-8")

    def build(value: str) -> str:
        app = SphinxTestApp("html", srcdir=src, builddir=tmp_path / "out", confoverrides={"shout": value})
        try:
            app.build()
        finally:
            app.cleanup()
        return (tmp_path / "out" / "html" / "index.html").read_text(encoding="utf-8")

    assert 'content="x-hello"' in build("hello")
    assert 'content="x-bye"' in build("bye")


def test_a_cache_set_by_others_is_kept(tmp_path: Path) -> None:
    own = jinja2.FileSystemBytecodeCache(str(tmp_path / "theirs"))
    theirs = SandboxedEnvironment(bytecode_cache=own)
    app = SimpleNamespace(doctreedir=tmp_path, builder=SimpleNamespace(templates=SimpleNamespace(environment=theirs)))
    templatecache._install(app)
    assert theirs.bytecode_cache is own
    templatecache._install(SimpleNamespace(doctreedir=tmp_path, builder=SimpleNamespace()))  # no templates: nothing


def test_a_fresh_environment_starts_the_cache_empty(tmp_path: Path, compiled: list[str]) -> None:
    # -E is what a writer reaches for to rebuild everything: compiled code (a filter's folded result with it) goes too
    src = _project(tmp_path)
    _build(src, tmp_path / "out")
    compiled.clear()
    app = SphinxTestApp("html", srcdir=src, builddir=tmp_path / "out", freshenv=True)
    try:
        app.build(force_all=True)
    finally:
        app.cleanup()
    assert "layout.html" in compiled and "page.html" in compiled


def test_builders_sharing_a_doctree_directory_share_the_cache(tmp_path: Path, compiled: list[str]) -> None:
    # html and dirhtml differ in their tags (builder_html, builder_dirhtml), which no compiled template reads
    src = _project(tmp_path)
    _build(src, tmp_path / "out")
    compiled.clear()
    app = SphinxTestApp("dirhtml", srcdir=src, builddir=tmp_path / "out")
    try:
        app.build(force_all=True)
    finally:
        app.cleanup()
    assert "layout.html" not in compiled and "page.html" not in compiled
