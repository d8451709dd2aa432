"""Gym env overhead: JekyllHyde-v0 against the AEC env it mirrors, in one run.

Both play whole games of uniformly random legal play on one core: the AEC env
through ``jekyll_hyde_v0.env()`` (``agent_iter``, ``last``, ``step``), the Gym
env through ``reset``/``step`` with a uniformly random learner (from
``info["action_mask"]``) and the ``"random"`` opponent. A Gym step covers the
learner's decision and the opponent's decisions after it, so the fair unit is
the game (and the decision): the overhead is how much longer a game takes
through the Gym env. Target: under 20%.

    python benchmarks/gym_overhead.py [--seconds 3] [--repeats 5]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from _timing import pin_to_one_core, play_aec_randomly
from jekyll_hyde_env import JekyllHydeGymEnv, jekyll_hyde_v0

TARGET_OVERHEAD = 0.20


def aec_games(seconds: float) -> tuple[int, int, int]:
    games, decisions = play_aec_randomly(jekyll_hyde_v0.env(), seconds)
    return games, decisions, decisions


def gym_games(seconds: float) -> tuple[int, int, int]:
    env = JekyllHydeGymEnv(role="random", opponent="random")
    uniforms = np.random.default_rng(0).random(1 << 16).tolist()
    games = steps = 0
    decisions = 0
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        _, info = env.reset(seed=games)
        done = False
        while not done:
            legal = np.flatnonzero(info["action_mask"])
            action = int(legal[int(uniforms[steps & 0xFFFF] * len(legal))])
            _, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
            steps += 1
        decisions += len(env.game.history)
        games += 1
    return games, steps, decisions


def best(run, seconds: float, repeats: int) -> tuple[float, float, float]:
    """Best of ``repeats``: (games/s, steps/s, decisions/s)."""
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        games, steps, decisions = run(seconds)
        elapsed = time.perf_counter() - start
        rates.append((games / elapsed, steps / elapsed, decisions / elapsed))
    return max(rates)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    pin_to_one_core()
    warnings.filterwarnings("ignore")
    aec = best(aec_games, args.seconds, args.repeats)
    gym = best(gym_games, args.seconds, args.repeats)
    print(f"{'environment':<22}{'games/s':>10}{'steps/s':>12}{'decisions/s':>14}")
    print(f"{'jekyll_hyde_v0 (AEC)':<22}{aec[0]:>10,.0f}{aec[1]:>12,.0f}{aec[2]:>14,.0f}")
    print(f"{'JekyllHyde-v0 (Gym)':<22}{gym[0]:>10,.0f}{gym[1]:>12,.0f}{gym[2]:>14,.0f}")
    print(
        f"a Gym step holds {gym[2] / gym[1]:.2f} decisions (the learner's and the opponent's "
        f"replies); Gym steps/s over AEC steps/s: {gym[1] / aec[1]:.2f}"
    )
    overhead = aec[0] / gym[0] - 1
    verdict = "meets" if overhead < TARGET_OVERHEAD else "MISSES"
    print(
        f"time per game, Gym over AEC: {overhead:+.1%} "
        f"({verdict} the under-{TARGET_OVERHEAD:.0%} target)"
    )


if __name__ == "__main__":
    main()
