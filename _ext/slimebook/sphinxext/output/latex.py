"""The PDF in the book's language: ``slimebook.sty`` and questions set as numbered boxes.

* ``texinputs/slimebook.sty.jinja`` (loaded with ``\\usepackage{slimebook}``) sets the fixed strings in the book's
  language (the contents, the chapter opener and footer, the appendix; in Chinese "第 1 章"), keeps the spaces
  around ``·`` under xeCJK, and defines the ``slimebookquestion`` / ``slimebookanswer`` boxes, titled "Question 3.2"
  / "Answer 3.2" in that language. It is rendered into the LaTeX output directory at ``build-finished`` with the
  names of the extension's message catalog (:func:`sty_context`, the way Sphinx renders its ``sphinxmessages.sty``);
  nothing is written into the source tree. The Chinese book's ``conf.py`` turns babel, polyglossia and fncychap off
  (``latex_elements``), so its ``.tex`` declares no English language; its CJK fonts are its own (xeCJK is what
  Sphinx loads for a Chinese or Japanese book with xelatex), and a book in another language sets none of that.
* :class:`QuestionBoxes` (LaTeX only) turns every ``sphinx_design`` dropdown — the book's self-check
  questions, titled "1. 问题……" — into a :class:`question` box holding the title (its hand-typed number
  dropped: LaTeX numbers questions per chapter) followed by an :class:`answer` box holding the body. In HTML the
  dropdowns stay dropdowns.
* :func:`documents_as_chapters` (``doctree-resolved`` of the assembled LaTeX tree) gives every document its level:
  the LaTeX builder inlines a document where its ``toctree`` stands, so a toctree inside a section of its page
  (the root page's "构建时生成的页面", the course index's "哪一课建立在哪一课之上") made every page below it a
  subsection of that section — the guide was section 2.1 of a chapter called 构建时生成的页面, the lessons were
  ``\\paragraph`` headings, and the page footers named that section's chapter throughout. Now a document's sub-documents
  follow its own text at the level just below its title: the root's toctrees give the numbered chapters, a
  chapter's toctree its sections. The root page's own text (its introduction and sections) becomes one unnumbered
  front chapter titled like the page (``\\slimebookfrontmatter`` … ``\\slimebookmainmatter`` in ``slimebook.sty``).
* ``slimebook.sty`` is loaded with the printed label size of a mermaid diagram (:func:`diagram_label_option`, from
  the mermaid configuration that ``mermaid_params`` gives mmdc), so LaTeX can turn a diagram sideways when upright
  it would print its labels below the footnote size and sideways larger — the rule the ``make latexpdf`` check
  (:mod:`slimebook.pdfdiagrams`) applies.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util.fileutil import copy_asset_file
from sphinx.util.template import LaTeXRenderer

from ... import pdfdiagrams
from ..locale import _

STY = Path(__file__).with_name("texinputs") / "slimebook.sty.jinja"

#: a number the writer typed before a question ("1. ", "2、", "(3) "): LaTeX numbers the boxes itself
_TYPED_NUMBER = re.compile(r"^\s*(?:\d+\s*[.、．:：)]|\(\d+\))\s*")


class question(nodes.General, nodes.Element):  # noqa: N801 - docutils node naming
    """A self-check question (LaTeX): children are the question's paragraph(s)."""


class answer(nodes.General, nodes.Element):  # noqa: N801 - docutils node naming
    """The answer to the :class:`question` just before it (LaTeX): children are body elements."""


def _is_dropdown(node: nodes.Node) -> bool:
    return isinstance(node, nodes.container) and node.get("design_component") == "dropdown"


def strip_typed_number(title: nodes.Element) -> None:
    """Remove a leading typed number ("1. ") from the first text of ``title``, in place."""
    for text in title.findall(nodes.Text):
        stripped = _TYPED_NUMBER.sub("", str(text), count=1)
        if stripped != str(text):
            text.parent.replace(text, nodes.Text(stripped))
        return


class QuestionBoxes(SphinxPostTransform):
    """Dropdowns → :class:`question` + :class:`answer` (LaTeX). A dropdown without a title keeps its body
    as an answer-less box: the body is then the question."""

    default_priority = 150  # before sphinx_design's HTML transform (199) would see them in other formats
    formats = ("latex",)

    def run(self, **kwargs: Any) -> None:
        for node in list(self.document.findall(_is_dropdown)):
            box = question(classes=["slimebook-question"])
            box.source, box.line = node.source, node.line
            if node.get("has_title") and node.children and isinstance(node[0], nodes.rubric):
                title = node[0]
                strip_typed_number(title)
                para = nodes.paragraph("", "", *title.children)
                para["ids"] = list(title["ids"])
                box += para
                body = answer(classes=["slimebook-answer"])
                body.extend(node.children[1:])
                node.replace_self([box, body])
            else:
                box.extend(node.children)
                node.replace_self(box)


def _title_section(owner: nodes.Element) -> nodes.section | None:
    """The section holding the title of the document ``owner`` (a ``document`` or an inlined ``start_of_file``)."""
    return next((child for child in owner.children if isinstance(child, nodes.section)), None)


def _sub_documents(owner: nodes.Element) -> list[addnodes.start_of_file]:
    """The documents inlined by ``owner``'s own toctrees (not those of its sub-documents), in reading order."""
    found: list[addnodes.start_of_file] = []

    def walk(node: nodes.Element) -> None:
        for child in node.children:
            if isinstance(child, addnodes.start_of_file):
                found.append(child)
            elif isinstance(child, nodes.Element):
                walk(child)

    walk(owner)
    return found


def _toctree_block(sof: addnodes.start_of_file) -> nodes.Element:
    """What stands where the toctree stood: its ``toctree-wrapper`` compound, else the inlined document itself."""
    parent = sof.parent
    if isinstance(parent, nodes.compound) and "toctree-wrapper" in parent["classes"]:
        return parent
    return sof


def _lift(owner: nodes.Element) -> list[addnodes.start_of_file]:
    """Move the toctrees of ``owner`` that stand inside one of its sections to the end of its title section.

    Returns ``owner``'s sub-documents. A toctree already a child of the title section stays where it is."""
    title = _title_section(owner)
    subs = _sub_documents(owner)
    if title is None:
        return subs
    blocks: list[nodes.Element] = []
    for sof in subs:
        block = _toctree_block(sof)
        if block.parent is not title and not any(block is b for b in blocks):
            blocks.append(block)
    for block in blocks:
        block.parent.remove(block)
        title += block
    return subs


def _front_chapter(root: nodes.section) -> None:
    """Gather the root page's own text (everything but its title and toctrees) into an unnumbered chapter titled
    like the page, between ``\\slimebookfrontmatter`` and ``\\slimebookmainmatter``."""
    own = [child for child in root.children[1:]
           if not (isinstance(child, addnodes.start_of_file)
                   or (isinstance(child, nodes.compound) and any(isinstance(c, addnodes.start_of_file)
                                                                 for c in child.children)))]
    if not own or not isinstance(root[0], nodes.title):
        return
    chapter = nodes.section("", nodes.title("", "", *[c.deepcopy() for c in root[0].children]),
                            ids=list(root["ids"]), names=list(root["names"]))
    chapter["docname"] = root.get("docname", "")
    root["ids"], root["names"] = [], []  # the writer skips the root's own title: its labels move to the chapter
    for child in own:
        root.remove(child)
        chapter += child
    root.insert(1, [nodes.raw("", "\\slimebookfrontmatter\n", format="latex"), chapter,
                    nodes.raw("", "\\slimebookmainmatter\n", format="latex")])


def documents_as_chapters(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """``doctree-resolved`` of the assembled LaTeX tree: every inlined document one level below its parent document's
    title (the root's sub-documents are chapters), the root page's own text an unnumbered front chapter."""
    if app.builder.format != "latex" or doctree.get("docname") != docname:
        return
    if docname not in {entry[0] for entry in app.config.latex_documents}:
        return
    pending: list[nodes.Element] = [doctree]
    while pending:
        pending.extend(_lift(pending.pop()))
    root = _title_section(doctree)
    if root is not None:
        _front_chapter(root)


def diagram_label_option(config: Config) -> str:
    """``slimebook.sty``'s package option ``diagramlabel=<pt>pt``: the printed size of a mermaid label at scale 1,
    from the ``-c`` file in ``mermaid_params`` (:func:`slimebook.pdfdiagrams.label_px`; 16 px without one)."""
    params = list(getattr(config, "mermaid_params", []) or [])
    path = next((params[n + 1] for n, arg in enumerate(params[:-1]) if arg in ("-c", "--configFile")), None)
    px = pdfdiagrams.label_px(Path(path) if path else None)
    return f"diagramlabel={px * pdfdiagrams.PX_TO_PT:g}pt"


def _add_package(app: Sphinx, config: Config) -> None:
    app.add_latex_package("slimebook", diagram_label_option(config))


def _visit(env: str):
    def visit(self: Any, node: nodes.Element) -> None:
        self.body.append(f"\n\\begin{{{env}}}\n")

    def depart(self: Any, node: nodes.Element) -> None:
        self.body.append(f"\n\\end{{{env}}}\n")

    return visit, depart


def sty_context() -> dict[str, str]:
    """The fixed names ``slimebook.sty`` sets, in the book's language: the class's names (``contentsname``, …), the
    words before and after a chapter's number (``chaptername``, ``chappos``: "Chapter" and nothing; Chinese "第" and
    "章", from the message ``Chapter {number}``) and the titles of the question and answer boxes."""
    before, _sep, after = _("Chapter {number}").partition("{number}")
    return {
        "contentsname": _("Contents"), "listfigurename": _("List of Figures"), "listtablename": _("List of Tables"),
        "indexname": _("Index"), "bibname": _("Bibliography"), "refname": _("References"), "partname": _("Part"),
        "appendixname": _("Appendix"), "chaptername": before.strip(), "chappos": after.strip(),
        "questionname": _("Question"), "answername": _("Answer"),
    }


def _copy_sty(app: Sphinx, exc: Exception | None) -> None:
    """``build-finished``: render ``slimebook.sty`` into the LaTeX output directory."""
    if exc is None and app.builder.format == "latex":
        copy_asset_file(STY, app.outdir, context={**sty_context(), "latex_engine": app.config.latex_engine},
                        renderer=LaTeXRenderer(latex_engine=app.config.latex_engine), force=True)


def setup(app: Sphinx) -> None:
    """Register the package, the question nodes and their transform, the chapter levels of the PDF."""
    app.connect("config-inited", _add_package)
    app.add_node(question, latex=_visit("slimebookquestion"))
    app.add_node(answer, latex=_visit("slimebookanswer"))
    app.add_post_transform(QuestionBoxes)
    app.connect("build-finished", _copy_sty)
    app.connect("doctree-resolved", documents_as_chapters)
