"""Replay the Read the Docs build of ``.readthedocs.yaml`` locally (``make rtd-check``).

The steps and command lines are the ones Read the Docs documents for a ``build.jobs`` configuration
(https://docs.readthedocs.io/en/stable/build-customization.html, "Build process"; the Sphinx command lines as its
build logs print them), run in a temporary directory:

1. validate the file against Read the Docs' published v2 schema (the copy ``check-jsonschema`` vendors and keeps
   current, ``check_jsonschema/builtin_schemas/vendor/readthedocs.json``; a registry package, so no schema is
   copied into this repository);
2. checkout: a fresh ``git clone`` of this repository's HEAD (uncommitted changes are not built, as on RTD);
   ``post_checkout`` jobs;
3. system dependencies: ``apt_packages`` are only reported (this machine is not the Ubuntu image); the
   ``pre_/post_system_dependencies`` jobs run;
4. create_environment: ``python -m venv`` (RTD uses virtualenv) with ``build.tools.python``, then
   ``python -m pip install --upgrade --no-cache-dir pip setuptools``; ``pre_/post_create_environment`` jobs;
5. install: ``pre_install`` jobs, each ``python.install`` entry (``method: pip`` →
   ``python -m pip install --upgrade --upgrade-strategy only-if-needed --no-cache-dir <path>[extras]``;
   ``requirements`` → ``python -m pip install --exists-action=w --no-cache-dir -r <file>``), ``post_install`` jobs;
6. build: ``pre_build`` jobs; html: ``python -m sphinx -T [-W --keep-going] -b <builder> -d _build/doctrees
   -D language=<lang> . $READTHEDOCS_OUTPUT/html``;
   for ``formats: [pdf]``: ``python -m sphinx -T [-W --keep-going] -b latex -d _build/doctrees -D language=<lang> .
   $READTHEDOCS_OUTPUT/pdf`` then ``latexmk -r latexmkrc -pdf -f -dvi- -ps- -jobname=<project>
   -interaction=nonstopmode`` in that directory (Sphinx's ``latexmkrc`` selects XeLaTeX); ``post_build`` jobs.

The network is replaced by what the machine already has: ``SLIME_SOURCE_URL`` (required) for the pinned Slime
commit, which goes into a fresh source cache; the package index pip is configured with; the npm cache of
``.ci/node-deps.sh`` (``SLIMEBOOK_NODE``, else the default one) for mermaid. The language is the project's
``language`` from ``conf.py`` (set the same language in the RTD project's settings). Exit status 0 when every step
passed; the first failing step's command and exit status otherwise.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml
from jsonschema import Draft202012Validator

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / ".readthedocs.yaml"
PROJECT_SLUG = "slimebook"


def rtd_schema_text() -> str:
    """Read the Docs' v2 configuration schema as JSON text, from the ``check-jsonschema`` package (its
    ``vendor.readthedocs`` built-in schema, vendored from readthedocs/readthedocs.org)."""
    from importlib.resources import files

    return (files("check_jsonschema.builtin_schemas.vendor") / "readthedocs.json").read_text(encoding="utf-8")


def validate(config: dict) -> list[str]:
    """The schema errors of ``config`` (empty when valid), one sentence each with its path in the file."""
    schema = json.loads(rtd_schema_text())
    validator = Draft202012Validator(schema)
    return [f"{'.'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}"
            for e in sorted(validator.iter_errors(config), key=lambda e: list(map(str, e.path)))]


def conf_language(conf: Path) -> str:
    """The ``language = "..."`` assigned at the top level of ``conf.py`` (``en`` when absent, RTD's default)."""
    for node in ast.parse(conf.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "language" for t in node.targets):
            if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                return node.value.value
    return "en"


class Replay:
    """Runs the steps with RTD's environment variables, stopping at the first failure."""

    def __init__(self, work: Path, python: str) -> None:
        self.work = work
        self.checkout = work / "checkout"
        self.venv = work / "venv"
        self.output = self.checkout / "_readthedocs"
        self.python = python
        node = os.environ.get("SLIMEBOOK_NODE") or str(
            Path(os.environ.get("SLIMEBOOK_CACHE") or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
                 / "slimebook") / "node")
        self.env = {
            **os.environ,
            "READTHEDOCS": "True",
            "READTHEDOCS_PROJECT": PROJECT_SLUG,
            "READTHEDOCS_VERSION": "latest",
            "READTHEDOCS_VIRTUALENV_PATH": str(self.venv),
            "READTHEDOCS_OUTPUT": str(self.output) + "/",
            "READTHEDOCS_REPOSITORY_PATH": str(self.checkout),
            "SLIMEBOOK_CACHE": str(work / "cache"),  # a fresh source cache: the pin comes from SLIME_SOURCE_URL
            "SLIMEBOOK_NODE": node,
            "PATH": f"{self.venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
        }
        self.env.pop("VIRTUAL_ENV", None)

    def run(self, step: str, command: str | list[str], cwd: Path | None = None) -> None:
        shown = command if isinstance(command, str) else " ".join(command)
        print(f"rtd-check: [{step}] {shown}", flush=True)
        proc = subprocess.run(command, shell=isinstance(command, str), cwd=cwd or self.checkout, env=self.env,
                              executable="/bin/bash" if isinstance(command, str) else None)
        if proc.returncode != 0:
            raise SystemExit(f"rtd-check: FAILED at [{step}] (exit {proc.returncode}): {shown}")

    def jobs(self, config: dict, name: str) -> None:
        for command in config.get("build", {}).get("jobs", {}).get(name, []):
            self.run(name, command)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-pdf", action="store_true", help="skip the PDF (latex builder and latexmk)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = parser.parse_args(argv)

    config = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))
    errors = validate(config)
    if errors:
        print("rtd-check: .readthedocs.yaml does not match Read the Docs' v2 schema:", *errors, sep="\n  ")
        return 1
    print("rtd-check: .readthedocs.yaml matches Read the Docs' v2 schema")
    if not os.environ.get("SLIME_SOURCE_URL"):
        print("rtd-check: set SLIME_SOURCE_URL to a clone or mirror holding the pinned Slime commit", file=sys.stderr)
        return 2
    if subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True).stdout.strip():
        print("rtd-check: note: uncommitted changes are not part of the replay (RTD builds a commit)")
    if "commands" in config.get("build", {}):
        print("rtd-check: build.commands is not replayed by this script", file=sys.stderr)
        return 2
    python_version = str(config["build"]["tools"]["python"])
    python = shutil.which(f"python{python_version}") or sys.executable

    work = Path(tempfile.mkdtemp(prefix="rtd-check-"))
    try:
        replay = Replay(work, python)
        replay.run("checkout", ["git", "clone", "--quiet", "--no-local", str(ROOT), str(replay.checkout)], cwd=work)
        replay.jobs(config, "post_checkout")
        replay.jobs(config, "pre_system_dependencies")
        missing = [p for p in config["build"].get("apt_packages", [])
                   if subprocess.run(["dpkg", "-s", p], capture_output=True).returncode != 0]
        print(f"rtd-check: [system_dependencies] apt_packages not installed here (Ubuntu names; not replayed): "
              f"{', '.join(missing) or 'none'}")
        replay.jobs(config, "post_system_dependencies")
        replay.jobs(config, "pre_create_environment")
        replay.run("create_environment", [python, "-m", "venv", str(replay.venv)])
        replay.run("create_environment", "python -m pip install --upgrade --no-cache-dir pip setuptools")
        replay.jobs(config, "post_create_environment")
        replay.jobs(config, "pre_install")
        for item in config.get("python", {}).get("install", []):
            if "requirements" in item:
                replay.run("install", "python -m pip install --exists-action=w --no-cache-dir "
                                      f"-r {item['requirements']}")
            else:
                extras = item.get("extra_requirements") or []
                target = item["path"] + (f"[{','.join(extras)}]" if extras else "")
                replay.run("install", f"python -m pip install --upgrade --upgrade-strategy only-if-needed "
                                      f"--no-cache-dir '{target}'")
        replay.jobs(config, "post_install")
        replay.jobs(config, "pre_build")
        sphinx = config.get("sphinx", {})
        conf_dir = str(Path(sphinx.get("configuration", "conf.py")).parent) or "."
        language = conf_language(replay.checkout / sphinx.get("configuration", "conf.py"))
        strict = "-W --keep-going " if sphinx.get("fail_on_warning") else ""
        builder = sphinx.get("builder", "html")
        replay.run("build.html", f"python -m sphinx -T {strict}-b {builder} -d _build/doctrees -D language={language} "
                                 f"{conf_dir} $READTHEDOCS_OUTPUT/html")
        if "pdf" in (config.get("formats") or []) and not args.no_pdf:
            replay.run("build.pdf", f"python -m sphinx -T {strict}-b latex -d _build/doctrees -D language={language} "
                                    f"{conf_dir} $READTHEDOCS_OUTPUT/pdf")
            replay.run("build.pdf", f"latexmk -r latexmkrc -pdf -f -dvi- -ps- -jobname={PROJECT_SLUG} "
                                    "-interaction=nonstopmode", cwd=replay.output / "pdf")
            pdf = replay.output / "pdf" / f"{PROJECT_SLUG}.pdf"
            if not pdf.is_file():
                raise SystemExit(f"rtd-check: FAILED: latexmk wrote no {pdf.name}")
        replay.jobs(config, "post_build")
        print(f"rtd-check: passed (html{'' if args.no_pdf else ' and pdf'}) in {work}")
        return 0
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
