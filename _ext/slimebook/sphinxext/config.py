"""The extension's configuration, declared once: every ``slimebook_*`` value with its type, default and meaning.

The shape of MyST-Parser's ``MdParserConfig``: one table (:data:`SETTINGS`) is the only place a value is declared;
each part of the extension registers its group with :func:`declare`, which adds the values to Sphinx and checks
them at ``config-inited`` (a wrong type, or a number out of range, stops the build with a sentence naming the value).
Checks that belong to a feature's own vocabulary (the anchors' modes and policies) stay in that feature.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.errors import ConfigError

from ..anchorcheck import parse_redirects
from ..lock import DEFAULT_LOCK
from ..names import DEFAULT_FETCH_COMMAND, DEFAULT_SOURCE

__all__ = ["SETTINGS", "Setting", "declare", "file_setting", "load_redirects", "read_file_setting", "setting_origin",
           "validate"]


@dataclass(frozen=True)
class Setting:
    """One configuration value.

    Attributes:
        name: the name in ``conf.py``.
        group: the part of the extension that declares it (:func:`declare`).
        default: its value when ``conf.py`` does not set it.
        rebuild: what Sphinx rebuilds when it changes (``"env"``, ``"html"`` or ``""``).
        type: the type its value must have.
        description: what it means, in one sentence.
        minimum: for numbers, the smallest value allowed (None: no bound).
    """

    name: str
    group: str
    default: Any
    rebuild: str
    type: type
    description: str
    minimum: int | None = None


SETTINGS: tuple[Setting, ...] = (
    Setting("slimebook_lock", "source", DEFAULT_LOCK, "env", str,
            "The source lock, relative to the configuration directory."),
    Setting("slimebook_source", "source", DEFAULT_SOURCE, "env", str,
            "The table of the lock the book quotes (its repository and pinned commit); it also names the directive "
            "'<name>-source', the roles '{<name>}' and '{<name>num}' and the variable '<NAME>_SOURCE_URL'."),
    Setting("slimebook_fetch_command", "source", DEFAULT_FETCH_COMMAND, "", str,
            "The command an error names when the pinned commit is not in the source cache."),
    Setting("slimebook_scan_categories", "scan", "", "env", str,
            "The usage scanner's category table (a TOML categories file), relative to the configuration directory; "
            "'' for the table shipped with the extension (the standard library's concurrency APIs)."),
    Setting("slimebook_usage_collapse", "usage", 30, "env", int,
            "Usage tables with more rows than this sit in a collapsible block (HTML).", minimum=0),
    Setting("slimebook_coverage_waivers", "coverage", "sources/coverage-waivers.toml", "env", str,
            "The waiver file of the coverage gate, relative to the configuration directory."),
    Setting("slimebook_candidate_notes", "candidates", "sources/candidate-notes.toml", "env", str,
            "The candidate notes (instance candidates confirmed or left with a reason), relative to the "
            "configuration directory; '' turns the check off."),
    Setting("slimebook_context_box_docs", "house", [], "env", list,
            "Docname patterns of chapters that must open with a context box (house rules)."),
    Setting("slimebook_lint_symbols", "house", [], "env", list,
            "Docname patterns whose prose may not name a definition of the source without a citation role."),
    Setting("slimebook_anchors_policy", "anchors", "ascii", "env", str,
            "Which section ids count as stable: 'ascii' or 'explicit' (labels only)."),
    Setting("slimebook_anchors_manifest", "anchors", "", "", str,
            "The manifest of published anchors ('' for none)."),
    Setting("slimebook_anchors_redirects", "anchors", "", "html", str,
            "The redirects of moved or removed anchors ('' for none)."),
    Setting("slimebook_anchors_mode", "anchors", "off", "", str,
            "What the build does with the manifest: 'off', 'check' or 'update'."),
    Setting("slimebook_accelerate", "accelerate", True, "", bool,
            "Build accelerators on (the default) or off: off, the book builds on Sphinx's stock behaviour, with the "
            "same pages and search index."),
    Setting("slimebook_preview", "preview", False, "env", bool,
            "Live preview (make livehtml): a page whose build warned shows those warnings at its top."),
    Setting("slimebook_build_command", "preview", "sphinx-build -W", "html", str,
            "The book's build that fails on a warning, as the live preview's warning box names it."),
)


def setting_origin(config: Config, name: str, confdir: str | Path | None = None) -> str:
    """Where the value of ``name`` came from, as an error names it: ``-D name`` when the command line overrode it
    (``config.overrides``), else ``<confdir>/conf.py:<line>``, else ``conf.py`` (no ``confdir``).

    The line is that of the last assignment of ``name`` in the module's code, read with :mod:`ast` (in an ``if``,
    ``try``, ``for`` or ``with`` block too; ``name = …``, ``name: T = …``, ``name += …``, ``a, name = …``,
    ``globals()["name"] = …``; not in a function or class) that can have set the value: one whose value is a literal
    other than the value is passed over. The path alone when none is left or the file cannot be parsed.
    """
    import ast

    if name in (getattr(config, "overrides", None) or {}):
        return f"-D {name}"
    if confdir is None:
        return "conf.py"
    path = Path(confdir) / "conf.py"
    try:
        tree = ast.parse(path.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return str(path)
    value = getattr(config, name, _NOT_LITERAL)
    lines = [line for line, literal in _assignments(tree.body, name)
             if _NOT_LITERAL in (value, literal) or (type(literal) is type(value) and literal == value)]
    return f"{path}:{lines[-1]}" if lines else str(path)


#: what :func:`_assignments` gives for a value it cannot read as a literal (and a value not known)
_NOT_LITERAL = object()


def _assignments(body: list, name: str) -> list[tuple[int, object]]:
    """``(line, literal value)`` of each assignment of the global ``name`` in the statements ``body`` and the blocks
    they run (not function or class bodies), in file order; the value is :data:`_NOT_LITERAL` when
    :func:`ast.literal_eval` cannot read it (a computed or augmented value, one item of an unpacking)."""
    import ast

    def literal(node: ast.expr) -> object:
        try:
            return ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return _NOT_LITERAL

    def names(target: ast.expr) -> bool:
        if isinstance(target, ast.Name):
            return target.id == name
        if isinstance(target, (ast.Tuple, ast.List)):
            return any(names(t.value if isinstance(t, ast.Starred) else t) for t in target.elts)
        return (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Call)
                and isinstance(target.value.func, ast.Name) and target.value.func.id == "globals"
                and isinstance(target.slice, ast.Constant) and target.slice.value == name)

    found: list[tuple[int, object]] = []
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(node, ast.Assign) and any(names(t) for t in node.targets):
            direct = all(isinstance(t, (ast.Name, ast.Subscript)) for t in node.targets)
            found.append((node.lineno, literal(node.value) if direct else _NOT_LITERAL))
        elif isinstance(node, ast.AnnAssign) and node.value is not None and names(node.target):
            found.append((node.lineno, literal(node.value)))
        elif isinstance(node, ast.AugAssign) and names(node.target):
            found.append((node.lineno, _NOT_LITERAL))
        for block in ("body", "orelse", "finalbody"):
            found.extend(_assignments(getattr(node, block, None) or [], name))
        for part in (*(getattr(node, "handlers", None) or ()), *(getattr(node, "cases", None) or ())):
            found.extend(_assignments(part.body, name))
    return found


def _a(type_name: str) -> str:
    return ("an " if type_name[:1] in "aeiou" else "a ") + type_name


def validate(config: Config, settings: tuple[Setting, ...], confdir: str | Path | None = None) -> None:
    """Check the values of ``settings`` in ``config``; ``confdir`` is the directory of the book's ``conf.py``, whose
    line an error names (:func:`setting_origin`).

    Raises:
        ConfigError: a value has another type than declared, or a number is below its minimum; the message starts
            with where the value was set (``…/conf.py:70:`` or ``-D name:``).
    """
    for setting in settings:
        value = getattr(config, setting.name)
        if not isinstance(value, setting.type) or (setting.type is int and isinstance(value, bool)):
            raise ConfigError(f"{setting_origin(config, setting.name, confdir)}: {setting.name} must be "
                              f"{_a(setting.type.__name__)} ({setting.description}), not {value!r}")
        if setting.minimum is not None and value < setting.minimum:
            raise ConfigError(f"{setting_origin(config, setting.name, confdir)}: {setting.name} must be at least "
                              f"{setting.minimum}, not {value!r}")


def declare(app: Sphinx, group: str) -> None:
    """Add the values of ``group`` to Sphinx and check them when the configuration is read."""
    settings = tuple(s for s in SETTINGS if s.group == group)
    for s in settings:
        app.add_config_value(s.name, s.default, s.rebuild, types=[s.type], description=s.description)
    app.connect("config-inited", lambda app, config: validate(config, settings, app.confdir))


def file_setting(app: Sphinx, name: str) -> Path | None:
    """The file the value ``name`` names, relative to the configuration directory; None when the value is ``""``."""
    value = getattr(app.config, name)
    return Path(app.confdir, value) if value else None


def read_file_setting(app: Sphinx, name: str) -> tuple[Path | None, str | None]:
    """The file the value ``name`` names (:func:`file_setting`) and its UTF-8 text.

    Returns:
        ``(None, None)`` when the value is ``""``, ``(path, None)`` when no file is there, else ``(path, text)``.
    Raises:
        OSError, UnicodeDecodeError: the file is there but cannot be read as UTF-8 text.
    """
    path = file_setting(app, name)
    if path is None or not path.is_file():
        return path, None
    return path, path.read_text(encoding="utf-8")


def load_redirects(app: Sphinx) -> dict[str, str]:
    """``{old: new}`` from ``slimebook_anchors_redirects`` (empty without a file).

    Raises:
        ConfigError: the file is not a valid redirects file (:func:`parse_redirects`)."""
    path, text = read_file_setting(app, "slimebook_anchors_redirects")
    if text is None:
        return {}
    try:
        return parse_redirects(text)
    except ValueError as exc:
        raise ConfigError(f"slimebook: {path}: {exc}") from exc
