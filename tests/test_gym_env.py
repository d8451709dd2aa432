"""The Gymnasium single-agent environment: checkers, seeding, seats, vector envs, SB3."""

from __future__ import annotations

import doctest
import pickle

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import jekyll_hyde_env
from jekyll_hyde_env import IllegalActionError, JekyllHydeGymEnv, single_agent
from jekyll_hyde_env.engine import apply_action, legal_actions, new_game, returns
from jekyll_hyde_env.gym_vector import JekyllHydeVectorEnv
from jekyll_hyde_env.observation import OFFSETS
from jekyll_hyde_env.vector import BatchedGames


def first_legal(view, legal):
    """A deterministic opponent: always the lowest legal action id."""
    return legal[0]


def run_episode(env, seed, policy="random", rng_seed=0):
    """Play one episode; return (observations, rewards, infos)."""
    rng = np.random.default_rng(rng_seed)
    obs, info = env.reset(seed=seed)
    trace = [(obs.tobytes(), 0.0, info["role"])]
    done = False
    while not done:
        legal = np.flatnonzero(info["action_mask"])
        assert legal.size, "the mask is never empty while the episode runs"
        assert np.array_equal(env.unwrapped.action_masks(), info["action_mask"].astype(bool))
        action = int(legal[0] if policy == "first" else rng.choice(legal))
        obs, reward, terminated, truncated, info = env.step(action)
        trace.append((obs.tobytes(), reward, info["phase"]))
        done = terminated or truncated
    return trace, reward, info


@pytest.mark.parametrize("role", ["jekyll", "hyde", "random"])
def test_gymnasium_check_env(role):
    # Made through gym.make, so that the checker also tries the render modes.
    check_env(gym.make("JekyllHyde-v0", role=role).unwrapped)


def test_sb3_check_env():
    sb3_check_env(JekyllHydeGymEnv(role="jekyll"), warn=False)


def test_module_docstring_example_runs():
    result = doctest.testmod(single_agent)
    assert result.attempted >= 5 and result.failed == 0


def test_registered_and_makeable_by_module_path():
    env = gym.make("jekyll_hyde_env:JekyllHyde-v0", role="jekyll", opponent="random")
    obs, info = env.reset(seed=1)
    assert obs.shape == (327,) and info["role"] == "jekyll"
    assert jekyll_hyde_env.GYMNASIUM_ID in gym.registry
    masks = env.get_wrapper_attr("action_masks")()
    assert masks.dtype == bool and masks.any()


def test_same_seed_same_episode_other_seed_other_episode():
    a, _, _ = run_episode(JekyllHydeGymEnv(), seed=7)
    b, _, _ = run_episode(JekyllHydeGymEnv(), seed=7)
    c, _, _ = run_episode(JekyllHydeGymEnv(), seed=8)
    assert a == b and a != c


def test_reward_and_seat_match_the_engine_in_both_roles():
    # Both players take the lowest legal action: the game is fixed by the seed,
    # so the engine tells who wins, and the learner's reward must follow its seat.
    outcomes = set()
    for seed in range(6):
        for role in ("jekyll", "hyde"):
            env = JekyllHydeGymEnv(role=role, opponent=first_legal)
            _, reward, info = run_episode(env, seed=seed, policy="first")
            reference = new_game(np.random.default_rng(seed))
            while reference.to_act >= 0:
                apply_action(reference, legal_actions(reference)[0])
            expected = returns(reference)[0 if role == "jekyll" else 1]
            assert reward == expected and info["role"] == role
            assert info["winner"] == ("jekyll" if returns(reference)[0] > 0 else "hyde")
            outcomes.add(reward)
    assert outcomes == {-1.0, 1.0}  # the learner both wins and loses


def test_role_is_in_the_observation_and_random_role_draws_both():
    env = JekyllHydeGymEnv(role="random")
    roles = set()
    for seed in range(20):
        obs, info = env.reset(seed=seed)
        role_bits = obs[OFFSETS["my_role"]].tolist()
        assert role_bits == ([1, 0] if info["role"] == "jekyll" else [0, 1])
        roles.add(info["role"])
    assert roles == {"jekyll", "hyde"}
    obs, info = env.reset(seed=0, options={"role": "hyde"})
    assert info["role"] == "hyde"


def test_illegal_action_terminates_or_raises():
    env = JekyllHydeGymEnv(role="jekyll")
    _, info = env.reset(seed=0)
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    _, reward, terminated, truncated, info = env.step(illegal)
    assert (reward, terminated, truncated) == (-1.0, True, False)
    assert info["illegal_action"] is True and info["winner"] == "hyde"
    assert not info["action_mask"].any()
    with pytest.raises(RuntimeError, match="call reset"):
        env.step(0)
    env = JekyllHydeGymEnv(role="jekyll", illegal="raise")
    _, info = env.reset(seed=0)
    with pytest.raises(IllegalActionError, match="legal actions are"):
        env.step(illegal)


def test_opponents_by_object_callable_and_name():
    class Counting:
        def __init__(self):
            self.calls = 0
            self.seeds = []

        def act(self, view, legal):
            self.calls += 1
            assert view.player == 1  # the opponent sees its own view
            return legal[-1]

        def reset(self, seed=None):
            self.seeds.append(seed)

    counting = Counting()
    env = JekyllHydeGymEnv(role="jekyll", opponent=counting)
    run_episode(env, seed=0)
    assert counting.calls > 10 and len(counting.seeds) == 1
    run_episode(JekyllHydeGymEnv(role="jekyll", opponent=lambda view, legal: legal[0]), seed=0)
    with pytest.raises(ValueError, match="known names: .*'random'"):
        JekyllHydeGymEnv(opponent="nobody")
    with pytest.raises(ValueError, match="takes no argument"):
        JekyllHydeGymEnv(opponent="random:3")
    with pytest.raises(TypeError, match="opponent must be"):
        JekyllHydeGymEnv(opponent=42)


def test_an_illegal_opponent_is_named():
    env = JekyllHydeGymEnv(role="hyde", opponent=lambda view, legal: 27)
    with pytest.raises(IllegalActionError, match="the opponent FunctionAgent"):
        env.reset(seed=0)


def test_set_opponent_takes_effect_from_the_next_episode():
    env = JekyllHydeGymEnv(role="jekyll", opponent="random")
    calls = []
    env.set_opponent(lambda view, legal: calls.append(1) or legal[0])
    run_episode(env, seed=0)
    assert calls


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="role 'both'"):
        JekyllHydeGymEnv(role="both")
    with pytest.raises(ValueError, match="illegal 'ignore'"):
        JekyllHydeGymEnv(illegal="ignore")
    with pytest.raises(ValueError, match=r"unknown reset options \['seat'\]"):
        JekyllHydeGymEnv().reset(seed=0, options={"seat": "hyde"})


def test_picklable():
    env = JekyllHydeGymEnv(role="hyde")
    env.reset(seed=3)
    copy = pickle.loads(pickle.dumps(env))
    assert run_episode(copy, seed=4)[0] == run_episode(env, seed=4)[0]


def test_ansi_render_shows_the_learner_hand():
    env = JekyllHydeGymEnv(role="hyde", render_mode="ansi")
    env.reset(seed=0)
    assert "learner: hyde" in env.render() and "Hand   hyde" in env.render()


def _make(role):
    return lambda: JekyllHydeGymEnv(role=role)


def test_gymnasium_async_vector_env_runs():
    envs = gym.vector.AsyncVectorEnv([_make("jekyll"), _make("hyde")])
    try:
        obs, infos = envs.reset(seed=0)
        assert obs.shape == (2, 327)
        rng = np.random.default_rng(0)
        for _ in range(50):
            masks = infos["action_mask"]
            actions = [int(rng.choice(np.flatnonzero(m))) if m.any() else 0 for m in masks]
            obs, rewards, terms, truncs, infos = envs.step(actions)
            assert not infos["illegal_action"].any()
    finally:
        envs.close()


def test_sb3_subproc_vec_env_runs_and_reaches_action_masks():
    from sb3_contrib.common.maskable.utils import get_action_masks
    from stable_baselines3.common.vec_env import SubprocVecEnv

    venv = SubprocVecEnv([_make("jekyll"), _make("hyde")])
    try:
        venv.seed(0)
        venv.reset()
        rng = np.random.default_rng(0)
        for _ in range(60):
            masks = get_action_masks(venv)
            assert masks.shape == (2, 28) and masks.any(axis=1).all()
            actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
            _, _, _, infos = venv.step(actions)
            assert not any(info["illegal_action"] for info in infos)
        venv.env_method("set_opponent", "random")
    finally:
        venv.close()


@pytest.mark.slow
def test_maskable_ppo_trains_and_never_plays_an_illegal_action():
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import DummyVecEnv

    class CountIllegal(BaseCallback):
        illegal = 0
        steps = 0

        def _on_step(self) -> bool:
            for info in self.locals["infos"]:
                self.illegal += bool(info.get("illegal_action"))
                self.steps += 1
            return True

    venv = DummyVecEnv([_make("random"), _make("random")])
    model = MaskablePPO("MlpPolicy", venv, n_steps=256, batch_size=128, n_epochs=2, seed=0)
    counter = CountIllegal()
    model.learn(total_timesteps=3000, callback=counter)
    assert counter.steps >= 3000 and counter.illegal == 0


def test_infos_keep_one_shape_as_the_aec_env_does():
    """colour_ranks has 3 entries at every step (T4: -1 where no colour is ranked yet)."""
    from jekyll_hyde_env.jekyll_hyde import RANK_FILL

    env = JekyllHydeGymEnv(role="hyde", opponent="random")
    for seed in range(5):
        _, info = env.reset(seed=seed)
        assert info["colour_ranks"] == [RANK_FILL] * 3
        keys, done = set(info), False
        while not done:
            action = int(np.flatnonzero(info["action_mask"])[0])
            _, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
            assert len(info["colour_ranks"]) == 3
            assert keys <= set(info)
            ranked = [c for c in info["colour_ranks"] if c != RANK_FILL]
            assert info["colour_ranks"] == ranked + [RANK_FILL] * (3 - len(ranked))


ALLOWED_ACTIONS = r"an integer from 0 to 27: 0-24 name a card .*25-27 declare pride, wrath or greed"
BAD_ACTIONS = [True, np.bool_(False), 3.0, np.float32(22), "22", np.array([22, 23]), None]


def test_the_mask_handed_out_is_read_only_and_action_masks_a_copy():
    env = JekyllHydeGymEnv(role="jekyll", opponent="random")
    _, info = env.reset(seed=3)
    legal = env.action_masks()
    with pytest.raises(ValueError, match="read-only"):
        info["action_mask"][:] = 1  # a masked learner must not mislead itself
    copy = env.action_masks()
    copy[:] = True
    assert np.array_equal(env.action_masks(), legal) and not legal.all()
    _, _, _, _, info = env.step(int(np.flatnonzero(legal)[0]))
    assert not info["action_mask"].flags.writeable


@pytest.mark.parametrize("illegal", ["terminate", "raise"])
def test_a_mask_made_writeable_again_and_edited_changes_nothing_the_env_does(illegal):
    """numpy lets a caller turn the read-only flag back on when the buffer under it is
    writeable; editing ``info["action_mask"]`` then must leave ``action_masks()`` and
    the illegal-action handling as they were."""
    env = JekyllHydeGymEnv(role="jekyll", opponent="random", illegal=illegal)
    _, info = env.reset(seed=3)
    legal = env.action_masks()
    mask = info["action_mask"]
    if not mask.flags.writeable:
        mask.flags.writeable = True  # allowed while the mask's buffer is writeable
    mask[:] = 1
    assert np.array_equal(env.action_masks(), legal) and not legal.all()
    not_legal = int(np.flatnonzero(~legal)[0])
    if illegal == "raise":
        with pytest.raises(IllegalActionError):
            env.step(not_legal)
        return
    _, reward, terminated, _, info = env.step(not_legal)
    assert (reward, terminated, info["illegal_action"]) == (-1.0, True, True)
    assert not env.action_masks().any()


@pytest.mark.parametrize("action", BAD_ACTIONS, ids=repr)
def test_an_action_of_another_type_is_refused_naming_the_allowed_values(action):
    """Refused whatever ``illegal`` says; an integer that is not legal now is still an
    illegal action, which ends the episode with -1."""
    for illegal in ("raise", "terminate"):
        env = JekyllHydeGymEnv(role="jekyll", opponent="random", illegal=illegal)
        env.reset(seed=0)
        with pytest.raises(ValueError, match=ALLOWED_ACTIONS):
            env.step(action)
    legal = int(np.flatnonzero(env.action_masks())[0])
    env.step(np.array(legal))  # the game goes on: numpy integers and 0-d arrays are actions
    not_legal = int(np.flatnonzero(~env.action_masks())[0])
    _, reward, terminated, _, info = env.step(np.int64(not_legal))
    assert (reward, terminated, info["illegal_action"]) == (-1.0, True, True)


def _aec_first(env, seed):
    env.reset(seed=seed)
    return env.observe(env.agent_selection)["observation"].tobytes()


def _batched_first(games, seed):
    games.reset(seed=seed)
    return games.observation.tobytes()


SEEDED = {
    "aec": lambda seed: _aec_first(jekyll_hyde_env.env(), seed),
    "raw_aec": lambda seed: _aec_first(jekyll_hyde_env.raw_env(), seed),
    "gym": lambda seed: JekyllHydeGymEnv().reset(seed=seed)[0].tobytes(),
    "batched": lambda seed: _batched_first(BatchedGames(4), seed),
    "vector": lambda seed: JekyllHydeVectorEnv(4).reset(seed=seed)[0].tobytes(),
}


@pytest.mark.parametrize("make", list(SEEDED))
def test_every_env_takes_numpy_integer_seeds_and_refuses_bools(make):
    first = SEEDED[make]
    assert first(np.int64(5)) == first(5) == first(np.uint32(5))
    assert first(np.int64(5)) != first(6)
    # BatchedGames' splitmix streams are keyed by a 64-bit seed; the engine's envs, and the
    # vector env (numpy's streams, the games of gymnasium's sync vector env), take any size.
    allowed = "and < 2\\*\\*64" if make == "batched" else "of any size"
    for bad in (True, -1, 5.0, "5", np.array([5])):
        with pytest.raises(ValueError, match=rf"seed must be None or an integer >= 0 {allowed}"):
            first(bad)
    if make != "batched":
        assert first(2**64) != first(0) and first(2**64 + 5) != first(5)
