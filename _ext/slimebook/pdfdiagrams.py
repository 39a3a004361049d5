"""How small a mermaid diagram's text is printed in the PDF: ``python -m slimebook.pdfdiagrams _build/latex``.

The LaTeX build draws every mermaid diagram with mmdc into ``mermaid-<sha1>.pdf``. The book's mermaid PDF
configuration (``.ci/npm/mermaid-pdf.json``) turns ``useMaxWidth`` off, so each PDF page is the diagram at its
natural size: mmdc prints at 96 CSS px per inch, a label of ``fontSize`` px (mermaid's default 16 px; the
configuration's ``fontSize`` when it sets one) is ``fontSize * 0.75`` pt on the page. LaTeX's
``\\sphinxincludegraphics`` then shrinks an image wider than ``\\linewidth`` or taller than the maximal image
height (``\\textheight``) to fit, keeping its aspect ratio; never enlarges one. So a label is printed at::

    label_pt * min(1, linewidth / width, maxheight / height)

``slimebook.sty`` writes the numbers LaTeX knows into the log: ``slimebook-layout: footnotesize=8pt`` once,
and for every ``\\sphinxincludegraphics`` its file and the ``\\linewidth`` and maximal height in force there
(``slimebook-image: mermaid-….pdf`` / ``slimebook-image-box: 345.0pt 550.0pt``). A diagram whose labels would
print below the footnote size upright, and larger turned by 90 degrees, is turned (``slimebook.sty``): its box line
ends in ``sideways`` and gives the room in the image's own orientation (the maximal height wide, ``\\linewidth``
high), so the same formula holds. The page sizes are read
from each PDF's ``/MediaBox`` (``pdfinfo`` when the file's objects are compressed). The check fails when a
diagram's labels would be printed smaller than the body's footnote size. Not counted: the step numbers of
``autonumber`` in sequence diagrams, which mermaid sets at 12 px (three quarters of a label).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

PX_TO_PT = 0.75  # mmdc prints at 96 px per inch; a PDF point is 1/72 inch
DEFAULT_LABEL_PX = 16.0  # mermaid's default fontSize (labels, messages, actors, notes)

_IMAGE = re.compile(r"^slimebook-image: (?P<file>\S+)\s*$")
_BOX = re.compile(r"^slimebook-image-box: (?P<width>[\d.]+)pt (?P<height>[\d.]+)pt(?P<sideways> sideways)?\s*$")
_LAYOUT = re.compile(r"^slimebook-layout: footnotesize=(?P<size>[\d.]+)(?:pt)?\s*$")
_MEDIABOX = re.compile(rb"/MediaBox\s*\[\s*([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s*\]")
_PDFINFO_SIZE = re.compile(r"^Page size:\s+([\d.]+) x ([\d.]+) pts", re.M)
_TEX_LABEL = re.compile(r"\\label\{\\detokenize\{([^}:]+):")


@dataclass(frozen=True)
class Diagram:
    """One mermaid image as LaTeX placed it."""

    file: str
    docname: str
    width: float  # natural size of the PDF page, pt
    height: float
    linewidth: float  # room LaTeX gave it, pt, in the image's orientation (turned: the page's height is its width)
    maxheight: float
    label_pt: float
    sideways: bool = False  # LaTeX turned it by 90 degrees

    @property
    def scale(self) -> float:
        return min(1.0, self.linewidth / self.width, self.maxheight / self.height)

    @property
    def printed_pt(self) -> float:
        return self.label_pt * self.scale


def label_px(config: Path | None) -> float:
    """The label size in px: the mermaid configuration's ``fontSize`` (number or ``"16px"``), else 16."""
    if config is None or not config.is_file():
        return DEFAULT_LABEL_PX
    data = json.loads(config.read_text(encoding="utf-8"))
    value = data.get("fontSize", data.get("themeVariables", {}).get("fontSize", DEFAULT_LABEL_PX))
    return float(str(value).removesuffix("px"))


def page_size(pdf: Path) -> tuple[float, float]:
    """Width and height in pt of the first page's MediaBox (``pdfinfo`` when the box is not in plain text)."""
    match = _MEDIABOX.search(pdf.read_bytes())
    if match:
        x0, y0, x1, y1 = (float(v) for v in match.groups())
        return abs(x1 - x0), abs(y1 - y0)
    if shutil.which("pdfinfo") is None:
        raise RuntimeError(f"{pdf}: no plain /MediaBox and no pdfinfo (poppler-utils) to read the page size")
    out = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True).stdout
    size = _PDFINFO_SIZE.search(out)
    if size is None:
        raise RuntimeError(f"{pdf}: pdfinfo printed no page size")
    return float(size.group(1)), float(size.group(2))


def docnames(tex: str) -> dict[str, str]:
    """Image file → the document it sits in (the last ``\\label{\\detokenize{doc:…}}`` before it)."""
    where: dict[str, str] = {}
    doc = ""
    for line in tex.splitlines():
        for label in _TEX_LABEL.findall(line):
            doc = label
        for file in re.findall(r"\\sphinxincludegraphics(?:\[[^]]*\])?\{\{?([^{}]+?)\}?(\.pdf)?\}", line):
            where.setdefault("".join(file), doc)
    return where


def read_log(log: str) -> tuple[float | None, list[tuple[str, float, float, bool]]]:
    """``(footnote size, [(file, room width, room height, sideways), ...])`` from the LaTeX log's slimebook lines
    (the room in the image's own orientation: ``\\linewidth`` and maximal height, swapped for a turned image)."""
    footnote = None
    images: list[tuple[str, float, float, bool]] = []
    pending = None
    for line in log.splitlines():
        if m := _LAYOUT.match(line):
            footnote = float(m.group("size"))
        elif m := _IMAGE.match(line):
            pending = m.group("file").replace("{", "").replace("}", "")  # "{mermaid-x}.pdf" (Sphinx's image form)
        elif (m := _BOX.match(line)) and pending is not None:
            images.append((pending, float(m.group("width")), float(m.group("height")), bool(m.group("sideways"))))
            pending = None
    return footnote, images


def diagrams(outdir: Path, config: Path | None, name: str = "slimebook") -> tuple[float, list[Diagram]]:
    """The footnote size and every mermaid image of the LaTeX build in ``outdir`` (the smallest room each got)."""
    log = (outdir / f"{name}.log").read_text(encoding="utf-8", errors="replace")
    footnote, images = read_log(log)
    if footnote is None:
        raise RuntimeError(f"{outdir / name}.log has no 'slimebook-layout:' line: was slimebook.sty loaded?")
    tex = (outdir / f"{name}.tex").read_text(encoding="utf-8")
    where = docnames(tex)
    label_pt = label_px(config) * PX_TO_PT
    sizes: dict[str, tuple[Path, float, float]] = {}
    smallest: dict[str, Diagram] = {}  # a file placed more than once: where it prints smallest
    for file, linewidth, maxheight, sideways in images:
        if not Path(file).name.startswith("mermaid-"):
            continue
        if file not in sizes:
            path = outdir / file if (outdir / file).is_file() else outdir / f"{file}.pdf"
            sizes[file] = (path, *page_size(path))
        path, width, height = sizes[file]
        diagram = Diagram(path.name, where.get(file, where.get(path.stem, "?")), width, height, linewidth,
                          maxheight, label_pt, sideways)
        if file not in smallest or diagram.printed_pt < smallest[file].printed_pt:
            smallest[file] = diagram
    found = list(smallest.values())
    missing = [f for f in where if Path(f).name.startswith("mermaid-") and f not in smallest]
    if missing:
        raise RuntimeError(f"{len(missing)} mermaid image(s) in the .tex but not in the log: {missing[:3]}")
    return footnote, found


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or len(args) > 2:
        print("usage: python -m slimebook.pdfdiagrams LATEX_OUTDIR [MERMAID_CONFIG_JSON]", file=sys.stderr)
        return 2
    outdir = Path(args[0])
    config = Path(args[1]) if len(args) > 1 else None
    footnote, found = diagrams(outdir, config)
    small = sorted((d for d in found if d.printed_pt < footnote - 1e-6), key=lambda d: d.printed_pt)
    for d in small:
        turned = " (turned sideways)" if d.sideways else ""
        print(f"{d.docname}: {d.file} is {d.width:.0f} x {d.height:.0f} pt, scaled {d.scale:.2f} into "
              f"{d.linewidth:.0f} x {d.maxheight:.0f} pt{turned}: labels {d.printed_pt:.1f} pt < footnote size "
              f"{footnote:g} pt", file=sys.stderr)
    for d in sorted((d for d in found if d.sideways), key=lambda d: d.docname):
        print(f"pdfdiagrams: {d.docname}: {d.file} turned sideways, labels {d.printed_pt:.1f} pt")
    smallest = min((d.printed_pt for d in found), default=None)
    print(f"pdfdiagrams: {len(found)} diagrams ({sum(d.sideways for d in found)} sideways), smallest label "
          f"{'-' if smallest is None else f'{smallest:.1f} pt'}, footnote size {footnote:g} pt, "
          f"{len(small)} too small")
    return 1 if small else 0


if __name__ == "__main__":
    sys.exit(main())
