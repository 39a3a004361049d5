#!/usr/bin/env bash
# Refresh constraints.txt: install the project with its dev extra into a fresh virtualenv (no constraints,
# the newest versions pyproject.toml allows) and write its `pip freeze` over constraints.txt atomically.
#   bash .ci/lock.sh        (or: make lock)
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$python" -m venv "$tmp/venv"
"$tmp/venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
"$tmp/venv/bin/python" -m pip install --quiet --disable-pip-version-check ".[dev]"
{
  sed -n '1,/^#     make lock$/p' constraints.txt
  "$tmp/venv/bin/python" -m pip freeze --exclude-editable --disable-pip-version-check | grep -v '^slimebook[ =@]'
} > constraints.txt.tmp
mv constraints.txt.tmp constraints.txt  # same directory: an atomic rename
echo "constraints.txt: $(grep -c '==' constraints.txt) pinned packages"
