"""The token fallback: records found by tokens in doc-block code that no variant makes parse.

Pipeline position: the last resort of :mod:`.docs` for a fenced block (after as written, repaired and wrapped, and
after splitting the block into top-level chunks), reading the tolerant tokens of :mod:`.tokens`. It records async
keywords, imports, dotted names resolved through the block's imports and called builtins (``aiter``/``anext``),
with provenance ``token_fallback`` and scopes from ``def``/``class`` indentation.
"""

from __future__ import annotations

from .categories import current_table
from .records import RawRecord
from .tokens import Token, logical_lines, tokenize

__all__ = ["token_records"]


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
    scan = _TokenScan(imports, line_offset)
    for line in logical_lines(tokenize(text)):
        scan.logical_line(line)
    return scan.out


class _TokenScan:
    """One token scan: the records so far, the imports known, and the ``def``/``class`` scopes open at this point."""

    def __init__(self, imports: dict[str, str], line_offset: int) -> None:
        self.imports = dict(imports)
        self.line_offset = line_offset
        self.out: list[RawRecord] = []
        self.stack: list[tuple[int, str, bool, int]] = []  # (indent, qualname, is_async, record index)

    def scope(self) -> str:
        """The qualified name of the innermost open scope, ``<module>`` outside any."""
        return self.stack[-1][1] if self.stack else "<module>"

    def add(self, start: Token, end: Token, kind: str, name: str, category: str, where: str | None = None) -> None:
        """Record ``name`` from ``start`` to the end of ``end``, in the scope ``where`` or the innermost open one."""
        end_line, end_col = end.end
        self.out.append(RawRecord(start.line + self.line_offset, start.col, end_line + self.line_offset, end_col,
                                  where or self.scope(), kind, name, category, "token_fallback", ""))

    def logical_line(self, line: list[Token]) -> None:
        """Close the scopes ``line``'s indentation leaves, then record its import or what its tokens hold."""
        indent = line[0].col
        while self.stack and self.stack[-1][0] >= indent:
            self.stack.pop()
        texts = [t.text for t in line]
        if texts[0] == "import" or (texts[0] == "from" and "import" in texts):
            _token_imports(line, self.imports, self.add)
            return
        index = 0
        while index < len(line):
            index = self._token(line, texts, index)

    def _token(self, line: list[Token], texts: list[str], index: int) -> int:
        """Record what starts at ``line[index]`` (a scope, async syntax, an async generator's ``yield``, a dotted
        name); return the index of the next token to look at."""
        token = line[index]
        nxt = texts[index + 1] if index + 1 < len(line) else ""
        if token.text in ("def", "class") and index + 1 < len(line) and line[index + 1].kind == "name":
            self._open_scope(line, texts, index)
            return index + 2
        if token.text == "async" and nxt in ("with", "for"):
            name = ("async_with" if nxt == "with" else "async_for") if index == 0 else "async_comprehension"
            self.add(token, line[index + 1], "syntax", name, "syntax")
        elif token.text == "await":
            self.add(token, token, "syntax", "await", "syntax")
        elif token.text == "yield" and self.stack and self.stack[-1][2]:
            self._async_generator()
        elif token.kind == "name" and (index == 0 or texts[index - 1] != "."):
            return _token_name(line, texts, index, self.imports, self.add)
        return index + 1

    def _open_scope(self, line: list[Token], texts: list[str], index: int) -> None:
        """Open the scope of the ``def``/``class`` at ``line[index]``, recording ``async_def`` for an ``async def``."""
        is_async = index > 0 and texts[index - 1] == "async"
        parent = self.scope()
        qualname = line[index + 1].text if parent == "<module>" else f"{parent}.{line[index + 1].text}"
        if is_async:
            self.add(line[index - 1], line[index + 1], "syntax", "async_def", "syntax", qualname)
        self.stack.append((line[0].col, qualname, is_async, len(self.out) - 1))

    def _async_generator(self) -> None:
        """Record the innermost open ``async def`` once as an ``async_generator`` (a copy of its ``async_def``)."""
        first = self.out[self.stack[-1][3]]
        if not any(r.name == "async_generator" and r.scope == self.stack[-1][1] for r in self.out):
            self.out.append(first._replace(name="async_generator"))


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
    """Bind the names an ``import`` / ``from ... import`` logical ``line`` binds in ``imports`` (relative imports
    aside), and record (through ``add``) each import of a tracked name."""
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
    """``tokens`` split at commas, empty groups left out."""
    groups: list[list[Token]] = [[]]
    for token in tokens:
        if token.text == ",":
            groups.append([])
        else:
            groups[-1].append(token)
    return [g for g in groups if g]

