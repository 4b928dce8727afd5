# Every target sets up its own environment in .venv, so a fresh machine needs only
# Python 3.10+, Node and pip.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip
PORT   ?= 8888

.PHONY: help dev lab demo test lint bench clean browser

help:
	@echo "make lab    start JupyterLab on examples/ with jupyter-hashline installed (main job)"
	@echo "make test   lint, then run the whole test suite"
	@echo "make lint   ruff and mypy on the package"
	@echo "make bench  benchmarks against peers and floors"

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --upgrade pip

# Re-install whenever the project's metadata changes.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(PIP) install -e '.[test,lab]'
	touch $@

dev: $(VENV)/.installed

lab: dev
	$(BIN)/jupyter lab --allow-root --no-browser --ip=127.0.0.1 --port=$(PORT) \
	    --ServerApp.root_dir=examples $(LAB_ARGS)

lint: dev
	$(BIN)/ruff check jupyter_hashline tests bench
	$(BIN)/ruff format --check jupyter_hashline tests bench
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
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis
