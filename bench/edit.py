"""Edit-loop benchmark: every chapter's incremental rebuild against the floor, measured in one run.

The **floor** of a chapter is a fresh build of a one-page book holding that chapter's text, with the book's own
directives (``slime-source``, ``usage-index``, … every ``add_directive`` of ``slimebook.sphinxext``, and
``toctree``) turned into plain ``text`` code fences and the book's roles (``{slime}``, ``{usage}``, …) and the
cross-document ones (``{ref}``, ``{doc}``, ``{term}``, ``{numref}``: their targets are not in a one-page book) turned
into inline code. Its ``conf.py`` runs the book's ``conf.py`` and keeps everything but the ``slimebook`` extension
and what belongs to it: the same theme (furo), the same MyST, sphinx-design, mermaid, copybutton and intersphinx
settings, the same Chinese search (jieba, with the book's dictionary) and the same ``setup``. It is what any Sphinx
book with this chapter costs; the ratio says what the book's own machinery adds.

Steps, all on a copy of the book in a temporary directory (without _build, .venv, .git, tests, caches), each build a
``sphinx-build`` process run through ``bench/buildprobe.py``, serial as ``make html``:

1. a full build of the copy (the machine's warm caches are used, as ``make html`` would; its libcst parses are
   printed: more than zero means a cache was cold);
2. for every chapter, ``--repeat`` times in turn: the floor build, then touch the chapter in the copy and rebuild
   the book incrementally (interleaved, so a slow spell of a shared machine weighs on both; of each side the
   build with the least CPU counts). Printed per chapter: both wall times, their ratio (target for the heaviest
   chapter, the one with the largest HTML page, ≤ 1.2), the CPU ratio, the documents re-read, the libcst parses
   (target 0: a warm incremental build parses nothing) and the seconds spent in generated pages
   (``html-collect-pages``);
3. ``make livehtml`` on the heaviest chapter (``bench/livehtml.py``): edit → served beside the floor, one rebuild,
   one document re-read.

``--accelerate off`` rebuilds the book with ``-D slimebook_accelerate=0`` (Sphinx's stock behaviour,
:mod:`slimebook.sphinxext.accelerate`); ``both`` keeps two builds of the copy (``_build`` accelerated,
``_build/stock`` stock) and rebuilds each after every floor build, in the same run, so that the table and the summary
give the accelerated and the stock figures side by side. The targets apply to the accelerated build, and only
when no accelerator stepped aside in it (the probe reports each one's info line, which ``-q`` hides; a missed target
"accelerators stepped aside" otherwise).

Timing is reported, never asserted; ``--strict`` makes the exit status 1 when a target is missed. The pinned Slime
sources must be in the cache (``make sources``).

    .venv/bin/python bench/edit.py [--chapters 'chapters/guide/*'] [--repeat 2] [--no-livehtml] [--strict]
                                   [--accelerate on|off|both]
"""

from __future__ import annotations

import argparse
import ast
import fnmatch
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from bookcopy import copy_book  # bench/ is the script directory, so first on sys.path

ROOT = Path(__file__).resolve().parent.parent
PROBE = Path(__file__).with_name("buildprobe.py")
#: roles and directives whose targets are other documents: not in a one-page book
CROSS_DOCUMENT_ROLES = {"ref", "doc", "term", "numref"}
CROSS_DOCUMENT_DIRECTIVES = {"toctree"}
#: the book's conf.py values the floor does not take: the extension's own, and what names other documents
NOT_IN_FLOOR = {"extensions", "exclude_patterns", "html_sidebars", "root_doc", "nitpicky", "setup",
                "html_static_path"}
TARGET = 1.2
#: ``--accelerate`` → the modes rebuilt: True is the accelerated build (the default), False the stock one
MODES = {"on": (True,), "off": (False,), "both": (True, False)}

FLOOR_CONF = '''\
"""The floor book: the book's conf.py without the slimebook extension (written by bench/edit.py)."""
import os
import runpy
import types

_book = runpy.run_path({conf!r})
for _name, _value in _book.items():
    if (_name.startswith("_") or _name.startswith("slimebook_") or _name.startswith("latex_")
            or _name in {skip!r} or isinstance(_value, types.ModuleType) or callable(_value)):
        continue
    globals()[_name] = _value
extensions = [name for name in _book["extensions"] if name != "slimebook"]
html_static_path = [p if os.path.isabs(p) else os.path.join({root!r}, p) for p in _book["html_static_path"]]
root_doc = "index"


def setup(app):
    return _book["setup"](app)
'''


def registered_names() -> tuple[set[str], set[str]]:
    """The directive and role names ``slimebook.sphinxext`` registers: its ``app.add_directive``/``add_role`` calls
    with a literal name, and the citation names the book's ``slimebook_source`` gives (``slime-source``, ``{slime}``,
    ``{slimenum}``), registered under a computed name."""
    from slimebook.book import read_book

    names = read_book(ROOT).names
    directives: set[str] = {names.directive}
    roles: set[str] = {names.role, names.number_role}
    for path in sorted((ROOT / "_ext" / "slimebook" / "sphinxext").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args
                    and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                if node.func.attr == "add_directive":
                    directives.add(node.args[0].value)
                elif node.func.attr in ("add_role", "add_generic_role"):
                    roles.add(node.args[0].value)
    return directives, roles


def floor_text(text: str, directives: set[str], roles: set[str]) -> str:
    """``text`` with the fences of ``directives`` turned into ``text`` fences and ``roles`` into inline code."""
    names = "|".join(re.escape(name) for name in sorted(directives, key=len, reverse=True))
    fence = re.compile(rf"^([ \t>]*)(`{{3,}}|~{{3,}})\{{(?:{names})\}}.*$", re.M)
    text = fence.sub(lambda m: f"{m[1]}{m[2]}text", text)
    names = "|".join(re.escape(name) for name in sorted(roles, key=len, reverse=True))
    role = re.compile(rf"\{{(?:{names})\}}(`+)(.+?)\1")
    return role.sub(lambda m: f"{m[1]}{m[2]}{m[1]}", text)


@dataclass
class Build:
    """One probed build: wall and CPU seconds (this process's children), and the probe's report."""

    wall: float
    cpu: float
    report: dict = field(default_factory=dict)
    page_bytes: int = 0  # the edited chapter's HTML page (book builds only)

    @property
    def parses(self) -> int:
        return self.report["libcst"]["parses"]

    @property
    def pages(self) -> float:
        return self.report["seconds"].get("pages", 0.0)

    @property
    def pages_cpu(self) -> float:
        return self.report["cpu"].get("pages", 0.0)

    @property
    def stepped_aside(self) -> list[str]:
        """The book's accelerators and fixes that stepped aside in this build (``accelerate.search``; the probe's
        ``stepped_aside``): such a build is partly Sphinx's stock behaviour."""
        return self.report.get("stepped_aside", [])


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def probed_build(args: list[str], report: Path) -> Build:
    """Run ``sphinx-build args`` under the probe; raise with its output when it fails."""
    report.unlink(missing_ok=True)
    cpu, start = _children_cpu(), time.monotonic()
    proc = subprocess.run([sys.executable, str(PROBE), str(report), *args], capture_output=True, text=True,
                          env={**os.environ, "NO_COLOR": "1"})
    wall, cpu = time.monotonic() - start, _children_cpu() - cpu
    if proc.returncode != 0:
        raise RuntimeError(f"build failed ({' '.join(args)}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return Build(wall, cpu, json.loads(report.read_text()))


def best(builds: list[Build]) -> Build:
    """Of repeated builds, the one with the least CPU (the least disturbed by other load)."""
    return min(builds, key=lambda b: b.cpu)


class Bench:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.book = tmp / "book"
        self.floor = tmp / "floor"
        self.report = tmp / "report.json"
        copy_book(self.book)
        (self.floor / "src").mkdir(parents=True)
        (self.floor / "src" / "conf.py").write_text(FLOOR_CONF.format(
            conf=str(self.book / "conf.py"), root=str(self.book), skip=sorted(NOT_IN_FLOOR)), encoding="utf-8")
        directives, roles = registered_names()
        self.directives = directives | CROSS_DOCUMENT_DIRECTIVES
        self.roles = roles | CROSS_DOCUMENT_ROLES

    def book_build(self, accelerate: bool = True) -> Build:
        """A build of the copy into ``_build`` (accelerated) or ``_build/stock`` (``-D slimebook_accelerate=0``;
        inside ``_build``, which the book's ``exclude_patterns`` leave out)."""
        out = (self.book / "_build" if accelerate else self.book / "_build" / "stock")
        switch = [] if accelerate else ["-D", "slimebook_accelerate=0"]
        return probed_build([*switch, "-q", "-b", "html", "-d", str(out / "doctrees"), str(self.book),
                             str(out / "html")], self.report)

    def floor_build(self, chapter: str) -> Build:
        for stale in ("html", "doctrees"):
            shutil.rmtree(self.floor / stale, ignore_errors=True)
        text = (self.book / chapter).read_text(encoding="utf-8")
        (self.floor / "src" / "index.md").write_text(floor_text(text, self.directives, self.roles), encoding="utf-8")
        return probed_build(["-q", "-b", "html", "-d", str(self.floor / "doctrees"), str(self.floor / "src"),
                             str(self.floor / "html")], self.report)

    def page_bytes(self, chapter: str, accelerate: bool = True) -> int:
        """Size in bytes of the chapter's HTML page in the book's build (the accelerated or the stock one)."""
        out = (self.book / "_build" if accelerate else self.book / "_build" / "stock")
        return (out / "html" / Path(chapter).with_suffix(".html")).stat().st_size

    def touch(self, chapter: str) -> None:
        """Mark the chapter changed for the next incremental build of each build directory (touched once, so that
        with ``--accelerate both`` each of the two builds re-reads this chapter only)."""
        os.utime(self.book / chapter)


def chapters(patterns: list[str]) -> list[str]:
    found = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "chapters").rglob("*.md") if "examples" not in p.parts)
    return [c for c in found if any(fnmatch.fnmatch(c, pattern) for pattern in patterns)]


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f}, {os.cpu_count()} cores"


def _label(accelerate: bool) -> str:
    return "accelerated" if accelerate else "stock"


def _summary(rows: list[tuple[str, Build, dict[bool, Build]]], mode: bool, heaviest: str) -> tuple[float, int]:
    """Print the heaviest chapter's figures and the worst ratios of one mode; return the heaviest chapter's ratio
    and the libcst parses of all rebuilds."""
    floor, book = next((f, b[mode]) for c, f, b in rows if c == heaviest)
    ratio = book.wall / floor.wall
    seconds = book.report["seconds"]
    tag = f"[{_label(mode)}]"
    print(f"  {tag:<14} incremental rebuild  : {book.wall:6.2f} s  (cpu {book.cpu:.2f} s; in the build: init "
          f"{seconds.get('init', 0):.2f}, read {seconds.get('read', 0):.2f}, write {seconds.get('write', 0):.2f}, "
          f"finish {seconds.get('finish', 0):.2f} of which generated pages {book.pages:.2f}; jieba "
          f"{book.report['jieba']['seconds']:.2f})")
    without, without_cpu = book.wall - book.pages, book.cpu - book.pages_cpu
    print(f"  {tag:<14} without generated pages: {without:6.2f} s  ({without / floor.wall:.2f}× the floor; cpu "
          f"{without_cpu:.2f} s, {without_cpu / floor.cpu:.2f}×: the rebuild apart from html-collect-pages)")
    target = f"target ≤ {TARGET}; " if mode else ""
    print(f"  {tag:<14} ratio                : {ratio:6.2f}   ({target}cpu ratio {book.cpu / floor.cpu:.2f})")
    worst = max(rows, key=lambda r: r[2][mode].wall / r[1].wall)
    worst_cpu = max(rows, key=lambda r: r[2][mode].cpu / r[1].cpu)
    cpu_ratios = sorted(b[mode].cpu / f.cpu for _, f, b in rows)
    print(f"  {tag:<14} worst ratio          : {worst[2][mode].wall / worst[1].wall:6.2f}   ({worst[0]}); worst cpu "
          f"ratio {worst_cpu[2][mode].cpu / worst_cpu[1].cpu:.2f} ({worst_cpu[0]}); median cpu ratio "
          f"{cpu_ratios[len(cpu_ratios) // 2]:.2f}")
    parses = sum(b[mode].parses for _, _, b in rows)
    print(f"  {tag:<14} libcst parses        : {parses:6d}   (warm incremental, target 0, over {len(rows)} rebuilds)")
    print(f"  {tag:<14} jieba loads per build: book {max(b[mode].report['jieba']['loads'] for _, _, b in rows)}, "
          f"floor {max(f.report['jieba']['loads'] for _, f, _ in rows)}   (target ≤ 1)")
    return ratio, parses


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chapters", nargs="+", default=["*"], help="glob patterns of chapters (default: all)")
    parser.add_argument("--repeat", type=int, default=1, help="builds per measurement; the least CPU counts")
    parser.add_argument("--no-livehtml", action="store_true", help="skip the make livehtml measurement")
    parser.add_argument("--livehtml-chapter", help="the chapter to edit under make livehtml (default: the heaviest)")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--keep", action="store_true", help="keep the temporary copies")
    parser.add_argument("--accelerate", choices=sorted(MODES), default="on",
                        help="rebuild the book with the accelerators on (default), off (-D slimebook_accelerate=0), "
                             "or both in the same run, side by side")
    args = parser.parse_args(argv)
    todo = chapters(args.chapters)
    if not todo:
        parser.error(f"no chapter matches {args.chapters}")
    modes = MODES[args.accelerate]

    print(f"bench: {_load()} at start; {' and '.join(_label(m) for m in modes)}", flush=True)
    tmp = Path(tempfile.mkdtemp(prefix="slimebook-edit-"))
    rows: list[tuple[str, Build, dict[bool, Build]]] = []
    try:
        bench = Bench(tmp)
        for mode in modes:
            full = bench.book_build(mode)
            print(f"full build, {_label(mode):<11} (fresh doctrees): {full.wall:6.1f} s  libcst parses {full.parses}"
                  f"  jieba loads {full.report['jieba']['loads']}", flush=True)
        columns = " ".join(f"{_label(m)[:5] + ' s':>9} {'ratio':>6}" for m in modes)
        print(f"{'chapter':44} {'floor s':>7} {columns} {'cpu ratio':>9} {'re-read':>7} {'parses':>6} "
              f"{'pages s':>7}", flush=True)
        for chapter in todo:
            floors: list[Build] = []
            books: dict[bool, list[Build]] = {mode: [] for mode in modes}
            for _ in range(args.repeat):  # interleaved, so a slow spell of the machine weighs on every side
                floors.append(bench.floor_build(chapter))
                bench.touch(chapter)
                for mode in modes:
                    books[mode].append(bench.book_build(mode))
            floor = best(floors)
            book = {mode: best(builds) for mode, builds in books.items()}
            first = book[modes[0]]
            first.page_bytes = bench.page_bytes(chapter, modes[0])
            rows.append((chapter, floor, book))
            cells = " ".join(f"{book[m].wall:9.2f} {book[m].wall / floor.wall:6.2f}" for m in modes)
            print(f"{chapter:44} {floor.wall:7.2f} {cells} {first.cpu / floor.cpu:9.2f} {len(first.report['read']):7d} "
                  f"{first.parses:6d} {first.pages:7.2f}", flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            print(f"kept {tmp}")

    # the heaviest chapter is the one with the largest page: a fixed property of the chapter, where choosing by
    # measured time would choose the most disturbed measurement
    chapter, floor, book = max(rows, key=lambda row: row[2][modes[0]].page_bytes)
    print()
    print(f"heaviest chapter (largest page)      : {chapter} ({book[modes[0]].page_bytes / 1000:.0f} kB of HTML)")
    print(f"  floor (one-page book, fresh build) : {floor.wall:6.2f} s  (cpu {floor.cpu:.2f} s; jieba "
          f"{floor.report['jieba']['seconds']:.2f} s)")
    results = {mode: _summary(rows, mode, chapter) for mode in modes}
    if len(modes) == 2:
        on, off = book[True], book[False]
        per_chapter = sorted(b[True].wall / b[False].wall for _, _, b in rows)
        print(f"  accelerated / stock rebuild        : {on.wall / off.wall:6.2f}   (heaviest chapter, wall; cpu "
              f"{on.cpu / off.cpu:.2f}); median over chapters {per_chapter[len(per_chapter) // 2]:.2f}")
    missed: list[str] = []
    if True in modes:  # the targets are the accelerated build's
        ratio, parses = results[True]
        missed = [name for name, ok in (("ratio", ratio <= TARGET), ("parses", parses == 0)) if not ok]
        aside = sorted({name for _, _, b in rows for name in b[True].stepped_aside})
        if aside:  # the figures above are then not the accelerated build's
            print(f"  [accelerated]  stepped aside        : {', '.join(aside)} (the rebuilds ran partly stock)")
            missed.append("accelerators stepped aside")

    if not args.no_livehtml and True in modes:
        sys.path.insert(0, str(Path(__file__).parent))
        import livehtml

        edited = args.livehtml_chapter or chapter
        live_floor = next((f for c, f, _ in rows if c == edited), None) or bench.floor_build(edited)
        live = livehtml.measure(edited, quiet=5.0)
        print(f"make livehtml, edit {edited}")
        print(f"  edit → served                      : {live.served:6.2f} s  ({live.served / live_floor.wall:.2f}× "
              f"the floor; rebuild {live.rebuild:.2f} s; initial build {live.full:.1f} s)")
        print(f"  documents re-read                  : {len(live.reread):6d}   {', '.join(live.reread)}")
        print(f"  rebuilds                           : {live.rebuilds:6d}")
        missed += [name for name, ok in (("livehtml re-read", live.reread == [edited.removesuffix('.md')]),
                                         ("livehtml rebuilds", live.rebuilds == 1)) if not ok]
    print(f"bench: {_load()} at end")
    if True not in modes:
        print("targets: they are the accelerated build's (run with --accelerate on or both)")
    else:
        print(f"targets missed: {', '.join(missed)}" if missed else "all targets met")
    return 1 if args.strict and missed else 0


if __name__ == "__main__":
    sys.exit(main())
