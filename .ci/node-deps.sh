#!/usr/bin/env bash
# Installs the book's build-time JavaScript (.ci/npm/package-lock.json) into the cache, never into the
# source tree:
#   mermaid                  its ESM browser bundle is staged in static/mermaid/ and conf.py adds that
#                            directory to html_static_path, so pages load mermaid from _static (no CDN)
#   @mermaid-js/mermaid-cli  `mmdc`, which renders each diagram to PDF for the LaTeX builder
#   mathjax                  MathJax 3's TeX-to-HTML bundle (tex-chtml.js), with the fonts and the TeX extensions
#                            it loads on demand, staged in static/mathjax/ (conf.py sets mathjax_path to it)
#   puppeteer                mmdc's browser driver; its browser download is skipped (--ignore-scripts,
#                            PUPPETEER_SKIP_DOWNLOAD): puppeteer.json points it at /usr/bin/chromium
#
# Where: $SLIMEBOOK_NODE, else <slimebook cache>/node, one directory per lock-file hash:
#   <base>/<sha12>/node_modules/  <base>/<sha12>/static/{mermaid,mathjax}/  <base>/<sha12>/puppeteer.json
# The browser is $SLIMEBOOK_CHROMIUM, else /usr/bin/chromium; never a downloaded one, except with
# SLIMEBOOK_BROWSER_DOWNLOAD=1 where no distribution Chromium exists (.readthedocs.yaml sets it).
# conf.py computes the same <sha12>. The install happens in a temporary directory renamed into place when
# complete; a second run with the same lock does nothing. Without npm this prints what is lost and exits 0:
# the HTML then loads mermaid from the jsDelivr CDN (conf.py says so in the build log) and `make latexpdf`
# cannot draw diagrams.
#
#   bash .ci/node-deps.sh           install (no-op when present)
#   bash .ci/node-deps.sh --dir     print the directory conf.py will use
set -euo pipefail
cd "$(dirname "$0")/.."

lock=.ci/npm/package-lock.json
cache=${SLIMEBOOK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/slimebook}
base=${SLIMEBOOK_NODE:-$cache/node}
sha=$(sha256sum "$lock" | cut -c1-12)
dest=$base/$sha
chromium=${SLIMEBOOK_CHROMIUM:-/usr/bin/chromium}

if [ "${1:-}" = --dir ]; then echo "$dest"; exit 0; fi

write_puppeteer_config() {  # the browser mmdc drives: the system Chromium, headless, no network chatter
  local exe=""
  if [ -x "$chromium" ]; then
    exe="\"executablePath\": \"$chromium\", "
  elif [ "${SLIMEBOOK_BROWSER_DOWNLOAD:-0}" = 1 ]; then
    # Only where no distribution Chromium exists (Read the Docs' Ubuntu ships it as a snap) and only when
    # asked for explicitly: puppeteer's own Chrome, kept inside this node directory.
    local found
    found=$(cd "$1" && PUPPETEER_CACHE_DIR="$1/browsers" npx --no-install puppeteer browsers install chrome >&2 &&
            PUPPETEER_CACHE_DIR="$1/browsers" node -e 'console.log(require("puppeteer").executablePath())')
    exe="\"executablePath\": \"$found\", "
  elif [ ! -f "$1/.complete" ]; then
    echo "node-deps: no $chromium: mmdc cannot draw the PDF's diagrams (bash .ci/system-deps.sh pdf)" >&2
  fi
  printf '{%s"headless": true, "args": ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"]}\n' \
    "$exe" > "$1/puppeteer.json"
}

if [ -f "$dest/.complete" ]; then
  write_puppeteer_config "$dest"
  exit 0
fi
if ! command -v npm >/dev/null; then
  echo "node-deps: npm not found (Debian: apt-get install npm). The HTML will load mermaid from the jsDelivr" >&2
  echo "node-deps: CDN instead of _static, and the PDF cannot draw diagrams." >&2
  exit 0
fi

mkdir -p "$base"
tmp=$(mktemp -d "$base/.tmp-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cp .ci/npm/package.json "$lock" "$tmp/"
echo "node-deps: npm ci (mermaid, mermaid-cli, mathjax) into $dest" >&2
(cd "$tmp" && PUPPETEER_SKIP_DOWNLOAD=1 npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2)

# Stage only what a page loads: the ESM entry point and its chunk directory (not the whole dist/).
dist=$tmp/node_modules/mermaid/dist
mkdir -p "$tmp/static/mermaid/chunks"
cp "$dist/mermaid.esm.min.mjs" "$tmp/static/mermaid/"
cp -r "$dist/chunks/mermaid.esm.min" "$tmp/static/mermaid/chunks/"
cp "$tmp/node_modules/mermaid/LICENSE" "$tmp/static/mermaid/LICENSE.txt" 2>/dev/null || true
# MathJax: the combined TeX + CommonHTML component and what it loads relative to itself (fonts, TeX extensions
# autoloaded by name, the menu and its accessibility components); not the speech engine (sre, 4 MB) nor the
# other combined components.
mj=$tmp/node_modules/mathjax/es5
mkdir -p "$tmp/static/mathjax/output/chtml" "$tmp/static/mathjax/input/tex"
cp "$mj/tex-chtml.js" "$tmp/static/mathjax/"
cp -r "$mj/output/chtml/fonts" "$tmp/static/mathjax/output/chtml/"
cp -r "$mj/input/tex/extensions" "$tmp/static/mathjax/input/tex/"
cp -r "$mj/ui" "$mj/a11y" "$tmp/static/mathjax/"
cp "$tmp/node_modules/mathjax/LICENSE" "$tmp/static/mathjax/LICENSE.txt" 2>/dev/null || true
write_puppeteer_config "$tmp"
touch "$tmp/.complete"
if mv -T "$tmp" "$dest" 2>/dev/null; then trap - EXIT; fi   # lost a race with another install: keep theirs
echo "node-deps: ready: $dest" >&2
