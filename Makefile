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

.PHONY: venv system-deps sources html livehtml test lint clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e ".[dev]"
	@touch $(STAMP)

venv: $(STAMP)

system-deps:
	@bash .ci/system-deps.sh

sources: $(STAMP)
	$(BIN)/slimebook sources fetch

html: sources system-deps
	$(SPHINXBUILD) -W --keep-going -b html -d $(BUILDDIR)/doctrees . $(BUILDDIR)/html $(SPHINXOPTS)

livehtml: sources system-deps
	$(BIN)/sphinx-autobuild . $(BUILDDIR)/html -d $(BUILDDIR)/doctrees \
	  --ignore "$(BUILDDIR)/*" --ignore "$(VENV)/*" --ignore "*.egg-info/*" --ignore ".git/*" \
	  --ignore "tests/*" --ignore "bench/*" --watch _ext $(SPHINXOPTS)

test: $(STAMP) system-deps
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .

clean:
	rm -rf $(BUILDDIR)
