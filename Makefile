# `make test` and `make train` set up .venv on first use (and again whenever
# pyproject.toml or constraints.txt change), installing under constraints.txt.
PYTHON ?= python3
# Extras that `make test` (and lint, bench, strength) install; .ci/run adds rllib
# so that CI also runs the Ray RLlib tests.
EXTRAS ?= train,dev,bench,render,web,openspiel,onnx,docs
# `make train` needs only the training extra, which installs in less time.
TRAIN_EXTRAS ?= train
comma := ,
VENV := .venv
PY := $(VENV)/bin/python
# One stamp per set of extras: .venv/.installed-train-dev-... for train,dev,...
stamp = $(VENV)/.installed-$(subst $(comma),-,$(1))
STAMP := $(call stamp,$(EXTRAS))
TRAIN_STAMP := $(call stamp,$(TRAIN_EXTRAS))
# setuptools announces every editable install made through its import finder, which the
# package-dir mapping needs; that note is information only and carries no action.
PIP_INSTALL := PYTHONWARNINGS="ignore:Editable installation:UserWarning" \
	$(PY) -m pip install --disable-pip-version-check -q -c constraints.txt

.PHONY: test train docs lint bench strength clean browser optional-browser

$(VENV)/.installed-%: pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP_INSTALL) --upgrade pip setuptools wheel
	$(PIP_INSTALL) -e ".[$(subst -,$(comma),$*)]"
	touch $@

test: $(STAMP) optional-browser
	$(PY) -m ruff check .
	$(PY) -m pytest

train: $(TRAIN_STAMP)
	$(PY) -m jekyll_hyde_app.cli train --config configs/expert_iteration/default.yaml

# The documentation site (mkdocs.yml, docs/) into build/site, warnings as errors, as
# tests/test_docs.py builds it; needs only the docs extra (DOCS_EXTRAS=...).
DOCS_EXTRAS ?= docs
docs: $(call stamp,$(DOCS_EXTRAS))
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict

# The browser test (tests/test_web.py) drives Debian's chromium through Playwright.
# `make browser` installs it (as root, with apt-get). `make test` does so when it can;
# where it cannot, it says why and the browser test is skipped with the same advice.
CHROMIUM_INSTALL := apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium
browser:
	@if command -v chromium >/dev/null; then echo "chromium: $$(command -v chromium)"; \
	elif [ "$$(id -u)" != 0 ]; then echo "make browser: installing chromium needs root: sudo make browser" >&2; exit 2; \
	elif ! command -v apt-get >/dev/null; then echo "make browser: no apt-get here: install chromium with your package manager" >&2; exit 2; \
	else echo "installing chromium (apt-get) for the browser test"; $(CHROMIUM_INSTALL); fi

optional-browser:
	@if command -v chromium >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "installing chromium (apt-get) for the browser test; log in $(VENV)/chromium-install.log"; \
	  ($(CHROMIUM_INSTALL)) >$(VENV)/chromium-install.log 2>&1 \
	    || echo "chromium could not be installed (see $(VENV)/chromium-install.log): the browser test will be skipped"; \
	else echo "chromium is not installed and this user cannot install it: the browser test will be skipped (sudo make browser enables it)"; fi

lint: $(STAMP)
	$(PY) -m ruff check .

bench: $(STAMP)
	$(PY) benchmarks/engine_speed.py
	$(PY) benchmarks/env_throughput.py
	$(PY) benchmarks/gym_overhead.py
	$(PY) benchmarks/batched_speed.py
	$(PY) benchmarks/gym_vector_speed.py
	$(PY) benchmarks/ismcts_speed.py

strength: $(STAMP)
	cd benchmarks && ../$(PY) strength.py

clean:
	rm -rf $(VENV) build *.egg-info
