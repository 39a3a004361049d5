"""Run one ``sphinx-build`` in this process and write down what it cost (used by ``bench/edit.py``).

    python bench/buildprobe.py OUT.json SPHINX-BUILD-ARGS…

Writes ``OUT.json`` when the build ends (even when it fails)::

    {"status": 0, "seconds": {"init": …, "read": …, "write": …, "finish": …, "pages": …, "total": …},
     "cpu": {…the same phases in CPU seconds of this process…},
     "read": ["chapters/guide/trajectory"], "written": 3,
     "libcst": {"imported": false, "parses": 0}, "jieba": {"loads": 1, "seconds": 0.41},
     "stepped_aside": []}

``init`` is ``Sphinx.__init__`` (configuration, extensions, ``builder-inited``); ``read``, ``write`` and ``finish``
are the builder's phases; ``pages`` is ``html-collect-pages`` (the generated pages, inside ``finish``). ``libcst``
counts ``libcst.parse_module``/``parse_expression``/``parse_statement`` calls; ``jieba`` counts jieba dictionary
loads (``Tokenizer.initialize`` runs that did the work) and their seconds. The modules are patched when they are
first imported (an import hook), so the probe imports neither libcst nor jieba itself: a build that never needs them
does not pay for them here either.

Every wrapper keeps the function it wraps as ``__wrapped__`` (:func:`functools.wraps`): the book's accelerators read
the code of what they patch before they patch it (``slimebook.sphinxext.guard``, ``inspect.unwrap``), and a bare
wrapper made four of them step aside under the probe, so that the probe timed a build partly on Sphinx's stock
behaviour. ``stepped_aside`` lists the modules that stepped aside all the same (their one info line, which ``-q``
hides), so that a caller can refuse to call such a build accelerated.
"""

from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import json
import logging
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

STARTED = time.perf_counter()
REPORT: dict = {"status": None, "seconds": {}, "cpu": {}, "read": [], "written": 0,
                "libcst": {"imported": False, "parses": 0}, "jieba": {"loads": 0, "seconds": 0.0},
                "stepped_aside": []}
#: the logger of the book's guards (Sphinx's loggers are children of ``sphinx``)
GUARD_LOGGER = "sphinx.slimebook.sphinxext.guard"


def _add_seconds(name: str, seconds: float, cpu: float) -> None:
    REPORT["seconds"][name] = REPORT["seconds"].get(name, 0.0) + seconds
    REPORT["cpu"][name] = REPORT["cpu"].get(name, 0.0) + cpu


def _timed(owner: type, attr: str, name: str) -> None:
    original = getattr(owner, attr)

    @functools.wraps(original)
    def wrapper(*args, **kwargs):
        begin, cpu = time.perf_counter(), time.process_time()
        try:
            return original(*args, **kwargs)
        finally:
            _add_seconds(name, time.perf_counter() - begin, time.process_time() - cpu)

    setattr(owner, attr, wrapper)


def _patch_libcst(module: ModuleType) -> None:
    REPORT["libcst"]["imported"] = True
    for name in ("parse_module", "parse_expression", "parse_statement"):
        original = getattr(module, name)

        @functools.wraps(original)
        def counted(*args, _original=original, **kwargs):
            REPORT["libcst"]["parses"] += 1
            return _original(*args, **kwargs)

        setattr(module, name, counted)


def _patch_jieba(module: ModuleType) -> None:
    original = module.Tokenizer.initialize

    @functools.wraps(original)
    def initialize(self, dictionary=None):
        was = self.initialized
        begin = time.perf_counter()
        try:
            return original(self, dictionary)
        finally:
            if not was and self.initialized:
                REPORT["jieba"]["loads"] += 1
                REPORT["jieba"]["seconds"] += time.perf_counter() - begin

    module.Tokenizer.initialize = initialize


HOOKS: dict[str, Callable[[ModuleType], None]] = {"libcst": _patch_libcst, "jieba": _patch_jieba}


class _After(importlib.abc.Loader):
    """A loader that runs the real one, then a hook on the fresh module."""

    def __init__(self, loader: importlib.abc.Loader, hook: Callable[[ModuleType], None]) -> None:
        self.loader, self.hook = loader, hook

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self.loader.exec_module(module)
        self.hook(module)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        hook = HOOKS.get(name)
        if hook is None:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _After(spec.loader, hook)
        return spec


def _patch_sphinx() -> None:
    from sphinx.application import Sphinx
    from sphinx.builders import Builder
    from sphinx.builders.html import StandaloneHTMLBuilder

    _timed(Sphinx, "__init__", "init")
    _timed(Builder, "read", "read")
    _timed(Builder, "write", "write")
    _timed(StandaloneHTMLBuilder, "finish", "finish")
    _timed(StandaloneHTMLBuilder, "gen_pages_from_extensions", "pages")
    read_doc, write_doc = Builder.read_doc, StandaloneHTMLBuilder.write_doc

    @functools.wraps(read_doc)
    def counted_read(self, docname, *args, **kwargs):
        REPORT["read"].append(docname)
        return read_doc(self, docname, *args, **kwargs)

    @functools.wraps(write_doc)
    def counted_write(self, docname, *args, **kwargs):
        REPORT["written"] += 1
        return write_doc(self, docname, *args, **kwargs)

    Builder.read_doc = counted_read
    StandaloneHTMLBuilder.write_doc = counted_write


class _StepAsideRecorder(logging.Handler):
    """Keeps the module named by each "steps aside" line of the book's guards (``accelerate.search``)."""

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if " steps aside on Sphinx " in message:
            REPORT["stepped_aside"].append(message.removeprefix("slimebook: ").split(" steps aside")[0])


def main(argv: list[str]) -> int:
    out, args = Path(argv[0]), argv[1:]
    sys.meta_path.insert(0, _Finder())
    logging.getLogger(GUARD_LOGGER).addHandler(_StepAsideRecorder())
    _patch_sphinx()
    from sphinx.cmd.build import main as sphinx_main

    try:
        REPORT["status"] = sphinx_main(args)
    finally:
        REPORT["seconds"]["total"] = time.perf_counter() - STARTED
        REPORT["cpu"]["total"] = time.process_time()
        out.write_text(json.dumps(REPORT))
    return REPORT["status"]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
