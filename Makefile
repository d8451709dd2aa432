# `make test` and `make train` set up .venv on first use (and again whenever
# pyproject.toml or constraints.txt change), installing under constraints.txt.
PYTHON ?= python3
# Extras that `make test` (and lint, bench, strength) install; .ci/run adds rllib
# so that CI also runs the Ray RLlib tests.
EXTRAS ?= train,dev,bench,render,web,openspiel
# `make train` needs only the training extra, which installs in less time.
TRAIN_EXTRAS ?= train
comma := ,
VENV := .venv
PY := $(VENV)/bin/python
# One stamp per set of extras: .venv/.installed-train-dev-... for train,dev,...
stamp = $(VENV)/.installed-$(subst $(comma),-,$(1))
STAMP := $(call stamp,$(EXTRAS))
TRAIN_STAMP := $(call stamp,$(TRAIN_EXTRAS))
PIP_INSTALL := $(PY) -m pip install --disable-pip-version-check -q -c constraints.txt

.PHONY: test train lint bench strength clean

$(VENV)/.installed-%: pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP_INSTALL) --upgrade pip setuptools wheel
	$(PIP_INSTALL) -e ".[$(subst -,$(comma),$*)]"
	touch $@

test: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m pytest

train: $(TRAIN_STAMP)
	$(PY) -m train.cli train --config configs/default.yaml

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
