# The two commands of the README. Each bootstraps itself on a fresh machine: it creates the
# virtual environment and installs the project (and, for tests, the system packages the
# browser and export tests need) before it runs.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PORT   ?= 8501

.PHONY: run test lint bench clean lock

# requirements.lock pins every package to the version the tests last passed with (`make lock`
# writes it from a passing venv); pyproject.toml keeps the lower bounds the project supports.
$(BIN)/.installed: pyproject.toml requirements.lock
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c requirements.lock -e '.[dev]'
	touch $@

run: $(BIN)/.installed
	$(BIN)/streamlit run app.py --server.port $(PORT) --server.headless true \
		--browser.gatherUsageStats false --server.fileWatcherType none

test: $(BIN)/.installed
	sh scripts/system-deps.sh
	$(BIN)/ruff check .
	$(BIN)/python -m pytest

bench: $(BIN)/.installed
	for b in bench/*.py; do $(BIN)/python $$b || exit 1; done

lock: $(BIN)/.installed
	{ echo "# Versions the test suite passed with; written by 'make lock' (pip list)."; \
	  $(BIN)/python -m pip list --format=freeze --exclude-editable --exclude pip --exclude setuptools; } > requirements.lock

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
