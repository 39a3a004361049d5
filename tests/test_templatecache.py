"""Compiled templates kept between builds (``slimebook.sphinxext.templatecache``): a second build compiles no page
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

from slimebook.sphinxext import templatecache

CONF = textwrap.dedent('''\
    extensions = ["slimebook.sphinxext.templatecache"]
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
    """The names of the templates Jinja compiles from a file (a miss of the bytecode cache, or no cache)."""
    names: list[str] = []
    real = jinja2.Environment.compile

    def compile(self, source, name=None, filename=None, raw=False, defer_init=False):  # noqa: A001
        if filename is not None:
            names.append(name)
        return real(self, source, name, filename, raw, defer_init)

    monkeypatch.setattr(jinja2.Environment, "compile", compile)
    return names


def _build(src: Path, out: Path) -> str:
    app = SphinxTestApp("html", srcdir=src, builddir=out, freshenv=True)
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


def _app(doctreedir: Path, environment: object) -> SimpleNamespace:
    return SimpleNamespace(doctreedir=doctreedir, builder=SimpleNamespace(templates=SimpleNamespace(
        environment=environment)))


def test_other_directories_are_removed_and_a_cache_set_by_others_is_kept(tmp_path: Path) -> None:
    stale = tmp_path / "slimebook-templates" / "0123456789abcdef"
    stale.mkdir(parents=True)
    environment = SandboxedEnvironment()
    templatecache._install(_app(tmp_path, environment))
    assert not stale.exists()
    assert isinstance(environment.bytecode_cache, jinja2.FileSystemBytecodeCache)
    assert environment.bytecode_cache.directory == str(templatecache.cache_directory(tmp_path, environment))
    own = jinja2.FileSystemBytecodeCache(str(tmp_path / "theirs"))
    theirs = SandboxedEnvironment(bytecode_cache=own)
    templatecache._install(_app(tmp_path, theirs))
    assert theirs.bytecode_cache is own
    templatecache._install(SimpleNamespace(doctreedir=tmp_path, builder=SimpleNamespace()))  # no templates: nothing


def test_a_directory_that_cannot_be_made_leaves_the_templates_uncached(tmp_path: Path) -> None:
    (tmp_path / "slimebook-templates").write_text("a file where the directory goes", encoding="utf-8")
    environment = SandboxedEnvironment()
    templatecache._install(_app(tmp_path, environment))
    assert environment.bytecode_cache is None
