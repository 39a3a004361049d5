"""The PDF as a Chinese book (issue 16; cases pdf-chapter-name, pdf-caption-middle-dot, pdf-dropdown,
pdf-footer-chapter, and the diagrams of ``diagram.md``).

tests/roots/test-pdf takes its LaTeX settings from the book's own conf.py and holds the cases. The ``.tex``
is checked after a ``latex`` build: no English language declared, the Chinese fixed strings in ``slimebook.sty``,
an excerpt caption ending with the commit (no separator after it), questions as numbered question boxes with
their answers in answer boxes (never ``\\subsubsection*``), every listed page a chapter and the root's own text an
unnumbered front chapter. When XeLaTeX, latexmk and pdftotext are installed (``.ci/system-deps.sh pdf``), the PDF
is made and its text, footers and turned diagram checked too; otherwise those tests skip.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, SourceRepo, blank_pdf, commit_all, git, root_at_pin
from slimebook import pdfdiagrams

LONG_PY = "".join(f"value_{n} = {n}  # line {n}\n" for n in range(1, 101))


def _upstream(base: Path) -> SourceRepo:
    repo = base / "upstream"
    (repo / "pkg").mkdir(parents=True)
    git("init", "--quiet", "--initial-branch=main", str(repo), cwd=base)
    (repo / "pkg" / "long.py").write_text(LONG_PY)
    pin = commit_all(repo, "one")
    return SourceRepo(repo, pin, pin)


#: diagram.md's images: natural sizes in pt
IMAGES = {"mermaid-wide.pdf": (900, 300), "mermaid-narrow.pdf": (300, 200), "photo-wide.pdf": (900, 300)}


@pytest.fixture(scope="module")
def latex(tmp_path_factory: pytest.TempPathFactory):
    """The test-pdf root built with ``latex``: ``(outdir, pin)``."""
    from io import StringIO

    from sphinx.testing.util import SphinxTestApp

    base = tmp_path_factory.mktemp("pdf")
    upstream = _upstream(base)
    src, cache = root_at_pin("pdf", base, upstream)
    for name, size in IMAGES.items():
        (src / name).write_bytes(blank_pdf(*size))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SLIMEBOOK_CACHE", str(cache))
        mp.setenv("SLIMEBOOK_TEST_BOOK_CONF", str(ROOT / "conf.py"))
        app = SphinxTestApp("latex", srcdir=src, status=StringIO(), warning=StringIO())
        try:
            app.build()
        finally:
            app.cleanup()
    assert app._warning.getvalue() == "", app._warning.getvalue()
    return Path(app.outdir), upstream.pin


def test_tex_declares_no_english_and_sets_chinese_fixed_strings(latex) -> None:
    outdir, _ = latex
    tex = (outdir / "pdftest.tex").read_text(encoding="utf-8")
    preamble = tex[: tex.index(r"\begin{document}")]
    assert "english" not in preamble.lower()
    assert r"\usepackage{babel}" not in preamble and "polyglossia" not in preamble
    assert "fncychap" not in preamble  # its openers print "CHAPTER 1"
    assert r"\usepackage{xeCJK}" in preamble
    assert r"\usepackage[diagramlabel=12pt]{slimebook}" in preamble  # the option: 16 px labels = 12 pt
    sty = (outdir / "slimebook.sty").read_text(encoding="utf-8")
    for line in (r"\renewcommand{\contentsname}{目录}", r"\renewcommand{\chaptername}{第}",
                 r"\def\@chappos{章\enspace}", r"\renewcommand{\appendixname}{附录}",
                 r'\xeCJKDeclareCharClass{Default}{"00B7}'):
        assert line in sty
    messages = (outdir / "sphinxmessages.sty").read_text(encoding="utf-8")
    assert r"\renewcommand{\literalblockcontinuesname}{续下页}" in messages


def test_caption_ends_with_the_commit(latex) -> None:
    outdir, pin = latex
    tex = (outdir / "pdftest.tex").read_text(encoding="utf-8")
    captions = [c for c in re.findall(r"\\sphinxSetupCaptionForVerbatim\{(.*)\}\n", tex)
                if "pkg/long.py" in c and "L81–L90" in c.replace(r"\textendash{}", "–")]
    assert len(captions) == 1
    caption = captions[0].replace(r"\textendash{}", "–")
    # the link text, then nothing; the last separator joined to the commit by no-break spaces
    assert caption.endswith(f"{{pkg/long.py · L81–L90\u00a0·\u00a0{pin[:7]}}}"), caption
    body = tex[: tex.index("\\appendix")]  # the usage appendix's introduction mentions snapshot pages
    assert "快照" not in body and "_snapshot" not in body


def test_usage_index_is_an_appendix(latex) -> None:
    """Issue 16: the usage pages' tables as the PDF's appendix; links only where the PDF has the place."""
    outdir, _ = latex
    tex = (outdir / "pdftest.tex").read_text(encoding="utf-8")
    appendix = tex[tex.index("\\appendix"):]
    assert re.search(r"\\chapter\{用法索引\}", appendix)
    for title in ("按类别和种类计数", "课程覆盖表", "用法索引：按文件", "用法索引：asyncio", "用法索引：candidates"):
        assert title in appendix, title
    assert "\\begin{details}" not in appendix and "slimebook-usage-wrapper" not in appendix
    hrefs = re.findall(r"\\sphinxhref\{([^}]*)\}", appendix)
    assert all(h.startswith(("http:", "https:")) for h in hrefs), hrefs  # no link to an HTML-only file
    assert "_slimebook/usage/appendix:slimebook-usage-coverage" in appendix  # a page link, now inside
    # the counts table has column shares (category, total: no kinds in this fixture's scan), not tabulary's minimum
    assert r"\begin{tabular}[t]{\X{20}{28}\X{8}{28}}" in appendix
    assert "下载整份扫描结果" not in appendix  # no usage.json / usage.tsv to download from a PDF


def test_experiment_caption_has_no_download_link(latex) -> None:
    outdir, _ = latex
    tex = (outdir / "pdftest.tex").read_text(encoding="utf-8")
    captions = re.findall(r"\\sphinxSetupCaptionForVerbatim\{(实验.*)\}\n", tex)
    assert captions == [r"实验 hello.py"], captions  # no "（下载）": the PDF has no file to download
    assert "下载" not in tex


def test_questions_are_numbered_boxes_with_answers(latex) -> None:
    outdir, _ = latex
    tex = (outdir / "pdftest.tex").read_text(encoding="utf-8")
    assert r"\subsubsection*" not in tex and r"\sphinxstylerubric" not in tex
    boxes = re.findall(r"\\begin\{slimebookquestion\}\s*(.*?)\s*\\end\{slimebookquestion\}\s*"
                       r"(?:\\begin\{slimebookanswer\}\s*(.*?)\s*\\end\{slimebookanswer\})?", tex, re.S)
    questions = [re.sub(r"\\sphinxAtStartPar|\\label\{[^}]*\}\}?|\\\w+\{|[{}]", "", q).strip() for q, _ in boxes]
    assert questions == ["工作沙箱在哪一行之后就不存在了？", "第二个问题？", "没有编号的问题？"]  # typed numbers gone
    answers = [a.replace(r"\sphinxAtStartPar", "").strip() for _, a in boxes]
    assert answers == ["答案在这里。", "第二个答案。", "第三个答案。"]


def test_listed_pages_are_chapters_and_the_root_text_a_front_chapter(latex) -> None:
    """Case pdf-footer-chapter: a toctree inside a section no longer makes the listed pages its subsections."""
    outdir, _ = latex
    tex = (outdir / "pdftest.tex").read_text(encoding="utf-8")
    body = tex[tex.index(r"\sphinxtableofcontents"): tex.index(r"\appendix")]
    headings = re.findall(r"^(\\slimebookfrontmatter|\\slimebookmainmatter|\\(?:chapter|(?:sub)*section)\{[^}]*\})",
                          body, re.M)
    assert headings == [
        r"\slimebookfrontmatter", r"\chapter{PDF 测试}", r"\section{各章}", r"\slimebookmainmatter",
        r"\chapter{事件循环}", r"\section{小节}", r"\chapter{Caption}", r"\chapter{Quiz}", r"\section{更多}",
        r"\chapter{嵌套}", r"\section{本章的小节}", r"\section{子页}", r"\subsection{子页的小节}", r"\chapter{图}",
        r"\chapter{实验}",
    ]
    front = body[body.index(r"\slimebookfrontmatter"): body.index(r"\slimebookmainmatter")]
    assert "前言的一段正文。" in front and r"\label{\detokenize{index:t-home}}" in front  # the page's label moved


_TOOLS = ("xelatex", "latexmk", "pdftotext", "make")


@pytest.fixture(scope="module")
def pdf(latex) -> Path:
    """The PDF made from the ``latex`` fixture's output (skips without XeLaTeX, latexmk or pdftotext)."""
    if any(shutil.which(t) is None for t in _TOOLS):
        pytest.skip("XeLaTeX, latexmk or pdftotext missing (Debian: `bash .ci/system-deps.sh pdf`)")
    outdir, _ = latex
    proc = subprocess.run(["make", "-C", str(outdir), "all-pdf", "LATEXMKOPTS=-silent",
                           "LATEXOPTS=-interaction=nonstopmode -halt-on-error"], capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return outdir / "pdftest.pdf"


def test_pdf_text_is_chinese_and_keeps_caption_spaces(latex, pdf: Path) -> None:
    _, pin = latex
    text = subprocess.run(["pdftotext", "-enc", "UTF-8", str(pdf), "-"], capture_output=True,
                          text=True, check=True).stdout
    for english in ("CHAPTER", "Chapter ", "Contents", "continued on next page"):
        assert english not in text
    flat = re.sub(r"[ \u00a0]+", " ", text)
    assert re.search(r"第\s*1\s*章\s*事件循环", flat)  # the footer mark of chapter 1
    assert "目录" in flat and "第一部分" not in flat  # the contents are 目录, not the first toctree's caption
    assert f"pkg/long.py · L81–L90 · {pin[:7]}" in flat
    assert f"{pin[:7]} ·" not in flat
    assert "问题 3.1" in flat and "答案 3.1" in flat and "问题 3.3" in flat
    # the wrapped caption: the commit never starts a line, and its label is not letter-spaced
    lines = [re.sub(r"[ \u00a0]+", " ", line).strip() for line in text.splitlines()]
    commit_lines = [line for line in lines if pin[:7] in line and "L81–L84" in line]
    assert commit_lines and all(f"L81–L84 · {pin[:7]}" in line for line in commit_lines), commit_lines
    assert not any(line.startswith(pin[:7]) for line in lines)
    assert not re.search(r"列 表", flat)
    assert "归约，减熵，加 KL 损失" in flat  # not "归 约， 减 熵"
    assert not re.search(r"第\s*0\s*章", flat)  # the front chapter is not numbered


def _pages(pdf: Path) -> list[str]:
    text = subprocess.run(["pdftotext", "-layout", "-enc", "UTF-8", str(pdf), "-"], capture_output=True, text=True,
                          check=True).stdout
    return [re.sub(r"[ \u00a0]+", " ", page) for page in text.split("\f")]


def test_pdf_footers_name_the_chapter_of_their_page(pdf: Path) -> None:
    """Case pdf-footer-chapter in the PDF: the nested page's pages carry chapter 4's mark, not another chapter's."""
    pages = _pages(pdf)
    page = next(p for p in pages if "第二页的正文" in p)  # not a chapter's first page: it has a footer mark
    footer = page.strip().splitlines()[-1]
    assert "第 4 章 嵌套" in footer or "4.2. 子页" in footer, footer
    assert not any(re.search(r"章\s*各章", p) for p in pages)  # no chapter is the root's section 各章


def test_a_wide_diagram_is_turned_sideways(pdf: Path) -> None:
    """diagram.md: 900 pt wide in the 453 pt column prints labels at 6.0 pt upright; turned, the column's 701 pt
    height is its width (labels 9.3 pt). The narrow diagram and the photo stay upright."""
    outdir = pdf.parent
    footnote, found = pdfdiagrams.diagrams(outdir, ROOT / ".ci" / "npm" / "mermaid-pdf.json", name="pdftest")
    assert footnote == 8
    by_file = {d.file: d for d in found}
    assert set(by_file) == {"mermaid-wide.pdf", "mermaid-narrow.pdf"}  # the photo is not a diagram
    wide, narrow = by_file["mermaid-wide.pdf"], by_file["mermaid-narrow.pdf"]
    assert wide.sideways and not narrow.sideways
    assert (wide.width, wide.height) == (900, 300)
    assert round(wide.printed_pt, 1) == 9.3 and narrow.printed_pt == 12
    log = (outdir / "pdftest.log").read_text(encoding="utf-8", errors="replace")
    assert pdfdiagrams.read_log(log)[1] == [  # the room in each image's own orientation: turned, it is swapped
        ("mermaid-wide.pdf", 700.50687, 452.9679, True),
        ("mermaid-narrow.pdf", 452.9679, 700.50687, False),
        ("photo-wide.pdf", 452.9679, 700.50687, False),
    ]
