"""Written-down expectations for the scanner: literal occurrence ids and which import a twice-bound name means.

The ids below were computed once, by hand, with ``hashlib.sha1`` over the documented key (path, scope, kind, name,
ordinal joined by NUL bytes), not by :func:`slimebook.scan.records.occurrence_id`; a change to the id rule (a field
dropped from the key, the ordinal counted per file instead of per (scope, kind, name)) fails here.
"""

from __future__ import annotations

from slimebook.scan import scan_code
from slimebook.scan.records import assign_ids, occurrence_id

# Two functions with the same calls: the enclosing scope is what tells their records apart.
TWO_SCOPES = (
    "import asyncio\n"
    "\n"
    "\n"
    "async def f():\n"
    "    await asyncio.sleep(1)\n"
    "\n"
    "\n"
    "async def g():\n"
    "    await asyncio.sleep(1)\n"
    "    await asyncio.sleep(2)\n"
)


def test_occurrence_ids_are_pinned_literals() -> None:
    records = scan_code(TWO_SCOPES).records
    ids = [(occ, rec[0], rec[4], rec[5], rec[6]) for occ, rec in assign_ids("pkg/a.py", records)]
    assert ids == [
        ("occ-327ec7a2ff19", 1, "<module>", "import", "asyncio"),
        ("occ-109a8bd5bd9c", 4, "f", "syntax", "async_def"),
        ("occ-a0d21ec28b32", 5, "f", "syntax", "await"),
        ("occ-d0268cee9e98", 5, "f", "api_call", "asyncio.sleep"),
        ("occ-537e5732d0ee", 8, "g", "syntax", "async_def"),
        ("occ-a7eeac4271a4", 9, "g", "syntax", "await"),
        ("occ-0b22a4b5c793", 9, "g", "api_call", "asyncio.sleep"),
        ("occ-3233d453509a", 10, "g", "syntax", "await"),
        ("occ-9a5f5bf5cfca", 10, "g", "api_call", "asyncio.sleep"),
    ]


def test_occurrence_id_key_fields() -> None:
    assert occurrence_id("pkg/a.py", "f", "api_call", "asyncio.sleep", 0) == "occ-d0268cee9e98"
    assert occurrence_id("pkg/a.py", "g", "api_call", "asyncio.sleep", 1) == "occ-9a5f5bf5cfca"
    # the first record of g is ordinal 0 of its own scope, not ordinal 1 of the file
    assert occurrence_id("pkg/a.py", "g", "api_call", "asyncio.sleep", 0) == "occ-0b22a4b5c793"


def test_ids_survive_lines_inserted_above() -> None:
    moved = TWO_SCOPES.replace("import asyncio\n", "import asyncio\n# one\n# two\n", 1)
    before = [occ for occ, _ in assign_ids("pkg/a.py", scan_code(TWO_SCOPES).records)]
    after = [occ for occ, _ in assign_ids("pkg/a.py", scan_code(moved).records)]
    assert len(before) == 9 and after == before


def _api(text: str) -> list[tuple]:
    return [r[:9] for r in scan_code(text).records if r[5] != "syntax"]


def test_a_name_bound_by_two_different_imports_resolves_to_neither() -> None:
    text = "import asyncio as a\nimport threading as a\n\n\nasync def f():\n    await a.sleep(1)\n"
    # ``a`` is asyncio or threading depending on the flow: the scanner claims neither (no api record for a.sleep)
    assert _api(text) == [
        (1, 7, 1, 19, "<module>", "import", "asyncio", "asyncio", "import_statement"),
        (2, 7, 2, 21, "<module>", "import", "threading", "threading", "import_statement"),
    ]
    # the same order reversed: still neither (not "the last binding wins", not "the first")
    reverse = "import threading as a\nimport asyncio as a\n\n\nasync def f():\n    await a.sleep(1)\n"
    assert [r[6] for r in _api(reverse)] == ["threading", "asyncio"]


def test_a_name_bound_twice_by_the_same_import_resolves() -> None:
    text = "import asyncio\nimport asyncio\n\n\nasync def f():\n    await asyncio.sleep(1)\n"
    assert _api(text) == [
        (1, 7, 1, 14, "<module>", "import", "asyncio", "asyncio", "import_statement"),
        (2, 7, 2, 14, "<module>", "import", "asyncio", "asyncio", "import_statement"),
        (6, 10, 6, 23, "f", "api_call", "asyncio.sleep", "asyncio", "import_resolution"),
    ]


def test_an_import_and_an_assignment_of_one_name_resolve_to_nothing() -> None:
    text = "import asyncio\nasyncio = None\nasyncio.sleep(1)\n"
    assert [r[6] for r in _api(text)] == ["asyncio"]  # the import record only


def test_nonlocal_sends_an_import_to_the_enclosing_function_past_a_class():
    """``nonlocal`` in a method binds in the function around the class: there ``asyncio`` is then two different
    imports, so ``asyncio.sleep`` resolves to neither."""
    for text in ("def outer():\n    import asyncio\n    def inner():\n        nonlocal asyncio\n"
                 "        import threading as asyncio\n    return asyncio.sleep(0)\n",
                 "def outer():\n    import asyncio\n    class K:\n        def inner(self):\n"
                 "            nonlocal asyncio\n            import threading as asyncio\n"
                 "    return asyncio.sleep(0)\n"):
        assert [r[6] for r in _api(text)] == ["asyncio", "threading"]  # the two imports, no api_call


def test_global_sends_an_import_to_the_module():
    text = "def setup():\n    global aio\n    import asyncio as aio\n\n\ndef use():\n    return aio.sleep(0)\n"
    assert _api(text) == [
        (3, 11, 3, 25, "setup", "import", "asyncio", "asyncio", "import_statement"),
        (7, 11, 7, 20, "use", "api_call", "asyncio.sleep", "asyncio", "import_resolution"),
    ]
    assert _api("def f():\n    global asyncio\n    return asyncio.sleep(0)\n") == []  # global, but never bound


def test_a_global_declaration_in_an_enclosing_function_skips_its_binding():
    """``c`` reads ``x`` through ``b``, which declares it global: the module's import, not ``a``'s."""
    text = ("import asyncio as x\n\n\ndef a():\n    import threading as x\n    def b():\n        global x\n"
            "        def c():\n            return x.sleep(0)\n")
    assert _api(text)[-1] == (9, 19, 9, 26, "a.b.c", "api_call", "asyncio.sleep", "asyncio", "import_resolution")


def test_a_walrus_in_a_comprehension_binds_in_the_function():
    text = "import asyncio\n\n\ndef f():\n    [(asyncio := 1) for _ in range(1)]\n    return asyncio.sleep(0)\n"
    assert [r[6] for r in _api(text)] == ["asyncio"]  # the import record only: f's asyncio is the walrus's
