"""Questions asked of a scan: selections, counts, the coverage of lessons, waivers and book figures.

Pipeline position: ``store`` → ``scan`` → **usage** → Sphinx layer (:mod:`slimebook.sphinxext.directives.usage`).
Everything here takes a :class:`~slimebook.scan.ScanResult` (or its records) and plain data and returns
plain data; nothing knows about Sphinx, so each piece is unit-tested on hand-made records. What depends on the
category table (categories, tracked classes and their bases) takes the book's
:class:`~slimebook.scan.categories.CategoryTable` as ``table`` (None: the default table).

* :class:`Query` / :func:`select`: the filters of the ``usage-index`` directive (categories, name globs,
  kinds, path prefixes), in one declared table of option → field.
* :func:`coverage`: every API name and syntax kind the scan found, the lessons that teach it, the waiver
  that excuses it, and what is stale (waivers that excuse nothing, taught names Slime never uses).
* :func:`parse_waivers`: the waiver file (``sources/coverage-waivers.toml``), with a line per pattern.
* :class:`Figures`: the numbers of the ``{slimenum}`` role (``py-files``, ``files:slime/``, …).

Modules, one job each (everything public is imported from here, as ``slimebook.usage.<name>``):
:mod:`.names` (what a record counts as, what a lesson may declare), :mod:`.query` (selection),
:mod:`.waivers` (the waiver file), :mod:`.coverage` (lessons × scan), :mod:`.figures` (the ``{slimenum}`` numbers).
"""

from __future__ import annotations

from .coverage import Coverage, CoverageRow, coverage
from .figures import FIGURE_FORMS as FIGURE_FORMS  # public, not in __all__ (as before the split)
from .figures import FigureError, Figures
from .names import (
    API_KINDS,
    SYNTAX_KINDS,
    category_members,
    declaration_problem,
    instance_uses,
    key_of,
    name_anchor,
    names_of,
    receiver_types,
)
from .query import COLUMNS, DEFAULT_KINDS, Query, QueryError, parse_list, select
from .query import count_by_key as count_by_key  # public, not in __all__ (as before the split)
from .waivers import Waiver, WaiverError, parse_waivers

__all__ = [
    "API_KINDS",
    "COLUMNS",
    "SYNTAX_KINDS",
    "DEFAULT_KINDS",
    "Coverage",
    "CoverageRow",
    "Figures",
    "FigureError",
    "Query",
    "QueryError",
    "Waiver",
    "WaiverError",
    "category_members",
    "coverage",
    "declaration_problem",
    "instance_uses",
    "key_of",
    "names_of",
    "receiver_types",
    "name_anchor",
    "parse_list",
    "parse_waivers",
    "select",
]
