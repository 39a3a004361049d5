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
    ("slimebook_usage_collapse", "30", "slimebook_usage_collapse must be an int"),
    ("slimebook_usage_collapse", True, "must be an int"),
    ("slimebook_usage_collapse", -1, "slimebook_usage_collapse must be at least 0"),
    ("slimebook_lock", None, "slimebook_lock must be a str"),
])
def test_a_wrong_value_stops_the_build(name: str, value: object, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        validate(_config(**{name: value}), SETTINGS)  # type: ignore[arg-type]


def test_an_error_names_the_line_of_conf_py_that_set_the_value(tmp_path) -> None:
    (tmp_path / "conf.py").write_text('project = "P"\nslimebook_lock = None\n\nslimebook_lock: object = 3\n')
    with pytest.raises(ConfigError) as caught:
        validate(_config(slimebook_lock=3), SETTINGS, tmp_path)  # type: ignore[arg-type]
    assert str(caught.value) == (f"{tmp_path / 'conf.py'}:4: slimebook_lock must be a str "
                                 f"({next(s for s in SETTINGS if s.name == 'slimebook_lock').description}), not 3")


@pytest.mark.parametrize(("conf", "overrides", "origin"), [
    ("x = 1\n", {"slimebook_usage_collapse": "-1"}, "-D slimebook_usage_collapse"),
    ("x = 1\n", {}, "{conf}"),  # set elsewhere (an exec, a loop): the file alone
    ("x = (\n", {}, "{conf}"),  # a conf.py ast cannot parse: the file alone
    (None, {}, "{conf}"),
])
def test_setting_origin(tmp_path, conf: str | None, overrides: dict, origin: str) -> None:
    from slimebook.sphinxext.config import setting_origin

    if conf is not None:
        (tmp_path / "conf.py").write_text(conf)
    config = SimpleNamespace(overrides=overrides)
    assert setting_origin(config, "slimebook_usage_collapse", tmp_path) == origin.format(conf=tmp_path / "conf.py")
    assert setting_origin(config, "slimebook_usage_collapse") in ("conf.py", "-D slimebook_usage_collapse")


@pytest.mark.parametrize(("conf", "line"), [
    ('slimebook_usage_collapse = 5\nif tags.has("x"):\n    slimebook_usage_collapse = -3\n', 3),  # inside an if
    ('slimebook_usage_collapse = -3\nif False:\n    slimebook_usage_collapse = 5\n', 1),  # not the later 5
    ('slimebook_usage_collapse = 5\nglobals()["slimebook_usage_collapse"] = -3\n', 2),
    ("a, slimebook_usage_collapse = 1, -3\n", 1),
    ("slimebook_usage_collapse: int = -3\ntry:\n    import x\nexcept ImportError:\n"
     "    slimebook_usage_collapse = 4\n", 1),
    ('def f():\n    slimebook_usage_collapse = -3\n\n\nslimebook_usage_collapse = int("-3")\n', 5),  # a computed value
])
def test_setting_origin_names_the_assignment_that_can_have_set_the_value(tmp_path, conf: str, line: int) -> None:
    from slimebook.sphinxext.config import setting_origin

    (tmp_path / "conf.py").write_text(conf)
    config = SimpleNamespace(overrides={}, slimebook_usage_collapse=-3)
    assert setting_origin(config, "slimebook_usage_collapse", tmp_path) == f"{tmp_path / 'conf.py'}:{line}"
