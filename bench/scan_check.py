"""Independent check of the usage scanner on the pinned tree, with the stdlib ``ast`` module.

Usage::

    .venv/bin/python bench/scan_check.py [--json out.json] [--lock sources/sources.toml] [--show N]

Without ``--json`` the scan is run (``slimebook.scan.scan_store``, cache allowed). The check
re-derives, with ``ast`` (the running interpreter's grammar) and its own simple alias resolution:

1. syntax records of every ``.py`` file: ``async_def``, ``async_generator`` (an ``async def`` whose
   own body, outside nested defs/lambdas/classes, holds a ``yield``), ``await``, ``async_with``,
   ``async_for`` with ast's spans, and ``async_comprehension`` spanning from the clause's ``async``
   keyword (the last ``async for`` before the target, since ast gives comprehensions no position)
   to the end of its iterable; compared span for span;
2. direct API records (``api_call`` / ``api_reference``) and ``import`` records of the modules
   asyncio, threading (and _thread), queue, concurrent.futures, multiprocessing, subprocess, signal,
   contextvars, fcntl, select (and selectors); compared span for span;
3. the same syntax comparison for doc blocks that ``ast.parse`` accepts as written.

Alias resolution here: a scope is a module, class, function, lambda or comprehension; a name is
bound in a scope by assignment targets, parameters, imports, def/class, for/with/except targets,
walrus (in the enclosing non-comprehension scope), ``del``, match captures; ``global`` sends it to
the module. A load looks outwards (skipping class scopes above the first); it resolves to an import
when every binding in the owning scope is an import of the same dotted name. Decorators, defaults,
annotations and class bases are evaluated in the enclosing scope. Columns are converted from ast's
UTF-8 byte offsets to characters. Exit status 0 when everything matches, 1 otherwise.
"""

from __future__ import annotations

import argparse
import ast
import bisect
import io
import json
import re
import sys
import tokenize
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "_ext"))

MODULES = {
    "asyncio": "asyncio", "threading": "threading", "_thread": "threading", "queue": "queue",
    "concurrent.futures": "executors", "multiprocessing": "multiprocessing", "subprocess": "subprocess",
    "signal": "signal", "contextvars": "contextvars", "fcntl": "fcntl", "select": "select",
    "selectors": "select",
}
CHECKED_CATEGORIES = set(MODULES.values())
SYNTAX = {"async_def", "async_generator", "await", "async_with", "async_for", "async_comprehension"}
NEWLINE = re.compile(r"\r\n|\r|\n")
ASYNC_FOR = re.compile(r"\basync(?:\s|\\)+for(?:\s|\\|\()*$")


def module_category(dotted: str) -> str | None:
    parts = dotted.split(".")
    for n in range(len(parts), 0, -1):
        category = MODULES.get(".".join(parts[:n]))
        if category:
            return category
    return None


class Columns:
    """Byte offset → character offset, per line."""

    def __init__(self, text: str) -> None:
        self.lines = NEWLINE.split(text)

    def __call__(self, line: int, byte_col: int) -> int:
        raw = self.lines[line - 1].encode("utf-8")
        return len(raw[:byte_col].decode("utf-8", "replace"))

    def span(self, node: ast.AST) -> tuple[int, int, int, int]:
        return (node.lineno, self(node.lineno, node.col_offset),
                node.end_lineno, self(node.end_lineno, node.end_col_offset))


# -- syntax ------------------------------------------------------------------------------------------
def _own_yield(func: ast.AsyncFunctionDef) -> bool:
    stack = list(func.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        stack.extend(ast.iter_child_nodes(node))
    return False


def expected_syntax(tree: ast.AST, text: str) -> Counter:
    cols = Columns(text)
    found: Counter = Counter()
    comprehensions = []
    for node in ast.walk(tree):
        if isinstance(node, ast.AsyncFunctionDef):
            found[("async_def", *cols.span(node))] += 1
            if _own_yield(node):
                found[("async_generator", *cols.span(node))] += 1
        elif isinstance(node, ast.Await):
            found[("await", *cols.span(node))] += 1
        elif isinstance(node, ast.AsyncWith):
            found[("async_with", *cols.span(node))] += 1
        elif isinstance(node, ast.AsyncFor):
            found[("async_for", *cols.span(node))] += 1
        elif isinstance(node, ast.comprehension) and node.is_async:
            comprehensions.append(node)
    starts = [0, *(m.end() for m in NEWLINE.finditer(text))]
    for node in comprehensions:
        # ast gives a comprehension no position: its ``async`` keyword is the last one before the target
        target = node.target
        keyword = ASYNC_FOR.search(text[:starts[target.lineno - 1] + cols(target.lineno, target.col_offset)])
        if keyword is None:
            found[("async_comprehension-keyword-not-found", target.lineno, 0, 0, 0)] += 1
            continue
        line = bisect.bisect_right(starts, keyword.start())
        end = cols.span(node.iter)
        found[("async_comprehension", line, keyword.start() - starts[line - 1], end[2], end[3])] += 1
    return found


# -- direct API ----------------------------------------------------------------------------------------
class Scope:
    def __init__(self, kind: str, parent: Scope | None) -> None:
        self.kind, self.parent = kind, parent
        self.bound: dict[str, list[str | None]] = {}  # name → import targets (None: not an import)
        self.globals: set[str] = set()

    def bind(self, name: str, target: str | None = None) -> None:
        scope = self
        if name in self.globals:
            while scope.parent is not None:
                scope = scope.parent
        scope.bound.setdefault(name, []).append(target)

    def resolve(self, name: str) -> str | None:
        scope, first = self, True
        while scope is not None:
            if (first or scope.kind != "class") and name in scope.bound:
                targets = scope.bound[name]
                if None in targets or len(set(targets)) != 1:
                    return None
                return targets[0]
            scope, first = scope.parent, False
        return None


class ApiCollector:
    """Two passes: bind names in scopes, then resolve the outermost Name/Attribute chains."""

    def __init__(self, text: str) -> None:
        self.cols = Columns(text)
        self.scopes: dict[int, Scope] = {}
        self.loads: list[tuple[ast.expr, Scope, bool]] = []
        self.imports: Counter = Counter()

    # pass 1 and 2 together: scopes are complete before any resolution happens (resolution is lazy)
    def run(self, tree: ast.Module) -> tuple[Counter, Counter]:
        module = Scope("module", None)
        self.visit_body(tree.body, module)
        api: Counter = Counter()
        for node, scope, is_call in self.loads:
            parts = []
            base = node
            while isinstance(base, ast.Attribute):
                parts.append(base.attr)
                base = base.value
            target = scope.resolve(base.id)
            if target is None:
                continue
            dotted = ".".join([target, *reversed(parts)])
            if module_category(dotted) is None:
                continue
            api[("api_call" if is_call else "api_reference", dotted, *self.cols.span(node))] += 1
        return api, self.imports

    def visit_body(self, body: list[ast.stmt], scope: Scope) -> None:
        for stmt in body:
            self.visit(stmt, scope)

    def bind_target(self, target: ast.expr, scope: Scope) -> None:
        if isinstance(target, ast.Name):
            scope.bind(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self.bind_target(element, scope)
        elif isinstance(target, ast.Starred):
            self.bind_target(target.value, scope)
        else:
            self.visit(target, scope)

    def function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, scope: Scope, kind: str) -> None:
        args = node.args
        for default in [*args.defaults, *(d for d in args.kw_defaults if d is not None)]:
            self.visit(default, scope)
        inner = Scope(kind, scope)
        for arg in [*args.posonlyargs, *args.args, args.vararg, *args.kwonlyargs, args.kwarg]:
            if arg is None:
                continue
            if arg.annotation is not None:
                self.visit(arg.annotation, scope)
            inner.bind(arg.arg)
        if isinstance(node, ast.Lambda):
            self.visit(node.body, inner)
            return
        for decorator in node.decorator_list:
            self.visit(decorator, scope)
        if node.returns is not None:
            self.visit(node.returns, scope)
        scope.bind(node.name)
        for param in getattr(node, "type_params", []):
            inner.bind(param.name)
        self.visit_body(node.body, inner)

    def comprehension(self, node: ast.expr, scope: Scope, elements: list[ast.expr]) -> None:
        inner = Scope("comprehension", scope)
        for index, generator in enumerate(node.generators):
            self.visit(generator.iter, scope if index == 0 else inner)
            self.bind_target(generator.target, inner)
            for cond in generator.ifs:
                self.visit(cond, inner)
        for element in elements:
            self.visit(element, inner)

    def visit(self, node: ast.AST, scope: Scope, is_call: bool = False) -> None:  # noqa: C901
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.function(node, scope, "function")
        elif isinstance(node, ast.Lambda):
            self.function(node, scope, "lambda")
        elif isinstance(node, ast.ClassDef):
            for decorator in node.decorator_list:
                self.visit(decorator, scope)
            for base in [*node.bases, *(k.value for k in node.keywords)]:
                self.visit(base, scope)
            scope.bind(node.name)
            inner = Scope("class", scope)
            for param in getattr(node, "type_params", []):
                inner.bind(param.name)
            self.visit_body(node.body, inner)
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
            self.comprehension(node, scope, [node.elt])
        elif isinstance(node, ast.DictComp):
            self.comprehension(node, scope, [node.key, node.value])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    scope.bind(alias.asname, alias.name)
                else:
                    head = alias.name.split(".")[0]
                    scope.bind(head, head)
                if module_category(alias.name):
                    self.imports[("import", alias.name, *self.cols.span(alias))] += 1
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            for alias in node.names:
                if alias.name == "*":
                    if node.level == 0 and module_category(module):
                        self.imports[("import", f"{module}.*", *self.cols.span(node))] += 1
                    continue
                dotted = f"{module}.{alias.name}"
                scope.bind(alias.asname or alias.name, dotted)
                if node.level == 0 and module_category(dotted):
                    self.imports[("import", dotted, *self.cols.span(alias))] += 1
        elif isinstance(node, ast.Global):
            scope.globals.update(node.names)
        elif isinstance(node, ast.Assign):
            self.visit(node.value, scope)
            for target in node.targets:
                self.bind_target(target, scope)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            if isinstance(node, ast.AnnAssign):
                self.visit(node.annotation, scope)
            if node.value is not None:
                self.visit(node.value, scope)
            self.bind_target(node.target, scope)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            self.visit(node.iter, scope)
            self.bind_target(node.target, scope)
            self.visit_body(node.body + node.orelse, scope)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                self.visit(item.context_expr, scope)
                if item.optional_vars is not None:
                    self.bind_target(item.optional_vars, scope)
            self.visit_body(node.body, scope)
        elif isinstance(node, ast.ExceptHandler):
            if node.type is not None:
                self.visit(node.type, scope)
            if node.name:
                scope.bind(node.name)
            self.visit_body(node.body, scope)
        elif isinstance(node, ast.NamedExpr):
            self.visit(node.value, scope)
            owner = scope
            while owner.kind == "comprehension":
                owner = owner.parent
            owner.bind(node.target.id)
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                self.bind_target(target, scope)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)):
            if getattr(node, "pattern", None) is not None:
                self.visit(node.pattern, scope)
            if node.name:
                scope.bind(node.name)
        elif isinstance(node, ast.MatchMapping):
            for key in node.keys:
                self.visit(key, scope)
            for pattern in node.patterns:
                self.visit(pattern, scope)
            if node.rest:
                scope.bind(node.rest)
        elif isinstance(node, ast.Call):
            self.visit(node.func, scope, is_call=True)
            for arg in [*node.args, *(k.value for k in node.keywords)]:
                self.visit(arg, scope)
        elif isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load):
            base = node
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name):
                self.loads.append((node, scope, is_call))
            else:
                self.visit(base, scope)
        elif isinstance(node, ast.Attribute):  # store / del context: the object is a load
            self.visit(node.value, scope)
        else:
            for child in ast.iter_child_nodes(node):
                self.visit(child, scope)


# -- doc blocks ------------------------------------------------------------------------------------------
FENCE = re.compile(r"^([ \t]*)(`{3,}|~{3,})[ \t]*(python|py|python3|py3)\b.*$", re.IGNORECASE)


def doc_blocks(text: str):
    lines = NEWLINE.split(text)
    i = 0
    while i < len(lines):
        m = re.match(r"^([ \t]*)(`{3,}|~{3,})(.*)$", lines[i])
        if not m:
            i += 1
            continue
        indent, fence = len(m.group(1)), m.group(2)
        j = i + 1
        while j < len(lines) and not re.match(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", lines[j]):
            j += 1
        if FENCE.match(lines[i]):
            body = [line[min(indent, len(line) - len(line.lstrip(" \t"))):] for line in lines[i + 1:j]]
            cut = [min(indent, len(line) - len(line.lstrip(" \t"))) for line in lines[i + 1:j]]
            yield i + 2, "\n".join(body) + "\n", cut
        i = j + 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="output of `slimebook scan --json` (default: scan now)")
    parser.add_argument("--lock", type=Path, default=ROOT / "sources" / "sources.toml")
    parser.add_argument("--show", type=int, default=15, help="differences to print per check")
    args = parser.parse_args(argv)

    from slimebook.lock import load_lock
    from slimebook.store import SourceStore

    store = SourceStore(load_lock(args.lock))
    store.require()
    if args.json:
        records = json.loads(args.json.read_text(encoding="utf-8"))["records"]
    else:
        from slimebook.scan import scan_store
        records = [r.as_dict() for r in scan_store(store).records]

    scanned_syntax, scanned_api, scanned_imports, scanned_doc_syntax = Counter(), Counter(), Counter(), Counter()
    for r in records:
        key = (r["path"], r["name"], r["line"], r["col"], r["end_line"], r["end_col"])
        if r["kind"] == "syntax":
            (scanned_syntax if r["source"] == "code" else scanned_doc_syntax)[key] += 1
        elif r["source"] == "code" and r["category"] in CHECKED_CATEGORIES:
            if r["kind"] in ("api_call", "api_reference"):
                scanned_api[(r["path"], r["kind"], *key[1:])] += 1
            elif r["kind"] == "import":
                scanned_imports[key] += 1

    want_syntax, want_api, want_imports, want_doc_syntax = Counter(), Counter(), Counter(), Counter()
    skipped = []
    py_files = store.files(".py")
    for path in py_files:
        data = store.read_bytes(path)
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(encoding)
        try:
            tree = ast.parse(text, filename=path)
        except SyntaxError as exc:
            skipped.append(f"{path}: {exc.msg} (line {exc.lineno})")
            continue
        for key, n in expected_syntax(tree, text).items():
            want_syntax[(path, *key)] += n
        api, imports = ApiCollector(text).run(tree)
        for key, n in api.items():
            want_api[(path, *key)] += n
        for key, n in imports.items():
            want_imports[(path, *key[1:])] += n
    checked_ranges: list[tuple[str, int, int]] = []
    for path in store.files(".md"):
        text = store.read_bytes(path).decode("utf-8-sig", "replace")
        for first_line, code, cut in doc_blocks(text):
            try:
                tree = ast.parse(code)
            except SyntaxError:
                continue
            checked_ranges.append((path, first_line, first_line + len(cut)))
            for (name, line, col, end_line, end_col), n in expected_syntax(tree, code).items():
                want_doc_syntax[(path, name, first_line + line - 1, col + cut[line - 1],
                                 first_line + end_line - 1, end_col + cut[end_line - 1])] += n
    skipped_paths = {s.split(":")[0] for s in skipped}
    for counter in (scanned_syntax, scanned_api, scanned_imports):
        for key in [k for k in counter if k[0] in skipped_paths]:
            del counter[key]
    scanned_doc_checked = Counter({
        k: v for k, v in scanned_doc_syntax.items()
        if any(k[0] == path and start <= k[2] < end for path, start, end in checked_ranges)
    })
    checked_blocks = len(checked_ranges)

    failures = 0
    print(f"files: {len(py_files)} .py ({len(skipped)} not parseable by ast {sys.version.split()[0]}), "
          f"{checked_blocks} doc blocks parseable by ast")
    for line in skipped:
        print(f"  skipped {line}")
    for title, want, got in (
        ("syntax (code)", want_syntax, scanned_syntax),
        ("direct API (code)", want_api, scanned_api),
        ("imports (code)", want_imports, scanned_imports),
        ("syntax (doc blocks parseable as written)", want_doc_syntax, scanned_doc_checked),
    ):
        missing, extra = want - got, got - want
        status = "OK" if not missing and not extra else "MISMATCH"
        failures += status != "OK"
        print(f"{title}: ast {sum(want.values())}, scanner {sum(got.values())}: {status}")
        if title.startswith("syntax") or title.startswith("imports"):
            print("  " + ", ".join(f"{k} {v}" for k, v in sorted(Counter(k[1] for k in want.elements()).items())))
        else:
            kinds = Counter(k[1] for k in want.elements())
            names = {k[2] for k in want}
            print(f"  {', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))}; {len(names)} distinct names")
        for label, diff in (("missing from scan", missing), ("extra in scan", extra)):
            for key in sorted(diff)[: args.show]:
                print(f"  {label}: {key}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
