# Two commands set up a fresh machine:
#   make quickstart   create .venv, install, run the main job on embedded defaults
#   make test         install the test extras and run lint, the docs build and the whole suite
#                     (and the verifiers adapter's tests, in an environment of their own)
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# verifiers caps datasets below what TRL 1.x needs: its adapter is tested in a second environment
VF_VENV ?= .venv-verifiers
VF_BIN := $(VF_VENV)/bin

.PHONY: quickstart test test-verifiers lint typecheck docs bench clean

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

# the core package, the test tools and verifiers only; pip check keeps the pins honest
$(VF_VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VF_VENV)
	$(VF_BIN)/python -m pip install -q --upgrade pip
	$(VF_BIN)/pip install -q -e ".[test,verifiers]"
	$(VF_BIN)/pip check
	touch $@

test-verifiers: $(VF_VENV)/.installed
	$(VF_BIN)/pytest -q tests/test_verifiers_env.py

test: lint docs test-verifiers
	$(BIN)/pytest -q

bench: $(VENV)/.core
	$(BIN)/python benchmarks/runtime.py
	$(BIN)/python benchmarks/synth.py

clean:
	rm -rf $(VENV) $(VF_VENV) out
