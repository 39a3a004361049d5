# Slime source-reading book. The two commands of the README:
#   make html   set up everything, fetch the pinned Slime sources, build _build/html with -W
#   make test   set up the venv if missing, run the tests
PYTHON     ?= python3
VENV       := .venv
BIN        := $(VENV)/bin
STAMP      := $(VENV)/.installed
BUILDDIR   := _build
SPHINXOPTS ?=
SPHINXBUILD = $(BIN)/sphinx-build
PDFNAME    := slimebook

.PHONY: venv system-deps system-deps-pdf system-deps-browser node-deps sources html serve latexpdf livehtml \
        anchors-check anchors-update test lint clean lock rtd-check mutation

# .ci/constraints.txt pins every package to the version CI and Read the Docs use (`make lock` refreshes it).
$(STAMP): pyproject.toml .ci/constraints.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c .ci/constraints.txt -e ".[dev,book]"
	@touch $(STAMP)

venv: $(STAMP)

# Debian packages by group (.ci/system-deps.sh): the default group is what html and test need.
system-deps:
	@bash .ci/system-deps.sh
system-deps-pdf:
	@bash .ci/system-deps.sh pdf
system-deps-browser:
	@bash .ci/system-deps.sh browser

# mermaid (served from _static) and mermaid-cli (diagrams in the PDF), into the cache, not the tree
node-deps: system-deps
	@bash .ci/node-deps.sh

sources: $(STAMP)
	$(BIN)/slimebook sources fetch

html: sources system-deps node-deps
	$(SPHINXBUILD) -W --keep-going -b html -d $(BUILDDIR)/doctrees . $(BUILDDIR)/html $(SPHINXOPTS)

# The built HTML over http://127.0.0.1:8000: browsers refuse ES modules (mermaid) from file:// pages, so
# opening _build/html/*.html directly shows diagrams as their source text.
serve:
	$(PYTHON) -m http.server --bind 127.0.0.1 --directory $(BUILDDIR)/html 8000

# XeLaTeX + xeCJK; mermaid diagrams drawn by mmdc with the system Chromium. A glyph missing from the
# fonts is only a line in the LaTeX log, so the log is checked; so is every diagram's printed label size
# (slimebook.pdfdiagrams: no label smaller than the footnote size).
latexpdf: sources system-deps-pdf node-deps
	$(SPHINXBUILD) -W --keep-going -b latex -d $(BUILDDIR)/doctrees-latex . $(BUILDDIR)/latex $(SPHINXOPTS)
	$(MAKE) -C $(BUILDDIR)/latex all-pdf LATEXMKOPTS=-silent LATEXOPTS="-interaction=nonstopmode -halt-on-error"
	@if grep -n "Missing character" $(BUILDDIR)/latex/$(PDFNAME).log; then \
	  echo "latexpdf: glyphs missing from the fonts (see above)" >&2; exit 1; fi
	$(BIN)/python -m slimebook.pdfdiagrams $(BUILDDIR)/latex .ci/npm/mermaid-pdf.json
	@echo "PDF: $(BUILDDIR)/latex/$(PDFNAME).pdf"

# Live preview on http://$(HOST):$(PORT) (default 127.0.0.1:8001, beside `make serve` on 8000):
#   make livehtml HOST=0.0.0.0 PORT=9000
# Only sources are watched: the build output, caches, the venv, tests, .ci and the benchmark are ignored.
# bench/livehtml.py measures it (one edit: one rebuild, one document re-read). It builds without -W, so
# slimebook_preview=1 lists a page's warnings at the top of that page (preview only). The server runs under
# slimebook.livehtml, so Ctrl-C, or terminating this make by its process id, stops it (no orphan server).
HOST ?= 127.0.0.1
PORT ?= 8001
livehtml: sources system-deps node-deps
	exec $(BIN)/python -m slimebook.livehtml . $(BUILDDIR)/html -d $(BUILDDIR)/doctrees --host $(HOST) --port $(PORT) \
	  --ignore "$(CURDIR)/$(BUILDDIR)/*" --ignore "$(CURDIR)/$(VENV)/*" --ignore "*.egg-info/*" \
	  --ignore "$(CURDIR)/.git/*" --ignore "$(CURDIR)/.ruff_cache/*" --ignore "*/__pycache__/*" \
	  --ignore "$(CURDIR)/tests/*" --ignore "$(CURDIR)/bench/*" --ignore "$(CURDIR)/.ci/*" \
	  --ignore "*/node_modules/*" --ignore "*.swp" --ignore "*~" --ignore "*/.#*" \
	  --watch _ext -D slimebook_preview=1 $(SPHINXOPTS)

# Published anchors (sources/anchors.txt, see _ext/slimebook/sphinxext/gates/anchors.py): the check fails when
# one disappears without a line in sources/redirects.txt; the update rewrites the manifest. Both are an
# incremental HTML build with the same output as `make html`.
anchors-check: sources system-deps node-deps
	$(SPHINXBUILD) -b html -d $(BUILDDIR)/doctrees . $(BUILDDIR)/html -D slimebook_anchors_mode=check $(SPHINXOPTS)

anchors-update: sources system-deps node-deps
	$(SPHINXBUILD) -b html -d $(BUILDDIR)/doctrees . $(BUILDDIR)/html -D slimebook_anchors_mode=update $(SPHINXOPTS)

test: $(STAMP) system-deps node-deps
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# Mutation testing (bench/mutation.py, cosmic-ray) of the pure readers and writers; not in CI. One module at a time,
# each run bounded (MUTATION_ARGS="--budget 600 excerpt" picks modules and the budget); prints a score per module.
mutation: $(STAMP)
	$(BIN)/python bench/mutation.py $(MUTATION_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .

clean:
	rm -rf $(BUILDDIR)

# Refresh .ci/constraints.txt from a fresh virtualenv (the newest versions pyproject.toml allows).
lock:
	PYTHON=$(PYTHON) bash .ci/lock.sh

# Replay the Read the Docs build of .readthedocs.yaml (.ci/rtd_check.py): fresh clone of HEAD, fresh virtualenv,
# python.install, every build.jobs command, the html and PDF Sphinx command lines, in a temporary directory, with
# SLIME_SOURCE_URL standing in for the network. RTD_CHECK_ARGS=--no-pdf skips the PDF.
rtd-check: $(STAMP)
	$(BIN)/python .ci/rtd_check.py $(RTD_CHECK_ARGS)
