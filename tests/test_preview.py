"""Live preview (``slimebook_preview``, set by ``make livehtml``): a page whose build warned lists its warnings at
its top; without the setting no page does. Built on the house-rules root, whose pages warn on purpose."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from conftest import SourceRepo, copy_root
from slimebook.sphinxext.output.preview import BOX_CLASS


def _build(tmp_path: Path, fetched_cache: Path, source_repo: SourceRepo, monkeypatch, sphinx_build, **overrides):
    monkeypatch.setenv("SLIMEBOOK_CACHE", str(fetched_cache))
    src = copy_root("house", tmp_path)
    (src / "sources.toml").write_text(source_repo.lock_text())
    return sphinx_build(src, confoverrides=overrides)


def _box(page: str) -> str:
    found = re.search(rf'<div class="[^"]*\b{BOX_CLASS}\b[^"]*">(.*?)</div>', page, re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", found.group(1))) if found else ""


@pytest.mark.parametrize("preview", [True, False])
def test_warnings_show_on_their_page_only_in_preview(tmp_path: Path, fetched_cache: Path, source_repo: SourceRepo,
                                                     monkeypatch: pytest.MonkeyPatch, sphinx_build,
                                                     preview: bool) -> None:
    app = _build(tmp_path, fetched_cache, source_repo, monkeypatch, sphinx_build, slimebook_preview=preview,
                 slimebook_build_command="make html")
    refs = _box((app.outdir / "guide" / "refs.html").read_text())
    unboxed = _box((app.outdir / "guide" / "unboxed.html").read_text())
    if not preview:
        assert (refs, unboxed) == ("", "")
        return
    assert "构建这一页时有 3 条警告（make html 会因此失败）" in refs  # the book's slimebook_build_command
    assert "第 7 行：undefined label: 'house-boxd'; did you mean 'house-boxed'?" in refs
    assert "第 10 行：undefined label: 'zzz-nothing-like-it'" in refs
    assert "第 16 行：'slime-source': Unknown option key: 'emphasise-lines'" in refs
    assert "第 1 行：house rule: a guide chapter opens with a context box" in unboxed
    assert _box((app.outdir / "guide" / "index.html").read_text()) == ""  # a page that did not warn
    # the build's own warnings are unchanged by the preview
    assert app._warning.getvalue().count("undefined label") == 2
