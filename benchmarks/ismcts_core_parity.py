"""ISMCTS in C against its Python reference loop: the same player, only faster.

``ismcts:N`` runs its whole search in C (``_rollout.ismcts``). This plays it in
duplicate against the Python search loop with the same N (``ISMCTSAgent``'s
``_search_in_python``, rollouts on the C rules core). Equal strength shows as a
score of 0.5 inside the interval. Also prints the seconds per decision of each.

    python benchmarks/ismcts_core_parity.py [--simulations 1000] [--pairs 100] [--workers 2]
"""

from __future__ import annotations

import argparse
import multiprocessing
import time

from jekyll_hyde_agents import ISMCTSAgent, ISMCTSConfig
from jekyll_hyde_arena import mean_ci, play_pair


class PythonLoopISMCTS(ISMCTSAgent):
    """The same agent with its search run by the Python reference loop."""

    def search(self, view):
        return self._search_in_python(view)


class Timed:
    """Wraps an agent and adds up its time on decisions with a choice."""

    def __init__(self, agent):
        self.agent, self.seconds, self.decisions = agent, 0.0, 0

    def reset(self, seed=None):
        self.agent.reset(seed)

    def act(self, view, legal):
        start = time.perf_counter()
        action = self.agent.act(view, legal)
        if len(legal) > 1:
            self.seconds += time.perf_counter() - start
            self.decisions += 1
        return action


def run_pairs(job: tuple[int, int, list[int]]) -> tuple[list[float], float, int, float, int]:
    simulations, seed, indices = job
    in_c = Timed(ISMCTSAgent(ISMCTSConfig(num_simulations=simulations)))
    in_python = Timed(PythonLoopISMCTS(ISMCTSConfig(num_simulations=simulations)))
    scores = [play_pair(in_c, in_python, seed, i).a_wins / 2 for i in indices]
    return scores, in_c.seconds, in_c.decisions, in_python.seconds, in_python.decisions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--simulations", type=int, default=1000)
    parser.add_argument("--pairs", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    jobs = [
        (args.simulations, args.seed, list(range(w, args.pairs, args.workers)))
        for w in range(args.workers)
    ]
    with multiprocessing.get_context("fork").Pool(args.workers) as pool:
        parts = pool.map(run_pairs, jobs)
    scores = [score for part in parts for score in part[0]]
    mean, (low, high) = mean_ci(scores)
    c_time = sum(p[1] for p in parts) / sum(p[2] for p in parts)
    python_time = sum(p[3] for p in parts) / sum(p[4] for p in parts)
    print(f"ismcts:{args.simulations}, {len(scores)} duplicate pairs, seed {args.seed}")
    print(f"C search against the Python loop: {mean:.3f} [{low:.3f}, {high:.3f}]")
    print(
        f"seconds per decision: C {c_time * 1000:.1f} ms, Python loop {python_time * 1000:.1f} ms "
        f"({python_time / c_time:.1f}x)"
    )


if __name__ == "__main__":
    main()
