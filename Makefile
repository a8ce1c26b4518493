# The README's two commands: `make demo` runs the main job, `make test` runs the tests.
# Each creates (or reuses) the virtual environment .venv and installs what it needs.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test test-all test-integration bench install clean docs docs-check

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# torch first, pinned: this takes the CPU build that lies on disk (a bare 'torch'
	# would download a multi-GB CUDA build).
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[test,train]'
	touch $(STAMP)

install: $(STAMP)

# the optional integration group: TorchRL and moviepy on top of the test install
$(VENV)/.integration: $(STAMP)
	$(PY) -m pip install --quiet -e '.[test,train,integration]'
	touch $@

demo: $(STAMP)
	$(VENV)/bin/offroad-env demo --out outputs/demo --force

test: $(STAMP)
	$(PY) -m pytest -q

test-integration: $(VENV)/.integration
	$(PY) -m pytest -q -m integration

test-all: $(VENV)/.integration
	$(PY) -m pytest -q -m ''

# the documentation site (docs/): strict (a warning or a broken cross-reference fails it),
# offline (nothing fetched at build time); the environment cards and the API pages are
# generated from the code at every build
$(VENV)/.docs: $(STAMP)
	$(PY) -m pip install --quiet -e '.[test,train,docs]'
	touch $@

docs: $(VENV)/.docs
	$(PY) docs/gifs.py --check
	rm -rf docs/_build/html
	$(VENV)/bin/sphinx-build -W --keep-going -n -q -b html docs docs/_build/html
	@echo "docs: docs/_build/html/index.html"

# the built site's links, assets (nothing from another host) and, with Chromium (Debian's
# chromium package), each checked page rendered headless
docs-check: docs
	$(PY) docs/check_site.py docs/_build/html

bench: $(STAMP)
	$(PY) benchmarks/bench_terrain.py

clean:
	rm -rf $(VENV) outputs .pytest_cache docs/_build docs/envs docs/api
