# bodi: `make run` sets up and runs the default benchmark study; `make test` sets up and runs
# the tests.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
LOCK   := requirements/lock.txt

.PHONY: setup run test lint bench docs lock clean

# The CPU build of torch first, so that nothing pulls the CUDA build; then bodi with every
# extra, at the versions of the lock file (pyproject.toml itself declares ranges).
$(STAMP): pyproject.toml $(LOCK)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -c $(LOCK) -e ".[dev]"
	touch $(STAMP)

setup: $(STAMP)

run: $(STAMP)
	$(BIN)/bodi bench --out results

# one thread per process (see tests/conftest.py for what a second thread costs under load),
# two test processes (pytest-xdist) that take work from each other when one runs out: CI's two
# cores; the heavy tests start first (tests/conftest.py)
test: $(STAMP)
	$(BIN)/ruff check bodi tests benchmarks
	OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 $(BIN)/pytest -q -n 2 --dist worksteal --durations=15

lint: $(STAMP)
	$(BIN)/ruff check bodi tests benchmarks

# the documentation site (docs/, mkdocs.yml) into site/, warnings as errors
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

bench: $(STAMP)
	$(BIN)/python benchmarks/ask_speed.py

# re-pin the lock file to what the virtual environment holds
lock: $(STAMP)
	$(BIN)/pip freeze --exclude-editable | grep -v '^bodi' > $(LOCK)

clean:
	rm -rf $(VENV) .venv-lowest .venv-newest .pytest_cache build site *.egg-info
