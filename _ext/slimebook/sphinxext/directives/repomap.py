"""The reuse roadmap's repository map: ``repo-map``.

``repo-map``
    The directory tree of the pin with files and lines per directory, the role of each directory (content
    lines ``dir: role``; a directory of the tree without a role, or a role for a directory that is not in
    the tree, is a warning) and a heat map directory × scan category. Each non-empty cell links to the
    category's section (``#cat-<category>``) of a generated page listing that row's records
    (``_slimebook/usage/dir/<dir>``, made by :mod:`slimebook.sphinxext.pages.repomappages` from the rows the
    directive records on the environment).

A thin directive over :func:`slimebook.repomap.repo_map` and the usage scan. Every bad input is a warning at
``doc:line`` (``-W`` fails); nothing is written into the source tree.
"""

from __future__ import annotations

from collections import Counter

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from ...repomap import ROOT_FILES, DirRow, RepoMapError, repo_map
from ..context import builds_pages, get_store, lock_path
from ..environment.envdata import doc_data, keep_per_doc
from ..environment.scancache import get_scan, get_table, note_scan_use
from ..locale import _, ngettext
from ..pages.render import table_frame
from ..pages.repomappages import ROWS, dir_page, key_label
from ..pages.usagetables import category_page, scroll
from .locate import content_line, option_line
from .readingparts import reading_warn, text_cell

__all__ = ["RepoMap", "setup"]


def _indent() -> str:
    """One step of a nested row's indentation: an em space (a CJK language: an ideographic space)."""
    return _("\u2003")


class repo_heatmap(nodes.General, nodes.Element):  # noqa: N801 - docutils node naming
    """Placeholder of the heat map: attribute ``rows`` (list of (key, depth, Counter-as-dict)) and
    ``categories``; links are made at ``doctree-resolved`` relative to the page being written."""


def _under(path: str, row: DirRow) -> bool:
    if row.key == ROOT_FILES:
        return "/" not in path
    if row.is_files_row:
        parent = row.key[:-2]
        return path.startswith(parent + "/") and "/" not in path[len(parent) + 1:]
    return path.startswith(row.key + "/")


class RepoMap(SphinxDirective):
    """``repo-map``: the generated directory tree and heat map (see the module docstring).

    Option ``:expand:``: directories (space-separated) whose subdirectories get rows. Content: one line
    per row, ``slime/agent: what it holds`` (``*`` for the root's files, ``slime/*`` for the files
    directly in ``slime/``).
    """

    has_content = True
    option_spec = {"expand": directives.unchanged}

    def run(self) -> list[nodes.Node]:
        store = get_store(self.env)
        self.env.note_dependency(str(lock_path(self.env)))
        expand = (self.options.get("expand") or "").split()
        try:
            rows = repo_map(store, expand)
        except RepoMapError as exc:
            reading_warn(self, f"repo-map: :expand: {exc}", option_line(self, "expand"))
            return []
        roles = self._roles()
        self._check_roles(rows, roles, store.lock.short, expand)
        top = [row for row in rows if row.depth == 0]
        total_files, total_lines = sum(r.files for r in top), sum(r.lines for r in top)
        wrapper = nodes.container(classes=["table-wrapper", "repo-map-wrapper"])
        wrapper += self._table(rows, roles)
        summary = nodes.paragraph(classes=["repo-map-summary"])
        sentence = _("Read at build time from the git tree of the pinned commit {commit} of {name}: {files}, {lines} "
                     "of text. The numbers of each level add up to the level above.")
        summary += nodes.Text(sentence.format(
            name=store.lock.name, commit=store.lock.short,
            files=ngettext("{n} file", "{n} files", total_files).format(n=total_files),
            lines=ngettext("{n} line", "{n} lines", total_lines).format(n=f"{total_lines:,}")))
        return [summary, wrapper, self._heatmap(rows)]

    def _roles(self) -> dict[str, tuple[str, int]]:
        """The content's ``key: role`` lines: key → (role text, source line); malformed lines are warned."""
        roles: dict[str, tuple[str, int]] = {}
        for offset, raw in enumerate(self.content):
            lineno = content_line(self, offset)
            if not raw.strip():
                continue
            key, sep, text = raw.strip().partition(": ")
            key = key.rstrip("/")
            if not sep or not text.strip():
                reading_warn(self, f"repo-map: a role line reads 'dir: role', got {raw.strip()!r}", lineno)
                continue
            if key in roles:
                reading_warn(self, f"repo-map: {key!r} has two roles (first at line {roles[key][1]})", lineno)
            roles[key] = (text.strip(), lineno)
        return roles

    def _check_roles(self, rows: list[DirRow], roles: dict[str, tuple[str, int]], short: str,
                     expand: list[str]) -> None:
        """Warn about a role for no row, and a row without a role."""
        keys = {row.key for row in rows}
        for key, (_role, lineno) in roles.items():
            if key not in keys:
                reading_warn(self, f"repo-map: {key!r} is not a row of the map at {short} "
                                   f"(rows: top-level directories, subdirectories of {' '.join(expand) or 'nothing'}, "
                                   "and '*' rows for files lying directly in a directory)", lineno)
        for row in rows:
            if row.key not in roles:
                reading_warn(self, f"repo-map: the directory row {row.key!r} ({row.files} files at {short}) "
                                   "has no role; add a line 'path: role' to the directive")

    def _table(self, rows: list[DirRow], roles: dict[str, tuple[str, int]]) -> nodes.table:
        """The directory table: one row per :class:`DirRow`, its role parsed as inline markup, then the totals."""
        top = [row for row in rows if row.depth == 0]
        total_files, total_lines = sum(r.files for r in top), sum(r.lines for r in top)
        total_skipped = sum(r.skipped for r in top)
        table, body = table_frame([_("Directory"), _("Files"), _("Lines"), _("Role")], ["colwidths-auto", "repo-map"])
        for row in rows:
            trow = nodes.row(classes=[f"repo-map-depth-{row.depth}"])
            label = key_label(row.key)
            indent = _indent() * row.depth + ("└ " if row.depth else "")
            name = nodes.literal(label, label) if not row.is_files_row else nodes.Text(label)
            trow += text_cell(nodes.Text(indent), name)
            trow += text_cell(nodes.Text(str(row.files)))
            trow += text_cell(nodes.Text(f"{row.lines:,}"))
            text, lineno = roles.get(row.key, ("", self.lineno))
            inline, messages = self.parse_inline(text, lineno=lineno - 1) if text else ([], [])
            cell = text_cell(*inline)
            cell.extend(messages)
            trow += cell
            body += trow
        total = nodes.row(classes=["repo-map-total"])
        label = _("Total")
        total += text_cell(nodes.strong(label, label))
        total += text_cell(nodes.strong(str(total_files), str(total_files)))
        total += text_cell(nodes.strong(f"{total_lines:,}", f"{total_lines:,}"))
        total += text_cell(nodes.Text(ngettext("{n} entry without a line count (binary files or symbolic links)",
                                               "{n} entries without a line count (binary files or symbolic links)",
                                               total_skipped).format(n=total_skipped)))
        body += total
        return table

    def _heatmap(self, rows: list[DirRow]) -> repo_heatmap:
        """The heat map placeholder: records per category under each row (resolved at ``doctree-resolved``)."""
        note_scan_use(self.env)
        records = get_scan(self.env).records
        categories = [c for c in get_table(self.env).categories if any(r.category == c for r in records)]
        heat_rows = []
        for row in rows:
            counts = Counter(r.category for r in records if _under(r.path, row))
            heat_rows.append((row.key, row.depth, row.is_files_row, {c: counts[c] for c in categories}))
        doc_data(self.env, ROWS)[self.env.docname] = [row.key for row in rows]
        heat = repo_heatmap(rows=heat_rows, categories=categories)
        self.set_source_info(heat)
        return heat


def _heat_level(count: int, peak: int) -> int:
    """0 for none, 1–4 by the count's share of the busiest cell (on a log-free, rounded-up scale)."""
    if count == 0:
        return 0
    return min(4, 1 + (4 * count - 1) // max(peak, 1))


def _resolve_heatmaps(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """``doctree-resolved``: turn ``repo_heatmap`` placeholders into tables whose cells link to category pages."""
    for node in list(doctree.findall(repo_heatmap)):
        categories: list[str] = node["categories"]
        peak = max((count for *_, counts in node["rows"] for count in counts.values()), default=0)
        links = builds_pages(app)
        table = nodes.table(classes=["colwidths-auto", "repo-heatmap"])
        group = nodes.tgroup(cols=len(categories) + 1)
        table += group
        for _column in range(len(categories) + 1):
            group += nodes.colspec(colwidth=5)
        head = nodes.thead()
        hrow = nodes.row()
        hrow += text_cell(nodes.Text(_("Directory")))
        for category in categories:
            text = nodes.literal(category, category)
            if links:
                ref = nodes.reference("", "", internal=True,
                                      refuri=app.builder.get_relative_uri(docname, category_page(category)))
                ref += text
                text = ref
            hrow += text_cell(text)
        head += hrow
        group += head
        body = nodes.tbody()
        for key, depth, files_row, counts in node["rows"]:
            label = key_label(key)
            trow = nodes.row()
            indent = _indent() * depth + ("└ " if depth else "")
            trow += text_cell(nodes.Text(indent), nodes.Text(label) if files_row else nodes.literal(label, label))
            for category in categories:
                count = counts[category]
                cell: nodes.Node = nodes.Text(str(count) if count else "·")
                if count and links:
                    ref = nodes.reference("", "", internal=True,
                                          refuri=app.builder.get_relative_uri(docname, dir_page(key))
                                          + f"#cat-{category}",
                                          reftitle=ngettext("{n} occurrence of category {category} in {label}",
                                                            "{n} occurrences of category {category} in {label}",
                                                            count).format(n=count, category=category, label=label))
                    ref += cell
                    cell = ref
                entry = text_cell(cell)
                entry["classes"].append(f"repo-heat-{_heat_level(count, peak)}")
                trow += entry
            body += trow
        group += body
        node.replace_self(scroll(table, html=app.builder.format == "html"))


def setup(app: Sphinx) -> None:
    """Register the directive, the resolution of its heat map and the rows it keeps per document."""
    app.add_directive("repo-map", RepoMap)
    app.connect("doctree-resolved", _resolve_heatmaps)
    keep_per_doc(app, ROWS)
