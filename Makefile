# bodi: `make run` sets up and runs the default benchmark study; `make test` sets up and runs
# the tests.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: setup run test lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	# The CPU build of torch first, so that nothing pulls the CUDA build.
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $(STAMP)

setup: $(STAMP)

run: $(STAMP)
	$(BIN)/bodi bench --out results

test: $(STAMP)
	$(BIN)/ruff check bodi tests benchmarks
	$(BIN)/pytest -q

lint: $(STAMP)
	$(BIN)/ruff check bodi tests benchmarks

bench: $(STAMP)
	$(BIN)/python benchmarks/ask_speed.py

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
