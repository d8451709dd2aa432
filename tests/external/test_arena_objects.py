"""The arena and the environments take agents as objects and files: models played side by
side give the results they give one by one, tournaments label objects, and the Gym envs take
an exported model file as ``opponent=``."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import jekyll_hyde_env  # noqa: F401 - registers JekyllHyde-v0
from jekyll_hyde_agents import champion_path
from jekyll_hyde_agents.model_agent import ModelAgent
from jekyll_hyde_agents.policy_agent import PolicyAgent
from jekyll_hyde_agents.sources import load_agent, source_of
from jekyll_hyde_arena import evaluate, play_pair, run_pairs, tournament
from jekyll_hyde_env.engine.cards import AGENTS, NUM_ACTIONS

PAIRS, SEED = 12, 9
CALLS: list[int] = []
"""The batch size of every call to a ``ChampionScores`` (copies included: the arena plays
a pickled copy of an agent object)."""


class ChampionScores:
    """The champion as a ``ScoringModel``: its logits, both roles, the mask unread."""

    kind = "logits"
    mask_aware = False

    def __init__(self) -> None:
        self.policy = PolicyAgent(champion_path())
        self.name = "champion-scores"

    def scores(self, observations: np.ndarray, masks: np.ndarray, seats: np.ndarray) -> np.ndarray:
        CALLS.append(len(observations))
        out = np.zeros((len(observations), NUM_ACTIONS))
        for seat, role in enumerate(AGENTS):
            rows = np.flatnonzero(seats == seat)
            if rows.size:
                out[rows] = self.policy.batch_logits(observations[rows], role)
        return out


def first_legal(observation: np.ndarray, action_mask: np.ndarray) -> int:
    return int(np.flatnonzero(action_mask)[0])


@pytest.fixture(scope="module")
def onnx_champion(tmp_path_factory) -> str:
    pytest.importorskip("onnxruntime", reason="onnxruntime is not installed (the onnx extra)")
    from jekyll_hyde_agents.external.exchange import export_policy

    path = tmp_path_factory.mktemp("onnx") / "champion.onnx"
    export_policy(champion_path(), "onnx", path)
    return str(path)


def one_by_one(agent, pairs: int = PAIRS, seed: int = SEED) -> list:
    return [
        play_pair(agent, load_agent("heuristic"), seed, i, keep_records=True) for i in range(pairs)
    ]


def side_by_side(side, slots: int | None = None, pairs: int = PAIRS, seed: int = SEED) -> list:
    options = {} if slots is None else {"slots": slots}
    results = run_pairs(side, "heuristic", pairs, seed, workers=1, keep_records=True, **options)
    return sorted(results, key=lambda result: result.index)


def moves(results) -> list[list[dict]]:
    return [game.record["actions"] for r in results for game in (r.a_as_jekyll, r.a_as_hyde)]


def test_a_scoring_model_side_by_side_plays_as_one_by_one():
    CALLS.clear()
    together = side_by_side(ModelAgent(ChampionScores()))
    assert max(CALLS) > 1  # the games were played side by side: one call, several games
    CALLS.clear()
    alone = one_by_one(ModelAgent(ChampionScores()))
    assert set(CALLS) == {1}
    assert together == alone  # every game, record and count of replacements
    assert sum(r.replaced[0] for r in alone) > 0  # the mask unread: replaced, and counted
    CALLS.clear()
    assert side_by_side(ModelAgent(ChampionScores()), slots=1) == alone
    assert set(CALLS) == {1}
    report = evaluate(ModelAgent(ChampionScores()), "heuristic", pairs=PAIRS, seed=SEED)
    assert report.pair_scores == [r.a_wins / 2 for r in alone]
    assert report.illegal["A"]["replaced"] == sum(r.replaced[0] for r in alone)
    # The model plays the champion's moves: the numpy agent's games are the same.
    assert moves(one_by_one(load_agent("champion"))) == moves(alone)


def test_sampling_side_by_side_plays_as_one_by_one():
    sampled = one_by_one(ModelAgent(ChampionScores(), deterministic=False))
    for slots in (None, 1):
        agent = ModelAgent(ChampionScores(), deterministic=False)
        assert side_by_side(agent, slots) == sampled, slots
    best = one_by_one(ModelAgent(ChampionScores()))
    assert moves(sampled) != moves(best)  # the moves were sampled
    again = evaluate(ModelAgent(ChampionScores(), deterministic=False), "heuristic", PAIRS, SEED)
    assert again.pair_scores == [r.a_wins / 2 for r in sampled]


def test_an_onnx_file_side_by_side_plays_as_one_by_one(onnx_champion):
    alone = one_by_one(load_agent(onnx_champion))
    assert side_by_side(onnx_champion) == alone
    assert side_by_side(onnx_champion, slots=1) == alone
    assert moves(alone) == moves(one_by_one(load_agent("champion")))
    report = evaluate(onnx_champion, "heuristic", pairs=PAIRS, seed=SEED)
    assert report.pair_scores == [r.a_wins / 2 for r in alone]
    # Sampling, each pair from its own seeds, alike side by side and one by one.
    sampled = one_by_one(load_agent(onnx_champion, deterministic=False))
    assert side_by_side(source_of(onnx_champion, deterministic=False)) == sampled
    assert side_by_side(source_of(onnx_champion, deterministic=False), slots=1) == sampled
    assert moves(sampled) != moves(alone)


def test_a_tournament_takes_objects_and_labels_them():
    result = tournament([first_legal, "heuristic", "random"], pairs=4, seed=2, bootstrap=20)
    labels = {"python:first_legal", "heuristic", "random"}
    assert {row["agent"] for row in result["ratings"]} == labels
    assert all(row["elo"] is not None for row in result["ratings"])
    pairings = {(m["agents"]["A"], m["agents"]["B"]): m for m in result["matches"]}
    assert set(pairings) == {
        ("python:first_legal", "heuristic"),
        ("python:first_legal", "random"),
        ("heuristic", "random"),
    }
    match = pairings[("python:first_legal", "heuristic")]
    alone = evaluate(first_legal, "heuristic", pairs=4, seed=2)
    assert match["pair_scores"] == alone.pair_scores and match["pairs"] == 4


def play_env(opponent, episodes: int = 6) -> list:
    """Every observation and reward of a few episodes of first_legal against ``opponent``."""
    env = gym.make("JekyllHyde-v0", role="random", opponent=opponent)
    seen = []
    for episode in range(episodes):
        observation, info = env.reset(seed=episode)
        terminated = False
        while not terminated:
            seen.append(observation.tobytes())
            observation, reward, terminated, _, info = env.step(
                first_legal(observation, info["action_mask"])
            )
            seen.append(reward)
    return seen


def test_the_gym_env_takes_a_model_file_as_opponent(onnx_champion):
    env = gym.make("JekyllHyde-v0", opponent=onnx_champion)
    assert isinstance(env.unwrapped.opponent, ModelAgent)
    assert env.unwrapped.opponent.name == onnx_champion
    against_file = play_env(onnx_champion)
    assert against_file == play_env("champion")
    assert against_file != play_env("heuristic")  # the opponent shows in the games


def play_vector(opponent, steps: int = 150) -> list:
    env = gym.make_vec(
        "JekyllHyde-v0",
        num_envs=4,
        vectorization_mode="vector_entry_point",
        role="random",
        opponent=opponent,
    )
    observations, _ = env.reset(seed=3)
    seen = [observations.copy()]
    for _ in range(steps):
        masks = env.unwrapped.action_masks()
        actions = np.array([np.flatnonzero(m)[0] if m.any() else 0 for m in masks])
        observations, rewards, terminated, _, _ = env.step(actions)
        seen += [observations.copy(), rewards.copy(), terminated.copy()]
    env.close()
    return seen


def same(a: list, b: list) -> bool:
    return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


def test_the_vector_env_takes_a_model_file_as_opponent(onnx_champion):
    against_file = play_vector(onnx_champion)
    assert same(against_file, play_vector("champion"))
    assert not same(against_file, play_vector("heuristic"))
    rewards = np.concatenate(against_file[2::3])
    assert (rewards != 0).any()  # games ended within the steps played
