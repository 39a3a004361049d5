"""``slime-source`` and ``{slime}`` through ``sphinx.testing``: rendered lines, captions, errors at doc:line."""

from __future__ import annotations

import re
from io import StringIO
from pathlib import Path

import pytest
from docutils import nodes
from sphinx.testing.util import SphinxTestApp

from conftest import SourceRepo, copy_root
from slimebook.lock import load_lock
from slimebook.store import SourceStore


@pytest.fixture
def build(tmp_path: Path, fetched_cache: Path, source_repo: SourceRepo, monkeypatch: pytest.MonkeyPatch,
          sphinx_build):
    """Return ``build(root_name, **kw) -> app`` building a copy of a test root against the fixture pin."""
    monkeypatch.setenv("SLIMEBOOK_CACHE", str(fetched_cache))

    def _build(name: str, buildername: str = "html", parallel: int = 0) -> SphinxTestApp:
        src = copy_root(name, tmp_path / buildername / str(parallel))
        (src / "sources.toml").write_text(source_repo.lock_text())
        return sphinx_build(src, buildername, parallel=parallel)

    return _build


def ended(lines: list[str]) -> str:
    """A block's text: every shown line ends with ``\\n`` (so a blank last line is drawn)."""
    return "".join(line + "\n" for line in lines)


def pinned_lines(source_repo: SourceRepo, fetched_cache: Path, path: str) -> list[str]:
    import tempfile

    lock = Path(tempfile.mkdtemp()) / "l.toml"
    lock.write_text(source_repo.lock_text())
    return SourceStore(load_lock(lock), root=fetched_cache).read_lines(path)


def test_excerpt_text_equals_pinned_lines(build, source_repo: SourceRepo, fetched_cache: Path) -> None:
    app = build("source")
    assert app._warning.getvalue() == ""
    doctree = app.env.get_doctree("index")
    blocks = [b for b in doctree.findall(nodes.literal_block) if "slime-run" in b["classes"]]
    lines = pinned_lines(source_repo, fetched_cache, "pkg/mod.py")
    # 1: Outer.Inner.method = L11-L15 (decorators first, trailing inside-comment kept)
    assert blocks[0].astext() == ended(lines[10:15])
    assert blocks[0]["highlight_args"] == {"linenostart": 11, "hl_lines": [4]}
    # 2: two runs -> two blocks, each numbered from its own first source line
    assert blocks[1].astext() == ended(lines[3:6])
    assert blocks[2].astext() == ended(lines[19:21])
    assert blocks[2]["highlight_args"]["linenostart"] == 20


def test_caption_links_full_sha_and_range(build, source_repo: SourceRepo) -> None:
    app = build("source")
    html = (app.outdir / "index.html").read_text()
    url = f"https://example.invalid/slime/blob/{source_repo.pin}/pkg/mod.py#L11-L15"
    assert f'href="{url}"' in html
    assert "The nested method — <a" in html
    assert f"pkg/mod.py · L11–L15 · {source_repo.pin[:7]}" in html
    assert f"pkg/mod.py · L4–L6, L20–L21 · {source_repo.pin[:7]}" in html
    assert "/pkg/mod.py#L4-L21" in html  # a multi-run caption links the whole span


def test_ids_are_derived_not_counted(build) -> None:
    app = build("source")
    html = (app.outdir / "index.html").read_text()
    assert 'id="src-pkg-mod-py-outer-inner-method"' in html
    assert 'id="src-pkg-mod-py-l4-6-l20-21"' in html
    assert 'id="helper-excerpt"' in html
    assert 'id="src-pkg-mod-py-l4-6"' in html  # the unnamed twin of helper-excerpt


def test_roles(build, source_repo: SourceRepo) -> None:
    app = build("source")
    html = (app.outdir / "index.html").read_text()
    base = f"https://example.invalid/slime/blob/{source_repo.pin}/pkg/mod.py"
    assert f'href="{base}#L4"' in html
    assert f'href="{base}#L4-L6"' in html
    assert f'href="{base}"' in html
    assert f'href="{base}#L10-L15"' in html  # Outer.Inner: outer comment excluded
    assert f'href="{base}#L20" title="pkg/mod.py:L20' in html  # pkg/alias.py is a symlink to pkg/mod.py
    mini = '<sup class="slime-snapshot-mini"><a class="slime-snapshot reference internal" '
    assert mini + 'href="_snapshot/pkg/mod.py.html#L4"' in html  # the offline snapshot beside the permalink


def test_rst_document(build, source_repo: SourceRepo, fetched_cache: Path) -> None:
    app = build("source")
    doctree = app.env.get_doctree("rstdoc")
    blocks = list(doctree.findall(nodes.literal_block))
    lines = pinned_lines(source_repo, fetched_cache, "pkg/mod.py")
    assert blocks[0].astext() == ended(lines[19:21])
    html = (app.outdir / "rstdoc.html").read_text()
    assert "pkg/mod.py#L4-L6" in html


def _directive_lines(path: Path) -> list[int]:
    return [n for n, line in enumerate(path.read_text().splitlines(), 1) if line.startswith("```{slime-source}")]


def test_every_error_is_located(build) -> None:
    """Each error is a warning at its line: the line of the option at fault, else the directive's fence."""
    app = build("errors")
    warnings = app._warning.getvalue()
    src = app.srcdir / "index.md"
    text = src.read_text().splitlines()
    expected = [
        ("does not exist", None), ("may not contain '..'", None), ("relative POSIX path", None),
        ("resolving outside the repository", None), ("past the end of the file", "lines"),
        ("reversed line range", "lines"), ("line numbers start at 1", "lines"),
        ("no definition named 'Nope'", "pyobject"), ("'f' is ambiguous: 2 definitions at L1–L2, L5–L6", "pyobject"),
        ("binary file", None), ("not valid UTF-8", None), ("either :lines: or :pyobject:", "lines"),
        ("fall outside the excerpt", "emphasize-lines"), ("is a directory", None),
    ]
    lines = _directive_lines(src)
    assert len(lines) == len(expected)
    for lineno, (message, option) in zip(lines, expected, strict=True):
        if option is not None:  # the option's own line inside the block, not the fence
            lineno = next(n for n in range(lineno + 1, len(text) + 1) if text[n - 1].startswith(f":{option}:"))
        pattern = rf"index\.md:{lineno}: WARNING: slime-source: .*{re.escape(message)}"
        assert re.search(pattern, warnings), (lineno, message, warnings)
    role_line = next(n for n, t in enumerate(src.read_text().splitlines(), 1) if t.startswith("Role errors"))
    assert re.search(rf"index\.md:{role_line}: WARNING: slime: .*pkg/nope\.py' does not exist", warnings)
    assert re.search(rf"index\.md:{role_line}: WARNING: slime: .*no definition named 'Nope'", warnings)
    late = next(n for n, t in enumerate(src.read_text().splitlines(), 1) if "missing-too" in t)
    assert re.search(rf"index\.md:{late}: WARNING: slime: .*missing-too\.py' does not exist", warnings)
    # the build went on: no excerpt for a failed citation, the later role rendered
    doctree = app.env.get_doctree("index")
    assert not list(doctree.findall(nodes.literal_block))
    assert "pkg/mod.py#L1" in (app.outdir / "index.html").read_text()


def test_missing_pin_stops_the_build_with_the_fetch_command(
    tmp_path: Path, source_repo: SourceRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sphinx.errors import ExtensionError

    monkeypatch.setenv("SLIMEBOOK_CACHE", str(tmp_path / "empty-cache"))
    src = copy_root("source", tmp_path)
    (src / "sources.toml").write_text(source_repo.lock_text())
    with pytest.raises(ExtensionError, match=rf"{source_repo.pin}.*fetch it with: slimebook sources fetch\Z"):
        SphinxTestApp("html", srcdir=src, status=StringIO(), warning=StringIO())
    with pytest.raises(ExtensionError, match=rf"{source_repo.pin}.*fetch it with: make sources\Z"):  # the book's
        SphinxTestApp("html", srcdir=src, status=StringIO(), warning=StringIO(),
                      confoverrides={"slimebook_fetch_command": "make sources"})


def test_parallel_build_matches_serial(build) -> None:
    serial = build("source", parallel=0)
    parallel = build("source", parallel=2)
    for name in ("index.html", "rstdoc.html"):
        assert (serial.outdir / name).read_text() == (parallel.outdir / name).read_text()
    assert parallel.env.slimebook_citations.keys() == serial.env.slimebook_citations.keys()


def test_snapshot_pages_have_line_anchors_and_captions_link_them(build) -> None:
    app = build("source")
    page = (app.outdir / "_snapshot" / "pkg" / "mod.py.html").read_text()
    assert '<span id="L20"><a href="#L20"><span class="linenos">20</span></a>' in page
    assert "固定提交" in page
    index = (app.outdir / "index.html").read_text()
    assert 'class="slime-snapshot reference internal" href="_snapshot/pkg/mod.py.html#L11"' in index
    latin = (app.outdir / "_snapshot" / "pkg" / "latin.py.html").read_text()
    assert "caf\ufffd" in latin  # shown with a replacement character; excerpts of it are errors instead
    assert not (app.outdir / "_snapshot" / "pkg" / "blob.bin.html").exists()
    rst = (app.outdir / "rstdoc.html").read_text()
    assert 'href="_snapshot/pkg/mod.py.html#L20"' in rst


def test_latex_labels_a_multi_run_excerpt_once(build) -> None:
    app = build("source", buildername="latex")
    tex = next(app.outdir.glob("*.tex")).read_text()
    label = r"\label{\detokenize{index:src-pkg-mod-py-l4-6-l20-21}}"
    assert tex.count(label) == 1


def test_a_second_build_repeats_the_warnings(tmp_path: Path, fetched_cache: Path, source_repo: SourceRepo,
                                             monkeypatch: pytest.MonkeyPatch, sphinx_build) -> None:
    """Sphinx does not re-read unchanged documents; a document that warned must be read again, or a
    second ``-W`` build of the same broken book would pass."""
    monkeypatch.setenv("SLIMEBOOK_CACHE", str(fetched_cache))
    src = copy_root("errors", tmp_path)
    (src / "sources.toml").write_text(source_repo.lock_text())
    counts = [sphinx_build(src)._warning.getvalue().count("WARNING: slime") for _ in range(2)]
    assert counts[0] > 0 and counts[1] == counts[0]


def _source_root_with(tmp_path: Path, source_repo: SourceRepo, docname: str, text: str) -> Path:
    """The ``source`` test root locked to the fixture pin, with document ``docname`` (``text``) in its toctree."""
    src = copy_root("source", tmp_path)
    (src / "sources.toml").write_text(source_repo.lock_text())
    (src / f"{docname}.md").write_text(text)
    with open(src / "index.md", "a") as handle:
        handle.write(f"\n```{{toctree}}\n{docname}\n```\n")
    return src


def test_experiment_bad_inputs_are_located_warnings(tmp_path: Path, fetched_cache: Path, source_repo: SourceRepo,
                                                    monkeypatch: pytest.MonkeyPatch, sphinx_build) -> None:
    monkeypatch.setenv("SLIMEBOOK_CACHE", str(fetched_cache))
    src = _source_root_with(tmp_path, source_repo, "exp", (
        "# Exp\n\n```{experiment} latin.py\n```\n\n```{experiment} ok.py\n:emphasize-lines: abc\n```\n\n"
        "```{experiment} ok.py\n:emphasize-lines: 5\n```\n"
    ))
    (src / "latin.py").write_bytes(b"# -*- coding: latin-1 -*-\nprint('caf\xe9')\n")
    (src / "ok.py").write_text("print('ok')\n")
    app = sphinx_build(src)
    warnings = app._warning.getvalue()
    assert "Traceback" not in warnings
    assert re.search(r"exp\.md:7: WARNING: experiment: ok\.py: :emphasize-lines: malformed", warnings)
    assert re.search(r"exp\.md:11: WARNING: experiment: ok\.py: :emphasize-lines: .*past the end", warnings)
    html = (app.outdir / "exp.html").read_text()
    assert "caf\u00e9" in html  # decoded by its coding cookie, shown and run


def test_ids_from_writer_text_are_never_empty(tmp_path: Path, fetched_cache: Path, source_repo: SourceRepo,
                                              monkeypatch: pytest.MonkeyPatch, sphinx_build) -> None:
    """A ``:name:`` that yields no ASCII id is a located warning naming the path and the option; the excerpt keeps
    its derived id (never an empty or counter id), and two unnamed twins get distinct ids."""
    monkeypatch.setenv("SLIMEBOOK_CACHE", str(fetched_cache))
    src = _source_root_with(tmp_path, source_repo, "names", (
        "(names)=\n# Names\n\n```{slime-source} pkg/mod.py\n:lines: 1\n:name: 中文名字\n```\n\n"
        "```{slime-source} pkg/mod.py\n:lines: 1\n```\n"
    ))
    app = sphinx_build(src)
    warnings = app._warning.getvalue()
    assert re.search(r"names\.md:4: WARNING: slime-source: pkg/mod\.py: :name: '中文名字' gives no ASCII id", warnings)
    html = (app.outdir / "names.html").read_text()
    assert 'id="src-pkg-mod-py-l1"' in html and 'id="src-pkg-mod-py-l1-2"' in html
    assert 'id=""' not in html


def test_every_option_error_names_the_path_and_the_option(build) -> None:
    """An error in an option's value names the cited path and the option, after the document and line."""
    warnings = build("errors")._warning.getvalue()
    for expected in (
        "pkg/mod.py: :lines: line range '500-501' is past the end of the file",
        "pkg/mod.py: :lines: reversed line range '5-3'",
        "pkg/mod.py: :pyobject: no definition named 'Nope'",
        "pkg/dup.py: :pyobject: 'f' is ambiguous",
        "pkg/mod.py: :lines: :pyobject: give either :lines: or :pyobject:, not both",
        "pkg/mod.py: :emphasize-lines: lines [",
    ):
        pattern = rf"index\.md:\d+: WARNING: slime-source: {re.escape(expected)}"
        assert re.search(pattern, warnings), (expected, warnings)


def test_experiment_page_shows_exactly_what_the_script_printed(tmp_path: Path, fetched_cache: Path,
                                                               source_repo: SourceRepo,
                                                               monkeypatch: pytest.MonkeyPatch, sphinx_build) -> None:
    monkeypatch.setenv("SLIMEBOOK_CACHE", str(fetched_cache))
    src = _source_root_with(tmp_path, source_repo, "exp", "# Exp\n\n```{experiment} three.py\n```\n\n"
                                                          "```{experiment} fails.py\n:returncode: 2\n```\n")
    (src / "three.py").write_text("print('first')\nprint()\nprint('  indented')\nprint('last')\n")
    (src / "fails.py").write_text("import sys\nprint('partial')\nsys.exit(2)\n")
    app = sphinx_build(src)
    doctree = app.env.get_doctree("exp")
    outputs = [c for c in doctree.findall(nodes.container) if "experiment-output" in c["classes"]]
    assert len(outputs) == 2
    shown = [next(iter(c.findall(nodes.literal_block))).astext() for c in outputs]
    assert shown == ["first\n\n  indented\nlast", "partial"]
    captions = [next(iter(c.findall(nodes.caption))).astext() for c in outputs]
    assert captions == ["运行 python three.py 的输出", "运行 python fails.py 的输出（退出码 2）"]
    assert [c["ids"] for c in outputs] == [["exp-three-output"], ["exp-fails-output"]]
    codes = [c for c in doctree.findall(nodes.container) if "experiment-code" in c["classes"]]
    assert [c["ids"] for c in codes] == [["exp-three"], ["exp-fails"]]
    assert next(iter(codes[0].findall(nodes.literal_block))).astext() == (src / "three.py").read_text().rstrip("\n")


def test_the_lexer_of_a_path_is_decided_once_per_environment(tmp_path: Path, fetched_cache: Path,
                                                             source_repo: SourceRepo, monkeypatch: pytest.MonkeyPatch,
                                                             sphinx_build) -> None:
    # Pygments' first lookup by file name costs about 0.1 s: an incremental build takes the alias from the env
    import pygments

    from slimebook.sphinxext.directives import source

    monkeypatch.setenv("SLIMEBOOK_CACHE", str(fetched_cache))
    src = copy_root("source", tmp_path)
    (src / "sources.toml").write_text(source_repo.lock_text())
    first = sphinx_build(src)
    assert first.env.slimebook_lexer_aliases == {(pygments.__version__, ".py"): "python"}

    def no_lookup(suffix: str) -> str:
        raise AssertionError(f"looked up the lexer of {suffix!r} again")

    monkeypatch.setattr(source, "_language_for", no_lookup)
    first.cleanup()  # docutils' registry as before the first app
    (src / "index.md").write_text((src / "index.md").read_text() + "\nEdited.\n")
    second = sphinx_build(src)
    assert second._warning.getvalue() == ""
    blocks = [b for b in second.env.get_doctree("index").findall(nodes.literal_block) if "slime-run" in b["classes"]]
    assert blocks and {b["language"] for b in blocks} == {"python"}
