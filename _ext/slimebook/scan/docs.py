"""Fenced Python code blocks in Markdown, scanned with their positions in the Markdown file.

Blocks: the fences the CommonMark parser MyST uses (markdown-it) finds, with their line maps, whose info
string's first word is ``python``, ``py``, ``python3`` or ``py3`` (a backtick fence's info may not hold a
backtick; an unclosed fence runs to the end of the document). Each content line is the parser's, which has the
fence's indentation (and a list item's or a block quote's prefix) removed; ``removed`` counts the characters taken
from the start of the Markdown line, so every position maps back.

Doc blocks are often not valid Python. Each block is tried, in order, until one parses:

1. as written (libcst's grammar already accepts a bare ``await``, ``async with``, ``async for``,
   ``return`` or ``yield`` at top level);
2. repaired: a ``def``/``class`` header without its colon gets ``:`` (and `` ...`` when no body
   follows), a header with a colon but no body gets `` ...``, a run of lines indented deeper than
   the statement before it (which does not open a block) is dedented, and a block indented as a
   whole is dedented;
3. wrapped in an ``async def`` (as written, then repaired), for fragments only valid in a body.

Repairs never add or remove lines and only append after the last token of a line or remove leading
whitespace, so every position maps back to the Markdown file; records inside the wrapper's own
``async def`` line are dropped. If no variant parses, the block is split into top-level chunks; the
chunks that parse (by the same steps) are scanned together, and each chunk that does not is scanned
by tokens (:func:`token_records`: async keywords, imports, dotted names resolved through the block's
imports, ``aiter``/``anext`` calls; provenance ``token_fallback``; scopes from ``def``/``class``
indentation).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import libcst as cst
from markdown_it import MarkdownIt

from ..lines import LINE_BREAK
from .categories import current_table
from .imports import import_target
from .records import RawRecord
from .visitor import STRING_PATTERN, FileScan, deep_recursion, scan_module

__all__ = [
    "Block", "Token", "fenced_python_blocks", "repair", "scan_block", "scan_markdown", "token_records", "tokenize",
]

_PYTHON_INFO = frozenset({"python", "py", "python3", "py3"})
_WRAPPER = "__slimebook_doc_block__"
_WRAP_HEADER = f"async def {_WRAPPER}():"
_WRAP_INDENT = "    "
_HEADER_KEYWORDS = frozenset({"def", "class"})
_CONTINUATION_KEYWORDS = frozenset({"else", "elif", "except", "finally"})


@dataclass(frozen=True)
class Block:
    """One fenced Python block.

    Attributes:
        first_line: the 1-based Markdown line of the block's first content line.
        lines: the content lines, fence indentation removed.
        removed: per content line, how many leading characters were removed.
    """

    first_line: int
    lines: tuple[str, ...]
    removed: tuple[int, ...]

    @property
    def code(self) -> str:
        """The block's source text, newline-terminated."""
        return "".join(line + "\n" for line in self.lines)


@functools.cache
def _markdown() -> MarkdownIt:
    return MarkdownIt("commonmark")


def fenced_python_blocks(text: str) -> list[Block]:
    """The fenced Python blocks of a Markdown text, in order (rules in the module docstring)."""
    lines = LINE_BREAK.split(text)
    if lines[-1] == "":
        lines.pop()  # the empty "line" after a final line break
    blocks: list[Block] = []
    for token in _markdown().parse("\n".join(lines)):
        words = token.info.split()
        if token.type != "fence" or token.map is None or not words or words[0].lower() not in _PYTHON_INFO:
            continue
        opening = token.map[0]
        indent = len(lines[opening]) - len(lines[opening].lstrip(" \t"))
        body, removed = [], []
        content = token.content.removesuffix("\n").split("\n") if token.content else []
        for raw, line in zip(lines[opening + 1 : opening + 1 + len(content)], content, strict=True):
            if not raw.endswith(line):  # a tab the parser expanded: cut the fence's indentation from the raw line
                strip = len(raw) - len(raw.lstrip(" \t"))
                line = raw[min(indent, strip):]
            body.append(line)
            removed.append(len(raw) - len(line))
        blocks.append(Block(opening + 2, tuple(body), tuple(removed)))
    return blocks


# -- a small tolerant tokenizer ---------------------------------------------------------------------
_TOKEN = re.compile(
    r"(?P<nl>\r\n|\r|\n)"
    r"|(?P<ws>[ \t\f]+)"
    r"|(?P<cont>\\(?:\r\n|\r|\n))"
    r"|(?P<comment>#[^\r\n]*)"
    rf"|(?P<string>{STRING_PATTERN})"
    r"|(?P<name>[^\W\d]\w*)"
    r"|(?P<number>\d[\w.]*)"
    r"|(?P<op>\.\.\.|->|:=|\*\*=?|//=?|<<=?|>>=?|[-+*/%@&|^<>!=]=|[-+*/%@&|^~<>()\[\]{},:;.=!])"
    r"|(?P<other>.)",
    re.DOTALL,
)


@dataclass(frozen=True, slots=True)
class Token:
    """A token: ``kind`` (a group name of the tokenizer), ``text``, 1-based ``line``, 0-based ``col``."""

    kind: str
    text: str
    line: int
    col: int

    @property
    def end(self) -> tuple[int, int]:
        """(line, col) just after the token."""
        parts = LINE_BREAK.split(self.text)
        if len(parts) == 1:
            return self.line, self.col + len(self.text)
        return self.line + len(parts) - 1, len(parts[-1])


def tokenize(text: str) -> list[Token]:
    """Tokens of a Python-like text; never fails (unknown characters are ``other`` tokens)."""
    tokens = []
    line, line_start = 1, 0
    for match in _TOKEN.finditer(text):
        kind = match.lastgroup or "other"
        value = match.group()
        tokens.append(Token(kind, value, line, match.start() - line_start))
        if kind in ("nl", "cont", "string", "comment") and ("\n" in value or "\r" in value):
            breaks = list(LINE_BREAK.finditer(value))
            line += len(breaks)
            line_start = match.start() + breaks[-1].end()
    return tokens


#: Keywords that cannot begin a continuation line inside brackets: a line starting with one
#: starts a new logical line even when a bracket was left open (broken code).
_STATEMENT_ONLY = frozenset({
    "def", "class", "import", "return", "raise", "try", "except", "finally", "while", "with", "elif",
    "del", "pass", "global", "nonlocal", "assert", "break", "continue",
})


def _logical_lines(tokens: list[Token]) -> list[list[Token]]:
    """Significant tokens grouped by logical line: newlines inside brackets do not end one, unless
    the next line starts with a statement-only keyword (an unclosed bracket in broken code)."""
    significant = [t for t in tokens if t.kind not in ("ws", "cont", "comment")]
    out: list[list[Token]] = []
    current: list[Token] = []
    depth = 0
    at_line_start = True
    for index, token in enumerate(significant):
        if token.kind == "nl":
            if depth == 0 and current:
                out.append(current)
                current = []
            at_line_start = True
            continue
        if at_line_start and depth > 0 and current:
            following = significant[index + 1].text if index + 1 < len(significant) else ""
            if token.text in _STATEMENT_ONLY or (token.text == "async" and following in ("def", "with")):
                out.append(current)
                current, depth = [], 0
        at_line_start = False
        if token.kind == "op":
            if token.text in "([{":
                depth += 1
            elif token.text in ")]}":
                depth = max(0, depth - 1)
        current.append(token)
    if current:
        out.append(current)
    return out


def _header_colon(line: list[Token]) -> bool:
    depth = 0
    for token in line:
        if token.kind == "op":
            if token.text in "([{":
                depth += 1
            elif token.text in ")]}":
                depth -= 1
            elif token.text == ":" and depth == 0:
                return True
    return False


def _is_header(line: list[Token]) -> bool:
    first = line[0].text
    return first in _HEADER_KEYWORDS or (first == "async" and len(line) > 1 and line[1].text == "def")


def repair(code: str) -> tuple[str, list[int]]:
    """Line-preserving repairs of a doc block (see module docstring).

    Args:
        code: the block text.
    Returns:
        ``(text, shifts)``: the repaired text (same number of lines) and, per 0-based line, how many
        leading characters were removed from it (add to a column to map it back).
    """
    lines = code.split("\n")
    shifts = [0] * len(lines)

    def dedent(first: int, last: int, amount: int) -> None:
        for index in range(first, min(last, len(lines))):
            line = lines[index]
            cut = min(amount, len(line) - len(line.lstrip(" \t")))
            lines[index] = line[cut:]
            shifts[index] += cut

    logical = _logical_lines(tokenize(code))
    if logical and logical[0][0].col > 0:
        dedent(0, len(lines), logical[0][0].col)
        logical = _logical_lines(tokenize("\n".join(lines)))
    index, budget = 1, len(lines)
    while index < len(logical):
        previous, current = logical[index - 1], logical[index]
        indent = current[0].col
        opens_block = previous[-1].text == ":" or _is_header(previous)
        if indent > previous[0].col and not opens_block and budget > 0:
            budget -= 1
            amount = indent - previous[0].col
            stop = index
            while stop < len(logical) and logical[stop][0].col >= indent:
                stop += 1
            last_line = logical[stop][0].line - 1 if stop < len(logical) else len(lines)
            dedent(current[0].line - 1, last_line, amount)
            logical = _logical_lines(tokenize("\n".join(lines)))
            continue
        index += 1
    for index, line in enumerate(logical):
        if not _is_header(line):
            continue
        following = logical[index + 1] if index + 1 < len(logical) else None
        has_body = following is not None and following[0].col > line[0].col
        last = line[-1]
        end_line, end_col = last.end
        if not _header_colon(line):
            insert = ":" if has_body else ": ..."
        elif last.text == ":" and not has_body:
            insert = " ..."
        else:
            continue
        text = lines[end_line - 1]
        lines[end_line - 1] = text[:end_col] + insert + text[end_col:]
    return "\n".join(lines), shifts


def _wrap(code: str) -> str:
    return _WRAP_HEADER + "\n" + "".join(_WRAP_INDENT + line + "\n" for line in code.split("\n"))


def _unwrap_scope(scope: str) -> str:
    if scope == _WRAPPER:
        return "<module>"
    return scope.removeprefix(_WRAPPER + ".")


def _parse_variants(code: str) -> tuple[cst.Module, str, bool, list[int], str] | None:
    """The first variant of ``code`` that parses: (module, its text, wrapped, shifts, status)."""
    repaired: tuple[str, list[int]] | None = None
    for step in range(4):
        wrapped = step >= 2
        if step % 2 == 0:
            text, shifts, status = code, [], "ok" if step == 0 else "repaired"
        else:
            if repaired is None:
                repaired = repair(code)
                if repaired[0] == code and not any(repaired[1]):
                    continue
            text, shifts, status = repaired[0], repaired[1], "repaired"
        source = _wrap(text) if wrapped else text
        try:
            return cst.parse_module(source), source, wrapped, shifts, status
        except (cst.ParserSyntaxError, RecursionError):
            continue
    return None


def _map_back(records: list[RawRecord], wrapped: bool, shifts: list[int]) -> list[RawRecord]:
    out = []
    for rec in records:
        line, col, end_line, end_col, scope = rec.line, rec.col, rec.end_line, rec.end_col, rec.scope
        if wrapped:
            if line == 1:
                continue  # the wrapper's own header
            line, end_line = line - 1, end_line - 1
            col, end_col = col - len(_WRAP_INDENT), end_col - len(_WRAP_INDENT)
            scope = _unwrap_scope(scope)
        if shifts:
            col += shifts[line - 1] if line - 1 < len(shifts) else 0
            end_col += shifts[end_line - 1] if end_line - 1 < len(shifts) else 0
        out.append(rec._replace(line=line, col=max(col, 0), end_line=end_line, end_col=max(end_col, 0), scope=scope))
    return out


def _chunks(code: str) -> list[tuple[int, int]]:
    """0-based [start, end) line ranges of the top-level statements of ``code``."""
    logical = _logical_lines(tokenize(code))
    n_lines = len(code.split("\n"))
    starts: list[int] = []
    previous_decorator = False
    for line in logical:
        if line[0].col != 0:
            continue
        if not starts or not (previous_decorator or line[0].text in _CONTINUATION_KEYWORDS):
            starts.append(line[0].line - 1)
        previous_decorator = line[0].text == "@"
    if not starts:
        return [(0, n_lines)]
    starts[0] = 0
    return [(start, starts[i + 1] if i + 1 < len(starts) else n_lines) for i, start in enumerate(starts)]


def scan_block(code: str) -> tuple[list[RawRecord], str]:
    """Scan one block's code.

    Returns:
        ``(records, status)``: raw records in block coordinates (``code`` fields are the block's
        lines) and ``ok`` | ``repaired`` | ``tokens``.
    """
    try:
        with deep_recursion():
            return _scan_block(code)
    except RecursionError:
        return _fill_code(token_records(code, {}), code), "tokens"


def _scan_block(code: str) -> tuple[list[RawRecord], str]:
    parsed = _parse_variants(code)
    if parsed is not None:
        module, text, wrapped, shifts, status = parsed
        records, _ = scan_module(module, text)
        return _fill_code(_map_back(records, wrapped, shifts), code), status
    lines = code.split("\n")
    good = list(lines)
    chunk_shifts = [0] * len(lines)
    failed: list[tuple[int, int]] = []
    wrap = False
    for start, end in _chunks(code):
        piece = _parse_variants("\n".join(lines[start:end]))
        if piece is None:
            failed.append((start, end))
            good[start:end] = [""] * (end - start)
            continue
        _, text, wrapped, shifts, _ = piece
        wrap = wrap or wrapped
        good[start:end] = (_unwrap_text(text) if wrapped else text).split("\n")[: end - start]
        for offset, shift in enumerate(shifts[: end - start]):
            chunk_shifts[start + offset] = shift
    records: list[RawRecord] = []
    imports: dict[str, str] = {}
    combined = "\n".join(good)
    for wrapped in (wrap, not wrap):
        source = _wrap(combined) if wrapped else combined
        try:
            module = cst.parse_module(source)
        except (cst.ParserSyntaxError, RecursionError):
            continue
        found, scope = scan_module(module, source)
        records = _map_back(found, wrapped, chunk_shifts)
        imports = {name: target for name in scope.bindings if (target := import_target(scope, name))}
        break
    else:
        failed = [(0, len(lines))]
        records = []
    for start, end in failed:
        records += token_records("\n".join(lines[start:end]), imports, line_offset=start)
    records.sort(key=lambda r: (r.line, r.col, r.end_line, r.end_col, r.kind, r.name))
    return _fill_code(records, code), "tokens" if failed else "repaired"


def _unwrap_text(text: str) -> str:
    body = text.split("\n")[1:]
    return "\n".join(line[len(_WRAP_INDENT):] for line in body)


def _fill_code(records: list[RawRecord], code: str) -> list[RawRecord]:
    """Set each record's ``code`` and clamp ends that fell into text added by a repair."""
    lines = code.split("\n")
    out = []
    for r in records:
        end_line = min(r.end_line, len(lines))
        end_col = min(r.end_col, len(lines[end_line - 1])) if end_line >= 1 else r.end_col
        out.append(r._replace(end_line=end_line, end_col=end_col,
                              code=lines[r.line - 1] if r.line - 1 < len(lines) else ""))
    return out


def token_records(text: str, imports: dict[str, str], line_offset: int = 0) -> list[RawRecord]:
    """Records found by tokens in text that does not parse (provenance ``token_fallback``).

    Args:
        text: the unparseable code.
        imports: bound name → qualified name, from the parsed rest of the block; the text's own
            ``import`` / ``from ... import`` lines are added.
        line_offset: added to every line number.
    Returns:
        Raw records (``code`` left empty for the caller to fill).
    """
    imports = dict(imports)
    out: list[RawRecord] = []
    stack: list[tuple[int, str, bool, int]] = []  # (indent, qualname, is_async, record index)

    def scope() -> str:
        return stack[-1][1] if stack else "<module>"

    def add(start: Token, end: Token, kind: str, name: str, category: str, where: str | None = None) -> None:
        end_line, end_col = end.end
        out.append(RawRecord(start.line + line_offset, start.col, end_line + line_offset, end_col, where or scope(),
                             kind, name, category, "token_fallback", ""))

    for line in _logical_lines(tokenize(text)):
        indent = line[0].col
        while stack and stack[-1][0] >= indent:
            stack.pop()
        texts = [t.text for t in line]
        if texts[0] == "import" or (texts[0] == "from" and "import" in texts):
            _token_imports(line, imports, add)
            continue
        index = 0
        while index < len(line):
            token = line[index]
            nxt = texts[index + 1] if index + 1 < len(line) else ""
            if token.text in ("def", "class") and index + 1 < len(line) and line[index + 1].kind == "name":
                is_async = index > 0 and texts[index - 1] == "async"
                parent = scope()
                qualname = line[index + 1].text if parent == "<module>" else f"{parent}.{line[index + 1].text}"
                if is_async:
                    add(line[index - 1], line[index + 1], "syntax", "async_def", "syntax", qualname)
                stack.append((indent, qualname, is_async, len(out) - 1))
                index += 2
                continue
            if token.text == "async" and nxt in ("with", "for"):
                name = ("async_with" if nxt == "with" else "async_for") if index == 0 else "async_comprehension"
                add(token, line[index + 1], "syntax", name, "syntax")
            elif token.text == "await":
                add(token, token, "syntax", "await", "syntax")
            elif token.text == "yield" and stack and stack[-1][2]:
                first = out[stack[-1][3]]
                if not any(r.name == "async_generator" and r.scope == stack[-1][1] for r in out):
                    out.append(first._replace(name="async_generator"))
            elif token.kind == "name" and (index == 0 or texts[index - 1] != "."):
                index = _token_name(line, texts, index, imports, add)
                continue
            index += 1
    return out


def _token_name(line: list[Token], texts: list[str], index: int, imports: dict[str, str], add) -> int:
    """The dotted name starting at ``line[index]``: recorded (through ``add``) when its first part is bound by
    ``imports`` to a tracked API, or when it is a called builtin. Returns the index of the token after it."""
    token = line[index]
    end = index
    while end + 2 < len(line) and texts[end + 1] == "." and line[end + 2].kind == "name":
        end += 2
    is_call = end + 1 < len(line) and texts[end + 1] == "("
    target = imports.get(token.text)
    if target is not None:
        qualname = ".".join([target, *texts[index + 2:end + 1:2]])
        category = current_table().category_of(qualname)
        if category is not None:
            add(token, line[end], "api_call" if is_call else "api_reference", qualname, category)
    elif end == index and token.text in current_table().builtins and is_call:
        add(token, token, "api_call", token.text, current_table().builtins[token.text])
    return end + 1


def _token_imports(line: list[Token], imports: dict[str, str], add) -> None:
    texts = [t.text for t in line]
    if texts[0] == "import":
        groups, module = _split_commas(line[1:]), ""
    else:
        at = texts.index("import")
        module = "".join(texts[1:at])
        groups = _split_commas([t for t in line[at + 1:] if t.text not in "()"])
        if module.startswith("."):
            return
    for group in groups:
        names = [t.text for t in group]
        if not names or names == ["*"]:
            continue
        if "as" in names:
            at = names.index("as")
            dotted, bound, end = "".join(names[:at]), names[at + 1] if at + 1 < len(names) else "", group[-1]
        else:
            dotted, end = "".join(names), group[-1]
            bound = dotted.split(".")[0] if not module else dotted
        qualname = f"{module}.{dotted}" if module else dotted
        if bound:
            imports[bound] = qualname if (module or "as" in names) else bound
        category = current_table().category_of(qualname)
        if category is not None:
            add(group[0], end, "import", qualname, category)


def _split_commas(tokens: list[Token]) -> list[list[Token]]:
    groups: list[list[Token]] = [[]]
    for token in tokens:
        if token.text == ",":
            groups.append([])
        else:
            groups[-1].append(token)
    return [g for g in groups if g]


def scan_markdown(data: bytes | str) -> FileScan:
    """Scan every fenced Python block of a Markdown file; positions are in the Markdown file.

    Args:
        data: the file's bytes (UTF-8, BOM allowed; undecodable bytes are replaced) or text.
    Returns:
        A :class:`~slimebook.scan.visitor.FileScan` whose ``status`` is the worst block status
        (``ok`` < ``repaired`` < ``tokens``) and ``blocks`` the number of Python blocks.
    """
    text = data.decode("utf-8-sig", "replace") if isinstance(data, bytes) else data.removeprefix("\ufeff")
    md_lines = LINE_BREAK.split(text)
    order = {"ok": 0, "repaired": 1, "tokens": 2}
    status = "ok"
    records: list[RawRecord] = []
    blocks = fenced_python_blocks(text)
    for block in blocks:
        found, block_status = scan_block(block.code)
        if order[block_status] > order[status]:
            status = block_status
        for rec in found:
            line, end_line = rec.line, rec.end_line
            col = rec.col + block.removed[line - 1] if line - 1 < len(block.removed) else rec.col
            end_col = rec.end_col + block.removed[end_line - 1] if end_line - 1 < len(block.removed) else rec.end_col
            md_line = block.first_line + line - 1
            records.append(rec._replace(line=md_line, col=col, end_line=block.first_line + end_line - 1,
                                        end_col=end_col,
                                        code=md_lines[md_line - 1] if md_line - 1 < len(md_lines) else ""))
    return FileScan(records=records, status=status, blocks=len(blocks))
