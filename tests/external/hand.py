"""Models driven by hand through the Gym env, to hold the arena's results to.

``hand_pair_scores(choose, pairs, seed)`` plays, for each pair the arena would
play with ``seed``, the same two games through ``JekyllHyde-v0`` against the
heuristic: the model as Jekyll, then as Hyde, on the deals of that pair. The
scores must equal ``evaluate(model, "heuristic", pairs, seed).pair_scores``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from jekyll_hyde_arena import pair_seeds
from jekyll_hyde_env.single_agent import JekyllHydeGymEnv


def hand_pair_scores(
    choose: Callable[[np.ndarray, np.ndarray], int], pairs: int, seed: int
) -> list[float]:
    """A's score in each pair against ``heuristic``, A choosing ``choose(obs, mask)``."""
    scores = []
    for index in range(pairs):
        deal_seed = pair_seeds(seed, index)[0]
        wins = 0
        for role in ("jekyll", "hyde"):
            env = JekyllHydeGymEnv(role=role, opponent="heuristic")
            observation, info = env.reset(seed=deal_seed)
            terminated = False
            while not terminated:
                action = int(choose(observation, info["action_mask"]))
                observation, reward, terminated, _, info = env.step(action)
            wins += reward > 0
        scores.append(wins / 2)
    return scores
