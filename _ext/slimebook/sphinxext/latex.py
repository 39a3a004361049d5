"""The PDF as a Chinese book: ``slimebook.sty`` and questions set as numbered boxes.

* ``texinputs/slimebook.sty`` (a static file, loaded with ``\\usepackage{slimebook}``) sets the fixed strings in
  Chinese (目录, 第 1 章 in the opener and the footer, 附录), keeps the spaces around ``·`` under xeCJK, and
  defines the ``slimebookquestion`` / ``slimebookanswer`` boxes. It is copied into the LaTeX output directory at
  ``build-finished``; nothing is written into the source tree. The book's ``conf.py`` turns babel,
  polyglossia and fncychap off (``latex_elements``), so the ``.tex`` declares no English language.
* :class:`QuestionBoxes` (LaTeX only) turns every ``sphinx_design`` dropdown — the book's self-check
  questions, titled "1. 问题……" — into a :class:`question` box holding the title (its hand-typed number
  dropped: LaTeX numbers questions per chapter) followed by an :class:`answer` box holding the body. In HTML the
  dropdowns stay dropdowns.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util.fileutil import copy_asset_file

STY = Path(__file__).with_name("texinputs") / "slimebook.sty"

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


def _visit(env: str):
    def visit(self: Any, node: nodes.Element) -> None:
        self.body.append(f"\n\\begin{{{env}}}\n")

    def depart(self: Any, node: nodes.Element) -> None:
        self.body.append(f"\n\\end{{{env}}}\n")

    return visit, depart


def _copy_sty(app: Sphinx, exc: Exception | None) -> None:
    if exc is None and app.builder.format == "latex":
        copy_asset_file(STY, app.outdir, force=True)


def setup(app: Sphinx) -> None:
    """Register the package, the question nodes and their transform."""
    app.add_latex_package("slimebook")
    app.add_node(question, latex=_visit("slimebookquestion"))
    app.add_node(answer, latex=_visit("slimebookanswer"))
    app.add_post_transform(QuestionBoxes)
    app.connect("build-finished", _copy_sty)
