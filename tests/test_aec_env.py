"""The PettingZoo AEC environment: PettingZoo's checkers, infos, rewards, options, errors."""

from __future__ import annotations

import doctest

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, render_test, seed_test

import jekyll_hyde_env
from jekyll_hyde_env import IllegalActionError, jekyll_hyde, jekyll_hyde_v0, observation
from jekyll_hyde_env.engine.cards import NUM_ACTIONS

from .engine.helpers import card

INFO_KEYS = {"phase", "round", "marker", "tricks", "colour_ranks"}


def play_out(env, seed=0, policy=None):
    """Play a game with random legal actions; return the steps taken."""
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    steps = 0
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        if term or trunc:
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(rng.choice(legal)) if policy is None else policy(agent, obs, info))
        steps += 1
    return steps


def test_pettingzoo_api_test():
    api_test(jekyll_hyde_v0.env(), num_cycles=1000)


def test_pettingzoo_seed_test():
    seed_test(jekyll_hyde_v0.env, num_cycles=500)


def test_pettingzoo_render_test(capsys):
    render_test(lambda render_mode=None: jekyll_hyde_v0.env(render_mode=render_mode))
    assert "Track" in capsys.readouterr().out


def test_registered_with_pettingzoo():
    made = pettingzoo.make("aec", "jekyll_hyde-v0")
    assert made.metadata["name"] == "jekyll_hyde_v0"
    assert jekyll_hyde_env.PETTINGZOO_ID == "jekyll_hyde-v0"


def test_spaces_and_agents():
    env = jekyll_hyde_v0.env()
    env.reset(seed=0)
    assert env.possible_agents == ["jekyll", "hyde"]
    for agent in env.possible_agents:
        assert env.action_space(agent).n == NUM_ACTIONS
        space = env.observation_space(agent)
        assert space["action_mask"].shape == (NUM_ACTIONS,)
        assert space["action_mask"].dtype == np.int8
        assert space.contains(env.observe(agent))


def test_module_docstring_example_runs():
    result = doctest.testmod(jekyll_hyde, raise_on_error=False, verbose=False)
    assert result.attempted >= 4 and result.failed == 0


def test_non_acting_agent_mask_is_zero_and_infos_are_complete():
    env = jekyll_hyde_v0.env()
    env.reset(seed=3)
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        other = "hyde" if agent == "jekyll" else "jekyll"
        assert not env.observe(other)["action_mask"].any()
        for name in env.agents:
            info = env.infos[name]
            assert INFO_KEYS <= set(info)
            assert info["phase"] in ("exchange", "lead", "declare", "follow", "swap", "game_over")
            assert 1 <= info["round"] <= 3 and 0 <= info["marker"] <= 10
            assert set(info["tricks"]) == {"jekyll", "hyde"}
        if term or trunc:
            env.step(None)
            continue
        assert obs["action_mask"].any()
        env.step(int(np.flatnonzero(obs["action_mask"])[0]))


def info_structure(value):
    """The keys, types and lengths of an info, nested, without its values."""
    if isinstance(value, dict):
        return ("dict", tuple((key, info_structure(item)) for key, item in sorted(value.items())))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(info_structure(item) for item in value))
    if isinstance(value, np.ndarray):
        return ("ndarray", value.dtype.str, value.shape)
    return type(value).__name__


def test_infos_keep_one_structure_at_every_step_of_every_game():
    """Libraries that size their buffers from the first info (Tianshou) need every info
    to have the same keys, types and shapes; colour_ranks is padded to 3 (T4)."""
    expected = info_structure(
        {
            "phase": "lead",
            "round": 1,
            "marker": 0,
            "tricks": {"jekyll": 0, "hyde": 0},
            "colour_ranks": [0, 0, 0],
        }
    )
    env = jekyll_hyde_v0.env()
    rng = np.random.default_rng(0)
    lengths_seen = set()
    for seed in range(30):
        env.reset(seed=seed)
        for name in env.possible_agents:
            assert info_structure(env.infos[name]) == expected
            assert env.infos[name]["colour_ranks"] == [jekyll_hyde.RANK_FILL] * 3
        for _agent in env.agent_iter():
            obs, _, term, trunc, info = env.last()
            for name in env.agents:
                assert info_structure(env.infos[name]) == expected, (seed, env.infos[name])
            ranks = info["colour_ranks"]
            ranked = [colour for colour in ranks if colour != jekyll_hyde.RANK_FILL]
            lengths_seen.add(len(ranked))
            # The ranked colours come first, distinct; the observation agrees (T4).
            assert ranks[: len(ranked)] == ranked and len(set(ranked)) == len(ranked)
            assert set(ranked) <= {0, 1, 2}
            planes = observation.decode(obs["observation"])["colour_ranks"].reshape(3, 3)
            assert planes.sum() == len(ranked)
            assert all(planes[colour, rank] == 1 for rank, colour in enumerate(ranked))
            if term or trunc:
                env.step(None)
                continue
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        assert info_structure(info) == expected and info["phase"] == "game_over"
    assert lengths_seen == {0, 1, 3}  # T4: the third colour is ranked with the second


def test_infos_keep_their_structure_when_an_illegal_action_ends_the_game():
    env = jekyll_hyde_v0.env()
    env.reset(seed=0)
    before = info_structure(env.infos["jekyll"])
    env.step(int(np.flatnonzero(env.observe("jekyll")["action_mask"] == 0)[0]))
    assert all(env.terminations.values())
    seen = []
    for agent in env.agent_iter():
        info = env.last()[4]
        assert info_structure(info) == before
        seen.append(agent)
        env.step(None)
    assert sorted(seen) == ["hyde", "jekyll"]


def test_rewards_only_at_the_end_and_both_terminated():
    env = jekyll_hyde_v0.raw_env()
    env.reset(seed=5)
    while not all(env.terminations.values()):
        assert env.rewards == {"jekyll": 0, "hyde": 0}
        mask = env.observe(env.agent_selection)["action_mask"]
        env.step(int(np.flatnonzero(mask)[-1]))
    assert sorted(env.rewards.values()) == [-1, 1]
    assert env.rewards["hyde"] == (1 if env.infos["hyde"]["marker"] == 10 else -1)


def test_episode_length_is_within_the_documented_bound():
    longest = max(play_out(jekyll_hyde_v0.env(), seed=s) for s in range(40))
    assert 40 < longest <= jekyll_hyde.MAX_STEPS


def test_raw_env_raises_on_illegal_action():
    env = jekyll_hyde_v0.raw_env()
    env.reset(seed=0)
    mask = env.observe("jekyll")["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    with pytest.raises(IllegalActionError, match="phase 'exchange'"):
        env.step(illegal)


def test_wrapped_env_ends_the_game_with_minus_one_for_an_illegal_action():
    env = jekyll_hyde_v0.env()
    env.reset(seed=0)
    mask = env.observe("jekyll")["action_mask"]
    env.step(int(np.flatnonzero(mask == 0)[0]))
    assert all(env.terminations.values())
    assert env.rewards["jekyll"] == -1


def test_out_of_bounds_action_is_refused():
    env = jekyll_hyde_v0.env()
    env.reset(seed=0)
    with pytest.raises(AssertionError, match="action is not in action space"):
        env.step(NUM_ACTIONS)


def test_reset_options_fix_the_deal_and_validate_it():
    jekyll = ["P1", "P2", "P3", "W1", "W2", "W3", "G1", "G2", "G6", "2+"]
    hyde = ["P4", "P5", "P6", "W4", "W5", "W6", "G3", "G4", "G5", "4+"]
    deal = {"jekyll": [card(c) for c in jekyll], "hyde": [card(c) for c in hyde]}
    env = jekyll_hyde_v0.env()
    env.reset(seed=1, options={"deals": [deal]})
    hand = env.observe("jekyll")["observation"][:25]
    assert sorted(np.flatnonzero(hand).tolist()) == sorted(deal["jekyll"])
    with pytest.raises(ValueError, match="hyde must get 10 cards"):
        env.reset(seed=1, options={"deals": [{**deal, "hyde": deal["hyde"][:9]}]})
    with pytest.warns(UserWarning, match=r"\['dealz'\] are not used"):
        env.reset(seed=1, options={"dealz": []})


def test_same_seed_same_game_other_seed_other_game():
    def trace(seed):
        env = jekyll_hyde_v0.env()
        env.reset(seed=seed)
        return [env.observe(a)["observation"].tobytes() for a in env.possible_agents]

    assert trace(4) == trace(4) and trace(4) != trace(5)


def test_ansi_render_shows_the_table():
    env = jekyll_hyde_v0.env(render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    for part in ("Track", "Ranks", "Tricks", "Hand   jekyll"):
        assert part in text
    with pytest.raises(ValueError, match="render_mode"):
        jekyll_hyde_v0.raw_env(render_mode="rgb")


def _illegal_for(observation: dict) -> int:
    return int(np.flatnonzero(observation["action_mask"] == 0)[0])


def test_a_mask_from_last_cannot_change_what_is_legal():
    """The illegal-move check reads its own mask: writing into the one handed out is
    refused, and replacing it in the dict changes nothing; an illegal move still
    ends the game with -1 for its author."""
    env = jekyll_hyde_v0.env()
    env.reset(seed=1)
    observation, *_ = env.last()
    with pytest.raises(ValueError, match="read-only"):
        observation["action_mask"][:] = 1
    illegal = _illegal_for(observation)
    observation["action_mask"] = np.ones(NUM_ACTIONS, np.int8)
    agent = env.agent_selection
    env.step(illegal)
    assert env.terminations[agent] and env.rewards[agent] == -1
    raw = jekyll_hyde_v0.raw_env()
    raw.reset(seed=1)
    assert not raw.observe(raw.agent_selection)["action_mask"].flags.writeable


@pytest.mark.parametrize("observe", ["last", "observe"])
def test_a_mask_made_writeable_again_and_edited_cannot_change_what_is_legal(observe):
    """numpy lets a caller turn the read-only flag back on when the buffer under it is
    writeable; editing the mask then must still leave the env's check alone: an illegal
    move ends the game with -1 for its author, not with ``IllegalActionError``."""
    env = jekyll_hyde_v0.env()
    env.reset(seed=1)
    agent = env.agent_selection
    observation = env.last()[0] if observe == "last" else env.observe(agent)
    illegal = _illegal_for(observation)
    mask = observation["action_mask"]
    if not mask.flags.writeable:
        mask.flags.writeable = True  # allowed while the mask's buffer is writeable
    mask[:] = 1
    env.step(illegal)
    assert env.terminations[agent] and env.rewards[agent] == -1
    assert env.observe(agent)["action_mask"].sum() < NUM_ACTIONS


@pytest.mark.parametrize("make", [jekyll_hyde_v0.env, jekyll_hyde_v0.raw_env])
@pytest.mark.parametrize(
    "action", [True, np.bool_(True), 22.0, "22", np.array([22, 23]), None], ids=repr
)
def test_an_action_of_another_type_is_refused_naming_the_allowed_values(make, action):
    env = make()
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"an integer from 0 to 27: 0-24 name a card"):
        env.step(action)
    observation = env.observe(env.agent_selection)
    env.step(np.int64(np.flatnonzero(observation["action_mask"])[0]))  # a numpy int is one


def test_an_unknown_agent_is_named():
    env = jekyll_hyde_v0.raw_env()
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"agent must be one of \['jekyll', 'hyde'\], got 'bob'"):
        env.observe("bob")
