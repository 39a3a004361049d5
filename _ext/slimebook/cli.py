"""``slimebook`` command line: ``sources fetch | verify | show | grep | diff | repin`` and ``scan``.

Exit codes: 0 success; 1 a check found problems (verify), citations are left for the writer (diff, repin),
or nothing matched (grep, as ``git grep``); 2 usage, lock or store errors.
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import os
import shutil
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TextIO

from . import drift
from .atomicio import atomic_write
from .citations import book_files, find_citations
from .excerpt import ExcerptError, read_excerpt
from .lock import LockError, load_lock, update_lock_file
from .pyranges import SymbolError
from .rangecache import blob_definitions
from .store import SourceError, SourceStore

DEFAULT_LOCK = Path("sources/sources.toml")


def _store(args: argparse.Namespace) -> SourceStore:
    return SourceStore(load_lock(args.lock, args.source))


def tty_progress(label: str, stream: TextIO | None = None) -> Callable[[Iterable[str], int], Iterator[str]] | None:
    """A progress display for a long step of the command line, or None when ``stream`` (default: standard error) is
    not a terminal, so logs and pipes stay quiet.

    The display is one line, rewritten in place for each item: ``label [12/433] slime/utils/http_utils.py``, cut to
    the terminal's width, and erased when the items end. It has the shape
    :func:`slimebook.scan.scan_items` takes as ``progress``: ``display(items, count)`` yields every item of ``items``.
    """
    out = stream or sys.stderr
    if not out.isatty():
        return None

    def display(items: Iterable[str], count: int) -> Iterator[str]:
        width = max(shutil.get_terminal_size().columns - 1, 20)
        try:
            for done, item in enumerate(items, 1):
                out.write("\r\x1b[2K" + f"{label} [{done}/{count}] {item}"[:width])
                out.flush()
                yield item
        finally:
            out.write("\r\x1b[2K")
            out.flush()

    return display


def cmd_fetch(args: argparse.Namespace) -> int:
    store = _store(args)
    fetched = store.fetch(progress=sys.stderr if sys.stderr.isatty() else None)  # git's own progress, on a terminal
    state = "fetched" if fetched else "already present"
    print(f"{store.lock.name}@{store.lock.commit}: {state} in {store.git_dir}")
    return 0


def _without_path(exc: ExcerptError) -> str:
    """The error of a citation without its path (``verify`` prints the path once, before it)."""
    return " ".join(part for part in (exc.option, exc.reason.replace(f"{exc.path!r} ", "", 1)) if part)


def cmd_verify(args: argparse.Namespace) -> int:
    store = _store(args)
    store.require()
    files = book_files(args.paths)
    total = failed = 0
    for file in files:
        for citation in find_citations(file):
            total += 1
            error = citation.error
            if error is None:
                try:
                    read_excerpt(
                        store, citation.path,
                        lines=citation.options.get("lines"),
                        pyobject=citation.options.get("pyobject"),
                        emphasize=citation.options.get("emphasize-lines"),
                    )
                except ExcerptError as exc:
                    error = _without_path(exc)
            if error:
                failed += 1
                print(f"{citation.file}:{citation.line}: {citation.kind} {citation.path}: {error}")
    print(f"{total} citations in {len(files)} files checked at {store.lock.short}: {failed} failed")
    print("(only slime-source and {slime} are checked here; {ref} labels and other cross-references are checked by "
          "the build: make html)")
    return 1 if failed else 0


def cmd_show(args: argparse.Namespace) -> int:
    store = _store(args)
    path, _, spec = args.target.partition(":")
    if args.symbols:
        return _show_symbols(store, path, spec)
    try:
        excerpt = read_excerpt(store, path, lines=spec or None)
    except ExcerptError as exc:
        print(f"slimebook: {exc}", file=sys.stderr)
        return 2
    print(f"# {excerpt.path} · {excerpt.label()} · {store.lock.short}")
    width = len(str(excerpt.end))
    for (start, _end), lines in zip(excerpt.runs, excerpt.texts, strict=True):
        for offset, line in enumerate(lines):
            print(f"{start + offset:>{width}}  {line}")
    return 0


def cmd_grep(args: argparse.Namespace) -> int:
    """``sources grep PATTERN [PATHSPEC…]``: the pin's matching lines as ``path:line: text``, then a count."""
    store = _store(args)
    matches = store.grep(args.pattern, args.pathspecs, ignore_case=args.ignore_case, fixed=args.fixed_strings,
                         word=args.word_regexp)
    for match in matches:
        print(f"{match.path}:{match.line}: {match.text}")
    where = " ".join(args.pathspecs) or "every file"
    print(f"# {len(matches)} line{'' if len(matches) == 1 else 's'} in {len({m.path for m in matches})} file(s) "
          f"match {args.pattern!r} at {store.lock.name}@{store.lock.short} ({where})", file=sys.stderr)
    return 0 if matches else 1


def _show_symbols(store: SourceStore, path: str, spec: str) -> int:
    """``show PATH --symbols``: every class and function of a Python file at the pin, one per line:
    ``start-end  kind  qualified.name``, in source order (the names ``:pyobject:`` and ``{slime}`` accept)."""
    if spec:
        print("slimebook: --symbols takes a path without lines", file=sys.stderr)
        return 2
    try:
        real = store.resolve(path)
        defs = blob_definitions(store.root, store.blob_id(real), store.read_text(real))
    except SourceError as exc:  # the message quotes the path
        print(f"slimebook: {exc}", file=sys.stderr)
        return 2
    except SymbolError as exc:
        print(f"slimebook: {path}: {exc}", file=sys.stderr)
        return 2
    print(f"# {real} · {len(defs)} definitions · {store.lock.short}")
    width = max((len(f"{d.start}-{d.end}") for d in defs), default=0)
    for d in defs:
        print(f"{f'{d.start}-{d.end}':<{width}}  {d.kind:<8}  {d.qualname}")
    return 0


# -- sources diff / repin (issue 7) ---------------------------------------------------------------
def _citation_sources(args: argparse.Namespace) -> list[drift.CitationSource]:
    """Where ``diff``/``repin`` find citations: the book's directives and roles.

    Hook: the usage scanner's occurrence ids join here as one more :data:`drift.CitationSource`.
    """
    return [lambda: drift.book_citations(args.paths)]


def _drift_report(args: argparse.Namespace, from_rev: str | None, to_rev: str):
    """Resolve and fetch both commits, then check every citation; returns (lock, old, new, drifts)."""
    lock = load_lock(args.lock, args.source)
    old_sha = drift.resolve_commit(lock, from_rev) if from_rev else lock.commit
    new_sha = drift.resolve_commit(lock, to_rev)
    old, new = (SourceStore(dataclasses.replace(lock, commit=sha)) for sha in (old_sha, new_sha))
    for store in (old, new):
        store.fetch()
    checker = drift.DriftChecker(old, new)
    drifts = checker.check_all(c for source in _citation_sources(args) for c in source())
    return lock, old, new, drifts


def _print_drifts(drifts: list[drift.Drift], old: SourceStore, new: SourceStore, brief: bool) -> None:
    for d in drifts:
        print(f"{d.cited.where}: {d.cited.kind} {d.cited.describe()}: {d.summary()}")
        if d.status is drift.Status.CHANGED and not brief:
            for line in d.diff().splitlines():
                print(f"    {line}")
    counts = ", ".join(f"{n} {status}" for status, n in drift.summarize(drifts).items())
    print(f"{len(drifts)} citations, {old.lock.short} → {new.lock.short}: {counts}")


def cmd_diff(args: argparse.Namespace) -> int:
    _lock, old, new, drifts = _drift_report(args, args.from_rev, args.to_rev)
    _print_drifts(drifts, old, new, args.brief)
    return 1 if drift.needs_writer(drifts) else 0


def cmd_repin(args: argparse.Namespace) -> int:
    lock, old, new, drifts = _drift_report(args, None, args.commit)
    _print_drifts(drifts, old, new, brief=True)
    verb = "" if args.write else "would "
    problems = 0
    edits = drift.plan_edits(drifts)
    results = drift.apply_edits(edits) if args.write else [(e, None) for e in edits]
    for edit, problem in results:
        if problem:
            problems += 1
            print(f"{edit.file}:{edit.line}: not rewritten: {problem}")
        else:
            print(f"{verb}rewrite {edit.describe()}")
    if new.lock.commit == lock.commit:
        print(f"{verb}leave {args.lock} as is: already pinned at {lock.commit}")
    else:
        print(f"{verb}set {args.lock} [{lock.name}] commit = {new.lock.commit}, previous_commit = {lock.commit}")
        if args.write:
            update_lock_file(args.lock, lock.name, new.lock.commit, lock.commit)
    left = drift.needs_writer(drifts)
    for d in left:
        print(f"{d.cited.where}: needs the writer: {d.status}: {d.cited.describe()}")
    print(f"{len(edits) - problems} rewrites {'done' if args.write else 'planned'}, "
          f"{len(left) + problems} citations left for the writer")
    return 1 if left or problems else 0


# -- scan (issue 8) ---------------------------------------------------------------------------------
def cmd_scan(args: argparse.Namespace) -> int:
    from .scan import CategoryError, format_stats, load_categories, scan_store, write_json, write_tsv

    try:
        table = load_categories(args.categories)  # the reader the build uses for slimebook_scan_categories
    except CategoryError as exc:
        print(f"slimebook: {exc}", file=sys.stderr)
        return 2
    store = _store(args)
    store.require()
    result = scan_store(store, jobs=args.jobs, cache=not args.no_cache, progress=tty_progress("scanning"),
                        table=table)
    to_stdout = False
    for path, writer in ((args.json, write_json), (args.tsv, write_tsv)):
        if path is None:
            continue
        if str(path) == "-":
            to_stdout = True
            writer(result, sys.stdout)
            continue
        if not path.parent.is_dir():
            print(f"slimebook: cannot write {path}: {path.parent} is not a directory", file=sys.stderr)
            return 2
        buffer = io.StringIO()
        writer(result, buffer)
        try:
            atomic_write(path, buffer.getvalue())
        except OSError as exc:
            print(f"slimebook: cannot write {path}: {exc.strerror}", file=sys.stderr)
            return 2
    if args.stats or (args.json is None and args.tsv is None):
        print(format_stats(result, table), file=sys.stderr if to_stdout else sys.stdout)
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argparse tree of the ``slimebook`` command."""
    parser = argparse.ArgumentParser(prog="slimebook", description=__doc__.splitlines()[0])
    parser.add_argument("--lock", type=Path, default=DEFAULT_LOCK, help="source lock (default: %(default)s)")
    parser.add_argument("--source", default="slime", help="entry in the lock (default: %(default)s)")
    top = parser.add_subparsers(dest="group", required=True)
    sources = top.add_parser("sources", help="the pinned source store")
    sub = sources.add_subparsers(dest="command", required=True)
    sub.add_parser("fetch", help="fetch the pinned commit into the cache (no-op when present)").set_defaults(
        func=cmd_fetch)
    verify = sub.add_parser("verify", help="check that every citation under chapters/ resolves at the pin")
    verify.add_argument("paths", nargs="*", default=[Path("chapters"), Path("index.md")], type=Path)
    verify.set_defaults(func=cmd_verify)
    grep = sub.add_parser("grep", help="print the pin's lines matching PATTERN (git grep -E at the pin) as "
                                       "path:line: text; the search behind an only/all/never sentence")
    grep.add_argument("pattern", metavar="PATTERN", help="extended regular expression (or a string with -F)")
    grep.add_argument("pathspecs", nargs="*", metavar="PATHSPEC", help="git pathspecs: slime/ '*.py' ':!tests'")
    grep.add_argument("-i", "--ignore-case", action="store_true")
    grep.add_argument("-F", "--fixed-strings", action="store_true")
    grep.add_argument("-w", "--word-regexp", action="store_true")
    grep.set_defaults(func=cmd_grep)
    show = sub.add_parser("show", help="print PATH[:LINES] at the pin with line numbers")
    show.add_argument("target", metavar="PATH[:LINES]")
    show.add_argument("--symbols", action="store_true",
                      help="list the file's classes and functions with their line ranges (the names :pyobject: takes)")
    show.set_defaults(func=cmd_show)
    diff = sub.add_parser("diff", help="what every citation becomes at another commit")
    diff.add_argument("--to", dest="to_rev", required=True, metavar="SHA", help="commit to compare with")
    diff.add_argument("--from", dest="from_rev", metavar="SHA", help="commit the citations hold at "
                      "(default: the lock's pin)")
    diff.add_argument("--brief", action="store_true", help="no diffs of changed citations")
    diff.add_argument("paths", nargs="*", default=[Path("chapters"), Path("index.md")], type=Path)
    diff.set_defaults(func=cmd_diff)
    repin = sub.add_parser("repin", help="move the pin: rewrite moved citations, list the rest")
    repin.add_argument("commit", metavar="SHA", help="the new pin (abbreviations are resolved)")
    repin.add_argument("--write", action="store_true", help="update the lock and the chapter files")
    repin.add_argument("paths", nargs="*", default=[Path("chapters"), Path("index.md")], type=Path)
    repin.set_defaults(func=cmd_repin)
    scan = top.add_parser("scan", help="scan the pinned sources for concurrency APIs and async syntax")
    scan.add_argument("--json", type=Path, metavar="PATH", help="write the scan as JSON ('-': stdout)")
    scan.add_argument("--tsv", type=Path, metavar="PATH", help="write the records as TSV ('-': stdout)")
    scan.add_argument("--stats", action="store_true",
                      help="print counts by kind and category, files, distinct API names, errors "
                           "(the default when no output is asked for)")
    scan.add_argument("--jobs", type=int, default=None, metavar="N",
                      help="worker processes for files not in the cache (default: all cores)")
    scan.add_argument("--no-cache", action="store_true", help="neither read nor write the scan cache")
    scan.add_argument("--categories", type=Path, metavar="FILE",
                      help="the category table (a TOML categories file, as the book's slimebook_scan_categories "
                           "names it; default: the standard library's concurrency APIs)")
    scan.set_defaults(func=cmd_scan)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (see module docstring)."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (LockError, SourceError) as exc:
        print(f"slimebook: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `slimebook sources show … | head`: the reader left; not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
