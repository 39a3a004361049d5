"""Fixed text the Sphinx layer writes, through Sphinx's message catalogs: the domain ``slimebook``.

Every word the extension writes into a book — generated pages, captions, tooltips, what directives draw, the reader
script, the sidebar, LaTeX's fixed names and question boxes — is an English message id looked up in the catalog of
the book's ``language``, the way Sphinx asks an extension to do it ("Internationalize your extension":
:func:`sphinx.locale.get_translation` and :meth:`~sphinx.application.Sphinx.add_message_catalog`). The catalogs sit
beside this module, as Sphinx's own do: ``<language>/LC_MESSAGES/slimebook.po`` is the source of truth and the
``.mo`` beside it its compiled form (``python -m slimebook.sphinxext.locale`` compiles every ``.po``; a test checks
that each committed ``.mo`` is its ``.po`` compiled). A language without a catalog gets the English ids.

* :data:`_` is Sphinx's gettext of the domain: called while modules are imported (a module's table of labels) it
  returns a lazy string translated each time it is used (``str()``); called once the catalog is registered, the
  translated ``str``.
* :func:`ngettext` and :func:`pgettext` (a count's singular or plural; a message in a context, such as the two
  commas Chinese tells apart) are for code that runs during a build.
* :func:`fill` turns a translated sentence with ``{fields}`` into text and nodes, so that a link or inline code can
  stand where the language puts it.
* The templates (the sidebar; the reader script ``static/slimebook-reader.js.jinja``, which Sphinx renders into
  ``_static/slimebook-reader.js``) call ``slimebook_text(message)`` and ``slimebook_js_text(message)``, globals of the
  builder's template environment (:func:`install_template_text`).

Warnings and log messages are for the writer of a book and stay English, untranslated.

No sentence of a catalog names the upstream project: a sentence that needs it has a field filled from the lock
(:func:`source_title`).
"""

from __future__ import annotations

import hashlib
import json
import string
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from docutils import nodes
from sphinx import locale as sphinx_locale
from sphinx.application import Sphinx
from sphinx.locale import get_translation, get_translator

from ...lock import SourceLock

__all__ = [
    "CATALOG", "LOCALE_DIR", "TEMPLATE_GLOBALS", "_", "catalog_digest", "clause_separator", "compile_catalogs", "fill",
    "install_template_text", "js_text", "list_separator", "ngettext", "pgettext", "setup", "source_title", "text",
]

#: The name of the message catalog (``slimebook.po`` / ``slimebook.mo``).
CATALOG = "slimebook"
#: Where the catalogs are: ``<language>/LC_MESSAGES/slimebook.mo`` below it.
LOCALE_DIR = Path(__file__).resolve().parent

#: Sphinx's gettext of the ``slimebook`` domain (a lazy string before the catalog is registered).
_ = get_translation(CATALOG)


def text(message: str) -> str:
    """``message`` translated now, always a ``str`` (English when no catalog is registered): for code that needs a
    real string, such as a template global or a value written to a file."""
    return str(_(message))


def ngettext(singular: str, plural: str, n: int) -> str:
    """The translation of ``singular`` or ``plural`` for the count ``n`` (``"{n} file"`` / ``"{n} files"``).

    Returns:
        the message, its ``{n}`` left for the caller to fill.
    """
    return get_translator(CATALOG).ngettext(singular, plural, n)


def pgettext(context: str, message: str) -> str:
    """The translation of ``message`` in ``context`` (the same English text that another language writes in two
    ways, e.g. ``", "`` between list items and between clauses)."""
    return get_translator(CATALOG).pgettext(context, message)


def list_separator() -> str:
    """What stands between the items of a list of names or links (``", "``; Chinese: ``"、"``)."""
    return text(", ")


def clause_separator() -> str:
    """What stands between counts or places listed as clauses (``", "``; Chinese: ``"，"``)."""
    return pgettext("clauses", ", ")


Value = str | int | nodes.Node | Sequence[nodes.Node | str]


def fill(template: str, **values: Value) -> list[nodes.Node]:
    """A translated sentence as nodes: each ``{field}`` of ``template`` replaced by its value.

    Args:
        template: a translated message with ``str.format`` fields (``"Back to {overview}."``); ``{{`` is a brace.
        values: per field, a string or number (formatted into the text, with the field's format spec), a node, or a
            list of nodes and strings (spliced in).
    Returns:
        the nodes in order, the text between them as ``Text`` nodes (adjacent text joined, empty text left out).
    Raises:
        KeyError: a field of ``template`` has no value.
    """
    parts: list[nodes.Node | str] = []

    def add(part: nodes.Node | str) -> None:
        if isinstance(part, nodes.Node):
            parts.append(part)
        elif part:
            if parts and isinstance(parts[-1], str):
                parts[-1] += str(part)
            else:
                parts.append(str(part))

    for literal, name, spec, conversion in string.Formatter().parse(str(template)):
        add(literal)
        if name is None:
            continue
        value = values[name]
        if isinstance(value, nodes.Node):
            add(value)
        elif isinstance(value, (str, int)) or not isinstance(value, Iterable):
            add(format(repr(value) if conversion == "r" else value, spec or ""))
        else:
            for item in value:
                add(item)
    return [nodes.Text(part) if isinstance(part, str) else part for part in parts]


def source_title(lock: SourceLock) -> str:
    """The upstream project as a sentence names it: the lock's table name with its first letter upper-cased
    (``slime`` → ``Slime``). The catalogs never spell the project; a sentence that names it has a field for this."""
    return lock.name[:1].upper() + lock.name[1:]


# -- the catalogs -----------------------------------------------------------------------------------------------
def catalog_digest(language: str | None) -> str:
    """A digest of the compiled catalog a build in ``language`` reads (``""`` when it has none): part of what a
    generated page depends on, so that a changed translation writes the page again."""
    for name in _language_dirs(language):
        mo = LOCALE_DIR / name / "LC_MESSAGES" / f"{CATALOG}.mo"
        if mo.is_file():
            return hashlib.sha256(mo.read_bytes()).hexdigest()
    return ""


def _language_dirs(language: str | None) -> list[str]:
    """The directories gettext tries for ``language``: ``zh_CN`` → ``zh_CN``, ``zh``."""
    if not language:
        return []
    return list(dict.fromkeys([language, language.split("_")[0]]))


def compile_catalogs(root: Path = LOCALE_DIR) -> list[Path]:
    """Compile every ``<language>/LC_MESSAGES/*.po`` below ``root`` into the ``.mo`` beside it (Babel, which Sphinx
    depends on). Returns the ``.mo`` files written."""
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    written = []
    for po in sorted(root.glob("*/LC_MESSAGES/*.po")):
        with po.open("rb") as handle:
            catalog = read_po(handle, locale=po.parent.parent.name)
        mo = po.with_suffix(".mo")
        with mo.open("wb") as handle:
            write_mo(handle, catalog)
        written.append(mo)
    return written


# -- templates ---------------------------------------------------------------------------------------------------
def js_text(message: str) -> str:
    """``message`` translated, as a JavaScript string literal (``"复制链接"``: JSON, non-ASCII kept as it is)."""
    return json.dumps(text(message), ensure_ascii=False)


#: The globals templates call to translate: ``{{ slimebook_text("Generated pages") }}`` in an HTML template,
#: ``{{ slimebook_js_text("Copy link") }}`` (a quoted string) in the reader script's template.
TEMPLATE_GLOBALS: dict[str, Callable[[str], str]] = {"slimebook_text": text, "slimebook_js_text": js_text}


def install_template_text(app: Sphinx) -> None:
    """``builder-inited``: give the builder's template environment the globals of :data:`TEMPLATE_GLOBALS` (Sphinx's
    own ``_`` there is Sphinx's domain). The sidebar template and the reader script's template call them; Sphinx
    renders a static ``*.jinja`` file with the same environment."""
    environment = getattr(getattr(app.builder, "templates", None), "environment", None)
    if environment is not None:
        environment.globals.update(TEMPLATE_GLOBALS)


# -- setup -------------------------------------------------------------------------------------------------------
def setup(app: Sphinx) -> None:
    """Register the catalogs for the book's ``language`` and the template global."""
    # sphinx.locale.init merges into a translator already registered for the domain: a second build in the same
    # process (tests, the live preview) would keep the first build's language. Each build starts from its own.
    sphinx_locale.translators.pop(("general", CATALOG), None)
    app.add_message_catalog(CATALOG, LOCALE_DIR)
    app.connect("builder-inited", install_template_text)
