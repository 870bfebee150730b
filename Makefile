# The two commands of the README. Each bootstraps itself on a fresh machine: it creates the
# virtual environment and installs the project (and, for tests, the system packages the
# browser and export tests need) before it runs.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PORT   ?= 8501
# `make test` runs on this many workers, spread test by test (--dist loadgroup), except that
# the browser modules are dealt into two groups, lanes, each kept on one worker
# (tests/e2e/conftest.py: a module's servers stay with it, a lane's Chromium with the lane; at
# most two Chromiums at once). Three on two cores: two work through the browser lanes, which
# mostly wait, while the third runs the unit tests, and all three share what is left. The
# whole suite keeps both cores busy (loading the app in Chromium is most of the browser tests'
# CPU): pytest 486-499 s on two workers in a clean clone, 397-466 s on three (stop 40), 348 s
# on three once a module's tests share a tab, a lane one Chromium and parametrized property
# tests their draws (stop 41; `make test` 332 s once installed at stop 42). WORKERS=0 runs
# them one after another in one process. The run ends with its 15 slowest tests (--durations).
WORKERS ?= 3
# `make test-fast` on three: a third worker runs while the others wait on timeouts the tests
# set off on purpose (a hung handler's deadline, a server's shutdown). Stop 42: three 82-85 s
# and 147-151 s of CPU, two 103 s, four 86 s (docs/performance.md, "The fast loop's CPU").
FAST_WORKERS ?= 3
# Python keeps the bytecode it compiles (__pycache__, ignored by git) even where the shell says
# not to: each test worker imports the whole project and its tests, which took 15 s of CPU to
# collect test-fast without the cache and 9 s with it, and every test that starts a Python
# process (the CLI, the sandbox, the app servers) compiles the project again without it.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: run test test-fast test-lowest typecheck bench clean lock

# requirements.lock pins every package to the version the tests last passed with (`make lock`
# writes it from a passing venv); pyproject.toml keeps the lower bounds the project supports.
$(BIN)/.installed: pyproject.toml requirements.lock
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c requirements.lock -e '.[dev]'
	touch $@

# glibc gives each thread that allocates its own memory arena (up to 8 per core), and
# Streamlit runs every script run in a new thread: two arenas hold a room's server 17-20 MB
# lower (bench/workshop_load.py --minutes 20; see the README's Deployment). Other C libraries
# ignore the variable.
run: $(BIN)/.installed
	MALLOC_ARENA_MAX=2 $(BIN)/streamlit run serve.py --server.port $(PORT) --server.headless true \
		--browser.gatherUsageStats false --server.fileWatcherType none

# mypy runs beside the tests rather than before them: the tests leave a core idle about half
# the time (browser tests wait on their servers), and a clean clone's mypy takes half a minute
# of one core. Its report follows theirs; either failing fails the target.
test: $(BIN)/.installed
	sh scripts/system-deps.sh
	$(BIN)/ruff check .
	$(BIN)/python -m mypy > $(VENV)/mypy.log 2>&1 & typing=$$!; \
	$(BIN)/python -m pytest -n $(WORKERS) --dist loadgroup --durations=15; tests=$$?; \
	wait $$typing; typed=$$?; echo "mypy:"; cat $(VENV)/mypy.log; \
	[ $$tests -eq 0 ] && [ $$typed -eq 0 ]

# The loop while changing code: every test but the browser, PostgreSQL and benchmark ones
# (markers declared in pyproject.toml; 4,098 of 4,178 tests at d28a381), no lint, no system
# packages. `make test` still runs everything.
# Its property tests run the hypothesis profile "fast" (tests/hypothesis_profiles.py: a tenth
# of the examples, from a fixed seed, and the smaller size a test names for it); `make test`
# runs each at the count and size it states.
# No browser module is in it, so no test needs a group: --dist worksteal gives each worker a
# contiguous half and moves tests from the end of the busier one, so a module's fixtures and a
# process's caches (the source scans) are built on one worker, not both, and the workers end
# together (2 workers: 125 s and 190 s of CPU with loadgroup, 113-116 s and 172-177 s with it).
FAST := not browser and not postgres and not bench
test-fast: $(BIN)/.installed
	FLOWDEBUG_HYPOTHESIS=fast $(BIN)/python -m pytest -n $(FAST_WORKERS) --dist worksteal -m "$(FAST)" \
		--durations=15

typecheck: $(BIN)/.installed
	$(BIN)/python -m mypy

# The lower bounds of pyproject.toml, tested: a second venv with every direct dependency at
# exactly its declared minimum runs the codec, real-payload and command-line tests.
LOWEST := .venv-lowest
test-lowest: pyproject.toml
	test -x $(LOWEST)/bin/python || $(PYTHON) -m venv $(LOWEST)
	$(PYTHON) scripts/lowest_constraints.py > $(LOWEST)/constraints.txt
	$(LOWEST)/bin/python -m pip install --quiet --upgrade pip
	$(LOWEST)/bin/python -m pip install --quiet -c $(LOWEST)/constraints.txt \
		-e . pytest hypothesis botocore
	$(LOWEST)/bin/python -m pip check
	$(LOWEST)/bin/python -m pytest -p no:cacheprovider -q \
		tests/protocols tests/protocols/test_real_fixtures.py tests/cli/test_cli.py

bench: $(BIN)/.installed
	for b in bench/*.py; do $(BIN)/python $$b || exit 1; done

lock: $(BIN)/.installed
	{ echo "# Versions the test suite passed with; written by 'make lock' (pip list)."; \
	  $(BIN)/python -m pip list --format=freeze --exclude-editable --exclude pip --exclude setuptools; } > requirements.lock

clean:
	rm -rf $(VENV) $(LOWEST) .pytest_cache .ruff_cache .mypy_cache
