"""The exploitability curves' PPO trainers (benchmarks/curves/ppo.py, rllib_ppo.py).

Both start from the project's default configs with only the variant, the seed and the
run's name changed. The SB3 trainer, run through the curves' runner on the tiny variant,
saves at each CPU mark a saved policy of tiny whose probabilities are distributions over
the legal actions and whose exact score is a score (0.5 at an equilibrium, at most 1).
The RLlib trainer is not run here: Ray's start-up and one iteration of the default
config (2 env runners x 2,000 steps) take about a minute before its first checkpoint.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib

import numpy as np
import pytest

from jekyll_hyde_agents import PolicyAgent
from jekyll_hyde_env.engine.variant import TINY
from jekyll_hyde_train.common.config import load_config
from jekyll_hyde_train.exact.best_response import exact_score
from jekyll_hyde_train.exact.table import InfosetTable, table_strategy
from jekyll_hyde_train.exact.tree import build_tree
from jekyll_hyde_train.ppo.config import TrainConfig
from jekyll_hyde_train.ppo.rllib_config import RLlibTrainConfig

from .curves_helpers import curves_module


@pytest.fixture(scope="module")
def tiny_table():
    tree = build_tree(TINY)
    return tree, InfosetTable.build(tree)


def _check_checkpoints(module, out: pathlib.Path, marks: list[str], tree, table) -> None:
    legal = table.legal()
    for mark in marks:
        checkpoint = out / "checkpoints" / mark
        meta = json.loads((checkpoint / "meta.json").read_text())
        assert meta["cpu_seconds"] >= meta["mark"]
        agent = PolicyAgent(checkpoint)
        assert agent.variant == TINY and agent.roles == ["jekyll", "hyde"]
        assert json.loads((checkpoint / "policy.json").read_text())["training_steps"] > 0
        probabilities = module.probabilities(checkpoint, table)
        assert probabilities.shape == legal.shape
        assert (probabilities >= 0).all() and not probabilities[~legal].any()
        np.testing.assert_allclose(probabilities.sum(axis=1), 1.0)
        strategy = table_strategy(probabilities)
        assert 0.5 - 1e-9 <= exact_score(tree, strategy, strategy).score <= 1.0 + 1e-9


@pytest.mark.parametrize(
    ("name", "schema"), [("ppo", TrainConfig), ("rllib_ppo", RLlibTrainConfig)]
)
def test_the_trainers_run_the_default_config_on_the_variant(monkeypatch, name, schema):
    module = curves_module(name, monkeypatch)
    config = module.config_for(TINY, 7)
    assert (config.run.variant, config.run.seed) == ("tiny", 7)
    default = load_config(module.CONFIG, schema=schema)
    run = dataclasses.replace(config.run, variant="full", seed=0, name=default.run.name)
    assert dataclasses.replace(config, run=run) == default


@pytest.mark.slow
def test_the_ppo_trainer_checkpoints_at_its_cpu_marks(tmp_path, monkeypatch, tiny_table):
    run = curves_module("run", monkeypatch)
    out = tmp_path / "ppo"
    run.run_trainer("ppo", out, TINY, seed=0, marks=[4.0, 6.0])
    assert run.done(out, [4.0, 6.0])
    marks = [run.mark_name(4.0), run.mark_name(6.0)]
    steps = [
        json.loads((out / "checkpoints" / m / "policy.json").read_text())["training_steps"]
        for m in marks
    ]
    assert steps[0] < steps[1]  # it went on training after the first checkpoint
    _check_checkpoints(curves_module("ppo", monkeypatch), out, marks, *tiny_table)
