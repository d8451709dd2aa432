"""The exploitability curves' OpenSpiel trainers (benchmarks/curves/openspiel_nfsp.py,
openspiel_mccfr.py): run through the curves' runner on the tiny variant, each
checkpoint's probabilities are distributions over the legal actions, and its exact
score is OpenSpiel's own ``nash_conv`` of the same policy, played as OpenSpiel plays
it (the NFSP agents in average-policy mode, MCCFR's ``AveragePolicy``), through
``score = (nash_conv + 2) / 4``: the strongest check that our information sets are
OpenSpiel's information states row for row."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

pyspiel = pytest.importorskip(
    "pyspiel", reason="OpenSpiel is in the openspiel extra: pip install -e '.[openspiel]'"
)

from open_spiel.python import policy as os_policy  # noqa: E402
from open_spiel.python.algorithms import exploitability, mccfr  # noqa: E402

from jekyll_hyde_agents.openspiel_bots import load_game  # noqa: E402
from jekyll_hyde_env.engine.variant import TINY  # noqa: E402
from jekyll_hyde_train.exact.best_response import exact_score  # noqa: E402
from jekyll_hyde_train.exact.table import InfosetTable, table_strategy  # noqa: E402
from jekyll_hyde_train.exact.tree import build_tree  # noqa: E402

from .curves_helpers import curves_module  # noqa: E402

MARKS = [3.0, 4.0]


@pytest.fixture(scope="module")
def tiny():
    tree = build_tree(TINY)
    return tree, InfosetTable.build(tree), load_game(TINY)


def _train(name: str, tmp_path: pathlib.Path, monkeypatch) -> list[pathlib.Path]:
    """Train ``name`` on tiny to the marks; its checkpoints' folders."""
    run = curves_module("run", monkeypatch)
    out = tmp_path / name
    run.run_trainer(name, out, TINY, seed=0, marks=MARKS)
    assert run.done(out, MARKS)
    return [out / "checkpoints" / run.mark_name(mark) for mark in MARKS]


def _score(probabilities: np.ndarray, tree, table) -> float:
    legal = table.legal()
    assert probabilities.shape == legal.shape and probabilities.dtype == np.float64
    assert (probabilities >= 0).all() and not probabilities[~legal].any()
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, atol=1e-12)
    strategy = table_strategy(probabilities)
    score = exact_score(tree, strategy, strategy).score
    assert 0.5 - 1e-9 <= score <= 1.0 + 1e-9
    return score


class _NFSPPolicies(os_policy.Policy):
    """Both NFSP agents as one OpenSpiel policy (``examples/nfsp_leduc_pytorch.py``'s),
    its answers kept per information state (the agents' input is a function of it)."""

    def __init__(self, game, agents, mode):
        super().__init__(game, [0, 1])
        self._agents = agents
        self._mode = mode
        self._obs = {"info_state": [None, None], "legal_actions": [None, None]}
        self._seen: dict[tuple[int, str], dict[int, float]] = {}

    def action_probabilities(self, state, player_id=None):
        player = state.current_player()
        key = (player, state.information_state_string(player))
        if key not in self._seen:
            self._seen[key] = self._ask(state, player)
        return self._seen[key]

    def _ask(self, state, player):
        from open_spiel.python import rl_environment

        legal = state.legal_actions(player)
        self._obs["current_player"] = player
        self._obs["info_state"][player] = state.information_state_tensor(player)
        self._obs["legal_actions"][player] = legal
        step = rl_environment.TimeStep(
            observations=self._obs, rewards=None, discounts=None, step_type=None
        )
        with self._agents[player].temp_mode_as(self._mode):
            probs = self._agents[player].step(step, is_evaluation=True).probs
        return {action: float(probs[action]) for action in legal}


def test_the_nfsp_trainer_is_scored_as_openspiel_plays_it(tmp_path, monkeypatch, tiny):
    torch = pytest.importorskip("torch")
    from open_spiel.python.pytorch import nfsp

    tree, table, game = tiny
    module = curves_module("openspiel_nfsp", monkeypatch)
    checkpoints = _train(module.NAME, tmp_path, monkeypatch)
    steps = [json.loads((c / module.NETWORK_FILE).read_text())["steps"] for c in checkpoints]
    assert 0 < sum(steps[0]) < sum(steps[1])  # it went on training after the first
    with np.load(checkpoints[-1] / module.WEIGHTS_FILE) as arrays:
        weights = {key: torch.from_numpy(arrays[key]) for key in arrays.files}
    spec = json.loads((checkpoints[-1] / module.NETWORK_FILE).read_text())
    agents = []
    for seat in range(2):
        agent = nfsp.NFSP(seat, spec["input_size"], 28, spec["hidden_layers"], **module.SETTINGS)
        prefix = f"{seat}/"
        agent._avg_network.load_state_dict(
            {key[len(prefix) :]: value for key, value in weights.items() if key.startswith(prefix)}
        )
        agents.append(agent)
    policy = _NFSPPolicies(game, agents, nfsp.MODE.AVERAGE_POLICY)
    for checkpoint in checkpoints[:-1]:
        _score(module.probabilities(checkpoint, table), tree, table)
    score = _score(module.probabilities(checkpoints[-1], table), tree, table)
    nash_conv = exploitability.nash_conv(game, policy)
    assert score == pytest.approx((nash_conv + 2) / 4, abs=1e-6)


def test_the_mccfr_trainer_is_scored_as_openspiel_plays_it(tmp_path, monkeypatch, tiny):
    tree, table, game = tiny
    module = curves_module("openspiel_mccfr", monkeypatch)
    checkpoints = _train(module.NAME, tmp_path, monkeypatch)
    counts = [json.loads((c / module.SOLVER_FILE).read_text()) for c in checkpoints]
    assert 0 < counts[0]["iterations"] < counts[1]["iterations"]
    assert 0 < counts[-1]["infostates"] < table.size  # some sets are never visited: uniform
    for checkpoint in checkpoints[:-1]:
        _score(module.probabilities(checkpoint, table), tree, table)
    score = _score(module.probabilities(checkpoints[-1], table), tree, table)
    policy = mccfr.AveragePolicy(game, [0, 1], module.read_checkpoint(checkpoints[-1]))
    nash_conv = exploitability.nash_conv(game, policy)
    assert score == pytest.approx((nash_conv + 2) / 4, abs=1e-9)
    assert score > 0.5 + 1e-3  # a few seconds of MCCFR are no equilibrium
