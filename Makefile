# Every target sets up its own environment in .venv, so a fresh machine needs only
# Python 3.10+, Node and pip.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip
PORT   ?= 8888

.PHONY: help dev lab demo test lint bench clean browser labextension

help:
	@echo "make lab    start JupyterLab on examples/ with jupyter-hashline installed (main job)"
	@echo "make demo   a scripted agent edits a notebook, told in the terminal (offline)"
	@echo "make test   lint, then run the whole test suite"
	@echo "make lint   ruff and mypy on the package"
	@echo "make bench  benchmarks against peers and floors"
	@echo "make labextension  build the JupyterLab sidebar (needs Node and npm)"

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --upgrade pip

# Re-install whenever the project's metadata changes.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(PIP) install -e '.[test,lab]'
	touch $@

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
lab: dev
	$(BIN)/jupyter lab --allow-root --no-browser --ip=127.0.0.1 --port=$(PORT) \
	    --ServerApp.root_dir=examples $(LAB_ARGS)

# The first example's story in the terminal: tool calls and replies, the diff, zones and cache.
demo: dev
	$(BIN)/jupyter-hashline demo

lint: dev
	$(BIN)/ruff check jupyter_hashline tests bench scripts
	$(BIN)/ruff format --check jupyter_hashline tests bench scripts
	$(BIN)/mypy

# Browser tests drive Debian's Chromium (Playwright cannot download browsers here). As root
# with apt-get available it is installed once; elsewhere those tests skip and say why.
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
	  else echo "chromium is not installed: browser tests will be skipped"; fi; }

test: lint browser
	$(BIN)/python -m pytest

bench: dev
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis \
	    labextension/lib labextension/tsconfig.tsbuildinfo jupyter_hashline/labextension
