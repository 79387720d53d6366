# bonnieboard: `make run` serves the app with sample data; `make test` runs every test.
# Both create .venv/ when missing. Missing Debian packages are installed when run as root;
# otherwise make stops and prints the apt-get line to run.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000

RUN_DEBS := gcc make libcurl4-openssl-dev python3-dev
TEST_DEBS := $(RUN_DEBS) curl bonnie++ strace chromium-headless-shell postgresql sqlite3 e2fsprogs btrfs-progs xfsprogs man-db systemd docker-compose

.PHONY: run test test-quick lint serve migrate runner samples debs-run debs-test lock clean

run: debs-run $(VENV)/.installed runner migrate samples
	$(BIN)/bonnieboard serve --host $(HOST) --port $(PORT)

# `make test` runs four things side by side, because pytest's workers leave a core idle while their tests wait for
# a throttled device, a browser or a server:
# - the runner's C tests (its warnings are errors here and in CI, WERROR=1, never in a user's `make run` or install),
#   started as soon as the runner is built: they need no venv, and making the venv keeps only one core busy; output
#   in $(RUNNER_LOG);
# - the tests marked root (loop devices, mounts and cgroups: the kernel's, shared by every process) in a pytest
#   process of their own, one at a time, at a higher priority (nice -10, as root) so that the workers' CPU does not
#   set the pace their verdicts judge; output in $(KERNEL_LOG);
# - lint; output in $(LINT_LOG);
# - every other test, spread over one pytest-xdist worker per core (PYTEST_WORKERS=0: in one process).
# The logs are shown after the workers' output, and `make test` fails if any of the four does. Each pytest lists
# its 30 slowest tests at the end: where the suite's time goes.
KERNEL_LOG := test-output/kernel-tests.log
LINT_LOG := test-output/lint.log
RUNNER_LOG := test-output/runner-tests.log
PYTEST_WORKERS ?= auto
XDIST := -n $(PYTEST_WORKERS)
# The tests' processes keep their bytecode, and pytest its rewritten test modules, in __pycache__ even where the
# environment asks for none (PYTHONDONTWRITEBYTECODE): otherwise each pytest process compiles and rewrites every
# test module again (collecting takes 10 s rather than 5) and each process forked or spawned for a test compiles
# again the app modules that no earlier process compiled.
test test-quick: export PYTHONDONTWRITEBYTECODE :=
test: RUNNER_FLAGS = WERROR=1
test: debs-test runner
	@mkdir -p $(dir $(KERNEL_LOG))
	@$(MAKE) --no-print-directory -C runner test $(RUNNER_FLAGS) > $(RUNNER_LOG) 2>&1 & ctests=$$!; \
	$(MAKE) --no-print-directory $(VENV)/.installed-test || { wait $$ctests; exit 1; }; \
	nice -n -10 $(BIN)/python -m pytest -p no:xdist -m root --durations=30 $(PYTEST_ARGS) > $(KERNEL_LOG) 2>&1 & \
		kernel=$$!; \
	$(MAKE) --no-print-directory lint > $(LINT_LOG) 2>&1 & lint=$$!; \
	$(BIN)/python -m pytest $(XDIST) -m 'not root' --durations=30 $(PYTEST_ARGS); tests=$$?; \
	wait $$kernel; kernel=$$?; wait $$lint; lint=$$?; wait $$ctests; ctests=$$?; \
	echo "==== the tests marked root, one at a time ($(KERNEL_LOG))"; cat $(KERNEL_LOG); \
	echo "==== lint ($(LINT_LOG))"; cat $(LINT_LOG); \
	echo "==== the runner's C tests ($(RUNNER_LOG))"; cat $(RUNNER_LOG); \
	echo "==== make test: workers $$tests, root tests $$kernel (0 passed; 5 no test chosen)," \
		"lint $$lint, C tests $$ctests"; \
	[ $$tests -eq 0 -o $$tests -eq 5 ] && [ $$kernel -eq 0 -o $$kernel -eq 5 ] && [ $$tests$$kernel != 55 ] && \
		[ $$lint -eq 0 ] && [ $$ctests -eq 0 ]

# The inner loop: the tests of neither a browser, root, real bonnie++ nor a slow load (markers slow and root),
# on SQLite only. `make test` (and CI) still runs every test on both databases.
QUICK_MARKERS := not slow and not root
test-quick: $(VENV)/.installed-test runner
	$(BIN)/python -m pytest $(XDIST) --db sqlite -m '$(QUICK_MARKERS)' $(PYTEST_ARGS)

# Format, lint, types and the layers' import contracts (all configured in pyproject.toml); `make test` runs it too.
LINT_PATHS := app tests bench migrations
lint: $(VENV)/.installed-test
	$(BIN)/ruff format --check $(LINT_PATHS)
	$(BIN)/ruff check $(LINT_PATHS)
	$(BIN)/mypy
	$(BIN)/lint-imports

migrate: $(VENV)/.installed
	$(BIN)/bonnieboard migrate

samples: $(VENV)/.installed
	$(BIN)/bonnieboard ingest --if-empty --tag source=sample_data --manifest sample_data/manifest

# One compiler a core: the runner's sources are independent objects.
CORES := $(shell nproc 2>/dev/null || echo 1)
runner:
	$(MAKE) -C runner -j$(CORES) $(RUNNER_FLAGS)

# python3-venv is needed only where the interpreter cannot make a venv by itself (Debian's python3).
debs-run:
	@$(PYTHON) -c 'import ensurepip, venv' 2>/dev/null || extra=python3-venv; \
	sh ./.ci/ensure-debs $(RUN_DEBS) $$extra

debs-test:
	@$(PYTHON) -c 'import ensurepip, venv' 2>/dev/null || extra=python3-venv; \
	sh ./.ci/ensure-debs $(TEST_DEBS) $$extra

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)

# uv installs into the venv (pinned, from the venv itself): the lock in 7 s where pip took 28 s, its bytecode
# compiled on both cores. It trusts the system's certificates, as pip does here (a proxy's own CA among them).
UV_VERSION := 0.13.9
$(BIN)/uv: | $(VENV)/bin/python
	$(BIN)/pip install -q uv==$(UV_VERSION)
UV_INSTALL := $(BIN)/uv pip install -q --system-certs --python $(BIN)/python --compile-bytecode

# The dependencies come from the locks, each file checked against its hash; then bonnieboard itself, with
# --no-deps (the lock already holds everything it needs). With the bench extra: the scripts in bench/ run
# from a plain install too. tests/e2e/test_install.py holds the build itself to no warning.
$(VENV)/.installed: pyproject.toml requirements-bench.lock | $(BIN)/uv
	$(UV_INSTALL) --require-hashes -r requirements-bench.lock
	$(UV_INSTALL) --no-deps -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml requirements-test.lock | $(BIN)/uv
	$(UV_INSTALL) --require-hashes -r requirements-test.lock
	$(UV_INSTALL) --no-deps -e .
	touch $@ $(VENV)/.installed

# Write the locks again from pyproject.toml: versions already locked stay unless pyproject.toml rules them
# out (UPGRADE=1 takes the newest each range allows). uv runs from a venv of its own; it resolves for every
# platform and Python from 3.11 on (--universal), so one lock serves the image, Debian's python3 and CI.
LOCK_VENV := .lock-venv
lock:
	test -x $(LOCK_VENV)/bin/uv || { $(PYTHON) -m venv $(LOCK_VENV) && $(LOCK_VENV)/bin/pip install -q uv==$(UV_VERSION); }
	for spec in :requirements.lock bench:requirements-bench.lock test:requirements-test.lock; do \
	    extra=$${spec%%:*}; out=$${spec#*:}; \
	    $(LOCK_VENV)/bin/uv pip compile -q pyproject.toml $${extra:+--extra $$extra} --universal \
	        --python-version 3.11 --generate-hashes --custom-compile-command 'make lock' \
	        $(if $(filter 1,$(UPGRADE)),--upgrade) -o $$out || exit 1; \
	done

clean:
	$(MAKE) -C runner clean
	rm -rf $(VENV) $(LOCK_VENV) *.egg-info .pytest_cache test-output
