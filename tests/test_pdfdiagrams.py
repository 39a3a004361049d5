"""The diagram check of ``make latexpdf`` (issue 16): slimebook.pdfdiagrams on a made-up LaTeX output directory.

A diagram's labels are printed at 12 pt (16 px) times the scale LaTeX applies; the check fails when that is smaller
than the footnote size the log reports. The real build is checked by ``make latexpdf`` itself.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from slimebook import pdfdiagrams

WIDE = "mermaid-" + "a" * 40 + ".pdf"
NARROW = "mermaid-" + "b" * 40 + ".pdf"
TALL = "mermaid-" + "c" * 40 + ".pdf"


def _pdf(path: Path, width: float, height: float) -> None:
    path.write_bytes(b"%PDF-1.4\n1 0 obj << /Type /Page /MediaBox [0 0 " + f"{width} {height}".encode()
                     + b"] >> endobj\n%%EOF\n")


def _outdir(tmp_path: Path, images: dict[str, tuple[float, float]], sideways: frozenset[str] = frozenset()) -> Path:
    """A LaTeX output directory: each image placed in a 450 x 650 pt room, turned (room swapped) if in ``sideways``."""
    tex = ["\\chapter{A}\\label{\\detokenize{chapters/a:a}}"]
    log = ["This is XeTeX", "slimebook-layout: footnotesize=8pt"]
    for file, size in images.items():
        _pdf(tmp_path / file, *size)
        tex.append(f"\\sphinxincludegraphics{{{file}}}")
        box = "650.0pt 450.0pt sideways" if file in sideways else "450.0pt 650.0pt"
        log += [f"slimebook-image: {file}", f"File: {file} Graphic file (type pdf)", f"slimebook-image-box: {box}"]
    (tmp_path / "slimebook.tex").write_text("\n".join(tex) + "\n")
    (tmp_path / "slimebook.log").write_text("\n".join(log) + "\n")
    return tmp_path


def test_a_diagram_that_fits_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outdir = _outdir(tmp_path, {NARROW: (400, 300), "logo.pdf": (2000, 100)})
    assert pdfdiagrams.main([str(outdir)]) == 0
    assert "1 diagrams (0 sideways), smallest label 12.0 pt, footnote size 8 pt, 0 too small" in capsys.readouterr().out


def test_a_wide_or_tall_diagram_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 1434 pt wide in 450 pt: labels at 12 * 450 / 1434 = 3.8 pt; 1300 pt tall in 650 pt: 6.0 pt
    outdir = _outdir(tmp_path, {WIDE: (1434, 900), NARROW: (675, 300), TALL: (300, 1300)})
    assert pdfdiagrams.main([str(outdir)]) == 1
    err = capsys.readouterr().err
    assert f"chapters/a: {WIDE} is 1434 x 900 pt, scaled 0.31" in err and "labels 3.8 pt" in err
    assert f"{TALL} is 300 x 1300 pt" in err and "labels 6.0 pt" in err
    assert NARROW not in err  # 12 * 450 / 675 = 8.0 pt: exactly the footnote size is allowed


def test_a_diagram_turned_sideways_is_measured_in_its_room(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 900 x 300 pt turned: its 900 pt along the 650 pt page height, 12 * 650 / 900 = 8.7 pt (upright it was 6.0 pt)
    outdir = _outdir(tmp_path, {WIDE: (900, 300), NARROW: (400, 300)}, sideways=frozenset({WIDE}))
    assert pdfdiagrams.main([str(outdir)]) == 0
    out = capsys.readouterr().out
    assert f"pdfdiagrams: chapters/a: {WIDE} turned sideways, labels 8.7 pt" in out
    assert "2 diagrams (1 sideways), smallest label 8.7 pt, footnote size 8 pt, 0 too small" in out


def test_a_diagram_too_wide_even_sideways_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 1300 pt along the 650 pt page height: 12 * 650 / 1300 = 6.0 pt
    outdir = _outdir(tmp_path, {WIDE: (1300, 300)}, sideways=frozenset({WIDE}))
    assert pdfdiagrams.main([str(outdir)]) == 1
    assert "into 650 x 450 pt (turned sideways): labels 6.0 pt < footnote size 8 pt" in capsys.readouterr().err


def test_image_names_in_braces_are_read() -> None:
    """Sphinx writes ``\\sphinxincludegraphics{{name}.pdf}`` for an image directive; the log then says so too."""
    log = "slimebook-layout: footnotesize=8pt\nslimebook-image: {mermaid-x}.pdf\nslimebook-image-box: 1.5pt 2pt\n"
    assert pdfdiagrams.read_log(log) == (8.0, [("mermaid-x.pdf", 1.5, 2.0, False)])


def test_label_size_comes_from_the_mermaid_configuration(tmp_path: Path) -> None:
    config = tmp_path / "mermaid.json"
    config.write_text(json.dumps({"theme": "default"}))
    assert pdfdiagrams.label_px(config) == 16
    config.write_text(json.dumps({"fontSize": 20}))
    assert pdfdiagrams.label_px(config) == 20
    config.write_text(json.dumps({"themeVariables": {"fontSize": "18px"}}))
    assert pdfdiagrams.label_px(config) == 18


def test_the_book_configuration_prints_diagrams_at_natural_size() -> None:
    """Without ``useMaxWidth: false`` mmdc shrinks a diagram into its 800 px page and the label size is unknown."""
    config = json.loads((Path(__file__).parents[1] / ".ci" / "npm" / "mermaid-pdf.json").read_text())
    for kind in ("flowchart", "sequence"):
        assert config[kind]["useMaxWidth"] is False, kind


def test_a_log_without_the_layout_line_is_an_error(tmp_path: Path) -> None:
    outdir = _outdir(tmp_path, {NARROW: (400, 300)})
    (outdir / "slimebook.log").write_text("no numbers\n")
    with pytest.raises(RuntimeError, match="slimebook-layout"):
        pdfdiagrams.main([str(outdir)])
