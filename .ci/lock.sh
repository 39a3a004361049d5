#!/usr/bin/env bash
# Refresh .ci/constraints.txt: install the project with its dev and book extras into a fresh virtualenv (no constraints,
# the newest versions pyproject.toml allows) and write its `pip freeze` over .ci/constraints.txt atomically.
#   bash .ci/lock.sh        (or: make lock)
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$python" -m venv "$tmp/venv"
"$tmp/venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
"$tmp/venv/bin/python" -m pip install --quiet --disable-pip-version-check ".[dev,book]"
{
  sed -n '1,/^#     make lock$/p' .ci/constraints.txt
  "$tmp/venv/bin/python" -m pip freeze --exclude-editable --disable-pip-version-check | grep -v '^slimebook[ =@]'
} > .ci/constraints.txt.tmp
mv .ci/constraints.txt.tmp .ci/constraints.txt  # same directory: an atomic rename
echo ".ci/constraints.txt: $(grep -c '==' .ci/constraints.txt) pinned packages"
