"""Shared fixtures: a small git repository built by the test, a private cache, a lock pointing at it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest_plugins = ("sphinx.testing.fixtures",)

# Fixtures fetch from the small repositories the tests build. A developer's SLIME_SOURCE_URL (pointing at a real
# Slime mirror for `make html`) would override every lock's URL and make those fetches fail, so the suite starts
# without it; tests that need it set it with monkeypatch. The real-book tests read the pin from the cache instead.
# The demo book's override (test-demo-book, source name "demo") likewise.
os.environ.pop("SLIME_SOURCE_URL", None)
os.environ.pop("DEMO_SOURCE_URL", None)

ROOT = Path(__file__).resolve().parent.parent
ROOTS = Path(__file__).resolve().parent / "roots"
CASES = Path(__file__).resolve().parent / "fixtures" / "cases"

#: Case files (``/work/shared/cases``-style inputs kept byte-exact under ``tests/fixtures/cases``) and the path each
#: has in the fixture upstream: a lone carriage return inside a comment, tab-indented code with inner tabs.
CASE_FILES = {"pkg/cr.py": "lone-cr.py", "pkg/tabs2.py": "tabs.py"}

#: A shell script whose cited ranges start or end with a blank line (the leading-blank-lines case).
RUN_SH = b"#!/bin/sh\n\necho one\n\n"

_GIT_ENV = {
    "GIT_AUTHOR_NAME": "Fixture", "GIT_AUTHOR_EMAIL": "fixture@example.invalid",
    "GIT_COMMITTER_NAME": "Fixture", "GIT_COMMITTER_EMAIL": "fixture@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull,
}

# The pinned version of the fixture module (commit 1). Line numbers matter to the tests.
MODULE_V1 = textwrap.dedent('''\
    import asyncio


    def helper(x):
        """Return x."""
        return x


    class Outer:
        class Inner:
            @staticmethod
            @functools.cache
            def method():
                return 1
                # still inside the body

        # a comment at the class's own indentation


    async def run():
        await asyncio.sleep(0)
    ''')

# Commit 2 moves ``helper`` below ``run``: a reader must still see commit 1 at the pin.
MODULE_V2 = textwrap.dedent('''\
    import asyncio


    async def run():
        await asyncio.sleep(0)


    def helper(x):
        """Return x."""
        return x
    ''')


def git(*args: str, cwd: Path) -> str:
    """Run git with a fixed identity and dates; return stdout."""
    env = {**os.environ, **_GIT_ENV}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def commit_all(repo: Path, message: str) -> str:
    """Stage every change in the work tree ``repo`` (``git add -A``), commit it with ``message``; return the new
    commit's sha."""
    git("add", "-A", cwd=repo)
    git("commit", "--quiet", "-m", message, cwd=repo)
    return git("rev-parse", "HEAD", cwd=repo).strip()


@dataclass
class SourceRepo:
    """A fixture upstream: ``path`` (work tree), ``pin`` (commit 1), ``head`` (commit 2)."""

    path: Path
    pin: str
    head: str

    def lock_text(self, url: str | None = None, name: str = "slime") -> str:
        """A lock whose table ``[name]`` pins commit 1 of this repository (``url``: where to fetch it from)."""
        return textwrap.dedent(f'''\
            [{name}]
            url = "{url or self.path.as_posix()}"
            commit = "{self.pin}"
            license = "Apache-2.0"
            blob_url = "https://example.invalid/{name}/blob/{{commit}}/{{path}}{{anchor}}"
            ''')


def make_source_repo(base: Path) -> SourceRepo:
    """Build the fixture upstream: commit 1 (the pin) and commit 2 (a moved function)."""
    repo = base / "upstream"
    (repo / "pkg").mkdir(parents=True)
    git("init", "--quiet", "--initial-branch=main", str(repo), cwd=base)
    (repo / "pkg" / "mod.py").write_text(MODULE_V1)
    (repo / "pkg" / "crlf.py").write_bytes(b"def f():\r\n    return 1\r\n\r\n\r\ndef g():\r\n    pass\r\n")
    (repo / "pkg" / "blob.bin").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (repo / "pkg" / "latin.py").write_bytes("# caf\xe9\n".encode("latin-1"))
    (repo / "pkg" / "dup.py").write_text("def f():\n    pass\n\n\ndef f():\n    return 2\n")
    (repo / "README.md").write_text("# upstream\n\nline three\n")
    for target, name in CASE_FILES.items():
        (repo / target).write_bytes((CASES / name).read_bytes())
    (repo / "pkg" / "run.sh").write_bytes(RUN_SH)
    os.symlink("mod.py", repo / "pkg" / "alias.py")
    os.symlink("../../outside.py", repo / "pkg" / "escape.py")
    pin = commit_all(repo, "one")
    (repo / "pkg" / "mod.py").write_text(MODULE_V2)
    head = commit_all(repo, "two: move helper")
    return SourceRepo(repo, pin, head)


def blank_pdf(width: int, height: int) -> bytes:
    """A one-page PDF of ``width`` x ``height`` pt with one diagonal line: a stand-in for an mmdc diagram."""
    content = f"0 0 m {width} {height} l S".encode()
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {width} {height}] /Contents 4 0 R "
               f"/Resources << >> >>".encode(),
               b"<< /Length " + str(len(content)).encode() + b" >>\nstream\n" + content + b"\nendstream"]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


@pytest.fixture(scope="session")
def source_repo(tmp_path_factory: pytest.TempPathFactory) -> SourceRepo:
    return make_source_repo(tmp_path_factory.mktemp("git"))


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private, empty source cache; SLIME_SOURCE_URL is cleared."""
    root = tmp_path / "cache"
    monkeypatch.setenv("SLIMEBOOK_CACHE", str(root))
    monkeypatch.delenv("SLIME_SOURCE_URL", raising=False)
    return root


@pytest.fixture
def lock_file(tmp_path: Path, source_repo: SourceRepo) -> Path:
    path = tmp_path / "sources.toml"
    path.write_text(source_repo.lock_text())
    return path


@pytest.fixture(scope="session")
def fetched_cache(tmp_path_factory: pytest.TempPathFactory, source_repo: SourceRepo) -> Path:
    """A cache that already holds the fixture pin (shared by Sphinx build tests)."""
    from slimebook.lock import load_lock
    from slimebook.store import SourceStore

    root = tmp_path_factory.mktemp("cache")
    lock = tmp_path_factory.mktemp("lock") / "sources.toml"
    lock.write_text(source_repo.lock_text())
    SourceStore(load_lock(lock), root=root).fetch()
    return root


def _define(value: object) -> str:
    """A configuration value as ``sphinx-build -D`` takes it (a list comma-separated, a bool as 0 or 1)."""
    if isinstance(value, list):
        return ",".join(value)
    return str(int(value)) if isinstance(value, bool) else str(value)


def fresh_build(srcdir: Path, out: Path, buildername: str = "html", **overrides: object) -> tuple[Path, str]:
    """Build ``srcdir`` with ``python -m sphinx`` in a fresh process, as a real build runs; ``(output directory,
    warnings)``. For tests of what a book's language makes of every word: in a process where a test built a Chinese
    book before (or failed to construct one), Sphinx's own words ("Python Module Index"…) can stay Chinese.

    Raises:
        AssertionError: the build failed (its stderr in the message).
    """
    outdir = out / buildername
    defines = [f"-D{key}={_define(value)}" for key, value in overrides.items()]
    done = subprocess.run([sys.executable, "-m", "sphinx", "-b", buildername, "-q", "-d", str(out / "doctrees"),
                           *defines, str(srcdir), str(outdir)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    warnings = "\n".join(line for line in done.stderr.splitlines()
                         if not line.startswith(("Building prefix", "Loading model", "Prefix dict", "Dumping model")))
    return outdir, warnings


@pytest.fixture
def sphinx_build():
    """Return ``build(srcdir, buildername="html", **kwargs) -> app``: a built ``SphinxTestApp`` whose
    status and warnings go to ``StringIO`` (``app._warning``); every app is cleaned up after the test."""
    from io import StringIO

    from sphinx.testing.util import SphinxTestApp

    apps: list[SphinxTestApp] = []

    def _build(srcdir: Path, buildername: str = "html", **kwargs) -> SphinxTestApp:
        app = SphinxTestApp(buildername, srcdir=srcdir, status=StringIO(), warning=StringIO(), **kwargs)
        apps.append(app)
        app.build()
        return app

    yield _build
    for app in apps:
        app.cleanup()


def _git_status() -> str:
    return subprocess.run(["git", "status", "--porcelain", "--ignored=no"], cwd=ROOT, capture_output=True,
                          text=True, check=False).stdout


@pytest.fixture(scope="session")
def realbook_html(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real book built once per test session (``-W --keep-going``, into a temporary directory) for every
    real-book and browser test; skips, saying why, when the pinned Slime commit is not in the source cache."""
    import sys

    from slimebook.lock import load_lock
    from slimebook.store import SourceStore

    store = SourceStore(load_lock(ROOT / "sources" / "sources.toml"))
    if not store.is_present():
        pytest.skip(f"the pinned Slime commit {store.lock.commit} is not in the source cache {store.root} "
                    "(run `make sources`, with SLIME_SOURCE_URL set when offline)")
    out = tmp_path_factory.mktemp("realbook")
    before = _git_status()
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", "-d", str(out / "doctrees"),
         str(ROOT), str(out / "html")],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert _git_status() == before, "the build wrote into the source tree"
    return out / "html"


def root_at_pin(name: str, base: Path, upstream: SourceRepo) -> tuple[Path, Path]:
    """Copy ``tests/roots/test-<name>`` under ``base``, lock it to ``upstream``'s pin and fetch that pin into
    ``base/cache``. Returns ``(srcdir, cache)``; build with ``SLIMEBOOK_CACHE`` set to ``cache``."""
    from slimebook.lock import load_lock
    from slimebook.store import SourceStore

    src = copy_root(name, base)
    (src / "sources.toml").write_text(upstream.lock_text())
    cache = base / "cache"
    SourceStore(load_lock(src / "sources.toml"), root=cache).fetch()
    return src, cache


#: Where the demo book's lock points: nowhere reachable, so every fetch goes through ``DEMO_SOURCE_URL``.
DEMO_URL = "https://example.invalid/demo.git"

# The demo repository (the demo book's upstream): a library named ``demo`` with its own API (a pool of workers that
# runs jobs), a script that uses it beside asyncio, and a guide whose code block uses it too. Line numbers matter to
# the demo book and its tests.
DEMO_INIT = textwrap.dedent('''\
    """The demo library: a pool of workers that runs jobs."""

    from demo.pool import Job, Pool, connect

    __all__ = ["Job", "Pool", "connect"]
    ''')

DEMO_POOL = textwrap.dedent('''\
    import asyncio


    class Job:
        """One submitted call: wait for its result, or cancel it."""

        def __init__(self, fn, arg):
            self.fn, self.arg = fn, arg
            self.cancelled = False

        def wait(self):
            return None if self.cancelled else self.fn(self.arg)

        def cancel(self):
            self.cancelled = True


    class Pool:
        """Workers behind one address; submit hands them a call."""

        def __init__(self, url=""):
            self.url = url
            self.jobs = []

        def submit(self, fn, arg=None):
            job = Job(fn, arg)
            self.jobs.append(job)
            return job

        def close(self):
            self.jobs.clear()

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.close()


    def connect(url):
        return Pool(url)


    async def drain(pool):
        await asyncio.sleep(0)
        return [job.wait() for job in pool.jobs]
    ''')

#: Commit 2 gives ``demo/pool.py`` a module docstring: every line of the pinned version moves down by two.
DEMO_POOL_V2 = '"""Jobs, and the pool of workers that runs them."""\n\n' + DEMO_POOL

DEMO_JOBS = textwrap.dedent('''\
    import asyncio

    import demo
    from demo import Pool


    async def run(n):
        pool = demo.connect("tcp://x")
        job = pool.submit(n)
        await asyncio.sleep(0)
        return job.wait()


    def stop(p: Pool):
        p.close()
        with demo.pool.Pool() as other:
            other.submit(2).cancel()
    ''')

DEMO_GUIDE = textwrap.dedent('''\
    # Guide

    ```python
    import demo

    demo.connect("tcp://y").submit(1)
    ```
    ''')


def make_demo_repo(base: Path) -> SourceRepo:
    """Build the demo repository: commit 1 (the pin) and commit 2 (``demo/pool.py`` two lines lower)."""
    repo = base / "demo"
    for folder in ("demo", "app", "docs"):
        (repo / folder).mkdir(parents=True)
    git("init", "--quiet", "--initial-branch=main", str(repo), cwd=base)
    (repo / "README.md").write_text("# demo\n\nA pool of workers that runs jobs.\n")
    (repo / "demo" / "__init__.py").write_text(DEMO_INIT)
    (repo / "demo" / "pool.py").write_text(DEMO_POOL)
    (repo / "app" / "jobs.py").write_text(DEMO_JOBS)
    (repo / "docs" / "guide.md").write_text(DEMO_GUIDE)
    pin = commit_all(repo, "one")
    (repo / "demo" / "pool.py").write_text(DEMO_POOL_V2)
    head = commit_all(repo, "two: a module docstring")
    return SourceRepo(repo, pin, head)


@pytest.fixture(scope="session")
def demo_repo(tmp_path_factory: pytest.TempPathFactory) -> SourceRepo:
    """The demo book's upstream (:func:`make_demo_repo`), built once per session."""
    return make_demo_repo(tmp_path_factory.mktemp("demo-git"))


@pytest.fixture
def demo_book(tmp_path: Path, demo_repo: SourceRepo, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of ``tests/roots/test-demo-book`` (source name ``demo``) whose lock pins the demo repository's commit 1
    under an unreachable URL, with ``DEMO_SOURCE_URL`` pointing at the repository and a private cache
    (``SLIMEBOOK_CACHE``) already holding the pin. Returns the book's directory."""
    from slimebook.lock import load_lock
    from slimebook.store import SourceStore

    book = copy_root("demo-book", tmp_path)
    lock = book / "locks" / "sources.toml"
    lock.parent.mkdir()
    lock.write_text(demo_repo.lock_text(url=DEMO_URL, name="demo"))
    monkeypatch.setenv("SLIMEBOOK_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("DEMO_SOURCE_URL", str(demo_repo.path))
    SourceStore(load_lock(lock, "demo")).fetch()
    return book


def copy_root(name: str, dest: Path) -> Path:
    """Copy ``tests/roots/test-<name>`` to ``dest`` and return the copy."""
    target = dest / f"test-{name}"
    shutil.copytree(ROOTS / f"test-{name}", target)
    return target


# -- what a build writes, read as text ---------------------------------------------------------------------------
#: CJK characters and punctuation: radicals, symbols and punctuation (U+3000…), kana, Hangul, ideographs, the
#: compatibility and full-width forms (U+FF00…).
CJK = re.compile("[\u2e80-\u2fff\u3000-\u30ff\u3100-\u31ff\u3200-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
                 "\ufe30-\ufe4f\uff00-\uffef\U00020000-\U0002ffff]")

_CSS_COMMENT = re.compile(r"/\*.*?\*/", re.S)


def unlabelled_references(tex: str) -> set[str]:
    """The targets of ``\\hyperref[\\detokenize{…}]`` links in a LaTeX document that no ``\\label`` defines: links
    that go nowhere in the PDF (LaTeX only warns "Hyper reference … undefined")."""
    labels = set(re.findall(r"\\label\{\\detokenize\{([^}]*)\}\}", tex))
    return set(re.findall(r"\\hyperref\[\\detokenize\{([^}]*)\}\]", tex)) - labels


def output_texts(outdir: Path) -> dict[str, str]:
    """Every file a build wrote under ``outdir`` that reads as text, by path relative to ``outdir``: the pages,
    scripts, styles, data files, ``.tex`` and ``.sty``; ``objects.inv`` decompressed; a stylesheet without its
    comments (a reader never sees them, and a note in ``slimebook-usage.css`` quotes the Chinese headers it keeps
    whole: changing it would change the ``?v=`` checksum in every page of the Chinese book). Images, fonts and other
    binary files are left out."""
    import zlib

    found = {}
    for path in sorted(p for p in outdir.rglob("*") if p.is_file()):
        data = path.read_bytes()
        if path.name == "objects.inv":
            header, _sep, body = data.partition(b"compressed using zlib.\n")
            data = header + _sep + zlib.decompress(body)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue  # images, fonts, PDFs
        found[path.relative_to(outdir).as_posix()] = _CSS_COMMENT.sub("", text) if path.suffix == ".css" else text
    return found


def cjk_leaks(texts: dict[str, str]) -> dict[str, str]:
    """Per file of ``texts`` (:func:`output_texts`) holding a CJK character, the first one with the text around it
    (``"line 12: …"``)."""
    found = {}
    for name, text in texts.items():
        match = CJK.search(text)
        if match:
            line = text.count("\n", 0, match.start()) + 1
            found[name] = f"line {line}: {' '.join(text[max(0, match.start() - 40):match.end() + 40].split())}"
    return found
