"""The fixture corpus of the usage scanner: one small file per rule, its expected records beside it.

``tests/fixtures/scan/NAME.py`` (or ``.md``) is scanned and compared with ``NAME.expected.json``:
``status``, the error line when the file does not parse, the number of Python blocks for Markdown,
and the records as ``[line, col, end_line, end_col, scope, kind, name, category, provenance]``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from slimebook.scan import scan_code, scan_markdown

FIXTURES = Path(__file__).parent / "fixtures" / "scan"
CASES = sorted(p for p in FIXTURES.iterdir() if p.suffix in (".py", ".md"))


def _scan(path: Path):
    data = path.read_bytes()
    return scan_markdown(data) if path.suffix == ".md" else scan_code(data)


def test_every_fixture_has_expectations():
    assert len(CASES) >= 20
    for path in CASES:
        assert (FIXTURES / f"{path.stem}.expected.json").is_file(), path.name


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.name)
def test_fixture(path: Path):
    expected = json.loads((FIXTURES / f"{path.stem}.expected.json").read_text(encoding="utf-8"))
    result = _scan(path)
    assert result.status == expected["status"]
    if result.status == "error":
        assert result.error is not None and result.error[1] == expected["error_line"]
    if "blocks" in expected:
        assert result.blocks == expected["blocks"]
    assert [list(r[:9]) for r in result.records] == expected["records"]


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.name)
def test_code_field_is_the_whole_source_line(path: Path):
    raw = path.read_bytes()
    text = raw.decode("latin-1" if b"latin-1" in raw[:80] else "utf-8-sig")
    lines = re.split(r"\r\n|\r|\n", text)
    for record in _scan(path).records:
        assert record[9] == lines[record[0] - 1]
        assert 0 <= record[1] <= len(lines[record[0] - 1])
        assert (record[2], record[3]) >= (record[0], record[1])
