"""ISMCTS speed: simulations per second on one core, from the middle of round 1.

Positions: five tricks into round 1 of several seeded games, at a lead. Each is
searched three ways in the same run: the whole search in C (``_rollout.ismcts``,
the default), the Python search loop with its rollouts on the C rules core, and
the Python search on the pure-Python engine (``jekyll_hyde_agents.rollout.PythonCore``);
prints each and the ratios. Target: at least 20,000 simulations/s.

    python benchmarks/ismcts_speed.py [--simulations 4000] [--positions 5] [--repeats 3]
"""

from __future__ import annotations

import argparse
import time
from unittest import mock

import numpy as np

from _timing import pin_to_one_core
from jekyll_hyde_agents import rollout
from jekyll_hyde_agents.ismcts import ISMCTSAgent, ISMCTSConfig
from jekyll_hyde_env.engine import apply_action, legal_actions, new_game, player_view

TARGET = 20_000


def middle_of_round_one(seed: int):
    rng = np.random.default_rng(seed)
    state = new_game(rng)
    while len(state.trick_log) < 5 or state.phase != 1:
        moves = legal_actions(state)
        apply_action(state, moves[rng.integers(len(moves))])
    return player_view(state, state.to_act)


def simulations_per_second(views, simulations: int, repeats: int, in_python: bool) -> float:
    best = 0.0
    for _ in range(repeats):
        done = 0
        start = time.perf_counter()
        for i, view in enumerate(views):
            agent = ISMCTSAgent(ISMCTSConfig(num_simulations=simulations), seed=i)
            (agent._search_in_python if in_python else agent.search)(view)
            done += agent.last_simulations
        best = max(best, done / (time.perf_counter() - start))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--simulations", type=int, default=4000)
    parser.add_argument("--positions", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    pin_to_one_core()
    if not rollout.core_available():
        raise SystemExit(
            "the C core jekyll_hyde_agents._rollout is not built: run `make` or `pip install -e .`"
        )
    views = [middle_of_round_one(seed) for seed in range(args.positions)]
    fast = simulations_per_second(views, args.simulations, args.repeats, in_python=False)
    loop = simulations_per_second(views, args.simulations // 4, args.repeats, in_python=True)
    python_core = lambda state: (rollout.PythonCore, state)  # noqa: E731
    with mock.patch("jekyll_hyde_agents.ismcts.core_for", python_core):
        slow = simulations_per_second(views, max(args.simulations // 80, 50), 1, in_python=True)
    print(f"{'search':<44}{'simulations/s':>15}")
    print(f"{'all in C (_rollout.ismcts)':<44}{fast:>15,.0f}")
    print(f"{'Python loop, rollouts on the C rules core':<44}{loop:>15,.0f}")
    print(f"{'Python loop on the Python engine':<44}{slow:>15,.0f}")
    verdict = "meets" if fast >= TARGET else "MISSES"
    print(
        f"all in C / Python loop: {fast / loop:.1f}x; all in C / Python engine: "
        f"{fast / slow:.0f}x; {verdict} the {TARGET:,} target"
    )


if __name__ == "__main__":
    main()
