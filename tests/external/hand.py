"""Models driven by hand through the Gym env, to hold the arena's results to.

``hand_games(choose, pairs, seed)`` plays, for each pair the arena would play
with ``seed``, the same two games through ``JekyllHyde-v0`` against the
heuristic: the model as Jekyll, then as Hyde, on the deals of that pair. Its
scores must equal ``evaluate(model, "heuristic", pairs, seed).pair_scores``, and
its games those that ``evaluate(..., save_games=folder)`` records
(``saved_histories``).
"""

from __future__ import annotations

import json
import pathlib
from collections.abc import Callable

import numpy as np

from jekyll_hyde_arena import pair_seeds
from jekyll_hyde_env.single_agent import JekyllHydeGymEnv

Choose = Callable[[np.ndarray, np.ndarray], int]


def hand_games(choose: Choose, pairs: int, seed: int) -> tuple[list[float], list[list[int]]]:
    """A's score in each pair against ``heuristic``, A choosing ``choose(obs, mask)``, and
    the actions of every game (pair by pair, A as Jekyll then as Hyde)."""
    scores, histories = [], []
    for index in range(pairs):
        wins = 0
        for role in ("jekyll", "hyde"):
            env = JekyllHydeGymEnv(role=role, opponent="heuristic")
            observation, info = env.reset(seed=pair_seeds(seed, index)[0])
            terminated = False
            while not terminated:
                action = int(choose(observation, info["action_mask"]))
                observation, reward, terminated, _, info = env.step(action)
            wins += reward > 0
            histories.append(list(env.game.history))
        scores.append(wins / 2)
    return scores, histories


def hand_pair_scores(choose: Choose, pairs: int, seed: int) -> list[float]:
    """A's score in each pair against ``heuristic`` (``hand_games``' scores)."""
    return hand_games(choose, pairs, seed)[0]


def saved_histories(folder: pathlib.Path, pairs: int) -> list[list[int]]:
    """The actions of each game of ``evaluate(..., save_games=folder)``, in the same order."""
    histories = []
    for index in range(pairs):
        for side in ("a_jekyll", "a_hyde"):
            record = json.loads((folder / f"pair{index:05d}_{side}.json").read_text())
            histories.append([move["action"] for move in record["actions"]])
    return histories
