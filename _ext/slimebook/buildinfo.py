"""Facts about this build that prose may state: the pin (from the lock) and the Python that runs the experiments.

Pipeline position: ``lock`` → **buildinfo** → Sphinx layer (:mod:`slimebook.sphinxext.directives.buildinfo`, the
``{buildinfo}`` role). Nothing here knows about Sphinx; :func:`build_facts` takes a
:class:`~slimebook.lock.SourceLock` and returns plain strings, so no figure of the references page is typed
by hand.
"""

from __future__ import annotations

import platform
import sys

from .lock import SourceLock

__all__ = ["FACT_KEYS", "FactError", "build_facts", "fact"]

#: Key → what it is (the error message lists them).
FACT_KEYS: dict[str, str] = {
    "pin": "the full 40-hex sha of the pinned commit",
    "pin-short": "its 7-hex abbreviation (as in excerpt captions)",
    "upstream": "the upstream git URL in the lock",
    "license": "the upstream license (SPDX id)",
    "python": "the version of the interpreter running the build, which runs the experiments (3.11.7)",
    "python-minor": "its major.minor (3.11), the part the experiment cache is keyed on",
    "python-impl": "its implementation (CPython)",
}


class FactError(KeyError):
    """An unknown key; ``str()`` lists the valid keys."""

    def __str__(self) -> str:  # KeyError's str() would repr() the message
        return str(self.args[0])


def build_facts(lock: SourceLock) -> dict[str, str]:
    """Every fact of :data:`FACT_KEYS`, as text.

    Args:
        lock: the pin of this build.
    Returns:
        key → value; the Python facts are those of the running interpreter (:data:`sys.version_info`),
        which is the one :func:`slimebook.experiments.run_experiment` runs scripts with (``sys.executable``).
    """
    version = sys.version_info
    return {
        "pin": lock.commit,
        "pin-short": lock.short,
        "upstream": lock.url,
        "license": lock.license,
        "python": platform.python_version(),
        "python-minor": f"{version.major}.{version.minor}",
        "python-impl": platform.python_implementation(),
    }


def fact(lock: SourceLock, key: str) -> str:
    """The fact named ``key`` (surrounding spaces ignored).

    Raises:
        FactError: ``key`` is not in :data:`FACT_KEYS`.
    """
    facts = build_facts(lock)
    key = key.strip()
    if key not in facts:
        raise FactError(f"unknown key {key!r}; use one of {', '.join(FACT_KEYS)}")
    return facts[key]
