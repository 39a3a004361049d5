"""Positions of selected libcst nodes, paid for once per file.

libcst nodes carry no positions; its ``PositionProvider`` computes one for every node of the module
(about twice the parse time on the pinned tree). This module runs libcst's own code generation once
with a :class:`~libcst._nodes.internal.CodegenState` that only notes *token indexes* for the few
nodes asked for, then turns token indexes into character offsets (one ``accumulate``) and offsets
into (line, column) pairs (one ``bisect``). The meaning is that of ``PositionProvider``: a node's
*syntactic* span excludes its parentheses and surrounding whitespace; a compound statement ends
with the last token of its body; a node libcst does not position syntactically gets its
whitespace-inclusive span. Nodes asked for in *inclusive* mode always get the whitespace-inclusive
span (``WhitespaceInclusivePositionProvider``), used for ``Asynchronous`` in a comprehension.

If the regenerated text ever differed from the source, positions fall back to libcst's
``PositionProvider`` for that file (correct, slower).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from itertools import accumulate

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst.metadata import MetadataWrapper, PositionProvider, WhitespaceInclusivePositionProvider

from ..lines import LINE_BREAK, line_starts

__all__ = ["LINE_BREAK", "Span", "line_starts", "node_spans"]


#: (line, col, end_line, end_col): lines 1-based, columns 0-based characters, end exclusive.
Span = tuple[int, int, int, int]


def _is_trivia(token: str) -> bool:
    stripped = token.strip()
    return not stripped or stripped.startswith("#") or stripped == "\\"


class _SpanState(CodegenState):
    """Codegen state that records token indexes for nodes whose ``id`` it was given."""

    def __init__(self, module: cst.Module, syntactic: set[int], inclusive: set[int]) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.syntactic = syntactic
        self.inclusive = inclusive
        self.spans: dict[int, tuple[int, int]] = {}
        self.open: dict[int, int] = {}

    def before_codegen(self, node: cst.CSTNode) -> None:
        key = id(node)
        if key in self.inclusive or key in self.syntactic:
            self.open[key] = len(self.tokens)

    def after_codegen(self, node: cst.CSTNode) -> None:
        # as PositionProvider: a node that recorded no syntactic span gets its inclusive one
        key = id(node)
        start = self.open.pop(key, None)
        if start is not None and (key in self.inclusive or key not in self.spans):
            self.spans[key] = (start, len(self.tokens))

    @contextmanager
    def record_syntactic_position(
        self, node: cst.CSTNode, *, start_node: cst.CSTNode | None = None,
        end_node: cst.CSTNode | None = None,
    ) -> Iterator[None]:
        key = id(node)
        if key not in self.syntactic:
            yield
            return
        start = len(self.tokens)
        yield
        end = len(self.tokens)
        if end_node is not None or start_node is not None:
            tokens = self.tokens
            while end > start and _is_trivia(tokens[end - 1]):
                end -= 1
            while start < end and _is_trivia(tokens[start]):
                start += 1
        self.spans[key] = (start, end)


def _to_span(starts: list[int], begin: int, end: int) -> Span:
    line = bisect_right(starts, begin)
    end_line = bisect_right(starts, end)
    return line, begin - starts[line - 1], end_line, end - starts[end_line - 1]


def node_spans(
    module: cst.Module, text: str, syntactic: Iterable[cst.CSTNode], inclusive: Iterable[cst.CSTNode] = (),
) -> dict[int, Span]:
    """Spans of the given nodes of ``module``, keyed by ``id(node)``.

    Args:
        module: the parsed module; ``text`` must be the exact source it was parsed from.
        syntactic: nodes positioned like ``PositionProvider`` (without parentheses/whitespace).
        inclusive: nodes positioned like ``WhitespaceInclusivePositionProvider``.
    Returns:
        ``{id(node): (line, col, end_line, end_col)}`` for every node asked for and found.
    """
    syn = {id(n) for n in syntactic}
    inc = {id(n) for n in inclusive}
    if not syn and not inc:
        return {}
    state = _SpanState(module, syn, inc)
    module._codegen(state)
    tokens = state.tokens
    if sum(map(len, tokens)) != len(text) or "".join(tokens) != text:
        return _fallback_spans(module, syntactic, inclusive)
    offsets = [0, *accumulate(map(len, tokens))]
    last = len(offsets) - 1  # indexes past it point into the trailing newline libcst popped
    starts = line_starts(text)
    return {key: _to_span(starts, offsets[min(a, last)], offsets[min(b, last)])
            for key, (a, b) in state.spans.items()}


def _fallback_spans(
    module: cst.Module, syntactic: Iterable[cst.CSTNode], inclusive: Iterable[cst.CSTNode],
) -> dict[int, Span]:  # pragma: no cover - only if libcst's codegen stopped round-tripping
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    out: dict[int, Span] = {}
    for provider, nodes in ((PositionProvider, syntactic), (WhitespaceInclusivePositionProvider, inclusive)):
        table = wrapper.resolve(provider)
        for node in nodes:
            r = table.get(node)
            if r is not None:
                out[id(node)] = (r.start.line, r.start.column, r.end.line, r.end.column)
    return out
