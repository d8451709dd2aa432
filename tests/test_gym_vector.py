"""JekyllHydeVectorEnv and its SB3 adapter against the single-agent Gym env they mirror."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from jekyll_hyde_agents import PolicyAgent
from jekyll_hyde_env import JekyllHydeGymEnv, JekyllHydeVectorEnv
from jekyll_hyde_env.batched_opponents import BATCHED, IN_C, PER_GAME
from jekyll_hyde_env.engine.rules import IllegalActionError

from .test_batched import game_deals
from .test_policy_file import tiny_policy


def random_legal(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal action per row (0 where a row has none)."""
    scores = masks * rng.random(masks.shape)
    return scores.argmax(axis=1)


def lockstep(opponent, role: str, num_envs: int, seed: int, potion_heavy: bool = False) -> int:
    """One episode per game in the vector env and in JekyllHydeGymEnv; returns steps compared."""
    rng = np.random.default_rng(seed)
    deals = [game_deals(rng, potion_heavy) for _ in range(num_envs)]
    vector = JekyllHydeVectorEnv(num_envs, role=role, opponent=opponent)
    observation, infos = vector.reset(seed=seed, options={"deals": deals})
    singles = []
    for i in range(num_envs):
        env = JekyllHydeGymEnv(role=role, opponent=opponent, game_info=False)
        single_obs, info = env.reset(seed=seed, options={"deals": deals[i]})
        assert observation[i].tobytes() == single_obs.tobytes()
        assert infos["role"][i] == info["role"]
        singles.append(env)
    live = np.ones(num_envs, bool)
    compared = 0
    while live.any():
        masks = vector.action_masks()
        for i in np.flatnonzero(live):
            assert np.array_equal(masks[i], singles[i].action_masks())
        actions = random_legal(masks, rng)
        observation, rewards, terminated, truncated, infos = vector.step(actions)
        assert not truncated.any()
        for i in np.flatnonzero(live).tolist():
            single_obs, reward, done, _, info = singles[i].step(int(actions[i]))
            compared += 1
            assert observation[i].tobytes() == single_obs.tobytes(), f"game {i} diverged"
            assert rewards[i] == reward and terminated[i] == done
            if done:
                assert not vector.action_masks()[i].any()
                live[i] = False
    return compared


@pytest.mark.parametrize("role", ["jekyll", "hyde"])
def test_heuristic_opponent_games_match_the_single_agent_env(role):
    assert lockstep("heuristic", role, num_envs=40, seed=11) > 40 * 30


def test_saved_policy_opponent_games_match_the_single_agent_env(tmp_path):
    tiny_policy(tmp_path, hidden=16)
    agent = PolicyAgent(tmp_path)  # deterministic: the same choices one game or many at a time
    assert lockstep(agent, "jekyll", num_envs=40, seed=12, potion_heavy=True) > 40 * 30
    assert lockstep(agent, "hyde", num_envs=40, seed=13) > 40 * 30


def test_a_saved_policy_is_played_batched_and_random_in_c(tmp_path):
    tiny_policy(tmp_path)
    pool = [(str(tmp_path), 1.0), ("random", 1.0), ("heuristic", 1.0)]
    env = JekyllHydeVectorEnv(300, opponent=pool)
    env.reset(seed=0)
    kinds = env.opponents.kind
    for kind in (BATCHED, IN_C, PER_GAME):
        assert 60 < (kinds == kind).sum() < 140
    rng = np.random.default_rng(0)
    finished = 0
    for _ in range(200):
        _, _, terminated, _, _ = env.step(random_legal(env.action_masks(), rng))
        finished += terminated.sum()
    assert finished > 300


def test_random_opponent_in_c_plays_like_the_random_agent():
    """The C random opponent and the engine's RandomAgent give the same win rates."""
    games = 3000
    vector = JekyllHydeVectorEnv(games, role="hyde", opponent="random")
    vector.reset(seed=3)
    rng = np.random.default_rng(3)
    results = np.zeros(games)
    done = np.zeros(games, bool)
    while not done.all():
        _, rewards, terminated, _, _ = vector.step(random_legal(vector.action_masks(), rng))
        results[terminated & ~done] = rewards[terminated & ~done]
        done |= terminated
    single = JekyllHydeGymEnv(role="hyde", opponent="random", game_info=False)
    python_results = []
    for game in range(1500):
        _, info = single.reset(seed=game)
        reward, finished = 0.0, False
        while not finished:
            legal = np.flatnonzero(info["action_mask"])
            _, reward, finished, _, info = single.step(int(legal[rng.integers(len(legal))]))
        python_results.append(reward)
    fast, slow = (results > 0).mean(), (np.array(python_results) > 0).mean()
    assert abs(fast - slow) < 4 * np.sqrt(0.25 / games + 0.25 / 1500)


def test_next_step_autoreset_starts_the_game_on_the_following_step():
    env = JekyllHydeVectorEnv(32, opponent="random")
    env.reset(seed=1)
    rng = np.random.default_rng(1)
    seen_end = False
    for _ in range(300):
        actions = random_legal(env.action_masks(), rng)
        _, rewards, terminated, _, _ = env.step(actions)
        if terminated.any():
            seen_end = True
            assert set(np.abs(rewards[terminated])) == {1.0}
            assert not env.action_masks()[terminated].any()
            ended = terminated.copy()
            _, rewards, terminated, _, _ = env.step(random_legal(env.action_masks(), rng))
            assert not rewards[ended].any() and not terminated[ended].any()
            assert env.action_masks()[ended].any(axis=1).all()
    assert seen_end


def test_same_step_autoreset_returns_the_new_game_and_the_final_observation():
    rng = np.random.default_rng(2)
    next_step = JekyllHydeVectorEnv(16, opponent="random")
    same_step = JekyllHydeVectorEnv(16, opponent="random", autoreset_mode="SameStep")
    next_step.reset(seed=2)
    same_step.reset(seed=2)
    ended_any = False
    for _ in range(120):
        actions = random_legal(next_step.action_masks(), rng)
        last, rewards, terminated, _, _ = next_step.step(actions)
        fresh, same_rewards, same_terminated, _, infos = same_step.step(actions)
        assert np.array_equal(rewards, same_rewards)
        assert np.array_equal(terminated, same_terminated)
        if terminated.any():
            ended_any = True
            assert np.array_equal(np.stack(infos["final_obs"][terminated]), last[terminated])
            assert same_step.action_masks()[terminated].any(axis=1).all()
            break
        assert np.array_equal(last, fresh)
    assert ended_any


def test_roles_follow_the_seed_whatever_the_number_of_games():
    small = JekyllHydeVectorEnv(8)
    large = JekyllHydeVectorEnv(64)
    _, small_infos = small.reset(seed=5)
    _, large_infos = large.reset(seed=5)
    assert np.array_equal(small_infos["role"], large_infos["role"][:8])
    assert 16 < (large_infos["role"] == "hyde").sum() < 48  # both seats drawn


def test_illegal_actions_terminate_or_raise():
    env = JekyllHydeVectorEnv(4, role="jekyll")
    env.reset(seed=0)
    actions = random_legal(env.action_masks(), np.random.default_rng(0))
    actions[2] = 27  # never legal in the exchange
    _, rewards, terminated, _, infos = env.step(actions)
    assert terminated.tolist() == [False, False, True, False]
    assert rewards[2] == -1.0 and infos["illegal_action"].tolist() == [False, False, True, False]
    strict = JekyllHydeVectorEnv(4, role="jekyll", illegal="raise")
    strict.reset(seed=0)
    with pytest.raises(IllegalActionError, match="game 2: illegal action 27"):
        strict.step(actions)


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="role"):
        JekyllHydeVectorEnv(2, role="both")
    with pytest.raises(ValueError, match="autoreset_mode"):
        JekyllHydeVectorEnv(2, autoreset_mode="never")
    with pytest.raises(ValueError, match="unknown agent name"):
        JekyllHydeVectorEnv(2, opponent="nobody")
    with pytest.raises(ValueError, match="weights"):
        JekyllHydeVectorEnv(2, opponent=[("random", -1.0), ("heuristic", 0.5)])
    with pytest.raises(RuntimeError, match="reset"):
        JekyllHydeVectorEnv(2).step(np.zeros(2, np.int64))


def test_make_vec_builds_it_from_the_registered_id():
    env = gym.make_vec(
        "JekyllHyde-v0",
        num_envs=6,
        vectorization_mode="vector_entry_point",
        role="hyde",
        opponent="heuristic",
    )
    assert isinstance(env, JekyllHydeVectorEnv)
    observation, infos = env.reset(seed=0)
    assert observation.shape == (6, 327) and observation.dtype == np.int8
    assert (infos["role"] == "hyde").all()
    assert env.action_space.shape == (6,)
    assert env.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP


def test_set_opponent_applies_from_each_games_next_episode(tmp_path):
    env = JekyllHydeVectorEnv(50, opponent="random")
    env.reset(seed=0)
    tiny_policy(tmp_path)
    env.set_opponent(str(tmp_path))
    assert (env.opponents.kind == IN_C).all()  # games under way keep their opponent
    rng = np.random.default_rng(0)
    for _ in range(150):
        env.step(random_legal(env.action_masks(), rng))
    assert (env.opponents.kind == BATCHED).any()
    assert all(member is None or member.kind == BATCHED for member in env.opponents.slots[1:])


def test_sb3_adapter_trains_maskable_ppo():
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import VecMonitor

    from jekyll_hyde_env.integrations.sb3_vec_env import JekyllHydeSB3VecEnv

    venv = VecMonitor(JekyllHydeSB3VecEnv(num_envs=16, role="random", opponent="heuristic"))
    masks = np.stack(venv.env_method("action_masks"))
    assert masks.shape == (16, 28)
    model = MaskablePPO("MlpPolicy", venv, n_steps=32, batch_size=128, n_epochs=1, seed=0)
    model.learn(1024)
    assert model.num_timesteps >= 1024
    assert len(model.ep_info_buffer) > 0  # episodes ended and were counted
    venv.reset()
    obs, rewards, dones, infos = venv.step(np.zeros(16, np.int64))
    for _ in range(200):
        if dones.any():
            break
        actions = random_legal(np.stack(venv.env_method("action_masks")), np.random.default_rng())
        obs, rewards, dones, infos = venv.step(actions)
    i = int(np.flatnonzero(dones)[0])
    assert infos[i]["terminal_observation"].shape == (327,)
    assert abs(rewards[i]) == 1.0


def test_opponents_with_their_own_randomness_replay_the_same_games(tmp_path):
    tiny_policy(tmp_path)
    sampling = PolicyAgent(tmp_path, deterministic=False)
    runs = []
    for _ in range(2):
        env = JekyllHydeVectorEnv(24, opponent=[(sampling, 1.0), ("ismcts:10", 1.0)])
        observation, _ = env.reset(seed=3)
        seen = [observation]
        rng = np.random.default_rng(0)
        for _ in range(60):
            observation, *_ = env.step(random_legal(env.action_masks(), rng))
            seen.append(observation)
        runs.append(np.stack(seen))
    assert np.array_equal(runs[0], runs[1])


def test_the_returned_terminations_are_the_callers_to_change():
    env = JekyllHydeVectorEnv(8, opponent="random")
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(200):
        _, _, terminated, _, _ = env.step(random_legal(env.action_masks(), rng))
        if terminated.any():
            ended = terminated.copy()
            terminated[:] = False  # must not stop the ended games from starting anew
            _, rewards, again, _, _ = env.step(random_legal(env.action_masks(), rng))
            assert not again[ended].any() and not rewards[ended].any()
            return
    raise AssertionError("no game ended")
