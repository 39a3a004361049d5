"""The drift checker: each citation read at the old commit and followed to the new one.

:class:`DriftChecker` reads files through two stores (files, parses and line diffs cached per blob), picks the
rule per kind of selection (``:pyobject:`` by qualified name, ``:lines:`` by :func:`.relocate.relocate`, a whole
file by equality) and returns a :class:`~.model.Drift` per citation.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ..excerpt import INVALID_OPTION_PAIRS, ExcerptError, parse_line_spec
from ..pyranges import Definition, SymbolError, definitions, select_definition
from ..store import SourceContentError, SourceError, SourcePathError, SourceStore, renames
from .model import Cited, Drift, Runs, Status, runs_label
from .relocate import map_range, relocate, shift_emphasize

__all__ = ["DriftChecker"]


# -- one file at one commit ----------------------------------------------------------------------------------------
@dataclass
class _File:
    path: str
    blob: str
    lines: list[str]
    _defs: list[Definition] | None = field(default=None, repr=False)
    _defs_error: str | None = field(default=None, repr=False)

    def symbol(self, qualname: str) -> tuple[int, int]:
        """Like :func:`slimebook.pyranges.symbol_range`, with the parse cached per file."""
        if self._defs is None and self._defs_error is None:
            try:
                self._defs = definitions("\n".join(self.lines) + "\n")
            except SymbolError as exc:
                self._defs_error = str(exc)
        if self._defs_error is not None:
            raise SymbolError(self._defs_error)
        assert self._defs is not None
        return select_definition(self._defs, qualname)

    def same_name(self, qualname: str) -> list[Definition]:
        """Definitions whose last name component equals ``qualname``'s (for a hint)."""
        try:
            self.symbol(qualname)
        except SymbolError:
            pass
        last = qualname.rsplit(".", 1)[-1]
        return [d for d in self._defs or [] if d.qualname.rsplit(".", 1)[-1] == last]


def _selected(cited: Cited, old: _File) -> Runs:
    """The runs ``cited`` selects in ``old``: its symbol, its ``:lines:``, or the whole file.

    Raises:
        SymbolError: the symbol is not defined there.
        ExcerptError: the line spec is not valid for the file.
    """
    if cited.pyobject:
        return (old.symbol(cited.pyobject),)
    if cited.lines:
        return tuple(parse_line_spec(cited.lines, total=len(old.lines)))
    return ((1, len(old.lines)),) if old.lines else ()


class DriftChecker:
    """Compare citations between an old and a new commit of the same repository.

    Args:
        old: a store holding the commit the citations were written against.
        new: a store holding the commit to compare with.

    Both commits must be in the cache (:meth:`SourceStore.require`); nothing is fetched. Files,
    parses and line diffs are cached per blob, so checking a whole book reads each file once.
    """

    def __init__(self, old: SourceStore, new: SourceStore) -> None:
        self.old = old
        self.new = new
        self._files: dict[tuple[str, str], _File | SourceError] = {}
        self._opcodes: dict[tuple[str, str], list[tuple[str, int, int, int, int]]] = {}
        self._renames: dict[str, tuple[str, str]] | None = None

    def check_all(self, cited: Iterable[Cited]) -> list[Drift]:
        """:meth:`check` each citation, in the given order."""
        return [self.check(c) for c in cited]

    def check(self, cited: Cited) -> Drift:
        """Follow one citation from the old commit to the new one.

        Returns:
            Its :class:`Drift`. Problems with the citation itself are a ``broken`` or ``gone``
            status with a note, never an exception.
        Raises:
            PinMissingError: a commit is not in the cache.
        """
        old_label = f"{cited.path}@{self.old.lock.short}"
        new_label = f"{cited.path}@{self.new.lock.short}"
        base = Drift(cited, Status.BROKEN, old_label=old_label, new_label=new_label)

        def broken(note: str) -> Drift:
            return _replace(base, note=f"at {self.old.lock.short}: {note}")

        if cited.error:
            return broken(cited.error)
        given = {k for k, v in (("lines", cited.lines), ("pyobject", cited.pyobject)) if v}
        for pair, reason in INVALID_OPTION_PAIRS.items():
            if pair <= given:
                return broken(reason)
        old = self._read(self.old, cited.path)
        if isinstance(old, SourceError):
            return broken(str(old))
        try:
            old_runs = _selected(cited, old)
        except (SymbolError, ExcerptError) as exc:
            return broken(f"{cited.path}: {exc}")
        base = _replace(base, old_runs=old_runs, old_blob=old.blob, old_text=_text(old.lines, old_runs))

        new = self._read(self.new, cited.path)
        if isinstance(new, SourceError):
            return self._gone(base, old, str(new))
        base = _replace(base, new_blob=new.blob)
        if cited.pyobject:
            return self._pyobject(base, old, new)
        if cited.lines:
            return self._lines(base, old, new)
        return self._whole(base, old, new)

    # -- by kind --------------------------------------------------------------------------------------
    def _whole(self, base: Drift, old: _File, new: _File) -> Drift:
        """A citation of a whole file: unchanged when every line is, else changed."""
        if new.lines == old.lines:
            return _replace(base, status=Status.UNCHANGED, new_runs=base.old_runs, new_text=base.old_text)
        runs = ((1, len(new.lines)),) if new.lines else ()
        return _replace(base, status=Status.CHANGED, new_runs=runs, new_text=tuple(new.lines))

    def _pyobject(self, base: Drift, old: _File, new: _File) -> Drift:
        qualname = base.cited.pyobject
        assert qualname and base.old_runs
        try:
            runs: Runs = (new.symbol(qualname),)
        except SymbolError as exc:
            note = f"at {self.new.lock.short}: {exc}"
            others = [d for d in new.same_name(qualname) if d.qualname != qualname]
            if others:
                note += "; same name: " + ", ".join(f"{d.qualname} (L{d.start})" for d in others)
            return _replace(base, status=Status.GONE, note=note)
        text = _text(new.lines, runs)
        if text != base.old_text:
            return _replace(base, status=Status.CHANGED, new_runs=runs, new_text=text)
        shift = runs[0][0] - base.old_runs[0][0]
        status = Status.UNCHANGED if shift == 0 else Status.MOVED
        emphasize = shift_emphasize(base.cited.emphasize, base.old_runs, runs)
        return _replace(base, status=status, new_runs=runs, new_text=text, new_emphasize=emphasize)

    def _lines(self, base: Drift, old: _File, new: _File) -> Drift:
        old_runs = base.old_runs
        assert old_runs is not None
        opcodes = self._diff(old, new)
        found, note = relocate(old.lines, new.lines, old_runs, opcodes)
        if found is None:
            runs = tuple(
                (a, b) for a, b in (map_range(opcodes, a, b) for a, b in old_runs) if a <= b
            )
            text = _text(new.lines, runs)
            note = "not found verbatim; " + ("→ is the counterpart by line diff" if runs else "its lines were deleted")
            return _replace(base, status=Status.CHANGED, new_runs=runs or None, new_text=text, note=note)
        status = Status.UNCHANGED if found == old_runs else Status.MOVED
        emphasize = shift_emphasize(base.cited.emphasize, old_runs, found)
        return _replace(base, status=status, new_runs=found, new_text=base.old_text,
                        new_emphasize=emphasize, note=note)

    def _gone(self, base: Drift, old: _File, reason: str) -> Drift:
        note = f"at {self.new.lock.short}: {reason}"
        renamed = self.renames().get(old.path)
        if renamed is None:
            return _replace(base, status=Status.GONE, note=note)
        target, score = renamed
        note += f"; git detects a rename to {target} ({score}% similar)"
        hint = self._follow(base, target)
        if hint:
            note += f"; {hint}"
        return _replace(base, status=Status.GONE, note=note, renamed_to=target)

    def _follow(self, base: Drift, target: str) -> str:
        """Where the old selection is in the file ``target`` (a rename) at the new commit, as a phrase."""
        new = self._read(self.new, target)
        if isinstance(new, SourceError) or base.old_runs is None:
            return ""
        cited = base.cited
        if cited.pyobject:
            try:
                runs: Runs = (new.symbol(cited.pyobject),)
            except SymbolError:
                return f"{cited.pyobject} is not in it"
            same = _text(new.lines, runs) == base.old_text
            return f"{cited.pyobject} is there at {runs_label(runs)}" + (" (same text)" if same else " (text differs)")
        if cited.lines:
            old = self._read(self.old, cited.path)
            assert not isinstance(old, SourceError)
            found, _ = relocate(old.lines, new.lines, base.old_runs, self._diff(old, new))
            if found:
                return f"the cited text is there at {runs_label(found)}"
            return "the cited text is not in it verbatim"
        return ""

    # -- reading ----------------------------------------------------------------------------------------
    def _read(self, store: SourceStore, path: str) -> _File | SourceError:
        key = (store.lock.commit, path)
        if key not in self._files:
            try:
                real = store.resolve(path)
                self._files[key] = _File(real, store.blob_id(real), store.read_lines(real))
            except (SourcePathError, SourceContentError) as exc:
                self._files[key] = exc
        return self._files[key]

    def _diff(self, old: _File, new: _File) -> list[tuple[str, int, int, int, int]]:
        key = (old.blob, new.blob)
        if key not in self._opcodes:
            matcher = difflib.SequenceMatcher(None, old.lines, new.lines, autojunk=False)
            self._opcodes[key] = matcher.get_opcodes()
        return self._opcodes[key]

    def renames(self) -> dict[str, tuple[str, str]]:
        """Renames git detects between the two commits: old path → (new path, similarity percent).

        See :func:`slimebook.store.renames`; any git failure gives an empty mapping (renames are only a hint).
        """
        if self._renames is None:
            self._renames = renames(self.old, self.new)
        return self._renames


def _replace(drift: Drift, **changes: object) -> Drift:
    return dataclasses.replace(drift, **changes)


def _text(lines: Sequence[str], runs: Runs) -> tuple[str, ...]:
    return tuple(line for a, b in runs for line in lines[a - 1 : b])
