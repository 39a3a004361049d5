"""The accelerators as one switchable, guarded package (``slimebook.sphinxext.accelerate``, issue 33).

* The ``accelerate`` root (chapters under a parent toctree, ``slime-source`` excerpts, usage tables, a glossary,
  Chinese text indexed with jieba and a user dictionary, snapshot and usage pages) is built four ways, accelerators
  on and off (``-D slimebook_accelerate=0``) with ``-j 1`` and ``-j 2``, then rebuilt after an edit of one chapter;
  every file each build writes is compared.
* Guards (:mod:`slimebook.sphinxext.guard`): a Sphinx without what an accelerator patches, or outside the versions
  it was written for, builds the same pages, and the module steps aside with one info line.
* Every module of ``accelerate`` and ``fixes`` is listed, declares its guard, and guards every private name of
  Sphinx or jieba it touches.

Timing is the benchmarks' business (``bench/build.py --accelerate both``, ``bench/edit.py --accelerate both``).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
import shutil
import sys
import textwrap
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
import sphinx
from sphinx.testing.util import SphinxTestApp

from conftest import SourceRepo, copy_root
from slimebook.sphinxext import accelerate, fixes, guard
from slimebook.sphinxext.accelerate import fragments, pagewriting, parallelwrite, search, templatecache
from slimebook.sphinxext.guard import Requirement, missing, names_in, step_aside_reason
from slimebook.sphinxext.pages.render import WRITE_EVENT

#: the chapter the incremental rebuild edits: it holds usage tables (kept HTML) and has a toctree parent
EDITED = "part/ch2.md"
#: ``(accelerate, -j)`` of the four builds
VARIANTS = [(True, 1), (True, 2), (False, 1), (False, 2)]
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass
class Built:
    """One way of building the root: every output file after the fresh build and after the rebuild (path →
    bytes), the output files the rebuild wrote again, what the accelerate package set up (None: the switch was off,
    nothing was set up), the kept-HTML hits of the rebuild, the caches beside the doctrees after each build (names of
    the ``slimebook-*`` directories there), the warnings, the info lines and the applications (their directories are
    gone once the next build of the same test starts)."""

    fresh: dict[str, bytes]
    rebuilt: dict[str, bytes] = field(default_factory=dict)
    rewritten: set[str] = field(default_factory=set)
    accelerators: list[str] | None = None
    fragment_hits: int = 0
    caches: list[set[str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    status: list[str] = field(default_factory=list)
    apps: list[SphinxTestApp] = field(default_factory=list)


def _files(outdir: Path) -> dict[str, bytes]:
    return {p.relative_to(outdir).as_posix(): p.read_bytes() for p in sorted(outdir.rglob("*")) if p.is_file()}


def _mtimes(outdir: Path) -> dict[str, int]:
    return {p.relative_to(outdir).as_posix(): p.stat().st_mtime_ns for p in outdir.rglob("*") if p.is_file()}


def _warnings(app: SphinxTestApp) -> list[str]:
    """The build's warnings, without Sphinx's notes that a second app in this process registers its nodes again."""
    return [_ANSI.sub("", line) for line in app._warning.getvalue().splitlines() if "is already registered" not in line]


def _caches(app: SphinxTestApp) -> set[str]:
    return {p.name for p in Path(app.doctreedir).glob("slimebook-*") if p.is_dir() and any(p.iterdir())}


def _status(app: SphinxTestApp) -> list[str]:
    return [_ANSI.sub("", line) for line in app._status.getvalue().splitlines()]


@pytest.fixture
def book(tmp_path: Path, fetched_cache: Path, source_repo: SourceRepo, monkeypatch: pytest.MonkeyPatch, sphinx_build):
    """``book(accelerate, jobs, rebuild=True) -> Built``: the ``accelerate`` root built afresh with the switch given
    as ``-D`` gives it (``"1"``/``"0"``) and ``-j jobs``, then, with ``rebuild``, built again after :data:`EDITED`
    gained a paragraph.

    Every build happens in the same directory (removed first), so that paths in the configuration (the search's
    user dictionary) and so the files that digest it (``.buildinfo``, the generated pages' stamps) are the same."""
    monkeypatch.setenv("SLIMEBOOK_CACHE", str(fetched_cache))
    monkeypatch.setattr(fragments, "COUNTS", Counter())
    set_up: list[list[str]] = []
    real = accelerate.set_up_guarded

    def spy(app, package, names):
        set_up.append(done := real(app, package, names))
        return done

    monkeypatch.setattr(accelerate, "set_up_guarded", spy)

    def _build(on: bool, jobs: int, rebuild: bool = True) -> Built:
        shutil.rmtree(tmp_path / "book", ignore_errors=True)
        src = copy_root("accelerate", tmp_path / "book")
        (src / "sources.toml").write_text(source_repo.lock_text())
        set_up.clear()
        overrides = {"slimebook_accelerate": "1" if on else "0"}
        app = sphinx_build(src, "html", parallel=jobs, confoverrides=overrides)
        built = Built(_files(app.outdir), accelerators=set_up[0] if set_up else None, warnings=_warnings(app),
                      status=_status(app), apps=[app], caches=[_caches(app)])
        if rebuild:
            before = _mtimes(app.outdir)
            edited = src / EDITED
            edited.write_text(edited.read_text(encoding="utf-8") + "\n又加了一段：协程函数睡了一会儿。\n",
                              encoding="utf-8")
            hits = fragments.COUNTS["hit"]
            again = sphinx_build(src, "html", parallel=jobs, confoverrides=overrides)
            built.rebuilt = _files(again.outdir)
            built.rewritten = {name for name, mtime in _mtimes(again.outdir).items() if before.get(name) != mtime}
            built.fragment_hits = fragments.COUNTS["hit"] - hits
            built.caches.append(_caches(again))
            built.warnings += _warnings(again)
            built.status += _status(again)
            built.apps.append(again)
        return built

    return _build


#: The one line of output that legitimately differs between the accelerated and the stock build: the digest of the
#: HTML configuration in Sphinx's ``.buildinfo``. Sphinx takes it in the builder's ``init``, before
#: ``builder-inited``; with ``stableconfig`` the ``html_static_path`` it digests already holds the static directories
#: the extensions (here the book's reader) add at ``builder-inited``, in stock Sphinx it does not yet. The pages are
#: the same; switching the accelerators between two builds into one directory makes Sphinx write every page again.
BUILDINFO_CONFIG = re.compile(rb"^config: [0-9a-f]+\n", re.MULTILINE)


def _differ(expected: dict[str, bytes], got: dict[str, bytes]) -> list[str]:
    """The files missing from either side or with other bytes (``.buildinfo`` without its configuration digest,
    :data:`BUILDINFO_CONFIG`)."""
    def comparable(files: dict[str, bytes], name: str) -> bytes | None:
        value = files.get(name)
        return BUILDINFO_CONFIG.sub(b"", value) if name == ".buildinfo" and value is not None else value

    return sorted(name for name in expected.keys() | got.keys() if comparable(expected, name) != comparable(got, name))


def _steps_aside(built: Built) -> list[str]:
    return [line for line in built.status if "steps aside on Sphinx" in line]


def test_accelerated_and_stock_builds_write_the_same_files(book) -> None:
    builds = {variant: book(*variant) for variant in VARIANTS}
    stock = builds[False, 1]
    assert "_snapshot/pkg/mod.py.html" in stock.fresh and "searchindex.js" in stock.fresh
    assert any(name.startswith("_slimebook/usage/category/") for name in stock.fresh)
    for variant, built in builds.items():
        assert built.warnings == [], variant
        assert _steps_aside(built) == [], variant
        # every file, the fresh build's and the rebuild's, byte for byte but the one line BUILDINFO_CONFIG says
        assert _differ(stock.fresh, built.fresh) == [], variant
        assert _differ(stock.rebuilt, built.rebuilt) == [], variant
    assert _differ(stock.fresh, stock.rebuilt) == ["_sources/part/ch2.md.txt", "part/ch2.html", "searchindex.js"]

    for jobs in (1, 2):
        on, off = builds[True, jobs], builds[False, jobs]
        assert on.accelerators == list(accelerate.ACCELERATORS) and off.accelerators is None
        # the accelerated paths ran: the parent of the edited chapter was not written again (parents), its usage
        # tables came from the kept HTML (fragments), the templates were compiled into the doctree directory
        # (templatecache), the index used the lazy zh search (search) and -j 2 the pipelined builder
        assert "part/index.html" in off.rewritten and "part/index.html" not in on.rewritten
        assert "part/ch2.html" in on.rewritten
        assert on.fragment_hits > 0 and off.fragment_hits == 0
        assert on.caches == [{templatecache.CACHE_DIRNAME, fragments.DIRNAME}] * 2 and off.caches == [set(), set()]
        assert [type(app.builder.indexer.lang).__name__ for app in on.apps] == ["LazyChineseSearch"] * 2
        assert [type(app.builder.indexer.lang).__name__ for app in off.apps] == ["ChineseSearch"] * 2
    assert isinstance(builds[True, 2].apps[0].builder, parallelwrite.PipelinedWriteMixin)


def test_switched_off_no_accelerator_is_set_up(book) -> None:
    off = book(False, 2, rebuild=False)
    app = off.apps[0]
    assert off.accelerators is None
    assert "slimebook: accelerators off (slimebook_accelerate = False): Sphinx's own behaviour" in off.status
    assert not isinstance(app.builder, parallelwrite.PipelinedWriteMixin)
    assert type(app.builder).__name__ == "KeptIndexEntriesHTMLBuilder"  # the fixes are on whatever the switch says
    assert app.events.listeners.get(WRITE_EVENT, []) == []  # generated pages: the stock serial writer
    handlers = [listener.handler for listeners in app.events.listeners.values() for listener in listeners]
    assert [h for h in handlers if getattr(h, "__module__", "").startswith(accelerate.__name__ + ".")] == []
    assert app.registry.translation_handlers["html"]["kept_html"][0] is not fragments._visit


# -- guards in a build ---------------------------------------------------------------------------------------------
def _renamed_word_collector(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Sphinx whose ``IndexBuilder._word_collector`` takes its doctree under another name. (Deleting the method
    would break Sphinx itself, which calls it: the same method, its parameter renamed, keeps stock Sphinx working.)"""
    from sphinx.search import IndexBuilder

    real = IndexBuilder._word_collector

    def _word_collector(self, tree):
        return real(self, tree)

    monkeypatch.setattr(IndexBuilder, "_word_collector", _word_collector)


def _no_global_toctree(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Sphinx without ``global_toctree_for_doc`` in its toctree adapter (the HTML builder keeps the function it
    imported, so stock Sphinx still draws its navigation)."""
    import sphinx.environment.adapters.toctree as toctree

    monkeypatch.delattr(toctree, "global_toctree_for_doc")


def _written_for_older_sphinx(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(templatecache, "SPHINX", ((8, 0), (8, 2)))


_VERSION = "{}.{}".format(*sphinx.version_info[:2])


@pytest.mark.parametrize(("change", "jobs", "module", "reason"), [
    (_renamed_word_collector, 2, "accelerate.parallelwrite",
     "it patches what is not there: sphinx.search:IndexBuilder._word_collector (parameter 'doctree')"),
    (_no_global_toctree, 1, "accelerate.navigation",
     "it patches what is not there: sphinx.environment.adapters.toctree:global_toctree_for_doc"),
    (_written_for_older_sphinx, 2, "accelerate.templatecache", f"written for Sphinx 8.0–8.2, not {_VERSION}"),
], ids=["parameter-renamed", "attribute-gone", "version-range"])
def test_a_module_whose_guard_fails_steps_aside_and_the_pages_stay_the_same(book, monkeypatch: pytest.MonkeyPatch,
                                                                            change, jobs: int, module: str,
                                                                            reason: str) -> None:
    normal = book(True, jobs, rebuild=False)
    change(monkeypatch)
    guarded = book(True, jobs, rebuild=False)
    name = module.rpartition(".")[2]
    assert guarded.accelerators == [n for n in accelerate.ACCELERATORS if n != name]
    (line,) = _steps_aside(guarded)
    assert line == (f"slimebook: {module} steps aside on Sphinx {sphinx.__version__}: {reason}; the build goes on "
                    "with Sphinx's own behaviour")
    assert guarded.warnings == []
    assert _differ(normal.fresh, guarded.fresh) == []


def test_an_accelerator_steps_aside_with_the_one_it_builds_on(book, monkeypatch: pytest.MonkeyPatch) -> None:
    # the pipelined writer's tasks are pagewriting's OrderedTasks: when pagewriting's probe fails, both step aside
    normal = book(True, 2, rebuild=False)
    monkeypatch.setattr(pagewriting, "usable", lambda: False)
    guarded = book(True, 2, rebuild=False)
    assert [line.split(" steps aside")[0] for line in _steps_aside(guarded)] == [
        "slimebook: accelerate.parallelwrite", "slimebook: accelerate.pagewriting"]
    assert not isinstance(guarded.apps[0].builder, parallelwrite.PipelinedWriteMixin)
    assert guarded.apps[0].events.listeners.get(WRITE_EVENT, []) == []
    assert _differ(normal.fresh, guarded.fresh) == []


def test_the_zh_search_steps_aside_when_jieba_is_not_the_one_it_was_written_for(
        book, monkeypatch: pytest.MonkeyPatch) -> None:
    normal = book(True, 2, rebuild=False)
    monkeypatch.setattr(search, "jieba_usable", lambda: False)
    guarded = book(True, 2, rebuild=False)
    (line,) = _steps_aside(guarded)
    assert line.startswith(f"slimebook: accelerate.search steps aside on Sphinx {sphinx.__version__}: jieba is not")
    assert type(guarded.apps[0].builder.indexer.lang).__name__ == "ChineseSearch"
    assert _differ(normal.fresh, guarded.fresh) == []


def test_jieba_usable_checks_what_the_search_touches(monkeypatch: pytest.MonkeyPatch) -> None:
    import jieba

    assert search.jieba_usable()
    monkeypatch.delattr(jieba, "marshal")
    assert not search.jieba_usable()


# -- the guard's functions -----------------------------------------------------------------------------------------
def takes_any(name, **kwargs):
    """A callable with ``**kwargs`` (a Requirement target of these tests)."""


def takes_two(doctree, tags=None):
    """A callable with two named parameters (a Requirement target of these tests)."""


NOT_CALLABLE = 3


@pytest.mark.parametrize(("requirement", "problems"), [
    (Requirement("sphinx.search:IndexBuilder.feed", ("docname", "doctree")), []),
    (Requirement("sphinx.search:IndexBuilder._no_such_method"), ["sphinx.search:IndexBuilder._no_such_method"]),
    (Requirement("sphinx.no_such_module:thing"), ["sphinx.no_such_module:thing"]),
    (Requirement(f"{__name__}:takes_two", ("doctree", "env")), [f"{__name__}:takes_two (parameter 'env')"]),
    (Requirement(f"{__name__}:takes_any", ("name", "env", "anything")), []),  # **kwargs accepts every keyword
    (Requirement(f"{__name__}:NOT_CALLABLE", ("x",)), [f"{__name__}:NOT_CALLABLE (no signature)"]),
    (Requirement(f"{__name__}:NOT_CALLABLE"), []),  # no parameters asked: it need only exist
], ids=["met", "attribute", "module", "parameter", "kwargs", "no-signature", "exists"])
def test_missing_names_each_requirement_not_met(requirement: Requirement, problems: list[str]) -> None:
    assert missing((requirement,)) == problems


def test_missing_never_raises(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "explodes_on_import.py").write_text("raise RuntimeError('no')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert missing((Requirement("explodes_on_import:x"),)) == ["explodes_on_import:x"]
    assert missing(()) == []


def _module(name: str = "fake", **attributes: Any) -> ModuleType:
    module = ModuleType(name)
    for key, value in attributes.items():
        setattr(module, key, value)
    return module


def test_step_aside_reason() -> None:
    here = tuple(sphinx.version_info[:2])
    assert step_aside_reason(_module(SPHINX=(here, here), REQUIRES=())) is None
    assert step_aside_reason(_module()) is None  # no range declared: every version
    assert step_aside_reason(_module(SPHINX=((9, 0), (9, 1))), version=(8, 2)) == (
        "written for Sphinx 9.0–9.1, not 8.2")
    assert step_aside_reason(_module(SPHINX=((9, 0), (9, 1))), version=(10, 0)) == (
        "written for Sphinx 9.0–9.1, not 10.0")
    assert step_aside_reason(_module(REQUIRES=(Requirement("sphinx.search:IndexBuilder.gone"),
                                               Requirement("sphinx.search:IndexBuilder.feed", ("nope",))))) == (
        "it patches what is not there: sphinx.search:IndexBuilder.gone, "
        "sphinx.search:IndexBuilder.feed (parameter 'nope')")
    assert step_aside_reason(_module("pkg.probed", usable=lambda: False)) == (
        "pkg.probed.usable() found this Sphinx different")
    assert step_aside_reason(_module(usable=lambda: True)) is None

    def probe() -> bool:
        raise AttributeError("type object 'StandaloneHTMLBuilder' has no attribute 'init_css_files'")

    assert step_aside_reason(_module("pkg.failing", usable=probe)) == (
        "pkg.failing.usable() failed (AttributeError: type object 'StandaloneHTMLBuilder' has no attribute "
        "'init_css_files')")


def test_names_in_reads_the_code_of_a_function_and_what_it_nests() -> None:
    from sphinx.search import IndexBuilder

    def outer(self):
        return [item.inner_name for item in self.items]

    assert names_in(IndexBuilder.__init__, "_index_entries")
    assert names_in(outer, "items", "inner_name")  # a comprehension is a code object of its own
    assert not names_in(outer, "items", "elsewhere")
    assert not names_in(None, "x") and not names_in(len, "x")


def test_set_up_guarded_sets_up_what_passes_and_says_one_line_for_each_other(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "fakeaccel"
    package.mkdir()
    (package / "__init__.py").write_text("")
    header = "from slimebook.sphinxext.guard import Requirement\n"
    (package / "good.py").write_text(header + textwrap.dedent("""\
        SPHINX = ((0, 0), (999, 0))
        REQUIRES = (Requirement("sphinx.search:IndexBuilder.feed"),)
        DONE = []
        def setup(app):
            DONE.append(app)
        """))
    (package / "old.py").write_text("SPHINX = ((1, 0), (1, 8))\ndef setup(app):\n    raise AssertionError\n")
    (package / "gone.py").write_text(header + 'REQUIRES = (Requirement("sphinx:no_such"),)\n'
                                              "def setup(app):\n    raise AssertionError\n")
    (package / "broken.py").write_text("from sphinx import no_such_name\n")
    (package / "probed.py").write_text("def usable():\n    return False\ndef setup(app):\n    raise AssertionError\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    logged: list[str] = []
    monkeypatch.setattr(guard, "logger", SimpleNamespace(info=lambda message, *args: logged.append(message % args)))
    app = object()
    try:
        done = guard.set_up_guarded(app, "fakeaccel", ("good", "old", "gone", "broken", "probed", "absent"))
        assert done == ["good"]
        assert sys.modules["fakeaccel.good"].DONE == [app]
    finally:
        for name in [name for name in sys.modules if name.split(".")[0] == "fakeaccel"]:
            del sys.modules[name]
    prefix = f"slimebook: fakeaccel.%s steps aside on Sphinx {sphinx.__version__}: "
    assert [line.split("; the build goes on")[0] for line in logged] == [
        prefix % "old" + f"written for Sphinx 1.0–1.8, not {_VERSION}",
        prefix % "gone" + "it patches what is not there: sphinx:no_such",
        prefix % "broken" + "it cannot be imported (cannot import name 'no_such_name' from 'sphinx' "
                            f"({Path(sphinx.__file__)}))",
        prefix % "probed" + "fakeaccel.probed.usable() found this Sphinx different",
        prefix % "absent" + "it cannot be imported (No module named 'fakeaccel.absent')",
    ]
    assert all(line.endswith("; the build goes on with Sphinx's own behaviour") for line in logged)


# -- every module guarded ------------------------------------------------------------------------------------------
PACKAGES = [pytest.param(accelerate, accelerate.ACCELERATORS, id="accelerate"),
            pytest.param(fixes, fixes.FIXES, id="fixes")]

#: private attributes the modules set on their own classes' instances (so not Sphinx's or jieba's to guard)
OWN_PRIVATE = {
    "_failure",  # pagewriting.OrderedTasks
    "_user_words",  # search.LazyChineseSearch
    "_format",  # fixes.indexentries._Remembering
    "_base", "_context", "_usable",  # templatecache.KeptTemplates
    "_builder", "_trees", "_targets", "_drawn", "_html",  # navigation._Targets, navigation._Navigation
}


def _modules(package: ModuleType, listed: tuple[str, ...]) -> list[ModuleType]:
    return [importlib.import_module(f"{package.__name__}.{name}") for name in listed]


@pytest.mark.parametrize(("package", "listed"), PACKAGES)
def test_every_module_is_listed_and_declares_its_guard(package: ModuleType, listed: tuple[str, ...]) -> None:
    # a module file that is not listed would never be set up through the guard: every one must be
    assert sorted(info.name for info in pkgutil.iter_modules(package.__path__)) == sorted(listed)
    assert len(set(listed)) == len(listed)
    for module in _modules(package, listed):
        lowest, highest = module.SPHINX
        assert all(isinstance(part, int) for part in (*lowest, *highest)) and len(lowest) == len(highest) == 2
        assert lowest <= highest, module.__name__
        assert isinstance(module.REQUIRES, tuple) and module.REQUIRES, module.__name__
        assert all(isinstance(requirement, Requirement) for requirement in module.REQUIRES), module.__name__
        assert callable(module.setup), module.__name__
        # on the Sphinx the book is built with, every module passes its guard
        assert missing(module.REQUIRES) == [], module.__name__
        assert step_aside_reason(module) is None, module.__name__


def _private_names(module: ModuleType) -> set[str]:
    """Private names (one leading underscore) ``module`` reads or sets as attributes or imports from other
    packages, less the functions and classes it defines itself and :data:`OWN_PRIVATE`."""
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    defined = {node.name for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            found.update(node.module.split("."))
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(part for alias in node.names for part in alias.name.split("."))
    return {name for name in found if name.startswith("_") and not name.startswith("__")} - defined - OWN_PRIVATE


def _guarded_text(module: ModuleType) -> str:
    """What names a module's guard: its ``REQUIRES`` targets and the source of its probes (``usable`` and any
    ``…_usable`` checked when a build needs it)."""
    probes = [value for name, value in vars(module).items()
              if (name == "usable" or name.endswith("_usable")) and inspect.isfunction(value)
              and value.__module__ == module.__name__]
    return "\n".join([*(requirement.target for requirement in module.REQUIRES),
                      *(inspect.getsource(probe) for probe in probes)])


@pytest.mark.parametrize(("package", "listed"), PACKAGES)
def test_every_private_name_a_module_touches_is_guarded(package: ModuleType, listed: tuple[str, ...]) -> None:
    # a private attribute or module of Sphinx, jieba or Jinja may change in any release: each one a module reads,
    # overrides or imports is named by its REQUIRES or checked by its usable() probe
    unguarded = {}
    for module in _modules(package, listed):
        text = _guarded_text(module)
        names = sorted(name for name in _private_names(module) if not re.search(rf"\b{re.escape(name)}\b", text))
        if names:
            unguarded[module.__name__] = names
    assert unguarded == {}


@pytest.mark.parametrize(("name", "issue"), [("duplicatetargets", 4459), ("indexentries", 12599)])
def test_a_fix_of_a_sphinx_bug_names_its_issue(name: str, issue: int) -> None:
    # (fixes.errorcount works around a designed behaviour, errors counted as warnings, which its docstring describes)
    assert f"sphinx-doc/sphinx#{issue}" in importlib.import_module(f"{fixes.__name__}.{name}").__doc__


# -- wrapped attributes ----------------------------------------------------------------------------------------------
def _wrap_every_function(monkeypatch: pytest.MonkeyPatch, owner: type) -> None:
    """Replace every function ``owner`` defines with a :func:`functools.wraps` wrapper, as a profiler, a benchmark's
    probe or another extension would wrap it."""
    import functools

    for name, value in list(vars(owner).items()):
        if inspect.isfunction(value):
            def wrapper(*args, _original=value, **kwargs):
                return _original(*args, **kwargs)

            monkeypatch.setattr(owner, name, functools.wraps(value)(wrapper))


def _wrapped_owners() -> list[type]:
    """The classes whose methods the guards read: the owners of every ``REQUIRES`` target that is a class attribute,
    and those the ``usable()`` probes read (the application, builders, environment, build info, index builder and
    jieba's tokenizer)."""
    import jieba
    from sphinx.builders import Builder
    from sphinx.builders.html import StandaloneHTMLBuilder
    from sphinx.builders.html._build_info import BuildInfo
    from sphinx.environment import BuildEnvironment
    from sphinx.search import IndexBuilder

    owners = {sphinx.application.Sphinx, Builder, StandaloneHTMLBuilder, BuildEnvironment, BuildInfo, IndexBuilder,
              jieba.Tokenizer}
    for package, listed in ((accelerate, accelerate.ACCELERATORS), (fixes, fixes.FIXES)):
        for module in _modules(package, listed):
            for requirement in (*module.REQUIRES, *getattr(module, "ZH_REQUIRES", ())):
                module_name, _, path = requirement.target.partition(":")
                value: Any = importlib.import_module(module_name)
                for part in path.split(".")[:-1]:
                    value = getattr(value, part)
                if isinstance(value, type):
                    owners.add(value)
    return sorted(owners, key=lambda owner: (owner.__module__, owner.__qualname__))


def test_a_wrapper_that_keeps_wrapped_leaves_every_guard_passing(monkeypatch: pytest.MonkeyPatch) -> None:
    # bench/buildprobe.py once wrapped Sphinx's and jieba's methods without functools.wraps: four modules stepped
    # aside under it and the edit-loop benchmark timed a partly stock build. Wrapped the usual way, every method a
    # guard reads must still pass it (the guards read through __wrapped__: inspect.signature, inspect.unwrap).
    search.import_jieba()
    for owner in _wrapped_owners():
        _wrap_every_function(monkeypatch, owner)
    for package, listed in ((accelerate, accelerate.ACCELERATORS), (fixes, fixes.FIXES)):
        for module in _modules(package, listed):
            assert step_aside_reason(module) is None, module.__name__
    assert search.jieba_usable() and search.zh_usable()


def test_the_edit_bench_probe_leaves_every_accelerator_set_up(tmp_path: Path) -> None:
    # the probe of bench/edit.py wraps Sphinx's phases and jieba's load in the build's own process: with its
    # wrappers in place, no guard finds what it patches changed
    import subprocess

    bench = Path(__file__).resolve().parent.parent / "bench"
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(bench)!r})
        import buildprobe
        sys.meta_path.insert(0, buildprobe._Finder())
        buildprobe._patch_sphinx()
        from slimebook.sphinxext import accelerate, fixes
        from slimebook.sphinxext.accelerate import search
        from slimebook.sphinxext.guard import step_aside_reason
        import importlib
        search.import_jieba()
        import jieba
        assert jieba.Tokenizer.initialize.__code__.co_filename == buildprobe.__file__, "jieba not wrapped"
        for package, names in ((accelerate, accelerate.ACCELERATORS), (fixes, fixes.FIXES)):
            for name in names:
                reason = step_aside_reason(importlib.import_module(package.__name__ + "." + name))
                print(name, reason)
        print("jieba", search.jieba_usable(), search.zh_usable())
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1] == "jieba True True"
    assert [line for line in lines[:-1] if not line.endswith(" None")] == []
    assert len(lines) == len(accelerate.ACCELERATORS) + len(fixes.FIXES) + 1
