"""Directives of the async course: ``experiment`` and ``lesson-teaches``.

``experiment`` shows a stdlib-only script, runs it at build time (see :mod:`slimebook.experiments`),
and shows exactly what it printed, with a download link; a page can never show output the code does
not produce. The link ("(download)" after the caption, an inline of class ``slimebook-download``) is removed by
:class:`DropDownloadLinks` for builders other than HTML: the PDF has no file to download. ``lesson-teaches``
declares the API names and syntax kinds a lesson teaches; the declarations are kept per docname on the
environment (merged and purged, parallel-read safe) for the coverage map.
"""

from __future__ import annotations

import tokenize
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from ...excerpt import ExcerptError, parse_line_spec
from ...experiments import ExperimentError, ExperimentResult, run_experiment
from ...lines import display_lines
from ...usage import declaration_problem
from ..diagnostics import SlimebookWarning, warn
from ..environment.envdata import doc_data, keep_per_doc
from ..environment.scancache import get_table, note_table_use
from ..locale import _, fill, list_separator
from .locate import content_line, option_line

logger = logging.getLogger(__name__)


DOWNLOAD_CLASS = "slimebook-download"  # "(download)" after an experiment's caption: HTML only


def _is_download(node: nodes.Node) -> bool:
    return isinstance(node, nodes.inline) and DOWNLOAD_CLASS in node["classes"]


class DropDownloadLinks(SphinxPostTransform):
    """Remove the ``slimebook-download`` inlines where nothing is downloaded (every format but HTML)."""

    default_priority = 100
    formats = ("latex", "text", "man", "texinfo")

    def run(self, **kwargs: object) -> None:
        for node in list(self.document.findall(_is_download)):
            node.parent.remove(node)


class Experiment(SphinxDirective):
    """``experiment``: ``{experiment} examples/03_gather.py`` (path relative to the document).

    Options: ``:returncode:`` (expected exit code, default 0), ``:timeout:`` (seconds, default 60),
    ``:emphasize-lines:``. Emits a warning at ``docname:line`` when the script is missing, times out
    or exits with another code.
    """

    required_arguments = 1
    has_content = False
    option_spec = {
        "returncode": directives.nonnegative_int,
        "timeout": directives.positive_int,
        "emphasize-lines": directives.unchanged_required,
        "caption": directives.unchanged,
    }

    def run(self) -> list[nodes.Node]:
        rel, abspath = self.env.relfn2path(self.arguments[0], self.env.docname)
        script = Path(abspath)
        self.env.note_dependency(rel)
        try:
            result = run_experiment(
                script, timeout=float(self.options.get("timeout", 60)),
                expect_returncode=self.options.get("returncode", 0),
            )
        except ExperimentError as exc:
            return self._fail(str(exc))
        try:
            with tokenize.open(script) as handle:  # the PEP 263 coding cookie (or UTF-8), as Python reads it
                code = handle.read()
        except (SyntaxError, UnicodeDecodeError) as exc:
            return self._fail(f"cannot decode {script.name}: {exc}")
        try:
            code_wrap = self._code(script.name, code)
        except ExcerptError as exc:
            return self._fail(f"{script.name}: :emphasize-lines: {exc}", option_line(self, "emphasize-lines"))
        out_wrap = self._output(script.name, result)
        stem = "exp-" + nodes.make_id(script.stem)
        code_wrap["ids"].append(stem)
        out_wrap["ids"].append(f"{stem}-output")
        return [code_wrap, out_wrap]

    def _code(self, name: str, code: str) -> nodes.container:
        """The script, lines numbered and ``:emphasize-lines:`` marked, under a caption with its download link.

        Raises:
            ExcerptError: ``:emphasize-lines:`` is not a valid line spec for the script.
        """
        title = self.options.get("caption") or _("Experiment {name}").format(name=name)
        code_wrap = nodes.container("", literal_block=True, classes=["literal-block-wrapper", "experiment-code"])
        caption = nodes.caption("", "")
        caption += nodes.Text(title)
        link = addnodes.download_reference(
            "", "", nodes.literal(name, _("download")), reftarget=self.arguments[0], refdoc=self.env.docname,
            refdomain="", reftype="download", refexplicit=True, refwarn=True,
        )
        caption += nodes.inline("", "", *fill(_(" ({download})"), download=link), classes=[DOWNLOAD_CLASS])
        code_wrap += caption
        code_lines = display_lines(code)  # the book's one line model, tabs expanded
        shown = "\n".join(code_lines).rstrip("\n")
        code_block = nodes.literal_block(shown, shown, language="python", linenos=True)
        if "emphasize-lines" in self.options:
            runs = parse_line_spec(self.options["emphasize-lines"], total=len(code_lines))
            code_block["highlight_args"] = {"hl_lines": [n for a, b in runs for n in range(a, b + 1)]}
        code_wrap += code_block
        self.set_source_info(code_wrap)
        self.set_source_info(code_block)
        return code_wrap

    def _output(self, name: str, result: ExperimentResult) -> nodes.container:
        """What the run printed (or that it printed nothing), its exit code in the caption when not 0."""
        out_wrap = nodes.container("", literal_block=True, classes=["literal-block-wrapper", "experiment-output"])
        out_caption = _("Output of python {name}").format(name=name) + (
            _(" (exit code {code})").format(code=result.returncode) if result.returncode else "")
        out_wrap += nodes.caption(out_caption, out_caption)
        text = result.output.rstrip("\n") or _("(no output)")
        out_wrap += nodes.literal_block(text, text, language="text")
        self.set_source_info(out_wrap)
        return out_wrap

    def _fail(self, message: str, line: int | None = None) -> list[nodes.Node]:
        warn(self.env, SlimebookWarning.EXPERIMENT, "experiment: %s", message,
             location=(self.env.docname, line or self.lineno))
        return []


class LessonTeaches(SphinxDirective):
    """``lesson-teaches``: one API name (``asyncio.gather``) or syntax kind (``syntax:await``) per line.

    Renders the list as a compact note and records it on the environment under the docname. A name that no
    scan record can ever carry (a typo, a name outside the scanner's categories:
    :func:`slimebook.usage.declaration_problem`) is a warning at its own line.
    """

    has_content = True

    def run(self) -> list[nodes.Node]:
        offsets = [n for n, line in enumerate(self.content) if line.strip() and not line.strip().startswith("#")]
        table = get_table(self.env)
        note_table_use(self.env)
        for n in offsets:
            problem = declaration_problem(self.content[n].strip(), table)
            if problem is not None:
                warn(self.env, SlimebookWarning.TEACHES, "lesson-teaches: %r can never match the usage scan: %s",
                     self.content[n].strip(), problem, location=(self.env.docname, content_line(self, n)))
        names = [self.content[n].strip() for n in offsets]
        if not names:
            warn(self.env, SlimebookWarning.TEACHES, "lesson-teaches: no names given",
                 location=(self.env.docname, self.lineno))
            return []
        store = doc_data(self.env, "slimebook_teaches")
        store.setdefault(self.env.docname, []).extend(names)
        para = nodes.paragraph(classes=["lesson-teaches"])
        label = _("This lesson teaches: ")
        para += nodes.strong(label, label)
        for i, name in enumerate(names):
            if i:
                para += nodes.Text(list_separator())
            para += nodes.literal(name, name)
        self.set_source_info(para)
        return [para]


def setup(app: Sphinx) -> None:
    """Register ``experiment`` and ``lesson-teaches`` and their environment hooks."""
    app.add_directive("experiment", Experiment)
    app.add_directive("lesson-teaches", LessonTeaches)
    app.add_post_transform(DropDownloadLinks)
    keep_per_doc(app, "slimebook_teaches")
