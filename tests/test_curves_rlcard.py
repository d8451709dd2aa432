"""RLCard's DMC and NFSP as trainers of the exploitability curves
(benchmarks/curves/rlcard_dmc.py and rlcard_nfsp.py): trained on tiny for a few
CPU-seconds through the curves' runner, their checkpoints' probabilities at every
information set are distributions over the legal actions, what RLCard's own agents
play at those views, and an exact score between 0.5 and 1."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("rlcard")
pytest.importorskip("torch")

from jekyll_hyde_env.engine.variant import parse_variant  # noqa: E402
from jekyll_hyde_env.integrations.rlcard_state_dict import RAW_ACTIONS, rlcard_state  # noqa: E402
from jekyll_hyde_train.exact.best_response import exact_score  # noqa: E402
from jekyll_hyde_train.exact.table import InfosetTable, table_strategy  # noqa: E402
from jekyll_hyde_train.exact.tree import build_tree  # noqa: E402

from .curves_helpers import curves_module

TINY = parse_variant("tiny")

# CPU-second marks: the trainer's start (imports, and DMC's actor process) takes 3-5.
MARKS = {"rlcard-dmc": [6.0, 9.0], "rlcard-nfsp": [4.0, 6.0]}


@pytest.fixture(scope="module")
def tiny():
    """The tiny tree and its information sets."""
    tree = build_tree(TINY)
    return tree, InfosetTable.build(tree)


def _sample_rows(legal: np.ndarray, count: int) -> list[int]:
    """Rows with a choice to make first, and a few forced ones."""
    rng = np.random.default_rng(0)
    choices = np.flatnonzero(legal.sum(axis=1) > 1)
    forced = np.flatnonzero(legal.sum(axis=1) == 1)
    picked = rng.choice(choices, size=min(count, len(choices)), replace=False)
    return [*picked.tolist(), *rng.choice(forced, size=3, replace=False).tolist()]


@pytest.mark.parametrize("name", sorted(MARKS))
def test_trainer_checkpoints_play_as_rlcards_agents(name, tiny, tmp_path, monkeypatch):
    run = curves_module("run", monkeypatch)
    module = run.trainer_module(name)
    assert module.NAME == name and module.LABEL
    out = tmp_path / name
    run.run_trainer(name, out, TINY, seed=0, marks=MARKS[name])
    assert run.done(out, MARKS[name])
    last = out / "checkpoints" / run.mark_name(MARKS[name][-1])
    progress = json.loads((last / "progress.json").read_text())
    assert max(progress.values()) > 0, progress  # it trained before the last mark

    tree, table = tiny
    probabilities = module.probabilities(last, table)
    assert probabilities.shape == (table.size, len(RAW_ACTIONS))
    assert probabilities.dtype == np.float64
    _, observations, masks = next(table.batches(table.size))
    legal = masks.astype(bool)
    assert (probabilities >= 0).all() and (probabilities[~legal] == 0).all()
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, atol=1e-9)
    if name == "rlcard-dmc":
        assert ((probabilities == 0) | (probabilities == 1)).all()  # greedy: one-hot

    agents = module.load_agents(last)
    for k in _sample_rows(legal, 25):
        actions = np.flatnonzero(legal[k]).tolist()
        state = rlcard_state(table.view(k), actions)
        np.testing.assert_array_equal(state["obs"], observations[k])
        agent = agents[table.player[k]]
        action, info = agent.eval_step(state)
        if name == "rlcard-dmc":
            assert probabilities[k, action] == 1.0, (k, action, info)
        else:
            played = [info["probs"][RAW_ACTIONS[a]] for a in actions]
            np.testing.assert_allclose(probabilities[k, actions], played, rtol=1e-6, atol=1e-9)

    strategy = table_strategy(probabilities)
    score = exact_score(tree, strategy, strategy).score
    assert 0.5 - 1e-9 <= score <= 1.0
