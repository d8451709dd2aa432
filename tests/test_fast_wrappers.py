"""ClassicWrapper behaves exactly as PettingZoo's nested classic-game wrappers."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.utils import wrappers

from jekyll_hyde_env import jekyll_hyde_v0
from jekyll_hyde_env.fast_wrappers import ClassicWrapper, FastDiscrete


def pettingzoo_chain():
    raw = jekyll_hyde_v0.raw_env()
    return wrappers.OrderEnforcingWrapper(
        wrappers.AssertOutOfBoundsWrapper(wrappers.TerminateIllegalWrapper(raw, illegal_reward=-1))
    )


def snapshot(env):
    """Everything a user can read after a call."""
    if not env.agents:
        return ("no agents", dict(env.unwrapped.rewards), dict(env._cumulative_rewards))
    obs, reward, term, trunc, info = env.last()
    return (
        env.agent_selection,
        list(env.agents),
        dict(env.rewards),
        dict(env._cumulative_rewards),
        dict(env.terminations),
        dict(env.truncations),
        {k: dict(v) for k, v in env.infos.items()},
        obs["observation"].tobytes(),
        obs["action_mask"].tobytes(),
        reward,
        term,
        trunc,
    )


def outcome(call):
    try:
        return ("ok", call())
    except Exception as error:  # the same error type and message are expected
        return (type(error).__name__, str(error))


@pytest.mark.parametrize("seed", range(12))
def test_same_behaviour_as_pettingzoo_wrappers_on_scripted_play(seed):
    ours, theirs = jekyll_hyde_v0.env(), pettingzoo_chain()
    assert isinstance(ours, ClassicWrapper)
    for cls in (
        wrappers.OrderEnforcingWrapper,
        wrappers.AssertOutOfBoundsWrapper,
        wrappers.TerminateIllegalWrapper,
    ):
        assert isinstance(ours, cls)
    rng = np.random.default_rng(seed)
    for env in (ours, theirs):
        # before reset: the same refusals
        assert outcome(lambda e=env: e.agent_selection)[0] == "AttributeError"
    assert outcome(lambda: ours.step(0)) == outcome(lambda: theirs.step(0))
    assert outcome(lambda: ours.observe("jekyll")) == outcome(lambda: theirs.observe("jekyll"))
    assert outcome(lambda: ours.last()) == outcome(lambda: theirs.last())
    seen = {"illegal": 0, "out_of_bounds": 0}
    for game in range(3):
        ours.reset(seed=seed * 10 + game)
        theirs.reset(seed=seed * 10 + game)
        calls = 0
        while calls < 400:
            assert snapshot(ours) == snapshot(theirs)
            if not ours.agents:
                break
            mask = ours.observe(ours.agent_selection)["action_mask"]
            roll = rng.random()
            if ours.terminations[ours.agent_selection]:
                action = None
            elif roll < 0.03 * game:  # game 0 has no illegal move, so it runs long
                action = int(rng.choice(np.flatnonzero(mask == 0)))  # illegal
                seen["illegal"] += 1
            elif roll < 0.03 * game + 0.05:
                action = int(rng.choice([-1, 28, 99]))  # out of bounds
                seen["out_of_bounds"] += 1
            else:
                action = int(rng.choice(np.flatnonzero(mask)))
            assert outcome(lambda a=action: ours.step(a)) == outcome(
                lambda a=action: theirs.step(a)
            )
            calls += 1
        assert outcome(lambda: ours.last(observe=False)) == outcome(
            lambda: theirs.last(observe=False)
        )
        # a step after the game: the same (warned) no-op
        assert outcome(lambda: ours.step(None)) == outcome(lambda: theirs.step(None))
        assert snapshot(ours) == snapshot(theirs)
    assert seen["illegal"] >= 1 and seen["out_of_bounds"] >= 1, seen


def test_step_without_observing_first_checks_the_mask_too():
    ours, theirs = jekyll_hyde_v0.env(), pettingzoo_chain()
    for env in (ours, theirs):
        env.reset(seed=3)
        illegal = int(np.flatnonzero(env.unwrapped.observe("jekyll")["action_mask"] == 0)[0])
        env.step(illegal)
    assert snapshot(ours) == snapshot(theirs)
    assert ours.unwrapped.rewards["jekyll"] == -1


def test_fast_discrete_is_a_discrete_space():
    space = FastDiscrete(28)
    assert space == __import__("gymnasium").spaces.Discrete(28)
    assert space.contains(0) and space.contains(27) and not space.contains(28)
    assert not space.contains(-1) and space.contains(np.int64(5)) and not space.contains(2.5)
