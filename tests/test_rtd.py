"""Read the Docs reproduced: ``.readthedocs.yaml`` against RTD's published v2 schema, and one pinned toolchain.

The schema is Read the Docs' own schema of the v2 configuration file as the ``check-jsonschema`` package vendors it
(``vendor/readthedocs.json``, from readthedocs/readthedocs.org, MIT license): a dev dependency pinned in
``.ci/constraints.txt``, so no copy lives in this repository. ``make rtd-check`` replays the build itself.
"""

from __future__ import annotations

import importlib.util
import re
import tomllib
from pathlib import Path

import yaml
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent


def _rtd_check():
    spec = importlib.util.spec_from_file_location("rtd_check", ROOT / ".ci" / "rtd_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readthedocs_yaml_matches_the_published_v2_schema() -> None:
    check = _rtd_check()
    config = yaml.safe_load((ROOT / ".readthedocs.yaml").read_text(encoding="utf-8"))
    assert check.validate(config) == []
    # the schema really checks: a misspelt key and a wrong type are errors
    assert check.validate({**config, "sphinks": {}})
    assert check.validate({**config, "formats": "pdf"})
    assert '"title": "Read the Docs"' in check.rtd_schema_text()  # the schema really is Read the Docs' own


def _pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / ".ci" / "constraints.txt").read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            name, _, version = line.partition("==")
            assert version, f".ci/constraints.txt: {line!r} is not an exact pin"
            pins[re.sub(r"[-_.]+", "-", name).lower()] = version
    return pins


def test_every_dependency_is_pinned_to_a_version_pyproject_allows() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    pins = _pins()
    extras = project["optional-dependencies"]
    for text in [*project["dependencies"], *extras["dev"], *extras["book"], *extras["zh"]]:
        req = Requirement(text)
        name = re.sub(r"[-_.]+", "-", req.name).lower()
        assert name in pins, f"{req.name} is not pinned in .ci/constraints.txt"
        assert req.specifier.contains(pins[name], prereleases=True), (text, pins[name])


def test_the_book_s_own_choices_are_not_the_extension_s_dependencies() -> None:
    """Issue 34: the theme, the live preview and the Chinese word splitter are extras (``book``, ``zh``)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    required = {re.sub(r"[-_.]+", "-", Requirement(text).name).lower() for text in project["dependencies"]}
    assert not required & {"furo", "sphinx-autobuild", "jieba"}
    book = {Requirement(text).name for text in project["optional-dependencies"]["book"]}
    assert book == {"furo", "sphinx-autobuild", "jieba"}


def test_make_ci_and_readthedocs_install_with_the_same_constraints() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"pip install .*-c \.ci/constraints\.txt -e \"\.\[dev,book\]\"", makefile)
    assert re.search(r"^\$\(STAMP\): .*constraints\.txt", makefile, re.M)
    assert "make test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")  # CI installs through make
    config = yaml.safe_load((ROOT / ".readthedocs.yaml").read_text(encoding="utf-8"))
    assert 'python -m pip install --constraint .ci/constraints.txt ".[book]"' in config["build"]["jobs"]["pre_install"]
    assert config["python"]["install"] == [{"method": "pip", "path": ".", "extra_requirements": ["book"]}]
    assert '".[dev,book]"' in (ROOT / ".ci" / "lock.sh").read_text(encoding="utf-8")  # the pins cover the extras
    assert re.search(r"^rtd-check:", makefile, re.M) and re.search(r"^lock:", makefile, re.M)
