"""The information sets as arrays (``exact.table``): packed observations that unpack to
``encode``'s, and a saved policy's batched probabilities equal to its play one view at
a time, so that exact scores of networks are the same either way (to the rounding of
the network's float32 arithmetic, which a batch and a single view sum in different
orders)."""

from __future__ import annotations

import numpy as np
import pytest

from jekyll_hyde_agents import PolicyAgent
from jekyll_hyde_agents.policy_file import save_policy
from jekyll_hyde_agents.sources import RoleAgent
from jekyll_hyde_env.engine.variant import SMALL, TINY
from jekyll_hyde_env.observation import encode, encode_packed, unpack_rows
from jekyll_hyde_train.exact import table as table_module
from jekyll_hyde_train.exact.best_response import exact_score
from jekyll_hyde_train.exact.solve import exact_exploit
from jekyll_hyde_train.exact.strategies import agent_strategy
from jekyll_hyde_train.exact.table import (
    InfosetTable,
    argmax_rows,
    policy_probabilities,
    softmax_rows,
    table_strategy,
)
from jekyll_hyde_train.exact.tree import build_tree


@pytest.fixture(scope="module")
def tree():
    return build_tree(TINY)


@pytest.fixture(scope="module")
def table(tree):
    return InfosetTable.build(tree)


def saved_policy(folder, seed=0, variant=TINY):
    rng = np.random.default_rng(seed)
    layers = [
        (rng.normal(size=(12, 327)), rng.normal(size=12)),
        (rng.normal(size=(28, 12)), rng.normal(size=28)),
    ]
    return save_policy(
        folder, {"shared": layers}, {"jekyll": "shared", "hyde": "shared"}, variant=variant
    )


def test_packed_rows_unpack_to_each_views_observation_and_legal_actions(tree, table):
    rng = np.random.default_rng(0)
    for k in rng.choice(table.size, 200, replace=False):
        observations, masks = unpack_rows(table.packed[[k]])
        view = table.view(int(k))
        assert np.array_equal(observations[0], encode(view))
        assert np.flatnonzero(masks[0]).tolist() == tree.infosets[k].actions
        assert table.player[k] == tree.infosets[k].player
    one = encode_packed(table.view(0), 0b101)
    assert unpack_rows(np.frombuffer(one, np.uint8)[None])[1][0, :3].tolist() == [1, 0, 1]


def test_a_cache_is_reused_and_one_of_another_tree_refused(tree, table, tmp_path, monkeypatch):
    cache = tmp_path / "tiny.npy"
    InfosetTable.build(tree, cache)
    encoded = []
    real = table_module.encode_packed
    monkeypatch.setattr(
        table_module, "encode_packed", lambda *args: encoded.append(1) or real(*args)
    )
    assert np.array_equal(InfosetTable.build(tree, cache).packed, table.packed)
    assert len(encoded) <= table_module.CACHE_CHECKS < table.size  # read, only spot-checked
    np.save(cache, table.packed[:-1])
    with pytest.raises(ValueError, match="delete the file"):
        InfosetTable.build(tree, cache)
    np.save(cache, np.roll(table.packed, 1, axis=0))  # the right size, other rows
    with pytest.raises(ValueError, match="differ from the information sets"):
        InfosetTable.build(tree, cache)


@pytest.mark.parametrize("deterministic", [False, True])
def test_a_policys_batched_probabilities_are_its_play_one_view_at_a_time(
    tree, table, tmp_path, deterministic
):
    saved_policy(tmp_path)
    agent = PolicyAgent(tmp_path, deterministic=deterministic)
    batched = policy_probabilities(agent, table)
    for seat in (0, 1):
        one_by_one = agent_strategy(agent, tree, seat)
        for k in np.flatnonzero(table.player == seat)[::7]:
            infoset = tree.infosets[k]
            expected = one_by_one(int(k), infoset)
            assert np.allclose(batched[k, infoset.actions], expected, atol=1e-6)
            assert batched[k].sum() == pytest.approx(1.0)
    by_rows = exact_score(tree, table_strategy(batched), table_strategy(batched)).score
    by_views = exact_score(
        tree, agent_strategy(agent, tree, 0), agent_strategy(agent, tree, 1)
    ).score
    assert by_rows == pytest.approx(by_views, abs=1e-7)
    assert exact_exploit(agent, TINY).score == pytest.approx(by_rows, abs=1e-12)
    assert 0.5 < by_views <= 1.0
    with pytest.raises(ValueError, match="another tree"):
        exact_exploit(agent, TINY, build_tree(TINY), table)


def test_a_role_pair_fills_only_its_seat_and_a_policy_of_another_variant_is_refused(
    tree, table, tmp_path
):
    saved_policy(tmp_path / "a", seed=1)
    saved_policy(tmp_path / "b", seed=2)
    a, b = PolicyAgent(tmp_path / "a"), PolicyAgent(tmp_path / "b")
    pair = RoleAgent(a, b)
    jekyll_rows = policy_probabilities(a, table, seats=(0,))
    assert not jekyll_rows[table.player == 1].any()
    score = exact_exploit(pair, TINY).score
    by_rows = exact_score(
        tree,
        table_strategy(jekyll_rows),
        table_strategy(policy_probabilities(b, table, seats=(1,))),
    ).score
    assert score == pytest.approx(by_rows, abs=1e-12)
    saved_policy(tmp_path / "small", variant=SMALL)
    with pytest.raises(ValueError, match="variant small"):
        policy_probabilities(tmp_path / "small", table)


def test_rows_put_no_weight_on_illegal_actions_and_argmax_takes_the_first_of_ties():
    legal = np.array([[1, 0, 1, 1], [0, 1, 0, 0]], bool)
    scores = np.array([[0.0, 9.0, 2.0, 2.0], [5.0, -1.0, 7.0, 0.0]])
    assert argmax_rows(scores, legal).tolist() == [[0, 0, 1, 0], [0, 1, 0, 0]]
    soft = softmax_rows(scores, legal)
    assert soft[0, 1] == 0.0 and soft[1].tolist() == [0, 1, 0, 0]
    assert soft[0, 2] == soft[0, 3] and soft.sum(axis=1) == pytest.approx([1, 1])
