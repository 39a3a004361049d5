"""The book copied for a benchmark: its sources without build output, caches, the venv, tests or benchmarks, and
with the extension's bytecode compiled (used by ``bench/build.py``, ``bench/edit.py`` and ``bench/livehtml.py``).

Why compile: Python writes ``__pycache__`` beside a module the first time it imports it, so a checkout runs its
extension from bytecode from the second build on. A copy without ``__pycache__`` runs where bytecode writing is off
(``PYTHONDONTWRITEBYTECODE=1``, set in this project's shells) compiled the extension's 60-odd modules from source in
every build, about 0.06 s that no user pays twice and that the one-page floor of ``bench/edit.py`` (installed
packages only, compiled when installed) never pays. :func:`copy_book` compiles them once, as an install would.
"""

from __future__ import annotations

import compileall
import shutil
from pathlib import Path

__all__ = ["ROOT", "SKIP", "copy_book"]

ROOT = Path(__file__).resolve().parent.parent
#: what a copy leaves out: outputs, caches, the venv, node modules, and what no build reads
SKIP = shutil.ignore_patterns("_build", ".venv", ".git", "node_modules", "__pycache__", ".ruff_cache",
                              ".hypothesis", ".pytest_cache", "*.egg-info", "bench", "tests")


def copy_book(dest: Path) -> Path:
    """Copy the book at :data:`ROOT` to ``dest`` (which must not exist) and compile ``dest/_ext`` to bytecode.

    Returns:
        ``dest``.
    Raises:
        FileExistsError: ``dest`` exists.
        RuntimeError: a module of the extension does not compile.
    """
    shutil.copytree(ROOT, dest, ignore=SKIP, symlinks=True)
    if not compileall.compile_dir(dest / "_ext", quiet=1):
        raise RuntimeError(f"the extension in {dest / '_ext'} does not compile")
    return dest
