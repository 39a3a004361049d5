"""``slimebook.sphinxext.config``: every value declared once, checked at start-up with a sentence naming it."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from sphinx.errors import ConfigError

from slimebook.sphinxext.config import SETTINGS, validate


def _config(**changes: object) -> SimpleNamespace:
    return SimpleNamespace(**({s.name: s.default for s in SETTINGS} | changes))


def test_defaults_are_valid_and_names_unique() -> None:
    validate(_config(), SETTINGS)  # type: ignore[arg-type]
    assert len({s.name for s in SETTINGS}) == len(SETTINGS)


@pytest.mark.parametrize(("name", "value", "message"), [
    ("slimebook_usage_collapse", "30", "slimebook_usage_collapse must be a int"),
    ("slimebook_usage_collapse", True, "must be a int"),
    ("slimebook_usage_collapse", -1, "slimebook_usage_collapse must be at least 0"),
    ("slimebook_lock", None, "slimebook_lock must be a str"),
])
def test_a_wrong_value_stops_the_build(name: str, value: object, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        validate(_config(**{name: value}), SETTINGS)  # type: ignore[arg-type]
