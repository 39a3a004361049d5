"""``python -m slimebook.sphinxext.locale``: compile every catalog's ``.po`` into its ``.mo`` (run after editing a
``.po``; the test suite checks the committed ``.mo`` files are up to date)."""

from __future__ import annotations

from . import LOCALE_DIR, compile_catalogs

if __name__ == "__main__":
    for mo in compile_catalogs():
        print(mo.relative_to(LOCALE_DIR))
