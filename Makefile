# `make test` and `make train` set up .venv on first use (and again whenever
# pyproject.toml or constraints.txt change), installing under constraints.txt.
PYTHON ?= python3
# Extras to install; .ci/run adds rllib so that CI also runs the Ray RLlib tests.
EXTRAS ?= train,dev,bench,render,web,openspiel
comma := ,
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(subst $(comma),-,$(EXTRAS))
PIP_INSTALL := $(PY) -m pip install --disable-pip-version-check -q -c constraints.txt

.PHONY: test train lint bench strength clean

$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP_INSTALL) --upgrade pip setuptools wheel
	$(PIP_INSTALL) -e ".[$(EXTRAS)]"
	touch $(STAMP)

test: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m pytest

train: $(STAMP)
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
