"""Guards of the modules that patch Sphinx or a library: does what a patch replaces still exist with the shape it was
written for?

A module of :mod:`slimebook.sphinxext.accelerate` or :mod:`slimebook.sphinxext.fixes` declares what it relies on as
data: ``SPHINX`` (the lowest and highest ``(major, minor)`` of Sphinx it was written for, both included) and
``REQUIRES`` (:class:`Requirement` rows: an attribute path and the parameters a callable there must accept), and
may define ``usable()`` for what a path cannot say (instance attributes, which :func:`names_in` finds in the code of
the ``__init__`` that sets them; behaviour). Before its ``setup`` runs, :func:`step_aside_reason` checks all three; a
module that fails steps aside with one info line naming itself and the Sphinx version (:func:`step_aside`), and the
build goes on with Sphinx's stock behaviour. So an upgrade of Sphinx costs speed (or a fix Sphinx may then have made
itself), never the build. What can only be checked when a build needs it (jieba, which only a Chinese search index
imports) is checked then, and a module that fails steps aside with the same line.
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass
from types import CodeType, ModuleType

import sphinx
from sphinx.application import Sphinx
from sphinx.util import logging

__all__ = ["Requirement", "code_of", "missing", "names_in", "set_up_guarded", "step_aside", "step_aside_reason"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Requirement:
    """One thing a patch relies on.

    Attributes:
        target: ``"module:attribute.path"`` (``"sphinx.search:IndexBuilder._word_collector"``); the module is
            imported, then each dotted attribute read.
        params: names of parameters the callable at ``target`` must accept (empty: it need only exist).
    """

    target: str
    params: tuple[str, ...] = ()


def _resolve(target: str) -> object:
    module_name, _, path = target.partition(":")
    value: object = importlib.import_module(module_name)
    for name in path.split(".") if path else ():
        value = getattr(value, name)
    return value


def missing(requirements: tuple[Requirement, ...]) -> list[str]:
    """The requirements not met, each as a short phrase (``"sphinx.search:IndexBuilder._word_collector"``, or
    ``"… (parameter 'tags')"``); empty when all are met. A parameter is accepted when the callable names it or takes
    ``**kwargs``. Never raises: a module that fails to import, for whatever reason, is a requirement not met."""
    problems = []
    for requirement in requirements:
        try:
            value = _resolve(requirement.target)
        except Exception:  # noqa: BLE001 - ImportError, AttributeError, or whatever a module raises when imported
            problems.append(requirement.target)
            continue
        if requirement.params:
            try:
                params = inspect.signature(value).parameters  # type: ignore[arg-type]
            except (TypeError, ValueError):
                problems.append(f"{requirement.target} (no signature)")
                continue
            accepts_any = any(p.kind is p.VAR_KEYWORD for p in params.values())
            problems.extend(f"{requirement.target} (parameter {name!r})" for name in requirement.params
                            if name not in params and not accepts_any)
    return problems


def code_of(function: object) -> CodeType | None:
    """The code object of ``function`` (a function or method), read through the wrappers that name what they wrap
    in ``__wrapped__`` (:func:`functools.wraps`, :func:`inspect.unwrap`): a probe that read the wrapper's own code
    would find another extension's, a profiler's or a benchmark's wrapper where Sphinx's method is, and step aside.
    ``None`` when there is no Python code (a builtin, a missing attribute: ``None``)."""
    if not callable(function):
        return None
    try:
        code = getattr(inspect.unwrap(function), "__code__", None)
    except ValueError:  # a cycle of __wrapped__
        return None
    return code if isinstance(code, CodeType) else None


def names_in(function: object, *names: str) -> bool:
    """Whether the code of ``function`` (a function or method, and the functions and comprehensions nested in it;
    :func:`code_of`) uses each of ``names`` as an attribute or global name (``co_names``): how a ``usable()`` probe
    checks that an instance attribute a patch relies on is still set or read where it was
    (``names_in(IndexBuilder.__init__, "_index_entries")``). False when ``function`` has no Python code."""
    code = code_of(function)
    if code is None:
        return False
    found: set[str] = set()
    stack = [code]
    while stack:
        each = stack.pop()
        found.update(each.co_names)
        stack.extend(const for const in each.co_consts if isinstance(const, CodeType))
    return set(names) <= found


def step_aside_reason(module: ModuleType, version: tuple[int, int] | None = None) -> str | None:
    """Why ``module`` must not patch this Sphinx (``None``: it may): a Sphinx ``version`` (default: the running one,
    ``(major, minor)``) outside the module's ``SPHINX`` range, a :func:`missing` requirement of its ``REQUIRES``, or
    its ``usable()`` returning false or raising. Never raises."""
    version = version or tuple(sphinx.version_info[:2])  # type: ignore[assignment]
    lowest, highest = getattr(module, "SPHINX", ((0, 0), (999, 0)))
    if not lowest <= version <= highest:
        return (f"written for Sphinx {lowest[0]}.{lowest[1]}–{highest[0]}.{highest[1]}, "
                f"not {version[0]}.{version[1]}")
    gone = missing(getattr(module, "REQUIRES", ()))
    if gone:
        return "it patches what is not there: " + ", ".join(gone)
    usable = getattr(module, "usable", None)  # what REQUIRES cannot say: instance attributes, behaviour
    if usable is None:
        return None
    try:
        fits = usable()
    except Exception as exc:  # noqa: BLE001 - a probe that fails on another Sphinx says the same as False
        return f"{module.__name__}.usable() failed ({type(exc).__name__}: {exc})"
    return None if fits else f"{module.__name__}.usable() found this Sphinx different"


def step_aside(module_name: str, reason: str) -> None:
    """Log the one info line of a module that steps aside: ``slimebook: <package>.<module> steps aside on Sphinx
    <version>: <reason>; the build goes on with Sphinx's own behaviour`` (``module_name`` is the full dotted name;
    the line keeps its last two parts, ``accelerate.search``)."""
    logger.info("slimebook: %s steps aside on Sphinx %s: %s; the build goes on with Sphinx's own behaviour",
                ".".join(module_name.split(".")[-2:]), sphinx.__version__, reason)


def set_up_guarded(app: Sphinx, package: str, names: tuple[str, ...]) -> list[str]:
    """Import and set up each module ``package.name`` whose guard passes, in order; log one info line for each that
    steps aside (it cannot be imported, or :func:`step_aside_reason` gives a reason; :func:`step_aside`). Returns the
    names set up."""
    done = []
    for name in names:
        try:
            module = importlib.import_module(f"{package}.{name}")
        except (ImportError, AttributeError) as exc:
            reason: str | None = f"it cannot be imported ({exc})"
        else:
            reason = step_aside_reason(module)
        if reason is not None:
            step_aside(f"{package}.{name}", reason)
            continue
        module.setup(app)
        done.append(name)
    return done
