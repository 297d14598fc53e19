# Newcomers: `make demo` runs the main example, `make test` runs every test.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
ACCEPTANCE := ../shared/acceptance
# Acceptance files whose issues have landed.
ACCEPTANCE_TESTS := $(ACCEPTANCE)/test_dynamic_shapes.py $(ACCEPTANCE)/test_numpy_semantics.py \
	$(ACCEPTANCE)/test_controls.py $(ACCEPTANCE)/test_graph_breaks.py $(ACCEPTANCE)/test_data_dependent.py

.PHONY: install demo test unit acceptance bench lint fuzz clean

$(BIN)/.installed: setup.cfg pyproject.toml
	@command -v $(PY) >/dev/null 2>&1 || { echo "need $(PY)"; exit 1; }
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test,mpi,redis]'
	command -v redis-server >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq redis-server >/dev/null; } || echo "redis-server not installed: the Redis tests will be skipped"
	touch $@

install: $(BIN)/.installed

demo: install
	$(BIN)/python examples/demo.py

# The acceptance suite has its own conftest, so it runs in a pytest process of its own.
test: install
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m pytest -q tests -p no:cacheprovider
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m pytest -q $(ACCEPTANCE_TESTS) -p no:cacheprovider

unit: install
	$(BIN)/python -m pytest -q tests -p no:cacheprovider

acceptance: install
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m pytest -q $(ACCEPTANCE_TESTS) -p no:cacheprovider

bench: install
	$(BIN)/python benchmarks/run_all.py

# A differential fuzz run of MINUTES minutes (default 10); failures are printed minimised.
fuzz: install
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python tests/fuzz/run_fuzz.py --minutes $(or $(MINUTES),10)

lint: install
	$(BIN)/ruff check frametrace csrc_free_runtime tests benchmarks examples

clean:
	rm -rf $(VENV) build *.egg-info
