# Every target sets up its own environment in .venv, so a fresh machine needs only
# Python 3.10+, Node and pip. `make lint` needs only Python (no Node): it is the Python side.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip
PORT   ?= 8888
LAB_SCRATCH ?= lab-scratch

DIST   ?= dist

.PHONY: help venv dev lab demo test lint lint-ts format bench bench-full clean browser labextension \
        dist hub-proxy hooks docs screenshots

help:
	@echo "make lab      start JupyterLab on copies of examples/ with jupyter-hashline installed (main job)"
	@echo "make demo     a scripted agent edits a notebook, told in the terminal (offline)"
	@echo "make test     lint (Python and TypeScript), then run the whole test suite"
	@echo "make lint     ruff and mypy on the Python side (needs no Node)"
	@echo "make lint-ts  ESLint and Prettier on the sidebar's TypeScript"
	@echo "make format   apply ruff's and Prettier's formatting and safe fixes"
	@echo "make bench    benchmarks against floors and Jupyter, quick (under 5 minutes)"
	@echo "make bench-full  every benchmark, full repeats, peers installed and run beside"
	@echo "make dist     the sdist and the wheel (prebuilt sidebar inside) in dist/, checked by twine"
	@echo "make hooks    install the pre-commit hooks into .git"
	@echo "make docs     build the documentation site into docs/_build/html (offline, warnings are errors, links checked)"
	@echo "make screenshots  regenerate the panel and sidebar screenshots the docs show (Chromium)"
	@echo "make labextension  build the JupyterLab sidebar (needs Node and npm)"

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --upgrade pip

# Re-install whenever the project's metadata changes (the version lives in package.json).
$(VENV)/.installed: pyproject.toml labextension/package.json | $(BIN)/python
	$(PIP) install -e '.[test,lab,docs]'
	touch $@

venv: $(VENV)/.installed

# The JupyterLab sidebar: TypeScript in labextension/, built with Node into
# jupyter_hashline/labextension/ (shipped prebuilt in the wheel). npm's install is cached in
# labextension/node_modules and redone only when package.json or the lockfile changes; the build
# is redone only when a source changed. `make dev` links the build into the venv, which is what
# `jupyter labextension develop` does, so JupyterLab loads the working tree's sidebar.
LABEXT_SRC := $(wildcard labextension/src/*.ts labextension/style/* labextension/schema/*.json) \
              labextension/install.json \
              labextension/package.json labextension/tsconfig.json
LABEXT_OUT := jupyter_hashline/labextension/package.json
LABEXT_LINK := $(VENV)/share/jupyter/labextensions/jupyter-hashline

labextension/node_modules/.package-lock.json: labextension/package.json labextension/package-lock.json
	cd labextension && npm ci --no-audit --no-fund
	touch $@

$(LABEXT_OUT): labextension/node_modules/.package-lock.json $(LABEXT_SRC)
	cd labextension && npm run --silent build
	touch $@

labextension: $(LABEXT_OUT)

$(VENV)/.labext-linked: $(VENV)/.installed | $(LABEXT_OUT)
	rm -rf $(LABEXT_LINK)
	mkdir -p $(dir $(LABEXT_LINK))
	ln -s $(CURDIR)/jupyter_hashline/labextension $(LABEXT_LINK)
	touch $@

dev: $(VENV)/.installed $(LABEXT_OUT) $(VENV)/.labext-linked

# Each example notebook starts its own provider simulator inside its kernel (its scripted model
# turns are Python functions of what the agent was shown), so `make lab` needs no other process.
# It runs on copies of examples/ in lab-scratch/ (ignored by git; a copy you changed is kept,
# LAB_FRESH=1 replaces them) and shuts every kernel down on exit (scripts/lab.py).
lab: dev
	$(BIN)/python scripts/lab.py --port=$(PORT) --scratch=$(LAB_SCRATCH) $(if $(LAB_FRESH),--fresh) \
	    $(LAB_ARGS)

# The first example's story in the terminal: tool calls and replies, the diff, zones and cache.
demo: dev
	$(BIN)/jupyter-hashline demo

PY_SOURCES := jupyter_hashline tests bench scripts docs

lint: $(VENV)/.installed
	$(BIN)/ruff check $(PY_SOURCES)
	$(BIN)/ruff format --check $(PY_SOURCES)
	$(BIN)/mypy

# ESLint and Prettier from labextension/node_modules (pinned in package.json, installed by
# `npm ci` from the lockfile, so this runs offline once installed).
lint-ts: labextension/node_modules/.package-lock.json
	cd labextension && npm run --silent lint:check

format: $(VENV)/.installed labextension/node_modules/.package-lock.json
	$(BIN)/ruff check --fix $(PY_SOURCES)
	$(BIN)/ruff format $(PY_SOURCES)
	cd labextension && npm run --silent lint

# The git hooks of .pre-commit-config.yaml (ruff, ruff-format, the TypeScript linter).
hooks: $(VENV)/.installed
	$(BIN)/pre-commit install

# Browser tests drive Debian's Chromium (Playwright cannot download browsers here), and the
# docs' curl example needs curl and jq. As root with apt-get available they are installed
# once; elsewhere those tests skip and say why.
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
	  else echo "chromium is not installed: browser tests will be skipped"; fi; }
	@command -v jq >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq jq curl; \
	  else echo "jq is not installed: the docs' curl example will not be run"; fi; }

# configurable-http-proxy, the proxy JupyterHub starts, for the JupyterHub test: an npm
# package pinned in tests/jupyterhub/package.json, installed there (not globally) by `npm ci`.
HUB_PROXY := tests/jupyterhub/node_modules/.package-lock.json

$(HUB_PROXY): tests/jupyterhub/package.json tests/jupyterhub/package-lock.json
	cd tests/jupyterhub && npm ci --no-audit --no-fund
	touch $@

hub-proxy: $(HUB_PROXY)

test: dev lint lint-ts docs browser hub-proxy
	$(BIN)/python -m pytest

# The documentation site: Sphinx with MyST and the PyData theme. The reference pages are
# generated from the code at build time; nothing is fetched, and any warning fails the build.
# -E: a fresh environment, so every page's navigation follows a toctree change (about 5 s).
# Then every link inside the site is checked, offline (scripts/check_docs_links.py).
docs: $(VENV)/.installed
	$(BIN)/sphinx-build -W --keep-going -E -q -b html docs docs/_build/html
	$(BIN)/python scripts/check_docs_links.py docs/_build/html

# The screenshots the docs show are committed files, taken from a real browser: the zones
# panel of examples/panel_demo.ipynb, JupyterLab with the first example run and the sidebar
# open, and the undo and review stories (undo_*.png, review*.png). Not part of `make docs`
# (they need Chromium and a kernel); rerun after a UI change.
screenshots: dev browser
	$(BIN)/python scripts/screenshot_panel.py --out docs/_static/images/panel.png
	$(BIN)/python scripts/screenshot_lab.py --out docs/_static/images/sidebar.png
	$(BIN)/python scripts/screenshot_undo.py --out-dir docs/_static/images
	$(BIN)/python scripts/screenshot_review.py --out-dir docs/_static/images

# The sdist and the wheel, both built from the checkout with the prebuilt sidebar (so neither
# needs Node to install), then checked by twine. DIST=dir puts them elsewhere.
dist: $(VENV)/.installed $(LABEXT_OUT)
	mkdir -p $(DIST)
	rm -f $(DIST)/jupyter_hashline-*
	$(BIN)/python -m build --no-isolation --outdir $(DIST) .
	$(BIN)/twine check --strict $(DIST)/jupyter_hashline-*

bench: dev
	$(BIN)/python -m bench --quick

bench-full: dev
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis dist docs/_build \
	    labextension/lib labextension/tsconfig.tsbuildinfo jupyter_hashline/labextension
