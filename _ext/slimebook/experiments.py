"""Running the course's experiments: stdlib-only scripts whose shown output is what they print.

An experiment is run as ``python FILE`` in a fresh temporary working directory with a timeout, from a
copy of the file inside that temporary directory (never from the source tree); its
combined stdout+stderr and exit code are cached under ``cache_root()/experiments`` keyed by the
SHA-256 of (file bytes, interpreter major.minor, runner version), so an unchanged file is not run
again and a changed one always is. Cache files are written atomically (temp file + ``os.replace``).
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .atomicio import atomic_write
from .store import cache_root

__all__ = ["ExperimentError", "ExperimentResult", "run_experiment"]

RUNNER_VERSION = "1"
DEFAULT_TIMEOUT = 60.0


class ExperimentError(RuntimeError):
    """The script could not be run, timed out, or exited with an unexpected code."""


@dataclass(frozen=True)
class ExperimentResult:
    """``output`` (stdout and stderr interleaved, ``\\n`` line endings), ``returncode``, ``cached``."""

    output: str
    returncode: int
    cached: bool


def _key(data: bytes) -> str:
    digest = hashlib.sha256()
    digest.update(data)
    digest.update(f"\0py{sys.version_info.major}.{sys.version_info.minor}\0runner{RUNNER_VERSION}".encode())
    return digest.hexdigest()


def run_experiment(
    script: Path, *, timeout: float = DEFAULT_TIMEOUT, expect_returncode: int = 0, use_cache: bool = True
) -> ExperimentResult:
    """Run ``script`` with the current interpreter and return what it printed.

    The script is not run from its source path: the bytes read for the cache key are written to
    ``<tmp>/script/<name>`` inside a fresh temporary directory, the run's working directory is the
    empty ``<tmp>/cwd``, and the whole directory is deleted afterwards. So ``__file__`` points into
    the temporary directory, and a script that writes beside ``__file__`` (or into its working
    directory) cannot change the source tree during a build; the cache key is unchanged, since
    the copy has the same bytes.

    Args:
        script: path of a stdlib-only Python file.
        timeout: seconds before the run is killed.
        expect_returncode: the exit code the page promises (0 unless the lesson shows a failure).
        use_cache: read and write the content-keyed cache.
    Raises:
        ExperimentError: missing file, timeout, or an exit code other than ``expect_returncode``
            (the message carries the tail of the output).
    """
    try:
        data = script.read_bytes()
    except OSError as exc:
        raise ExperimentError(f"cannot read experiment {script}: {exc.strerror}") from exc
    entry = cache_root() / "experiments" / f"{_key(data)}.json"
    if use_cache and entry.exists():
        saved = json.loads(entry.read_text(encoding="utf-8"))
        result = ExperimentResult(saved["output"], saved["returncode"], cached=True)
    else:
        output, returncode = _run(script.name, data, timeout)
        result = ExperimentResult(output, returncode, cached=False)
        if use_cache:
            atomic_write(entry, json.dumps({"output": output, "returncode": returncode}))
    if result.returncode != expect_returncode:
        tail = "\n".join(result.output.rstrip().splitlines()[-8:])
        raise ExperimentError(
            f"experiment {script.name} exited with {result.returncode}, expected {expect_returncode}:\n{tail}"
        )
    return result


def _run(name: str, data: bytes, timeout: float) -> tuple[str, int]:
    """Run the script ``data`` as ``<tmp>/script/<name>`` from the empty ``<tmp>/cwd`` of a fresh temporary
    directory, in a session of its own; its output (``\\r\\n`` made ``\\n``) and exit code.

    Raises:
        ExperimentError: the run took longer than ``timeout`` seconds (its process group is killed).
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env.update(PYTHONHASHSEED="0", PYTHONIOENCODING="utf-8", PYTHONUNBUFFERED="1", PYTHONDONTWRITEBYTECODE="1")
    with tempfile.TemporaryDirectory(prefix="slimebook-exp-") as tmp:
        copy = Path(tmp) / "script" / name
        cwd = Path(tmp) / "cwd"
        copy.parent.mkdir()
        cwd.mkdir()
        copy.write_bytes(data)  # the bytes that were hashed: what runs is what the key names
        # A session of its own, so a timeout kills the whole process group (children too).
        proc = subprocess.Popen(
            [sys.executable, "-X", "utf8", str(copy)], cwd=cwd, env=env,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
        )
        try:
            stdout, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise ExperimentError(f"experiment {name} did not finish within {timeout:g} s") from exc
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    return stdout.decode("utf-8", "replace").replace("\r\n", "\n"), proc.returncode
