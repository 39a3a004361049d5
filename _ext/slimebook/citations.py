"""Finding citations in the book's sources without running Sphinx.

Used by ``slimebook sources verify`` (and by re-pin tooling): it reads ``.md`` (MyST) and ``.rst``
files and yields every citation directive and role with its file and line. Their names come from the book's
source name (:class:`slimebook.names.SourceNames`: ``slime-source`` and ``{slime}`` for ``slimebook_source =
"slime"``), so the build and these tools recognise the same citations. The role's target grammar lives here too,
so the Sphinx role and this scanner parse it identically.

Markdown is read with the parser MyST uses (markdown-it with the ``myst_role`` and ``colon_fence`` plugins):
fences and roles are tokens with line maps, so code fences and inline code are skipped by the parser, not by
regexes. A directive's fence content is parsed again (MyST parses nested directives the same way), with its line
offset. ``.rst`` files keep a line-based reader.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from markdown_it import MarkdownIt
from mdit_py_plugins.colon_fence import colon_fence_plugin
from mdit_py_plugins.myst_role import myst_role_plugin

from .names import SourceNames

__all__ = ["BOOK_SUFFIXES", "Citation", "CitationFileError", "RoleTarget", "book_files", "find_citations",
           "parse_role_text", "role_text"]


class CitationFileError(ValueError):
    """A book file citations are read from cannot be read as UTF-8 text; ``str()`` names the file (and the byte)."""

_OPTION = re.compile(r"^\s*:(?P<key>[\w-]+):\s*(?P<value>.*?)\s*$")
_TICKS = re.compile(r"`+")
_TITLE = re.compile(r"^(?P<title>.+?)\s*<(?P<target>[^<>]+)>$", re.DOTALL)
_TARGET = re.compile(r"^(?P<path>[^:\s]+?)(?::(?P<lines>\d+(?:-\d+)?))?$")


@dataclass(frozen=True)
class RoleTarget:
    """A parsed citation role text (``{slime}`…```): ``title`` (or None), ``path``, ``lines`` spec (or None).

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


@functools.cache
def _markdown() -> MarkdownIt:
    """The Markdown parser: CommonMark with MyST's roles (``{name}`text```) and colon fences (``:::{name}``)."""
    return MarkdownIt("commonmark").use(myst_role_plugin).use(colon_fence_plugin)


def role_text(text: str, names: SourceNames) -> str | None:
    """The role text when ``text`` (stripped) is exactly one citation role (``{slime}`…``` for ``names`` of
    ``slime``) in MyST syntax, else None."""
    children = _markdown().parseInline(text.strip())[0].children or []
    if len(children) == 1 and children[0].type == "myst_role" and children[0].meta.get("name") == names.role:
        return children[0].content
    return None


def _markdown_citations(file: Path, text: str, names: SourceNames, offset: int = 0) -> Iterator[Citation]:
    """Citations in Markdown ``text`` whose first line is line ``offset + 1`` of ``file``.

    A fence whose info is ``{slime-source} path`` (the directive of ``names``) is a directive (its options are the
    ``:key: value`` lines that
    open its content); the content of any other directive fence (``{dropdown}``) is parsed in turn; a code fence
    (```` ```python ````) and inline code are examples, never citations. Roles in a directive's argument (a
    dropdown's title) count, on the fence's line. A role's line is its paragraph's first
    line plus the line breaks before it.
    """
    for token in _markdown().parse(text):
        if token.type in ("fence", "colon_fence") and token.map is not None:
            name, _, arg = token.info.strip().partition(" ")
            if not (name.startswith("{") and name.endswith("}")):
                continue  # a code fence: shown, not cited
            first = offset + token.map[0] + 1
            content = token.content.split("\n")
            if name == f"{{{names.directive}}}" and len(arg.split()) == 1:
                yield Citation(file, first, "directive", arg.strip(), _directive_options(content, 0))
                continue
            for child in _markdown().parseInline(arg)[0].children or []:  # a title is inline Markdown too
                if child.type == "myst_role" and child.meta.get("name") == names.role:
                    yield _role_citation(file, first, child.content)
            yield from _markdown_citations(file, token.content, names, first)
        elif token.type == "inline" and token.map is not None:
            line = offset + token.map[0] + 1
            for child in token.children or []:
                if child.type in ("softbreak", "hardbreak"):
                    line += 1
                elif child.type == "myst_role" and child.meta.get("name") == names.role:
                    yield _role_citation(file, line, child.content)


def _role_citation(file: Path, line: int, role_text: str) -> Citation:
    try:
        target = parse_role_text(role_text)
    except ValueError as exc:
        return Citation(file, line, "role", role_text, error=str(exc))
    options = {k: v for k, v in (("lines", target.lines), ("pyobject", target.pyobject)) if v}
    return Citation(file, line, "role", target.path, options)


#: The suffixes of the book's source files that may cite the pin.
BOOK_SUFFIXES = (".md", ".rst")


def book_files(paths: Iterable[str | Path]) -> list[Path]:
    """The book's source files under ``paths``: each file as given, each directory searched for
    :data:`BOOK_SUFFIXES` files; sorted."""
    return sorted(
        p for root in map(Path, paths) for p in ([root] if root.is_file() else root.rglob("*"))
        if p.suffix in BOOK_SUFFIXES
    )


def find_citations(file: Path, names: SourceNames) -> Iterator[Citation]:
    """Yield every citation directive and role of ``names`` in ``file``, in order: for ``slime``, every
    ``slime-source`` directive and ``{slime}`` (Markdown) or ``:slime:`` (rST) role.

    In Markdown, code fences that are not directives and inline code spans are skipped: a citation
    shown as an example is not a citation.

    Raises:
        CitationFileError: ``file`` cannot be read, or is not UTF-8 text (the message names it and the byte).
    """
    try:
        text = file.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise CitationFileError(f"{file}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except OSError as exc:
        raise CitationFileError(f"{file}: cannot be read ({exc.strerror or exc})") from exc
    if file.suffix != ".rst":
        yield from _markdown_citations(file, text, names)
        return
    directive = re.compile(rf"^(?P<indent>\s*)\.\.\s+{re.escape(names.directive)}::\s+(?P<arg>\S+)\s*$")
    lines = text.split("\n")
    for number, line in enumerate(lines, start=1):
        match = directive.match(line)
        if match:
            yield Citation(file, number, "directive", match.group("arg"), _directive_options(lines, number))
            continue
        for text_of_role in _role_texts(line, f":{names.role}:"):
            yield _role_citation(file, number, text_of_role)
