"""The HTML of a lesson's usage table kept between builds, so an edit of the lesson does not draw it again.

A lesson's ``usage-index`` is a table of up to a few hundred rows, about ten thousand nodes; drawing it is nearly all
the HTML translator's time on that page (0.31 of 0.34 s for the lesson on ``await``, 323 rows, on the two-core
build machine), and the table only changes when the scan, the query or the page's links change. So the resolved
table is wrapped in a :class:`kept_html` node, and the HTML builder's visitor of that node appends the HTML it wrote
for an equal subtree in an earlier build instead of visiting the subtree again.

**Equal** means equal key (:func:`fragment_key`), a digest of

* the subtree itself: every node's class, attributes and text, in document order (:func:`fingerprint`), so a change
  of any row, link, id or class changes the key, however the table came to change;
* what the translator brings besides: the builder and translator classes, the versions of Sphinx, docutils,
  Pygments and every loaded extension, a digest of this package's Sphinx layer (its visitors and the Pygments
  formatter factory of :mod:`slimebook.sphinxext.accelerate.formatters`), the configuration the HTML builder's build
  info hashes for the
  ``env`` and ``html`` categories, the tags, the docutils settings of the writer, and every plain value of the
  translator's own state where the subtree starts (``compact_p``, ``section_level``, …).

Only subtrees made of :data:`KEEPABLE` node classes are kept: visiting those changes nothing of the translator but
the text it appends (no images to copy, no math flag, no footnote numbers), so appending the kept text is the same as
visiting them. A subtree with any other node, an attribute that cannot be pickled, or a warning logged while it was
drawn is drawn every time and not kept (a kept subtree would hide its warning from the next build).

Storage: ``<doctreedir>/slimebook-fragments/<docname>.<n>.html``, the *n*-th kept subtree of a document, its key on
the first line; written atomically (forked ``-j N`` writers write their own documents' files), replaced when the
document is written again with another key, and removed at ``build-finished`` when its document left the book.
Nothing is written into the source tree or the output directory.
"""

from __future__ import annotations

import hashlib
import logging
import pickle
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import docutils
import pygments
import sphinx
from docutils import nodes
from sphinx.application import Sphinx
from sphinx.builders.html._build_info import BuildInfo

from ...atomicio import atomic_write
from ..guard import Requirement, names_in
from ..pages.usagetables import breakable, keep, kept_html, usage_details, visit_children, wbr

#: The Sphinx versions this module was written for, ``(major, minor)``, both included (see ``..guard``).
SPHINX = ((9, 0), (9, 0))
#: What it patches or relies on, checked before its setup runs (:mod:`slimebook.sphinxext.guard`).
REQUIRES: tuple[Requirement, ...] = (
    Requirement("sphinx.builders.html._build_info:BuildInfo", ("config", "tags", "config_categories")),
    Requirement("sphinx.registry:SphinxComponentRegistry.get_translator_class", ("builder",)),
    Requirement("sphinx.application:Sphinx.add_node", ("node", "override")),
)

__all__ = ["COUNTS", "DIRNAME", "KEEPABLE", "fingerprint", "fragment_key", "kept_html", "keep", "setup", "usable"]

#: The cache directory's name under the doctree directory.
DIRNAME = "slimebook-fragments"
#: Node classes a kept subtree may hold (besides ``Text``): their HTML visitors append text and change no state
#: that outlives the subtree.
KEEPABLE: frozenset[type[nodes.Node]] = frozenset({
    nodes.table, nodes.tgroup, nodes.colspec, nodes.thead, nodes.tbody, nodes.row, nodes.entry, nodes.paragraph,
    nodes.reference, nodes.literal, nodes.inline, nodes.strong, nodes.emphasis, nodes.container,
    breakable, wbr, usage_details,
})
#: In this process: ``hit`` (kept HTML appended), ``kept`` (drawn and kept), ``unkept`` (drawn, not kept).
COUNTS: Counter[str] = Counter()

_CONTEXT_ATTR = "_slimebook_fragment_context"
_STATE_ATTR = "_slimebook_fragments"
_log = logging.getLogger("sphinx")


def fingerprint(node: nodes.Element) -> bytes | None:
    """The bytes that say what ``node``'s children are: class, attributes and text of every node below it.

    Returns:
        Pickled ``[qualified class name, attributes, …children…, None]`` of each descendant in document order
        (``Text`` as its string), or None when a descendant's class is not in :data:`KEEPABLE` or an attribute
        cannot be pickled. Equal subtrees built the same way give equal bytes; unequal ones never do.
    """
    names: dict[type, str] = {}
    out: list[Any] = []

    def walk(parent: nodes.Element) -> bool:
        for child in parent.children:
            cls = child.__class__
            if cls is nodes.Text:
                out.append(str(child))
                continue
            if cls not in KEEPABLE:
                return False
            name = names.get(cls)
            if name is None:
                name = names[cls] = f"{cls.__module__}.{cls.__qualname__}"
            out.append(name)
            out.append(child.attributes)
            if not walk(child):
                return False
            out.append(None)
        return True

    if not walk(node):
        return None
    try:
        return pickle.dumps(out, protocol=5)
    except (pickle.PicklingError, TypeError, AttributeError):
        return None


def _code_digest() -> str:
    """SHA-256 of the Sphinx layer's source files (the visitors that draw kept subtrees live there)."""
    digest = hashlib.sha256()
    root = Path(__file__).parents[1]
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _plain(values: dict[str, Any]) -> list[tuple[str, Any]]:
    return sorted((k, v) for k, v in values.items() if v is None or isinstance(v, (bool, int, float, str)))


def build_context(app: Sphinx) -> str:
    """``write-started``: the digest of what every key of this build shares (see the module), kept on the builder.

    Returns:
        A hex digest (also stored as the builder's ``_slimebook_fragment_context``).
    """
    builder = app.builder
    info = BuildInfo(app.config, app.tags, frozenset({"env", "html"}))
    translator = app.registry.get_translator_class(builder)
    extensions = sorted((name, str(ext.version)) for name, ext in app.extensions.items())
    payload = [builder.name, f"{translator.__module__}.{translator.__qualname__}", sphinx.__version__,
               docutils.__version__, pygments.__version__, sys.version, extensions, _code_digest(),
               info.config_hash, info.tags_hash]
    context = hashlib.sha256(repr(payload).encode()).hexdigest()
    setattr(builder, _CONTEXT_ATTR, context)
    return context


def fragment_key(translator: Any, node: kept_html) -> str | None:
    """The key of ``node``'s HTML as ``translator`` would write it here, or None when it is not to be kept.

    Raises:
        RuntimeError: the build context is missing (:func:`build_context` runs at ``write-started``).
    """
    context = getattr(translator.builder, _CONTEXT_ATTR, None)
    if context is None:
        raise RuntimeError("slimebook.fragments: no build context (write-started did not run)")
    body = fingerprint(node)
    if body is None:
        return None
    state = repr([_plain(vars(translator)), _plain(vars(translator.settings))]).encode()
    digest = hashlib.blake2b(digest_size=20)
    for part in (context.encode(), state, body):
        digest.update(len(part).to_bytes(8, "little"))
        digest.update(part)
    return digest.hexdigest()


def fragment_path(doctreedir: str | Path, docname: str, n: int) -> Path:
    """Where the ``n``-th kept subtree of ``docname`` is stored."""
    return Path(doctreedir) / DIRNAME / f"{docname}.{n}.html"


def _read(path: Path, key: str) -> str | None:
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, UnicodeDecodeError):
        return None
    first, newline, html = text.partition("\n")
    return html if newline and first == key else None


class _Warnings(logging.Handler):
    """Counts the warnings logged while a subtree is drawn."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


def _visit(self: Any, node: kept_html) -> None:
    state = self.__dict__.setdefault(_STATE_ATTR, {"n": 0, "open": []})
    n = state["n"]
    state["n"] += 1
    docname = getattr(self.builder, "current_docname", None)
    key = fragment_key(self, node) if docname is not None else None
    path = None
    if key is not None:
        path = fragment_path(self.builder.doctreedir, docname, n)
        html = _read(path, key)
        if html is not None:
            COUNTS["hit"] += 1
            self.body.append(html)
            raise nodes.SkipNode
    counter = _Warnings()
    _log.addHandler(counter)
    state["open"].append((len(self.body), key, path, counter))


def _depart(self: Any, node: kept_html) -> None:
    start, key, path, counter = self.__dict__[_STATE_ATTR]["open"].pop()
    _log.removeHandler(counter)
    if key is None or counter.count:
        COUNTS["unkept"] += 1
        return
    COUNTS["kept"] += 1
    atomic_write(path, key + "\n" + "".join(self.body[start:]))


def prune(app: Sphinx, exception: BaseException | None) -> None:
    """``build-finished``: remove the kept HTML of documents that are no longer in the book."""
    if exception is not None or app.builder.format != "html":
        return
    root = Path(app.doctreedir) / DIRNAME
    if not root.is_dir():
        return
    docs = app.env.all_docs
    for path in root.rglob("*.html"):
        docname = path.relative_to(root).as_posix().rsplit(".", 2)[0]
        if docname not in docs:
            path.unlink(missing_ok=True)


def _start(app: Sphinx, builder: Any) -> None:
    if app.builder.format == "html":
        build_context(app)


def usable() -> bool:
    """Whether the instance attributes this module reads are still set where it was written for: ``BuildInfo``'s
    ``config_hash`` and ``tags_hash`` (its ``__init__``), and the HTML builder's ``current_docname`` (its
    ``write_doc``; without it no subtree would ever be kept)."""
    from sphinx.builders.html import StandaloneHTMLBuilder

    return (names_in(BuildInfo.__init__, "config_hash", "tags_hash")
            and names_in(StandaloneHTMLBuilder.write_doc, "current_docname"))


def setup(app: Sphinx) -> None:
    """Draw :class:`~slimebook.sphinxext.pages.usagetables.kept_html` from the cache in HTML builds (in place of
    its transparent visitors, registered by :mod:`slimebook.sphinxext.pages.usagetables`) and register the build
    hooks."""
    app.add_node(kept_html, override=True, html=(_visit, _depart),
                 **{f: (visit_children, visit_children) for f in ("latex", "text", "man", "texinfo")})
    app.connect("write-started", _start)
    app.connect("build-finished", prune)
