# Two commands set up a fresh machine:
#   make quickstart   create .venv, install, run the main job on embedded defaults
#   make test         install the test extras and run lint, the docs build and the whole suite
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: quickstart test lint typecheck docs bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.core: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e .
	touch $@

# torch first, pinned to the CPU build on this machine's disk, so no CUDA build is pulled.
$(VENV)/.full: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e ".[all,embedded,test,docs,openenv]"
	touch $@ $(VENV)/.core

quickstart: $(VENV)/.core
	$(BIN)/coworkenv quickstart

lint: $(VENV)/.full typecheck
	$(BIN)/ruff check src tests benchmarks docs
	$(BIN)/ruff format --check src tests benchmarks docs

# mypy --strict on the whole package; settings in pyproject.toml
typecheck: $(VENV)/.full
	$(BIN)/mypy

# the docs site, reference pages generated from the code; --strict fails on any warning
docs: $(VENV)/.full
	$(BIN)/mkdocs build --strict --site-dir $(VENV)/site

test: lint docs
	$(BIN)/pytest -q

bench: $(VENV)/.core
	$(BIN)/python benchmarks/runtime.py
	$(BIN)/python benchmarks/synth.py

clean:
	rm -rf $(VENV) out
