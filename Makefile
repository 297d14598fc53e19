# Newcomers: `make demo` runs the main example, `make test` runs every test.
# `make test-all` runs every test on CPython 3.11, 3.12 and 3.13 (venvs .venv, .venv312, .venv313);
# `make wheel-test` runs the acceptance suite against a wheel installed in a fresh venv.
PY ?= python3.11
FIND_PY := bash .ci/find_python
VENV := .venv
BIN := $(VENV)/bin
ACCEPTANCE := ../shared/acceptance
# Acceptance files whose issues have landed.
ACCEPTANCE_TESTS := $(ACCEPTANCE)/test_dynamic_shapes.py $(ACCEPTANCE)/test_numpy_semantics.py \
	$(ACCEPTANCE)/test_controls.py $(ACCEPTANCE)/test_graph_breaks.py $(ACCEPTANCE)/test_data_dependent.py \
	$(ACCEPTANCE)/test_whole_programs.py $(ACCEPTANCE)/test_numpy_api.py $(ACCEPTANCE)/test_soundness.py \
	$(ACCEPTANCE)/test_loops.py $(ACCEPTANCE)/test_compile_economy.py $(ACCEPTANCE)/test_soundness3.py \
	$(ACCEPTANCE)/test_loops_compiled_once.py
# Tests run strict: a backend's internal error fails the test (never a silent NumPy fallback), and the
# IR verifier checks every graph after tracing, after each pass and at backend entry.
STRICT := FRAMETRACE_STRICT_BACKEND=1 FRAMETRACE_VERIFY_IR=1
# pytest on one pytest-xdist worker per CPU, then the tests marked `serial` alone; plain pytest on one CPU
# (FT_TEST_JOBS=N to choose; tests/conftest.py keeps the workers' caches apart). Usage: $(PYTEST) PYTHON ARGS...
PYTEST := bash $(CURDIR)/.ci/pytest_parallel

.PHONY: install demo test unit acceptance bench lint fuzz clean test-all wheel-test

$(BIN)/.installed: setup.cfg pyproject.toml
	@command -v $(PY) >/dev/null 2>&1 || { echo "need $(PY)"; exit 1; }
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test,mpi,redis,dask]'
	command -v redis-server >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq redis-server >/dev/null; } || echo "redis-server not installed: the Redis tests will be skipped"
	touch $@

install: $(BIN)/.installed

# .venv312, .venv313: the same install on another CPython, found on PATH or through pyenv.
.venv3%/bin/.installed: setup.cfg pyproject.toml
	py=$$($(FIND_PY) 3.$*) && $$py -m venv .venv3$*
	.venv3$*/bin/pip install -q --upgrade pip
	.venv3$*/bin/pip install -q -e '.[test,mpi,redis,dask]'
	touch $@

demo: install
	$(BIN)/python examples/demo.py

# The acceptance suite has its own conftest, so it runs in a pytest process of its own.
test: install
	PATH="$(CURDIR)/$(BIN):$$PATH" $(PYTEST) $(BIN)/python -q tests -p no:cacheprovider
	$(STRICT) PATH="$(CURDIR)/$(BIN):$$PATH" $(PYTEST) $(BIN)/python -q $(ACCEPTANCE_TESTS) -p no:cacheprovider

unit: install
	PATH="$(CURDIR)/$(BIN):$$PATH" $(PYTEST) $(BIN)/python -q tests -p no:cacheprovider

acceptance: install
	$(STRICT) PATH="$(CURDIR)/$(BIN):$$PATH" $(PYTEST) $(BIN)/python -q $(ACCEPTANCE_TESTS) -p no:cacheprovider

# The whole suite on another CPython. A missing interpreter fails on CI (CI set) and is skipped, loudly, elsewhere.
# VERSION_TESTS narrows it when time is short, e.g. VERSION_TESTS="tests --ignore=tests/ir".
VERSION_TESTS ?= tests
test-py3%:
	@if ! $(FIND_PY) 3.$* >/dev/null; then \
		if [ -n "$${CI:-}" ]; then echo "CI: CPython 3.$* is required"; exit 1; fi; \
		echo "*** SKIPPED: no CPython 3.$* here (CI fails on this) ***"; exit 0; fi; \
	$(MAKE) --no-print-directory .venv3$*/bin/.installed && \
	PATH="$(CURDIR)/.venv3$*/bin:$$PATH" $(PYTEST) .venv3$*/bin/python -q $(VERSION_TESTS) -p no:cacheprovider && \
	$(STRICT) PATH="$(CURDIR)/.venv3$*/bin:$$PATH" $(PYTEST) .venv3$*/bin/python -q $(ACCEPTANCE_TESTS) -p no:cacheprovider

test-all: test test-py312 test-py313

# Users install a wheel, not the checkout: build one, install it (non-editable) into a fresh venv and run the
# acceptance suite from a temporary folder outside the tree, so that no import can come from the checkout.
wheel-test: install
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	rm -rf build; $(BIN)/pip wheel -q --no-deps -w "$$tmp/dist" .; rm -rf build; \
	$(PY) -m venv "$$tmp/venv"; \
	whl=$$(ls "$$tmp"/dist/frametrace-*.whl); "$$tmp/venv/bin/pip" install -q "$$whl[test]"; \
	cd "$$tmp"; \
	venv/bin/python -c "import frametrace, frametrace.codegen; assert frametrace.__file__.startswith('$$tmp/venv/'), frametrace.__file__"; \
	$(STRICT) PATH="$$tmp/venv/bin:$$PATH" $(PYTEST) venv/bin/python -q -p no:cacheprovider $(abspath $(ACCEPTANCE_TESTS))

bench: install
	$(BIN)/python benchmarks/run_all.py

# A differential fuzz run of MINUTES minutes (default 10); failures are printed minimised.
fuzz: install
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python tests/fuzz/run_fuzz.py --minutes $(or $(MINUTES),10)

lint: install
	$(BIN)/ruff check frametrace csrc_free_runtime tests benchmarks examples

clean:
	rm -rf $(VENV) .venv312 .venv313 build *.egg-info
