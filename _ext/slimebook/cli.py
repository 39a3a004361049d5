"""``slimebook`` command line: ``sources fetch | verify | show | grep | diff | repin`` and ``scan``.

Every command works on a book: the directory given with ``--book``, else the nearest directory from the working
directory upward that holds ``conf.py``. Its ``conf.py`` is read as the build reads it (:mod:`slimebook.book`), so
the lock (``slimebook_lock``), the source name (``slimebook_source``: which lock table, and the citation names
``<name>-source`` and ``{<name>}``) and the fetch command an error names are the build's; ``--lock`` and
``--source`` override them. ``verify``, ``diff`` and ``repin`` read the book's documents (the build's source files)
unless files or directories are named. Outside a book the defaults apply (``sources/sources.toml``, ``slime``) and
those three need the files named.

Exit codes: 0 success; 1 a check found problems (verify), citations are left for the writer (diff, repin),
or nothing matched (grep, as ``git grep``); 2 usage, book, lock or store errors, and no citation found where
``verify``, ``diff`` or ``repin`` looked (the message says where it looked and for which names).
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
from .book import CONF_FILE, Book, BookError, find_book, read_book
from .citations import BOOK_SUFFIXES, CitationFileError, book_files, find_citations
from .excerpt import ExcerptError, read_excerpt
from .lock import DEFAULT_LOCK, LockError, load_lock, update_lock_file
from .names import DEFAULT_FETCH_COMMAND, DEFAULT_SOURCE, SourceNames
from .pyranges import SymbolError
from .rangecache import blob_definitions
from .store import SourceError, SourceStore


@dataclasses.dataclass(frozen=True)
class Context:
    """What a command works with: the book (None outside one) and the settings resolved from it and the flags.

    Attributes:
        book: the book read from its ``conf.py``, or None when no ``--book`` was given and no directory from the
            working directory upward holds ``conf.py``.
        lock: the lock file (``--lock``, else the book's ``slimebook_lock``, else ``sources/sources.toml``).
        names: the source names (``--source``, else the book's ``slimebook_source``, else ``slime``).
        fetch_command: the command a missing pin's error names (the book's, else ``slimebook sources fetch``).
        categories: the scanner's categories file (``--categories``, else the book's ``slimebook_scan_categories``);
            None for the default table.
    """

    book: Book | None
    lock: Path
    names: SourceNames
    fetch_command: str
    categories: Path | None = None


def resolve_context(args: argparse.Namespace) -> Context:
    """The book and settings of a command line (see :class:`Context`).

    Raises:
        BookError: ``--book`` holds no ``conf.py``, the book's ``conf.py`` fails, or the source name is not valid.
    """
    confdir = args.book if args.book is not None else find_book(Path("."))
    book = read_book(confdir) if confdir is not None else None
    if book is not None:
        lock, source, fetch_command = book.lock, book.settings["slimebook_source"], book.fetch_command
    else:
        lock, source, fetch_command = Path(DEFAULT_LOCK), DEFAULT_SOURCE, DEFAULT_FETCH_COMMAND
    source = args.source or source
    try:
        names = SourceNames(source)
    except ValueError as exc:
        where = "--source" if args.source else (f"{book.confdir / CONF_FILE}: slimebook_source" if book else "")
        raise BookError(f"{where}: {exc}") from exc
    categories = getattr(args, "categories", None) or (book.categories if book is not None else None)
    return Context(book, args.lock or lock, names, fetch_command, categories)


def _store(args: argparse.Namespace) -> SourceStore:
    """The store of the context's lock.

    Raises:
        BookError: outside any book, no ``--lock`` given and no ``sources/sources.toml`` in the working directory.
        LockError: the lock is missing, not valid, or has no table of the source name.
    """
    ctx: Context = args.context
    if ctx.book is None and args.lock is None and not ctx.lock.is_file():
        raise BookError(f"no {CONF_FILE} in {Path('.').resolve()} or any directory above it, and no {ctx.lock} "
                        "here: run inside a book, or give --book DIR or --lock LOCK")
    return SourceStore(load_lock(ctx.lock, ctx.names.source), fetch_command=ctx.fetch_command)


class NoCitationsError(Exception):
    """``verify``, ``diff`` or ``repin`` found no citation; ``str()`` says where it looked and for which names."""


def _documents(args: argparse.Namespace) -> tuple[list[Path], str]:
    """The files ``verify``/``diff``/``repin`` read and a description of where they are: the named files and
    directories, else the book's documents.

    Raises:
        BookError: no files were named and there is no book.
    """
    ctx: Context = args.context
    if args.paths:
        suffixes = ", ".join(BOOK_SUFFIXES)
        return book_files(args.paths), f"the {suffixes} files of {', '.join(map(str, args.paths))}"
    if ctx.book is None:
        raise BookError(f"no {CONF_FILE} in {Path('.').resolve()} or any directory above it: run inside a book, "
                        "give --book DIR, or name the files to read")
    return ctx.book.documents(), ctx.book.describe_search()


def _no_citations(args: argparse.Namespace, files: list[Path], where: str) -> NoCitationsError:
    names: SourceNames = args.context.names
    return NoCitationsError(f"no citations found: looked for {names.describe()} in {len(files)} "
                            f"file{'' if len(files) == 1 else 's'}, {where}")


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


def _count(number: int, noun: str) -> str:
    """``number`` and ``noun``, plural unless one: ``"1 file"``, ``"2 files"``."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"

def cmd_verify(args: argparse.Namespace) -> int:
    names: SourceNames = args.context.names
    files, where = _documents(args)
    citations = [citation for file in files for citation in find_citations(file, names)]
    if not citations:
        raise _no_citations(args, files, where)
    store = _store(args)
    store.require()
    failed = 0
    for citation in citations:
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
    print(f"{_count(len(citations), 'citation')} in {_count(len(files), 'file')} checked at {store.lock.short}: "
          f"{failed} failed")
    print(f"(only {names.directive} and {{{names.role}}} are checked here; {{ref}} labels and other "
          "cross-references are checked by the build)")
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
    ``start-end  kind  qualified.name``, in source order (the names ``:pyobject:`` and the citation role accept)."""
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
def _citation_sources(args: argparse.Namespace, files: list[Path]) -> list[drift.CitationSource]:
    """Where ``diff``/``repin`` find citations: the book's directives and roles in ``files``, and, when the command
    works on the whole book (no paths named), the lines its candidate notes name (:func:`drift.note_citations`).

    Hook: the usage scanner's occurrence ids join here as one more :data:`drift.CitationSource`.
    """
    sources: list[drift.CitationSource] = [lambda: drift.book_citations(files, args.context.names)]
    book = args.context.book
    if book is not None and not args.paths:
        sources.append(lambda: drift.note_citations(book.candidate_notes))
    return sources


def _drift_report(args: argparse.Namespace, from_rev: str | None, to_rev: str):
    """Resolve and fetch both commits, then check every citation; returns (lock, old, new, drifts).

    Raises:
        NoCitationsError: there is no citation to follow.
    """
    ctx: Context = args.context
    files, where = _documents(args)
    book_source, *others = _citation_sources(args, files)
    cited = list(book_source())
    if not cited:  # the candidate notes alone follow no chapter: nothing the book cites with these names
        raise _no_citations(args, files, where)
    cited += [c for source in others for c in source()]
    lock = load_lock(ctx.lock, ctx.names.source)
    old_sha = drift.resolve_commit(lock, from_rev) if from_rev else lock.commit
    new_sha = drift.resolve_commit(lock, to_rev)
    old, new = (SourceStore(dataclasses.replace(lock, commit=sha), fetch_command=ctx.fetch_command)
                for sha in (old_sha, new_sha))
    for store in (old, new):
        store.fetch()
    checker = drift.DriftChecker(old, new)
    drifts = checker.check_all(cited)
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
    results = drift.apply_edits(edits, args.context.names) if args.write else [(e, None) for e in edits]
    for edit, problem in results:
        if problem:
            problems += 1
            print(f"{edit.file}:{edit.line}: not rewritten: {problem}")
        else:
            print(f"{verb}rewrite {edit.describe()}")
    lock_file = args.context.lock
    if new.lock.commit == lock.commit:
        print(f"{verb}leave {lock_file} as is: already pinned at {lock.commit}")
    else:
        print(f"{verb}set {lock_file} [{lock.name}] commit = {new.lock.commit}, previous_commit = {lock.commit}")
        if args.write:
            update_lock_file(lock_file, lock.name, new.lock.commit, lock.commit)
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
        table = load_categories(args.context.categories)  # the build's reader of slimebook_scan_categories
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


_PATHS_HELP = "files or directories to read instead of the book's documents"


def build_parser() -> argparse.ArgumentParser:
    """The argparse tree of the ``slimebook`` command."""
    parser = argparse.ArgumentParser(prog="slimebook", description=__doc__.splitlines()[0])
    parser.add_argument("--book", type=Path, metavar="DIR",
                        help="the book: the directory holding its conf.py (default: the nearest one from the "
                             "working directory upward); its settings are the build's")
    parser.add_argument("--lock", type=Path, help=f"source lock (default: the book's slimebook_lock, outside a "
                                                  f"book {DEFAULT_LOCK})")
    parser.add_argument("--source", help=f"the source name: its table in the lock and the citation names "
                                         f"<name>-source, {{<name>}} (default: the book's slimebook_source, outside "
                                         f"a book {DEFAULT_SOURCE})")
    top = parser.add_subparsers(dest="group", required=True)
    _add_sources_commands(top.add_parser("sources", help="the pinned source store"))
    _add_scan_command(top)
    return parser


def _add_sources_commands(sources: argparse.ArgumentParser) -> None:
    """``slimebook sources fetch | verify | grep | show | diff | repin``."""
    sub = sources.add_subparsers(dest="command", required=True)
    sub.add_parser("fetch", help="fetch the pinned commit into the cache (no-op when present)").set_defaults(
        func=cmd_fetch)
    verify = sub.add_parser("verify", help="check that every citation of the book resolves at the pin")
    verify.add_argument("paths", nargs="*", type=Path, metavar="PATH", help=_PATHS_HELP)
    verify.set_defaults(func=cmd_verify)
    grep = sub.add_parser("grep", help="print the pin's lines matching PATTERN (git grep -E at the pin) as "
                                       "path:line: text; the search behind an only/all/never sentence")
    grep.add_argument("pattern", metavar="PATTERN", help="extended regular expression (or a string with -F)")
    grep.add_argument("pathspecs", nargs="*", metavar="PATHSPEC", help="git pathspecs: src/ '*.py' ':!tests'")
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
    diff.add_argument("paths", nargs="*", type=Path, metavar="PATH", help=_PATHS_HELP)
    diff.set_defaults(func=cmd_diff)
    repin = sub.add_parser("repin", help="move the pin: rewrite moved citations, list the rest")
    repin.add_argument("commit", metavar="SHA", help="the new pin (abbreviations are resolved)")
    repin.add_argument("--write", action="store_true", help="update the lock and the chapter files")
    repin.add_argument("paths", nargs="*", type=Path, metavar="PATH", help=_PATHS_HELP)
    repin.set_defaults(func=cmd_repin)


def _positive_int(text: str) -> int:
    """argparse type of a count of workers: an integer of at least 1 (``--jobs 0`` would mean no worker)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not a number of workers (1 or more; leave it out for all "
                                         "cores)")
    return value


def _add_scan_command(top: argparse._SubParsersAction) -> None:
    """``slimebook scan``."""
    scan = top.add_parser("scan", help="scan the pinned sources for concurrency APIs and async syntax")
    scan.add_argument("--json", type=Path, metavar="PATH", help="write the scan as JSON ('-': stdout)")
    scan.add_argument("--tsv", type=Path, metavar="PATH", help="write the records as TSV ('-': stdout)")
    scan.add_argument("--stats", action="store_true",
                      help="print counts by kind and category, files, distinct API names, errors "
                           "(the default when no output is asked for)")
    scan.add_argument("--jobs", type=_positive_int, default=None, metavar="N",
                      help="worker processes for files not in the cache (default: all cores)")
    scan.add_argument("--no-cache", action="store_true", help="neither read nor write the scan cache")
    scan.add_argument("--categories", type=Path, metavar="FILE",
                      help="the category table, a TOML categories file (default: the one the book's "
                           "slimebook_scan_categories names, else the standard library's concurrency APIs)")
    scan.set_defaults(func=cmd_scan)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (see module docstring)."""
    args = build_parser().parse_args(argv)
    try:
        args.context = resolve_context(args)
        return args.func(args)
    except (BookError, CitationFileError, LockError, NoCitationsError, SourceError) as exc:
        print(f"slimebook: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `slimebook sources show … | head`: the reader left; not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
