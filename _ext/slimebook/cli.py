"""``slimebook`` command line: ``sources fetch | verify | show`` (and, as they land, ``scan``).

Exit codes: 0 success; 1 a check found problems (verify); 2 usage, lock or store errors.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from .citations import find_citations
from .excerpt import ExcerptError, read_excerpt
from .lock import LockError, load_lock
from .store import SourceError, SourceStore

DEFAULT_LOCK = Path("sources/sources.toml")


def _store(args: argparse.Namespace) -> SourceStore:
    return SourceStore(load_lock(args.lock, args.source))


def cmd_fetch(args: argparse.Namespace) -> int:
    store = _store(args)
    fetched = store.fetch()
    state = "fetched" if fetched else "already present"
    print(f"{store.lock.name}@{store.lock.commit}: {state} in {store.git_dir}")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    store = _store(args)
    store.require()
    files = sorted(
        p for root in args.paths for p in ([root] if root.is_file() else root.rglob("*"))
        if p.suffix in (".md", ".rst")
    )
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
                    error = str(exc)
            if error:
                failed += 1
                print(f"{citation.file}:{citation.line}: {citation.kind} {citation.path}: {error}")
    print(f"{total} citations in {len(files)} files checked at {store.lock.short}: {failed} failed")
    return 1 if failed else 0


def cmd_show(args: argparse.Namespace) -> int:
    store = _store(args)
    path, _, spec = args.target.partition(":")
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
    show = sub.add_parser("show", help="print PATH[:LINES] at the pin with line numbers")
    show.add_argument("target", metavar="PATH[:LINES]")
    show.set_defaults(func=cmd_show)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (see module docstring)."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (LockError, SourceError) as exc:
        print(f"slimebook: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
