"""What one build shares: the source store opened for it, and what the builder writes.

The lifecycle of the :class:`~slimebook.store.SourceStore` lives here, not in a directive module, so the
directives, roles and page generators that read the pin all import this small module and nothing imports
back (the way ``sphinx.ext.viewcode`` keeps its state apart from its directives). ``builder-inited`` opens
the store named by ``slimebook_lock`` / ``slimebook_source`` (:func:`open_store`); :func:`get_store` hands it
out, :func:`source_names` the names ``slimebook_source`` gives (``slime-source``, ``{slime}``, …).
:func:`builds_pages` is the one answer to "does this builder get the generated pages";
:func:`page_stamp_base` is what every generated page depends on besides its own data, and
:func:`reading_order` the book's one walk of its toctrees.
"""

from __future__ import annotations

import hashlib
import json
import weakref
from pathlib import Path

import sphinx
from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.environment import BuildEnvironment
from sphinx.errors import ConfigError, ExtensionError

from ..lock import LockError, load_lock
from ..names import SourceNames
from ..snapshots import RENDERER_VERSION
from ..store import SourceError, SourceStore
from .config import declare as declare_config
from .config import load_redirects
from .locale import catalog_digest


def source_names(config: Config) -> SourceNames:
    """The public names ``slimebook_source`` gives (:class:`slimebook.names.SourceNames`): the directive and roles
    the build registers, and the names every check and page of the build recognises citations by.

    Raises:
        ConfigError: ``slimebook_source`` is not a valid source name (the message says what is allowed).
    """
    try:
        return SourceNames(config.slimebook_source)
    except ValueError as exc:
        raise ConfigError(f"slimebook_source: {exc}") from exc


def get_store(env: BuildEnvironment) -> SourceStore:
    """The :class:`~slimebook.store.SourceStore` opened at ``builder-inited``.

    Raises:
        ExtensionError: before ``builder-inited`` has run (no store is open yet).
    """
    store = getattr(env, "slimebook_store", None)
    if store is None:
        raise ExtensionError("slimebook: the source store is not open (builder-inited has not run)")
    return store


def lock_path(env: BuildEnvironment) -> Path:
    """The lock file the open store was read from (a dependency of every document that cites the pin)."""
    return env.slimebook_lock_path  # type: ignore[attr-defined]


def open_store(app: Sphinx) -> None:
    """``builder-inited``: read the lock, open its store and check the pinned commit is there.

    Raises:
        ExtensionError: the lock is invalid (:class:`~slimebook.lock.LockError`) or the pinned commit cannot be
            read (:class:`~slimebook.store.SourceError`); the message is the reader's sentence.
    """
    path = Path(app.confdir, app.config.slimebook_lock)
    try:
        lock = load_lock(path, app.config.slimebook_source)
        store = SourceStore(lock, fetch_command=app.config.slimebook_fetch_command)
        store.require()
    except (LockError, SourceError) as exc:
        raise ExtensionError(f"slimebook: {exc}") from exc
    app.env.slimebook_store = store  # type: ignore[attr-defined]
    app.env.slimebook_lock_path = path  # type: ignore[attr-defined]
    _APPS[app.env] = weakref.ref(app)  # a weak value too: a strong one would keep the key (app.env) alive


#: the application of each open environment (set at ``builder-inited``), for transforms: Sphinx 9 deprecates
#: ``SphinxTransform.app`` and keeps the app only in a private attribute of the environment
_APPS: weakref.WeakKeyDictionary[BuildEnvironment, weakref.ref[Sphinx]] = weakref.WeakKeyDictionary()


def app_of(env: BuildEnvironment) -> Sphinx:
    """The application building with ``env`` (a transform knows only its environment).

    Raises:
        ExtensionError: before ``builder-inited`` has run for ``env``.
    """
    app = _APPS[env]() if env in _APPS else None
    if app is None:
        raise ExtensionError("slimebook: no application for this environment (builder-inited has not run)")
    return app


def close_store(app: Sphinx, exception: BaseException | None) -> None:
    """``build-finished`` (last): stop the store's ``git cat-file`` (a process that builds again, the test suite,
    would otherwise keep one per build; a later read starts it again)."""
    store = getattr(app.env, "slimebook_store", None)
    if store is not None:
        store.close()


def builds_pages(app: Sphinx) -> bool:
    """True when the builder writes generated pages (snapshots, usage pages): HTML, but not epub or singlehtml."""
    return app.builder.format == "html" and app.builder.name != "singlehtml" and not app.builder.name.startswith("epub")


#: names in a template directory that no page is rendered from: hidden files (an editor's swap file, ``.DS_Store``)
#: and backups
_NOT_TEMPLATES = ("~", ".swp", ".swo", ".tmp", ".bak", ".orig")


def template_digest(app: Sphinx) -> str:
    """SHA-256 hex digest of the files the builder's pages are rendered from: every file under each directory of its
    template loader's search path (``templates_path``, the theme and the themes it inherits: templates, and the
    theme's static files whose checksums the pages link), by position of the directory in the path, path relative
    to it and content. Hidden files, backups and ``__pycache__`` are left out (an editor's swap file beside a
    template renews nothing); so is a file that disappears while it is read (an editor saving). Empty for a builder
    without a template loader. Computed once per builder."""
    builder = app.builder
    cached = builder.__dict__.get("_slimebook_template_digest")
    if cached is not None:
        return cached
    digest = hashlib.sha256()
    for position, directory in enumerate(getattr(getattr(builder, "templates", None), "pathchain", None) or ()):
        root = Path(directory)
        digest.update(f"dir {position}\0".encode())  # not the path: a zipped theme is unpacked anew each build
        for path in sorted(root.rglob("*")):
            relative = path.relative_to(root)
            if (any(part.startswith(".") or part == "__pycache__" for part in relative.parts)
                    or path.name.endswith(_NOT_TEMPLATES)):
                continue
            try:
                if not path.is_file():
                    continue
                content = hashlib.sha256(path.read_bytes()).digest()
            except OSError:
                continue
            digest.update(str(relative).encode("utf-8", "surrogateescape") + b"\0" + content)
    builder.__dict__["_slimebook_template_digest"] = result = digest.hexdigest()
    return result


def page_stamp_base(app: Sphinx) -> str:
    """What every generated page depends on besides its own data: config, tags, navigation, renderer, pin, the
    compiled message catalog of the book's language (:func:`.locale.catalog_digest`), the redirect lines (a generated
    page carries a script sending its moved ids on:
    :func:`~slimebook.sphinxext.gates.anchors.moved_ids_script`)
    and the templates and theme it is rendered with (:func:`template_digest`; Sphinx writes every document again
    when a template is newer than the pages).

    Returns:
        a SHA-256 hex digest; equal digests mean a page built from equal data is equal.
    """
    env = app.env
    info = app.builder.create_build_info()  # type: ignore[attr-defined]
    nav = [(doc, env.titles[doc].astext(), env.toctree_includes.get(doc, [])) for doc in sorted(env.titles)]
    payload = json.dumps([info.config_hash, info.tags_hash, nav, RENDERER_VERSION, sphinx.__version__,
                          get_store(env).lock.commit, sorted(load_redirects(app).items()), template_digest(app),
                          catalog_digest(app.config.language)], ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()


def reading_order(env: BuildEnvironment) -> list[str]:
    """Docnames in the book's reading order (a walk of the toctrees from the root document)."""
    order: dict[str, None] = {}
    stack = [env.config.root_doc]
    while stack:
        docname = stack.pop()
        if docname in order:
            continue
        order[docname] = None
        stack.extend(reversed(env.toctree_includes.get(docname, [])))
    return list(order)


def setup(app: Sphinx) -> None:
    """Declare where the pin is read from, open the store when the builder starts and close it when it ends."""
    declare_config(app, "source")  # slimebook_lock, slimebook_source, slimebook_fetch_command
    app.connect("builder-inited", open_store)
    app.connect("build-finished", close_store, priority=900)
