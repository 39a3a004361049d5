"""The citation directive and role: pinned, verified citations of the book's source.

Both are named by ``slimebook_source`` (:func:`~slimebook.sphinxext.context.source_names`): ``slime-source`` and
``{slime}`` for ``"slime"``, ``demo-source`` and ``{demo}`` for ``"demo"``; they are registered at
``config-inited``, once the name is known. The directive parses options and hands them to
:func:`slimebook.excerpt.read_excerpt`; the reader's
:class:`~slimebook.excerpt.ExcerptError` becomes a warning at ``docname:line`` and the build goes on
(``-W`` turns it into a failure). Every resolved citation is recorded on the environment per
docname, merged in ``env-merge-info`` and purged in ``env-purge-doc`` (parallel-read safe).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pygments
from docutils import nodes
from docutils.parsers.rst import directives
from pygments.lexers import get_all_lexers, get_lexer_for_filename
from pygments.util import ClassNotFound
from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.environment import BuildEnvironment
from sphinx.errors import ConfigError
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective, SphinxRole

from ...citations import parse_role_text
from ...excerpt import Excerpt, ExcerptError, read_excerpt
from ...lock import SourceLock
from ...names import SourceNames
from ..context import app_of, builds_pages, get_store, lock_path, source_names
from ..diagnostics import SlimebookWarning, warn
from ..environment.envdata import doc_data, keep_per_doc
from ..environment.envrecords import CitationRecord
from ..locale import _
from ..pages.snapshot import make_snapshot_ref, snapshot_link
from .locate import option_line, options_named

logger = logging.getLogger(__name__)


# -- anchors ----------------------------------------------------------------------------------------
def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def excerpt_anchor(excerpt: Excerpt) -> str:
    """A stable HTML id for an excerpt: derived from path and symbol or range, never a counter.

    ``slime/agent/harness/common.py`` + ``BaseHarness.run`` → ``src-slime-agent-harness-common-py-baseharness-run``;
    + lines 81–104 → ``src-slime-agent-harness-common-py-l81-104``. Never empty and always ASCII: a symbol without
    ASCII letters or digits is replaced by its lines, a path without them by its blob id's first 12 digits.
    """
    lines = "-".join(f"l{a}" if a == b else f"l{a}-{b}" for a, b in excerpt.runs)
    what = _slug(excerpt.symbol or "") or lines  # a symbol with no ASCII letter falls back to its lines
    return "-".join(part for part in ("src", _slug(excerpt.path) or excerpt.blob[:12], what) if part)


def _unique(document: nodes.document, anchor: str) -> str:
    candidate, n = anchor, 2
    while candidate in document.ids:
        candidate, n = f"{anchor}-{n}", n + 1
    return candidate


def _suffix(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name[name.rfind("."):] if "." in name else name


def lexer_alias(env: BuildEnvironment | None, path: str) -> str:
    """The Pygments alias for ``path`` (``"python"``, ``"bash"``…; ``"text"`` when no lexer claims it).

    Decided by the file name's suffix (a dot-less name stands for itself) and memoised per suffix and Pygments
    version, in the process and on ``env`` (``env.slimebook_lexer_aliases``), so an incremental build does not pay
    again: Pygments' first lookup by file name matches the name against every lexer's glob patterns, about 0.1 s.
    """
    suffix = _suffix(path)
    if env is None:
        return _language_for(suffix)
    memo: dict[tuple[str, str], str] = env.__dict__.setdefault("slimebook_lexer_aliases", {})
    key = (pygments.__version__, suffix)
    alias = memo.get(key)
    if alias is None:
        alias = memo[key] = _language_for(suffix)
    return alias


@functools.lru_cache(maxsize=64)
def _language_for(suffix: str) -> str:
    # Pygments matches lexers on glob patterns of the name; a suffix (or a dot-less name) stands for them.
    try:
        return get_lexer_for_filename(f"x{suffix}" if suffix.startswith(".") else suffix).aliases[0]
    except ClassNotFound:
        return "text"


# -- citations kept on the environment ----------------------------------------------------------------
def _record(env: BuildEnvironment, lineno: int, kind: str, excerpt: Excerpt, spec: dict[str, Any]) -> None:
    citations: dict[str, list[CitationRecord]] = doc_data(env, "slimebook_citations")
    citations.setdefault(env.docname, []).append(
        {  # type: ignore[typeddict-item]  # spec holds the options as written: lines, pyobject
            "docname": env.docname,
            "lineno": lineno,
            "kind": kind,
            "path": excerpt.path,
            "blob": excerpt.blob,
            "runs": list(excerpt.runs),
            "symbol": excerpt.symbol,
            **spec,
        }
    )


# -- captions: one placeholder at read time, one builder per output format ------------------------------
class excerpt_caption(nodes.Inline, nodes.TextElement):  # noqa: N801 - docutils node naming
    """The label part of an excerpt caption, resolved per builder by :class:`ExcerptCaptions`.

    Attributes: ``path`` and ``line`` (the snapshot target), ``refuri`` (the upstream permalink), ``reftitle``,
    ``refdoc`` (the document it was written in). Children: the label ``path · L81–L90 · 624b824`` as text, so
    the title Sphinx records for a ``{ref}`` to a named excerpt is the label, the same in every format.
    """


CaptionBuilder = Callable[[Sphinx, excerpt_caption], list[nodes.Node]]


def _permalink(node: excerpt_caption) -> nodes.reference:
    return nodes.reference("", node.astext(), refuri=node["refuri"], classes=["slime-permalink"],
                           reftitle=node["reftitle"])


def _caption_with_snapshot(app: Sphinx, node: excerpt_caption) -> list[nodes.Node]:
    """HTML with snapshot pages: ``[permalink label] · [snapshot]`` (the word in the book's language)."""
    return [_permalink(node), nodes.Text(" · "),
            snapshot_link(app, node["refdoc"], node["path"], node["line"], nodes.Text(_("snapshot")))]


def _caption_link_only(app: Sphinx, node: excerpt_caption) -> list[nodes.Node]:
    """Every builder without snapshot pages (``singlehtml``, ``epub``, ``latex``, ``text``): the permalink
    label alone, no separator after it. In LaTeX the ``·`` keeps its spaces because ``slimebook.sty`` makes
    xeCJK treat U+00B7 as a Latin character (see :mod:`slimebook.sphinxext.output.latex`)."""
    return [_permalink(node)]


def _caption_for_print(app: Sphinx, node: excerpt_caption) -> list[nodes.Node]:
    """LaTeX: the permalink label with a no-break space on both sides of the ``·`` before the commit, so a wrapped
    caption never ends a line with ``·`` and starts the next with the commit (``… · L81–L90 ·`` / ``624b824``)."""
    link = _permalink(node)
    head, sep, commit = node.astext().rpartition(" · ")
    if sep:
        link.children[:] = [nodes.Text(f"{head}\u00a0·\u00a0{commit}")]
    return [link]


#: caption builder per output kind (:func:`caption_kind`)
CAPTION_BUILDERS: dict[str, CaptionBuilder] = {
    "html-pages": _caption_with_snapshot,
    "html": _caption_link_only,
    "latex": _caption_for_print,
    "text": _caption_link_only,
}


def caption_kind(app: Sphinx) -> str:
    """``html-pages`` (HTML that writes snapshot pages), ``html`` (singlehtml, epub), ``latex`` or ``text``."""
    if builds_pages(app):
        return "html-pages"
    return app.builder.format if app.builder.format in CAPTION_BUILDERS else "text"


class ExcerptCaptions(SphinxPostTransform):
    """Replace every :class:`excerpt_caption` with what :data:`CAPTION_BUILDERS` makes for this builder."""

    default_priority = 20

    def run(self, **kwargs: Any) -> None:
        app = app_of(self.env)
        build = CAPTION_BUILDERS[caption_kind(app)]
        for node in list(self.document.findall(excerpt_caption)):
            node.replace_self(build(app, node))


def _caption_nodes(lock: SourceLock, excerpt: Excerpt, caption: str | None, docname: str) -> list[nodes.Node]:
    label = f"{excerpt.path} · {excerpt.label()} · {lock.short}"
    parts: list[nodes.Node] = []
    if caption:
        parts.append(nodes.Text(f"{caption} — "))
    parts.append(excerpt_caption("", label, path=excerpt.path, line=excerpt.start, refdoc=docname,
                                 refuri=lock.permalink(excerpt.path, excerpt.start, excerpt.end),
                                 reftitle=f"{lock.name}@{lock.commit}"))
    return parts


# -- directive --------------------------------------------------------------------------------------
class SlimeSource(SphinxDirective):
    """``slime-source`` (``<source name>-source``): a pinned excerpt of a file of the source with its source line
    numbers.

    Argument: repo-relative path. Options: ``:lines:`` (``81-104``, ``81-90,95``), ``:pyobject:``
    (qualified name), ``:emphasize-lines:`` (source line numbers), ``:caption:``, ``:name:``.
    Renders a captioned literal block (one block per contiguous run) whose caption
    ``path · L81–L104 · 624b824`` links to the upstream permalink.
    """

    required_arguments = 1
    optional_arguments = 0
    has_content = False
    option_spec = {
        "lines": directives.unchanged_required,
        "pyobject": directives.unchanged_required,
        "emphasize-lines": directives.unchanged_required,
        "caption": directives.unchanged,
        "name": directives.unchanged_required,
    }

    def run(self) -> list[nodes.Node]:
        path = self.arguments[0].strip()
        store = get_store(self.env)
        try:
            excerpt = read_excerpt(
                store, path,
                lines=self.options.get("lines"),
                pyobject=self.options.get("pyobject"),
                emphasize=self.options.get("emphasize-lines"),
            )
        except ExcerptError as exc:  # at the line of the option at fault, when one is
            named = options_named(exc.option)
            line = option_line(self, named[0]) if named else self.lineno
            warn(self.env, SlimebookWarning.SOURCE, "%s: %s", self.name, exc, location=(self.env.docname, line))
            return []
        self.env.note_dependency(str(lock_path(self.env)))
        _record(self.env, self.lineno, "directive", excerpt,
                {"lines": self.options.get("lines"), "pyobject": self.options.get("pyobject")})

        wrapper = nodes.container("", literal_block=True, classes=["literal-block-wrapper", "slime-source"])
        caption = nodes.caption("", "", *_caption_nodes(store.lock, excerpt, self.options.get("caption"),
                                                          self.env.docname))
        self.set_source_info(caption)
        wrapper += caption
        for block in excerpt_blocks(excerpt, self.env):
            self.set_source_info(block)
            wrapper += block
        anchor = excerpt_anchor(excerpt)
        if "name" in self.options:
            named = nodes.make_id(self.options["name"])
            if named and named.isascii():
                anchor = named
            else:
                warn(self.env, SlimebookWarning.ANCHOR,
                     "%s: %s: :name: %r gives no ASCII id; the excerpt keeps its derived id %r",
                     self.name, path, self.options["name"], anchor, location=(self.env.docname, self.lineno))
        wrapper["ids"].append(_unique(self.state.document, anchor))
        self.set_source_info(wrapper)
        if "name" in self.options:
            self.add_name(wrapper)
        return [wrapper]


def excerpt_blocks(excerpt: Excerpt, env: BuildEnvironment | None = None) -> list[nodes.literal_block]:
    """The literal blocks of an excerpt: one per run, numbered from the run's first source line.

    Rules (the property test in ``tests/test_lines_property.py`` checks them): runs are what
    :func:`slimebook.excerpt.parse_line_spec` returns (adjacent selections merged, so a contiguous selection is one
    block); every line of a block ends with ``\\n``, so a blank last line is drawn; with the lexer options of
    :func:`keep_blank_lines`, line *k* of a block shows source line ``linenostart + k - 1``.

    Args:
        excerpt: a verified excerpt (:func:`slimebook.excerpt.read_excerpt`).
        env: the build environment that memoises the path's lexer (:func:`lexer_alias`); None: this process only.
    Returns:
        ``literal_block`` nodes with ``language`` (the Pygments alias for the path), ``linenos`` and
        ``highlight_args`` (``linenostart``, ``hl_lines`` relative to the block), class ``slime-run``.
    """
    language = lexer_alias(env, excerpt.path)
    blocks = []
    for (start, end), lines in zip(excerpt.runs, excerpt.texts, strict=True):
        text = "".join(line + "\n" for line in lines)  # every line ended: a blank last line is drawn too
        block = nodes.literal_block(text, text, language=language, linenos=True)
        hl = [n - start + 1 for n in sorted(excerpt.emphasize) if start <= n <= end]
        block["highlight_args"] = {"linenostart": start, **({"hl_lines": hl} if hl else {})}
        block["classes"].append("slime-run")
        blocks.append(block)
    return blocks


@functools.lru_cache(maxsize=32)
def _doc_lines(path: str, mtime_ns: int) -> list[str]:
    return Path(path).read_text(encoding="utf-8").split("\n")


# -- role -------------------------------------------------------------------------------------------
class SlimeRole(SphinxRole):
    """The citation role (``{slime}``, named by the source name): ``{slime}`path:81```, ``{slime}`path:81-90```,
    ``{slime}`path```, ``{slime}`Symbol <path>```.

    With an explicit title and a target without lines, the title is a qualified name looked up as
    ``:pyobject:`` in that file. Renders the title (or ``path:line``) as inline code linked to the
    upstream permalink; the tooltip gives ``path:Lx-Ly @ sha``.
    """

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        try:
            target = parse_role_text(self.text)
        except ValueError as exc:
            return self._fail(str(exc))
        has_title, title = target.title is not None, target.title or ""
        path, spec, pyobject = target.path, target.lines, target.pyobject
        store = get_store(self.env)
        try:
            excerpt = read_excerpt(store, path, lines=spec, pyobject=pyobject)
        except ExcerptError as exc:
            return self._fail(str(exc))
        _record(self.env, self._line(), "role", excerpt, {"lines": spec, "pyobject": pyobject})
        self.env.note_dependency(str(lock_path(self.env)))
        lock = store.lock
        whole = not spec and not pyobject
        if has_title:
            text = title
        elif whole:
            text = excerpt.path
        else:
            text = f"{excerpt.path}:{spec}"
        uri = lock.permalink(excerpt.path) if whole else lock.permalink(excerpt.path, excerpt.start, excerpt.end)
        where = excerpt.path if whole else f"{excerpt.path}:{excerpt.label()}"
        ref = nodes.reference("", "", refuri=uri, classes=["slime-ref"], reftitle=f"{where} @ {lock.short}")
        ref += nodes.literal(text, text)
        snapshot = nodes.superscript("", "", make_snapshot_ref(excerpt.path, 0 if whole else excerpt.start,
                                                               self.env.docname),
                                     classes=["slime-snapshot-mini"])
        return [ref, snapshot], []

    def _line(self) -> int:
        """The source line of this role: MyST reports a paragraph's first line for every role in it,
        so look for the raw role text from there on (at most 200 lines); fall back to that line."""
        try:
            path = Path(self.env.doc2path(self.env.docname))
            lines = _doc_lines(str(path), path.stat().st_mtime_ns)
        except OSError:
            return self.lineno
        needle = f"`{self.text}`"  # MyST hands roles an rST-style rawtext, so match the text part
        for index in range(max(self.lineno - 1, 0), min(len(lines), self.lineno + 200)):
            if needle in lines[index]:
                return index + 1
        return self.lineno

    def _fail(self, message: str) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        warn(self.env, SlimebookWarning.SOURCE, "%s: %s", self.name, message,
             location=(self.env.docname, self._line()))
        return [nodes.literal(self.rawtext, self.text, classes=["slime-broken"])], []


class SingleLabelForRuns(SphinxPostTransform):
    """LaTeX labels every block of a captioned wrapper with the wrapper's ids; with several runs that
    defines one label several times. Move the wrapper's ids onto its first run (LaTeX only)."""

    default_priority = 100
    formats = ("latex",)

    def run(self, **kwargs: Any) -> None:
        for wrapper in self.document.findall(nodes.container):
            if "slime-source" not in wrapper["classes"]:
                continue
            blocks = [child for child in wrapper.children if isinstance(child, nodes.literal_block)]
            if len(blocks) > 1 and wrapper["ids"]:
                blocks[0]["ids"].extend(wrapper["ids"])
                wrapper["ids"] = []


def keep_blank_lines(app: Sphinx, config: Any) -> None:
    """``config-inited``: every Pygments lexer keeps leading and trailing blank lines (``stripnl=False``).

    Pygments strips them by default, and Sphinx only turns that off for the few lexers it lists
    (``sphinx.highlighting.lexer_classes``: python, pycon, rest, c, none). An excerpt of a ``.sh`` file starting
    with a blank line then showed its first text line under the number of the blank one. Options the book's
    ``highlight_options`` sets for a language win; every alias of every installed lexer gets the default.
    """
    options = dict(config.highlight_options or {})
    for _name, aliases, _patterns, _mimetypes in get_all_lexers():
        for alias in aliases:
            options[alias] = {"stripnl": False, **options.get(alias, {})}
    config.highlight_options = options


def _owner(value: Any) -> str:
    """The module that defines a registered role or directive (a class, or an instance of one)."""
    return getattr(value, "__module__", None) or type(value).__module__


def _taken_names(app: Sphinx, config: Config, names: SourceNames) -> list[str]:
    """What the names ``slimebook_source`` gives would collide with, as sentence parts (``"the role {ref}, which
    is Sphinx's std:ref"``); empty when all three are free.

    A role of the standard domain or of the primary domain (``{ref}``, ``{term}``, ``{func}``) wins over a
    registered role, so a citation role of that name would never run; a role or directive of docutils
    (``{code}``, ``{math}``, ``{sub}``) or of another extension would be replaced by the citation one, and every
    use of it in the book read as a citation.
    """
    from docutils.parsers.rst import roles
    from docutils.parsers.rst.languages import en

    domains = [d for d in ("std", config.primary_domain) if d and d in app.registry.domains]
    found: list[str] = []
    for kind, name, registry, builtin, local in (
            ("role", names.role, "roles", roles._role_registry, roles._roles),
            ("role", names.number_role, "roles", roles._role_registry, roles._roles),
            ("directive", names.directive, "directives", directives._directive_registry, directives._directives)):
        shown = f"{{{name}}}" if kind == "role" else f"{name}"
        for domain in domains:
            if name in getattr(app.registry.domains[domain], registry):
                found.append(f"the {kind} {shown}, which is Sphinx's {domain}:{name}")
        if name in builtin or name in getattr(en, registry):
            found.append(f"the {kind} {shown}, which is docutils' own")
        elif name in local and not _owner(local[name]).startswith("slimebook."):
            found.append(f"the {kind} {shown}, which {_owner(local[name])} registers")
    return found


def register_citations(app: Sphinx, config: Config) -> None:
    """``config-inited``: register the directive and the role under the names ``slimebook_source`` gives.

    Raises:
        ConfigError: ``slimebook_source`` is not a valid source name, or a name it gives is a role or directive
            of Sphinx, docutils or another extension (``"ref"``, ``"code"``: see :func:`_taken_names`).
    """
    names = source_names(config)
    taken = _taken_names(app, config, names)
    if taken:
        raise ConfigError(f"{Path(app.confdir) / 'conf.py'}: slimebook_source = {names.source!r} would give "
                          f"{taken[0]}; choose another source name (and rename the lock table to match)")
    app.add_directive(names.directive, SlimeSource)
    app.add_role(names.role, SlimeRole())


def setup(app: Sphinx) -> None:
    """Register the directive and the role (once their names are known), the caption transforms and environment
    hooks (the store and its config: :mod:`.context`)."""
    app.connect("config-inited", register_citations)
    app.add_post_transform(SingleLabelForRuns)
    app.add_node(excerpt_caption)  # replaced by ExcerptCaptions in every builder
    app.add_post_transform(ExcerptCaptions)
    app.connect("config-inited", keep_blank_lines, priority=900)  # after Sphinx converts the old form (800)
    keep_per_doc(app, "slimebook_citations")
