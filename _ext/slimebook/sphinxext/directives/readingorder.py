"""The reading order: ``reading-entry`` and ``reading-order-table``.

Thin directives over readers that already exist: every pointer into the source is a citation role (``{slime}``,
named by ``slimebook_source``; parsed by
:class:`~slimebook.sphinxext.directives.source.SlimeRole`, so it is verified at the pin, recorded with the other
citations, listed on the source-check page, found by ``slimebook sources verify`` and followed by a re-pin
like any citation).

``reading-entry NN``
    One numbered entry of the reading order. Options: ``:title:`` and ``:unit:`` (two digits) are required;
    ``:entry:`` (required) and ``:tests:`` hold one or more ``{slime}`` roles separated by ``;``, nothing
    else; ``:first-pass:`` and ``:second-pass:`` (required), ``:pin-lacks:`` (what the original order named
    that the pin does not have) and ``:covered-by:`` (links into the book) are inline markup. Renders one
    box, id ``reading-entry-NN``, with the fields always in the same order.
``reading-order-table``
    A table of every ``reading-entry`` of the same document (number, unit, title, entry points, tests,
    book chapter, pin gap), built when the document is read (``doctree-read``).

Every bad input is a warning at ``doc:line`` (``-W`` fails); nothing is written into the source tree.
"""

from __future__ import annotations

import re
from typing import Any

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from ...citations import role_text
from ..context import source_names
from ..diagnostics import SlimebookWarning, warn
from ..locale import _, list_separator
from ..pages.render import field, table_frame
from .locate import option_line
from .readingparts import CSS_FILE, reading_warn, role_label, text_cell

__all__ = ["ENTRY_FIELDS", "ReadingEntry", "ReadingOrderTable", "setup"]

_NUMBER = re.compile(r"\d{2}\Z")

#: option → label (lazy: translated when drawn), in display order (one uniform layout for every entry)
ENTRY_FIELDS: tuple[tuple[str, str], ...] = (
    ("entry", _("Entry")),
    ("tests", _("Tests to read first")),
    ("first-pass", _("First pass: where to stop")),
    ("second-pass", _("Second pass")),
    ("pin-lacks", _("Not in the pinned commit")),
    ("covered-by", _("Covered in the book")),
)
_CITATION_FIELDS = ("entry", "tests")
_REQUIRED = ("title", "unit", "entry", "first-pass", "second-pass")


def _roles(directive: SphinxDirective, key: str, value: str) -> list[str] | None:
    """The citation role texts (``{slime}``) of an option value, or None (after a warning) when it holds anything
    else."""
    names = source_names(directive.config)
    items = [item.strip() for item in value.split(";")]
    texts: list[str] = []
    for item in items:
        text = role_text(item, names)
        if text is None:
            reading_warn(directive, f"{directive.name}: :{key}: items must each be one {{{names.role}}} role "
                                    f"(separated by ';'), got {item!r}", option_line(directive, key))
            return None
        texts.append(text)
    return texts


# -- reading-entry --------------------------------------------------------------------------------------
class reading_entry(nodes.Admonition, nodes.Element):  # noqa: N801 - docutils node naming
    """One entry box; attributes ``number``, ``unit``, ``title``, ``entries`` and ``tests`` (role texts),
    ``covered`` (the covered-by markup, or None), ``lacks`` (True when the pin lacks part of it)."""


def _visit_entry(self: Any, node: reading_entry) -> None:
    self.visit_admonition(node)


def _depart_entry(self: Any, node: reading_entry) -> None:
    self.depart_admonition(node)


def _visit_entry_latex(self: Any, node: reading_entry) -> None:
    """LaTeX: the box's ids as labels before it (``LaTeXTranslator.hypertarget_to``), which the generic admonition
    visitor does not write: the reading-order table's links to ``reading-entry-NN`` had no target in the PDF."""
    self.body.append(self.hypertarget_to(node, anchor=True))
    self.visit_admonition(node)


class ReadingEntry(SphinxDirective):
    """``reading-entry NN``: see the module docstring."""

    required_arguments = 1
    has_content = False
    option_spec = {
        "title": directives.unchanged_required,
        "unit": directives.unchanged_required,
        **{key: directives.unchanged_required for key, _label in ENTRY_FIELDS},
    }

    def run(self) -> list[nodes.Node]:
        number = self.arguments[0].strip()
        if not _NUMBER.match(number):
            reading_warn(self, f"reading-entry: the argument must be a two-digit entry number, got {number!r}")
            return []
        missing = [key for key in _REQUIRED if not self.options.get(key, "").strip()]
        if missing:
            reading_warn(self, f"reading-entry {number}: missing {', '.join(':' + k + ':' for k in missing)}")
            return []
        unit = self.options["unit"].strip()
        if not _NUMBER.match(unit):
            reading_warn(self, f"reading-entry {number}: :unit: must be two digits, got {unit!r}",
                         option_line(self, "unit"))
            return []
        roles = {key: _roles(self, key, self.options[key]) if key in self.options else [] for key in _CITATION_FIELDS}
        if any(value is None for value in roles.values()):
            return []
        title = self.options["title"].strip()
        box = reading_entry(number=number, unit=unit, title=title, entries=roles["entry"], tests=roles["tests"],
                            covered=self.options.get("covered-by"), lacks="pin-lacks" in self.options,
                            classes=["admonition", "reading-entry"], ids=[f"reading-entry-{number}"])
        box += nodes.title("", f"{number} · {title}")
        fields = nodes.field_list(classes=["reading-entry-fields"])
        for key, label in ENTRY_FIELDS:
            if key in _CITATION_FIELDS:
                texts = roles[key]
                if not texts:
                    value = _("The pinned commit has no test file for it.") if key == "tests" else ""
                    body, messages = self.parse_inline(value, lineno=self.lineno)
                else:
                    role = source_names(self.config).role
                    body, messages = self.parse_inline(_("; ").join(f"{{{role}}}`{t}`" for t in texts),
                                                       lineno=option_line(self, key) - 1)
            elif key in self.options:
                body, messages = self.parse_inline(self.options[key], lineno=option_line(self, key) - 1)
            else:
                continue
            fields += field(label, body, messages)
        box += fields
        self.set_source_info(box)
        return [box]


# -- reading-order-table --------------------------------------------------------------------------------
class reading_order_table(nodes.General, nodes.Element):  # noqa: N801 - docutils node naming
    """Placeholder of ``reading-order-table``; replaced at ``doctree-read``."""


class ReadingOrderTable(SphinxDirective):
    """``reading-order-table``: the table of this document's entries (no options)."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        node = reading_order_table()
        self.set_source_info(node)
        return [node]


def _field_copy(entry: reading_entry, key: str) -> list[nodes.Node]:
    """Copies of the inline nodes of the entry's field ``key`` (links stay pending until resolved)."""
    label = str(dict(ENTRY_FIELDS)[key])
    for item in entry.findall(nodes.field):
        if item[0].astext() == label:
            return [child.deepcopy() for child in item[1][0].children]
    return []


def _build_tables(app: Sphinx, doctree: nodes.document) -> None:
    """``doctree-read``: fill every ``reading-order-table`` from the entries of the document; warn about a
    duplicate entry number or a table with no entries."""
    placeholders = list(doctree.findall(reading_order_table))
    entries = list(doctree.findall(reading_entry))
    seen: dict[str, reading_entry] = {}
    for entry in entries:
        if entry["number"] in seen:
            warn(app.env, SlimebookWarning.READING, "reading-entry %s: duplicate entry number (first at line %s)",
                 entry["number"], seen[entry["number"]].line, location=entry)
        seen.setdefault(entry["number"], entry)
    for placeholder in placeholders:
        if not entries:
            warn(app.env, SlimebookWarning.READING, "reading-order-table: this document has no reading-entry",
                 location=placeholder)
            placeholder.replace_self([])
            continue
        headers: list[str | nodes.paragraph] = [_("No."), _("Unit"), _("Topic"), _("Entry"), _("Tests"),
                                                _("Covered in the book"), _("Pin lacks")]
        table, body = table_frame(headers, ["colwidths-auto", "reading-order-table"])
        for entry in entries:
            row = nodes.row()
            ref = nodes.reference("", "", internal=True, refid=f"reading-entry-{entry['number']}")
            ref += nodes.Text(entry["number"])
            row += text_cell(ref)
            row += text_cell(nodes.Text(entry["unit"]))
            row += text_cell(nodes.Text(entry["title"]))
            names: list[nodes.Node] = []
            for n, text in enumerate(entry["entries"]):
                if n:
                    names.append(nodes.Text(list_separator()))
                label = role_label(text)
                names.append(nodes.literal(label, label))
            row += text_cell(*names)
            row += text_cell(nodes.Text(str(len(entry["tests"])) if entry["tests"] else "—"))
            row += text_cell(*(_field_copy(entry, "covered-by") or [nodes.Text("—")]))
            row += text_cell(nodes.Text(_("yes") if entry["lacks"] else "—"))
            body += row
        wrapper = nodes.container(classes=["table-wrapper"])
        wrapper += table
        placeholder.replace_self(wrapper)


def setup(app: Sphinx) -> None:
    """Register the entry box and its table, and the stylesheet every reading-guide directive uses."""
    app.add_css_file(CSS_FILE)
    app.add_node(reading_entry, html=(_visit_entry, _depart_entry), latex=(_visit_entry_latex, _depart_entry),
                 text=(_visit_entry, _depart_entry))
    app.add_directive("reading-entry", ReadingEntry)
    app.add_directive("reading-order-table", ReadingOrderTable)
    app.connect("doctree-read", _build_tables)
