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
# The project is installed in setuptools' strict editable mode: the folders agents/,
# arena/, train/ and app/ hold the packages jekyll_hyde_agents, ... (pyproject.toml's
# package-dir), and a strict install links each module file into a tree of those names
# (build/__editable__.*), which Python, editors and type checkers all read. A link tree
# knows only the files that were there when it was made: `links` makes it again
# whenever the packages' list of files changes.
PIP_INSTALL := $(PY) -m pip install --disable-pip-version-check -q -c constraints.txt
STRICT := --config-settings editable_mode=strict
PACKAGE_FILES := $(VENV)/.package-files
PACKAGE_FOLDERS := jekyll_hyde_env agents arena train app configs

.PHONY: test train docs lint links test-lowest bench strength clean browser optional-browser

$(VENV)/.installed-%: pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP_INSTALL) --upgrade pip setuptools wheel
	$(PIP_INSTALL) -e ".[$(subst -,$(comma),$*)]" $(STRICT)
	rm -f $(PACKAGE_FILES)
	touch $@

links:
	@find $(PACKAGE_FOLDERS) -type f \( -name '*.py' -o -name '*.yaml' -o -name '*.h' -o -name '*.c' \
	  -o -name '*.json' -o -name '*.npz' -o -name '*.md' -o -name '*.html' -o -name '*.css' \
	  -o -name '*.js' -o -name py.typed \) -not -path '*/__pycache__/*' | sort > $(PACKAGE_FILES).new
	@if cmp -s $(PACKAGE_FILES).new $(PACKAGE_FILES); then rm $(PACKAGE_FILES).new; \
	else echo "linking the packages' files into the editable install"; \
	  $(PIP_INSTALL) --no-deps --no-build-isolation -e . $(STRICT) && mv $(PACKAGE_FILES).new $(PACKAGE_FILES); fi

test: $(STAMP) optional-browser
	@$(MAKE) --no-print-directory links
	$(PY) -m ruff check .
	$(PY) -m pytest

train: $(TRAIN_STAMP)
	@$(MAKE) --no-print-directory links
	$(PY) -m jekyll_hyde_app.cli train --config configs/expert_iteration/default.yaml

# The documentation site (mkdocs.yml, docs/) into build/site, warnings as errors, as
# tests/test_docs.py builds it. The web app's pictures are taken first, from the real
# pages in chromium (the web extra and `make browser`): they are never kept in git.
DOCS_EXTRAS ?= docs,web
docs: $(call stamp,$(DOCS_EXTRAS))
	$(PY) -m jekyll_hyde_app.web.screenshots --out docs/screenshots
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

# Lint, format and types, as CI checks them: ruff's rules, ruff's format, and mypy over
# every package (its strictness is pyproject.toml's [tool.mypy]); mypy runs from
# outside the checkout, so that it reads the packages through the install.
PACKAGES := jekyll_hyde_env jekyll_hyde_agents jekyll_hyde_arena jekyll_hyde_train jekyll_hyde_app
lint: $(STAMP)
	@$(MAKE) --no-print-directory links
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	cd /tmp && $(abspath $(PY)) -m mypy --config-file $(abspath pyproject.toml) \
	  --cache-dir $(abspath .mypy_cache) \
	  $(addprefix -p ,$(PACKAGES))

# The environment tests on the lowest versions pyproject.toml allows for the core
# install (tools/lowest_versions.py), in a venv of their own with no extra: the
# ranges the package states are checked, not hoped for. CI runs it.
LOWEST := .venv-lowest
LOWEST_TESTS := tests/engine tests/test_aec_env.py tests/test_observation.py \
	tests/test_batched.py tests/test_fast_wrappers.py \
	tests/test_render.py::test_without_pillow_rgb_array_is_not_advertised_and_the_checkers_pass
test-lowest:
	test -x $(LOWEST)/bin/python || $(PYTHON) -m venv $(LOWEST)
	$(LOWEST)/bin/python -m pip install --disable-pip-version-check -q $$($(PYTHON) tools/lowest_versions.py)
	$(LOWEST)/bin/python -m pip install --disable-pip-version-check -q -c constraints.txt pytest hypothesis
	$(LOWEST)/bin/python -m pip install --disable-pip-version-check -q --no-deps -e . $(STRICT)
	$(LOWEST)/bin/python -m pip list --disable-pip-version-check 2>/dev/null \
	  | grep -i -E '^(numpy|gymnasium|pettingzoo|pyyaml|pydantic|threadpoolctl|typing.extensions) '
	$(LOWEST)/bin/python -m pytest -q -p no:cacheprovider $(LOWEST_TESTS)

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
	rm -rf $(VENV) $(LOWEST) build *.egg-info
