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
_MD_ROLE = re.compile(r"\{slime\}`(?P<text>[^`]+)`")
_RST_ROLE = re.compile(r":slime:`(?P<text>[^`]+)`")
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


def find_citations(file: Path) -> Iterator[Citation]:
    """Yield every ``slime-source`` directive and ``{slime}``/``:slime:`` role in ``file``, in order."""
    text = file.read_text(encoding="utf-8")
    lines = text.split("\n")
    role_re = _RST_ROLE if file.suffix == ".rst" else _MD_ROLE
    directive_re = _RST_DIRECTIVE if file.suffix == ".rst" else _MD_FENCE
    for number, line in enumerate(lines, start=1):
        match = directive_re.match(line)
        if match:
            yield Citation(file, number, "directive", match.group("arg"), _directive_options(lines, number))
            continue
        for role in role_re.finditer(line):
            try:
                target = parse_role_text(role.group("text"))
            except ValueError as exc:
                yield Citation(file, number, "role", role.group("text"), error=str(exc))
                continue
            options = {k: v for k, v in (("lines", target.lines), ("pyobject", target.pyobject)) if v}
            yield Citation(file, number, "role", target.path, options)
