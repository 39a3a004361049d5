"""Finding citations in the book's sources without running Sphinx.

Used by ``slimebook sources verify`` (and by re-pin tooling): it reads ``.md`` (MyST) and ``.rst``
files and yields every ``slime-source`` directive and ``{slime}`` role with its file and line. The
role's target grammar lives here too, so the Sphinx role and this scanner parse it identically.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Citation", "RoleTarget", "find_citations", "parse_role_text"]

_MD_FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|:{3,})\{slime-source\}\s+(?P<arg>\S+)\s*$")
_RST_DIRECTIVE = re.compile(r"^(?P<indent>\s*)\.\.\s+slime-source::\s+(?P<arg>\S+)\s*$")
_OPTION = re.compile(r"^\s*:(?P<key>[\w-]+):\s*(?P<value>.*?)\s*$")
_MD_ROLE_PREFIX = "{slime}"
_RST_ROLE_PREFIX = ":slime:"
_TICKS = re.compile(r"`+")
_FENCE = re.compile(r"^\s*(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_TITLE = re.compile(r"^(?P<title>.+?)\s*<(?P<target>[^<>]+)>$", re.DOTALL)
_TARGET = re.compile(r"^(?P<path>[^:\s]+?)(?::(?P<lines>\d+(?:-\d+)?))?$")


@dataclass(frozen=True)
class RoleTarget:
    """A parsed ``{slime}`` role text: ``title`` (or None), ``path``, ``lines`` spec (or None).

    ``pyobject`` is the title when a title is given and the target has no lines
    (``{slime}`BaseHarness.run <slime/agent/harness/common.py>```).
    """

    title: str | None
    path: str
    lines: str | None

    @property
    def pyobject(self) -> str | None:
        return self.title if self.title and not self.lines else None


def parse_role_text(text: str) -> RoleTarget:
    """Parse ``path``, ``path:81``, ``path:81-90`` or ``Title <target>``.

    Raises:
        ValueError: the target does not match ``path[:N[-M]]``.
    """
    title = None
    match = _TITLE.match(text.strip())
    target = text.strip()
    if match:
        title, target = match.group("title").strip(), match.group("target").strip()
    found = _TARGET.match(target)
    if not found:
        raise ValueError(f"malformed target {target!r} (expected path, path:N or path:N-M)")
    return RoleTarget(title, found.group("path"), found.group("lines"))


@dataclass
class Citation:
    """One citation found in a book source file.

    Attributes:
        file: the source file (as given, relative or absolute).
        line: 1-based line of the directive or role.
        kind: ``"directive"`` or ``"role"``.
        path: the cited repo-relative path.
        options: directive options (``lines``, ``pyobject``, ``emphasize-lines``, ...), or for a
            role ``lines`` / ``pyobject`` derived from :class:`RoleTarget`.
        error: a parse error of the role text, if any.
    """

    file: Path
    line: int
    kind: str
    path: str
    options: dict[str, str] = field(default_factory=dict)
    error: str | None = None


def _directive_options(lines: list[str], start: int) -> dict[str, str]:
    options: dict[str, str] = {}
    for line in lines[start:]:
        match = _OPTION.match(line)
        if not match:
            break
        options[match.group("key")] = match.group("value")
    return options


def _role_texts(line: str, prefix: str) -> Iterator[str]:
    """Texts of the roles ``prefix`text``` in ``line``; a backtick span not right after ``prefix`` is
    inline code and is skipped whole (CommonMark: a span closes at the next run of equal length)."""
    pos = 0
    while True:
        opening = _TICKS.search(line, pos)
        if not opening:
            return
        run = opening.group()
        closing = re.compile(rf"(?<!`){run}(?!`)").search(line, opening.end())
        if not closing:
            return
        if line[: opening.start()].endswith(prefix) and len(run) == 1:
            yield line[opening.end() : closing.start()]
        pos = closing.end()


def _code_fence_lines(lines: list[str]) -> set[int]:
    """1-based numbers of lines inside (or delimiting) Markdown code fences whose info string is not a
    directive (```` ```python ````, ```` ````markdown ````): examples there are shown, not cited.

    Directive fences (```` ```{dropdown} ````) nest and their content is scanned; a bare fence of the
    same character and at least the same length closes the innermost open fence (CommonMark).
    """
    inside: set[int] = set()
    stack: list[tuple[str, bool]] = []  # (fence, is_code)
    for number, line in enumerate(lines, start=1):
        in_code = bool(stack) and stack[-1][1]
        match = _FENCE.match(line)
        if in_code:
            inside.add(number)
        if not match:
            continue
        fence, info = match.group("fence"), match.group("info").strip()
        if stack and not info and fence[0] == stack[-1][0][0] and len(fence) >= len(stack[-1][0]):
            stack.pop()
        elif not in_code:
            is_code = not info.startswith("{")
            stack.append((fence, is_code))
            if is_code:
                inside.add(number)
    return inside


def find_citations(file: Path) -> Iterator[Citation]:
    """Yield every ``slime-source`` directive and ``{slime}``/``:slime:`` role in ``file``, in order.

    In Markdown, code fences that are not directives and inline code spans are skipped: a citation
    shown as an example is not a citation.
    """
    text = file.read_text(encoding="utf-8")
    lines = text.split("\n")
    rst = file.suffix == ".rst"
    prefix = _RST_ROLE_PREFIX if rst else _MD_ROLE_PREFIX
    directive_re = _RST_DIRECTIVE if rst else _MD_FENCE
    skipped = set() if rst else _code_fence_lines(lines)
    for number, line in enumerate(lines, start=1):
        if number in skipped:
            continue
        match = directive_re.match(line)
        if match:
            yield Citation(file, number, "directive", match.group("arg"), _directive_options(lines, number))
            continue
        for role_text in _role_texts(line, prefix):
            try:
                target = parse_role_text(role_text)
            except ValueError as exc:
                yield Citation(file, number, "role", role_text, error=str(exc))
                continue
            options = {k: v for k, v in (("lines", target.lines), ("pyobject", target.pyobject)) if v}
            yield Citation(file, number, "role", target.path, options)
