#!/usr/bin/env bash
# Installs the Debian packages the book needs, only those missing, only where we may (root + apt).
#
#   bash .ci/system-deps.sh            the default group: what `make html` and `make test` need
#   bash .ci/system-deps.sh pdf        + XeLaTeX with xeCJK and CJK fonts, Chromium and npm for mermaid-cli
#   bash .ci/system-deps.sh browser    + Chromium (and CJK fonts) for the browser tests
#   bash .ci/system-deps.sh pdf browser   groups combine; `all` is every group
#
# Groups (see /work/shared NOTES for why each package is there):
#   default  python3.11-doc   the Python docs inventory, so intersphinx works offline
#            npm              (only when no `npm` is on PATH) fetches mermaid's browser bundle, see .ci/node-deps.sh
#   pdf      texlive-xetex texlive-lang-chinese texlive-latex-extra texlive-fonts-recommended (the pzdr font)
#            fonts-freefont-otf (FreeSerif) fonts-noto-cjk latexmk poppler-utils (pdftoppm) chromium (mmdc)
#   browser  chromium fonts-noto-cjk
# Never a browser downloaded by a tool: mermaid-cli and playwright are pointed at /usr/bin/chromium.
set -euo pipefail

groups=("$@")
[ ${#groups[@]} -eq 0 ] && groups=(default)
[ "${groups[*]}" = all ] && groups=(default pdf browser)

want=()
need_pkg() {  # need_pkg PACKAGE...: queue the packages dpkg does not know as installed
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || want+=("$p")
  done
}
need_npm() { command -v npm >/dev/null || need_pkg npm; }

for group in default "${groups[@]}"; do
  case "$group" in
    default)
      [ -f /usr/share/doc/python3.11/html/objects.inv ] || want+=(python3.11-doc)
      need_npm ;;
    pdf)
      need_pkg texlive-xetex texlive-lang-chinese texlive-latex-extra texlive-fonts-recommended \
               fonts-freefont-otf fonts-noto-cjk latexmk poppler-utils
      [ -x /usr/bin/chromium ] || need_pkg chromium ;;
    browser)
      [ -x /usr/bin/chromium ] || need_pkg chromium
      need_pkg fonts-noto-cjk ;;
    *) echo "system-deps: unknown group '$group' (default, pdf, browser, all)" >&2; exit 2 ;;
  esac
done

# de-duplicate, keep order
mapfile -t want < <(printf '%s\n' "${want[@]}" | awk 'NF && !seen[$0]++')
[ ${#want[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
  echo "system-deps: installing ${want[*]}" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null
else
  echo "system-deps: missing ${want[*]}; install them (Debian: apt-get install --no-install-recommends ${want[*]})." >&2
  echo "system-deps: without python3.11-doc, intersphinx needs network access to docs.python.org;" >&2
  echo "system-deps: without npm, pages load mermaid from the jsDelivr CDN; without chromium the browser tests skip." >&2
fi
