#!/usr/bin/env bash
# Installs the Debian packages the book needs, only those missing, only where we may (root + apt).
#   python3.11-doc  the Python docs inventory, so intersphinx works offline (see shared NOTES)
set -euo pipefail
want=()
[ -f /usr/share/doc/python3.11/html/objects.inv ] || want+=(python3.11-doc)
[ ${#want[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
  echo "system-deps: installing ${want[*]}" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null
else
  echo "system-deps: missing ${want[*]}; install them (Debian: apt-get install ${want[*]})." >&2
  echo "system-deps: without python3.11-doc, intersphinx needs network access to docs.python.org." >&2
fi
