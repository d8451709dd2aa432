"""The vector_entry_point env against gymnasium's sync and async vector envs, the games it
must replace: the same seeds and actions give the same observations, rewards,
terminations, truncations and infos (keys, values, dtypes, ``_key`` masks), episode
after episode; plus the per-game attributes, seed lists, ``reset_mask``, rendering,
and the numpy streams of ``BatchedGames`` they rest on.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from jekyll_hyde_agents.random_agent import RandomAgent
from jekyll_hyde_env import JekyllHydeVectorEnv
from jekyll_hyde_env.engine.information import player_view
from jekyll_hyde_env.engine.rules import apply_action, legal_actions, new_game
from jekyll_hyde_env.render_modes import pillow_installed
from jekyll_hyde_env.vector import BatchedGames

from .test_policy_file import tiny_policy

ID = "JekyllHyde-v0"
MODES = ("sync", "async", "vector_entry_point")


def make(mode: str, num_envs: int = 4, autoreset_mode: str | None = None, **kwargs):
    if autoreset_mode is not None:
        if mode == "vector_entry_point":
            kwargs["autoreset_mode"] = autoreset_mode
        else:
            kwargs["vector_kwargs"] = {"autoreset_mode": autoreset_mode}
    return gym.make_vec(ID, num_envs=num_envs, vectorization_mode=mode, **kwargs)


def assert_same(got, want, where: str = "", ordered: bool = True) -> None:
    """Equal values of equal types: arrays by dtype, shape and items, dicts key by key."""
    if isinstance(want, dict):
        assert isinstance(got, dict), where
        if ordered:
            assert list(got) == list(want), f"{where}: keys {list(got)} != {list(want)}"
        assert set(got) == set(want), f"{where}: keys {sorted(got)} != {sorted(want)}"
        for key in want:
            assert_same(got[key], want[key], f"{where}[{key!r}]", ordered)
    elif isinstance(want, np.ndarray):
        assert isinstance(got, np.ndarray), f"{where}: {type(got).__name__}"
        assert (got.dtype, got.shape) == (want.dtype, want.shape), (
            f"{where}: {got.dtype} {got.shape} != {want.dtype} {want.shape}"
        )
        if want.dtype == object:
            for i, (a, b) in enumerate(zip(got, want, strict=True)):
                assert_same(a, b, f"{where}[{i}]", ordered)
        else:
            assert np.array_equal(got, want), f"{where}: {got} != {want}"
    else:
        assert type(got) is type(want) and got == want, f"{where}: {got!r} != {want!r}"


def play(env, seed, steps: int, rng_seed: int = 0, disabled: bool = False) -> list:
    """A seeded random legal policy with occasional illegal actions, seeded resets,
    partial resets (reset_mask) and an unseeded reset; every result, in order."""
    rng = np.random.default_rng(rng_seed)
    n = env.num_envs
    results = [("reset", env.reset(seed=seed))]
    masks = results[0][1][1]["action_mask"]
    for t in range(steps):
        actions = (masks * rng.random(masks.shape)).argmax(axis=1)
        if rng.random() < 0.03:
            actions[rng.integers(n)] = 27  # never legal in the exchange, rarely elsewhere
        step = env.step(actions)
        results.append(("step", step))
        masks = np.where(step[4]["_action_mask"][:, None], step[4]["action_mask"], masks)
        ended = step[2] | step[3]
        if disabled and ended.any():
            results.append(("reset", env.reset(options={"reset_mask": ended})))
            masks = np.where(ended[:, None], results[-1][1][1]["action_mask"], masks)
        elif t % 45 == 44:
            resetting = rng.random(n) < 0.5
            resetting[t % n] = True
            seeds = [int(s) if s < 90 else None for s in rng.integers(0, 100, n)]
            results.append(("reset", env.reset(seed=seeds, options={"reset_mask": resetting})))
            masks = np.where(resetting[:, None], results[-1][1][1]["action_mask"], masks)
        elif t == 100:
            results.append(("reset", env.reset()))  # each game continues its own stream
            masks = results[-1][1][1]["action_mask"]
    return results


def assert_same_runs(got: list, want: list, ordered: bool = True) -> None:
    assert len(got) == len(want)
    for t, ((kind, a), (_, b)) in enumerate(zip(got, want, strict=True)):
        names = ("obs", "infos") if kind == "reset" else ("obs", "rewards", "terminated",
                                                           "truncated", "infos")  # fmt: skip
        for name, x, y in zip(names, a, b, strict=True):
            assert_same(x, y, f"{kind} {t} {name}", ordered)


@pytest.mark.parametrize(
    ("autoreset_mode", "kwargs"),
    [
        ("NextStep", {}),
        ("SameStep", {}),
        ("NextStep", {"role": "hyde", "opponent": "heuristic"}),
        ("SameStep", {"role": "jekyll", "game_info": False}),
        ("NextStep", {"variant": "small"}),
        ("SameStep", {"variant": "tiny", "opponent": "heuristic"}),
    ],
)
def test_the_vector_env_plays_the_games_of_sync_and_async(autoreset_mode, kwargs):
    runs = {}
    for mode in MODES:
        env = make(mode, 4, autoreset_mode, **kwargs)
        runs[mode] = play(env, seed=11, steps=240)
        env.close()
    ended = sum(int(r[2].sum()) for kind, r in runs["sync"] if kind == "step")
    assert ended >= 12  # several episodes per game, with autoresets
    assert_same_runs(runs["vector_entry_point"], runs["sync"])
    # async orders final_info before final_obs; everything else is sync's
    assert_same_runs(runs["vector_entry_point"], runs["async"], ordered=False)


def test_a_saved_policy_opponent_plays_the_games_of_sync(tmp_path):
    tiny_policy(tmp_path, hidden=16)  # deterministic; played batched in the vector env
    runs = []
    for mode in ("sync", "vector_entry_point"):
        env = make(mode, 3, opponent=str(tmp_path))
        runs.append(play(env, seed=21, steps=120))
        env.close()
    assert_same_runs(runs[1], runs[0])


def test_the_infos_follow_gymnasiums_vector_conventions():
    env = make("vector_entry_point", 6)
    _, infos = env.reset(seed=2)
    for key in ("action_mask", "illegal_action", "role", "phase", "round", "marker",
                "tricks", "colour_ranks"):  # fmt: skip
        assert infos[f"_{key}"].dtype == np.bool_ and infos[f"_{key}"].all()
    assert infos["role"].dtype == object and set(infos["role"]) <= {"jekyll", "hyde"}
    assert infos["round"].dtype == np.int64 and infos["colour_ranks"][0] == [-1, -1, -1]
    assert "winner" not in infos
    rng = np.random.default_rng(0)
    for _ in range(300):
        masks = env.action_masks()
        _, rewards, terminated, _, infos = env.step((masks * rng.random(masks.shape)).argmax(1))
        if terminated.any():
            break
    winners = infos["winner"][infos["_winner"]]  # the winners of the games that just ended
    assert np.array_equal(infos["_winner"], terminated)
    assert ((winners == infos["role"][terminated]) == (rewards[terminated] > 0)).all()
    assert (infos["winner"][~terminated] == None).all()  # noqa: E711 - an object array


def test_disabled_autoreset_with_reset_mask_plays_the_games_of_sync():
    runs = []
    for mode in ("sync", "vector_entry_point"):
        env = make(mode, 3, "Disabled")
        runs.append(play(env, seed=4, steps=150, disabled=True))
        env.close()
    assert_same_runs(runs[1], runs[0])
    env = make("vector_entry_point", 2, "Disabled", role="hyde")
    env.reset(seed=0)
    actions = np.full(2, 27)  # illegal: both games end
    env.step(actions)
    with pytest.raises(RuntimeError, match=r"games \[0, 1\] have ended.*reset_mask"):
        env.step(actions)


def test_the_same_seed_deals_the_same_games_whatever_the_number_of_games():
    small, large = make("vector_entry_point", 3), make("vector_entry_point", 9)
    small_obs, small_infos = small.reset(seed=2**70)  # any size, as sync takes
    large_obs, large_infos = large.reset(seed=2**70)
    assert np.array_equal(small_obs, large_obs[:3])
    assert list(small_infos["role"]) == list(large_infos["role"][:3])
    assert large.get_attr("np_random_seed") == tuple(2**70 + i for i in range(9))
    numbered = make("vector_entry_point", 3)
    first_game_obs, _ = numbered.reset(seed=2**70, options={"first_game": 6})
    assert np.array_equal(first_game_obs, large_obs[6:])


def test_call_get_attr_and_set_attr_as_sync():
    envs = {mode: make(mode, 4) for mode in ("sync", "vector_entry_point")}
    for env in envs.values():
        env.reset(seed=5)
    sync, vector = envs["sync"], envs["vector_entry_point"]
    for name in ("role", "learner", "illegal", "game_info", "render_mode", "np_random_seed"):
        assert vector.get_attr(name) == sync.get_attr(name), name
    assert vector.get_attr("game") == sync.get_attr("game")  # engine states, logs included
    assert_same(np.stack(vector.call("action_masks")), np.stack(sync.call("action_masks")))
    assert vector.get_attr("observation_space") == sync.get_attr("observation_space")
    assert all(agent.uniform_random for agent in vector.get_attr("opponent"))
    # per-game roles and infos, a new opponent: each game from its next episode on
    for env in envs.values():
        assert env.call("set_opponent", "heuristic") == (None,) * 4
        env.set_attr("role", ["jekyll", "hyde", "random", "jekyll"])
        env.set_attr("game_info", [True, False, True, False])
    # mixed game_info: sync's key order follows the first game to give a key
    assert_same_runs(play(vector, seed=None, steps=150), play(sync, seed=None, steps=150), False)
    assert vector.get_attr("role") == ("jekyll", "hyde", "random", "jekyll")
    assert vector.get_attr("game") == sync.get_attr("game")
    vector.set_attr("opponent", "random")  # one value: every game
    assert vector.get_attr("opponent")[0] is not None
    with pytest.raises(ValueError, match="length equal to the number of environments"):
        vector.set_attr("role", ["jekyll"])
    with pytest.raises(ValueError, match="one opponent for every game"):
        vector.set_attr("opponent", ["random", "heuristic", "random", "random"])
    with pytest.raises(ValueError, match="role 'both' is not one of"):
        vector.set_attr("role", "both")
    with pytest.raises(AttributeError, match="cannot set 'illegal' per game"):
        vector.set_attr("illegal", "raise")
    with pytest.raises(AttributeError, match="no per-game attribute 'nothing'.*'learner'"):
        vector.get_attr("nothing")
    for env in envs.values():
        env.close()


@pytest.mark.parametrize("render_mode", ["ansi", "rgb_array"])
def test_render_gives_syncs_frames(render_mode):
    if render_mode == "rgb_array" and not pillow_installed():
        pytest.skip("rgb_array needs Pillow (the render extra)")
    envs = [make(mode, 3, render_mode=render_mode) for mode in ("sync", "vector_entry_point")]
    frames = []
    for env in envs:
        env.reset(seed=1)
        for _ in range(20):
            masks = np.stack(env.call("action_masks"))
            env.step(masks.argmax(axis=1))
        frames.append(env.render())
    assert len(frames[1]) == 3
    for got, want in zip(frames[1], frames[0], strict=True):
        assert_same(got, want)
    assert envs[1].call("render")[0] is not None


def test_render_modes_are_checked():
    with pytest.raises(ValueError, match=r"'human' is not supported.*None or one of \['ansi'"):
        JekyllHydeVectorEnv(2, render_mode="human")
    with pytest.raises(ValueError, match="render_mode 'video' is not supported"):
        JekyllHydeVectorEnv(2, render_mode="video")
    env = JekyllHydeVectorEnv(2)
    with pytest.raises(RuntimeError, match="reset"):
        JekyllHydeVectorEnv(2, render_mode="ansi").render()
    env.reset(seed=0)
    with pytest.warns(UserWarning, match="without a render_mode"):
        assert env.render() == (None, None)  # as sync
    assert "human" not in env.metadata["render_modes"]


def test_reset_refuses_bad_seeds_and_options():
    env = JekyllHydeVectorEnv(3)
    with pytest.raises(RuntimeError, match="first reset"):
        env.reset(options={"reset_mask": np.array([True, False, False])})
    env.reset(seed=[1, None, 2**80])
    bad_masks = [[True, False, True], np.zeros(3, bool), np.ones(2, bool), np.ones(3, int)]
    for bad in bad_masks:
        with pytest.raises(ValueError, match=r"reset_mask'\] must be a bool numpy array"):
            env.reset(options={"reset_mask": bad})
    with pytest.raises(ValueError, match="one per game"):
        env.reset(seed=[1, 2])
    with pytest.raises(ValueError, match="seed must be None or an integer >= 0"):
        env.reset(seed=[1, -2, 3])
    with pytest.raises(ValueError, match="first_game"):
        env.reset(seed=[1, 2, 3], options={"first_game": 1})
    with pytest.raises(ValueError, match=r"unknown reset options \['colour'\]"):
        env.reset(options={"colour": 1})
    with pytest.raises(ValueError, match="options\\['deals'\\] has 2 entries"):
        env.reset(seed=9, options={"deals": [None, None]})
    listed, _ = env.reset(seed=[4, 5, 6])
    assert np.array_equal(env.reset(seed=(4, 5, 6))[0], listed)
    assert np.array_equal(env.reset(seed=4)[0], listed)  # seed + i
    _, infos = env.reset(seed=3, options={"role": "hyde"})  # this reset's episodes only
    assert list(infos["role"]) == ["hyde"] * 3
    assert env.get_attr("role") == ("random",) * 3


# --- BatchedGames' numpy streams -------------------------------------------------


def test_numpy_streams_deal_the_single_envs_games_episode_after_episode():
    seeds = [0, 1, 2**31 - 1, 2**32, 2**64 - 1, 2**64, 12345678901234567890123]
    games = BatchedGames(len(seeds), seeding="numpy")
    games.seed_games(seeds)
    rngs = [np.random.default_rng(seed) for seed in seeds]
    choice = np.random.default_rng(0)
    for episode in range(12):
        where = np.ones(len(seeds), bool) if episode == 0 else choice.random(len(seeds)) < 0.6
        draw_seat, seed_player = choice.random(len(seeds)) < 0.5, bool(episode % 2)
        seats = games.new_episodes(where, draw_seat, seed_player)
        for i in np.flatnonzero(where).tolist():
            rng = rngs[i]  # JekyllHydeGymEnv.reset's draws, in its order
            seat = int(rng.integers(2)) if draw_seat[i] else None
            deals = new_game(rng).deals
            if seed_player:
                rng.integers(2**31)
            assert seat is None or seats[i] == seat
            assert [tuple(map(int, deal)) for deal in games.deals[i]] == deals, (episode, i)
    plain = BatchedGames(3, seeding="numpy")
    plain.reset(seed=7, options={"first_game": 2})  # default_rng(7 + 2 + i)
    assert [tuple(map(int, d)) for d in plain.deals[1]] == new_game(np.random.default_rng(10)).deals


def test_numpy_streams_play_random_as_the_random_agent():
    games = BatchedGames(50, seeding="numpy")
    games.seed_games(list(range(50)))
    games.new_episodes(seed_player=True)
    while not games.terminated.all():
        games.play_random(games.current_player.copy())  # both seats, one generator per game
    for i in range(50):
        rng = np.random.default_rng(i)
        game = new_game(rng)
        agent = RandomAgent()
        agent.reset(int(rng.integers(2**31)))
        while game.winner < 0:
            apply_action(game, agent.act(player_view(game, game.to_act), legal_actions(game)))
        assert games.history(i) == game.history
        assert games.engine_state(i) == game


def test_seed_games_keeps_the_streams_of_games_without_a_seed():
    games = BatchedGames(3, seeding="numpy")
    games.seed_games([5, None, None])
    assert games.seeds[0] == 5 and all(isinstance(seed, int) for seed in games.seeds)
    games.new_episodes()
    first = games.deals.copy()
    games.seed_games([None, 9, None], where=np.array([True, True, False]))
    games.new_episodes()
    rng = np.random.default_rng(5)
    new_game(rng)
    assert [tuple(map(int, d)) for d in games.deals[0]] == new_game(rng).deals
    assert [tuple(map(int, d)) for d in games.deals[1]] == new_game(np.random.default_rng(9)).deals
    assert not np.array_equal(games.deals[2], first[2])
    splitmix = BatchedGames(2)
    for call in (lambda: splitmix.seed_games([1, 2]), splitmix.new_episodes):
        with pytest.raises(ValueError, match="seeding='numpy'"):
            call()
    with pytest.raises(ValueError, match="seeding 'pcg' is not one of"):
        BatchedGames(2, seeding="pcg")
