"""The C rules core plays by exactly the engine's rules (a differential test)."""

from __future__ import annotations

import numpy as np
import pytest

from jekyll_hyde_agents import rollout
from jekyll_hyde_env.engine import is_terminal, legal_action_mask, rules

pytestmark = pytest.mark.skipif(
    not rollout.core_available(), reason="the C core jekyll_hyde_agents._rollout is not compiled"
)

GAMES = 3000


def test_core_matches_engine_step_by_step_over_random_games():
    core = rollout._core
    rng = np.random.default_rng(123)
    steps = 0
    for _ in range(GAMES):
        state = rules.new_game(rng)
        packed = rollout.to_core(state)
        while not is_terminal(state):
            assert core.legal_mask(packed) == legal_action_mask(state)
            moves = rules.legal_actions(state)
            action = moves[rng.integers(len(moves))]
            rules.apply_action(state, action)
            packed = core.apply(packed, action)
            assert packed == rollout.to_core(state), f"diverged after {state.history}"
            steps += 1
        assert core.legal_mask(packed) == 0
    assert steps > GAMES * 60


def test_core_refuses_illegal_actions():
    state = rules.new_game(np.random.default_rng(0))
    packed = rollout.to_core(state)
    illegal = next(a for a in range(28) if not legal_action_mask(state) >> a & 1)
    with pytest.raises(ValueError, match="not legal"):
        rollout._core.apply(packed, illegal)
    with pytest.raises(TypeError, match="tuple of 34"):
        rollout._core.legal_mask((1, 2, 3))


def test_core_and_python_playouts_agree_in_distribution():
    rng = np.random.default_rng(5)
    state = rules.new_game(rng)
    n = 4000
    fast = rollout._core.rollouts(rollout.to_core(state), 11, n) / n
    slow = rollout.PythonCore.rollouts(state, 11, n) / n
    # Two independent estimates of one probability: within 4 standard errors.
    assert abs(fast - slow) < 4 * np.sqrt(0.25 / n * 2)
