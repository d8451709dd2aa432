"""Labelling expert iteration's games: the game loop in C against the Python loop.

``jekyll_hyde_train.expert_iteration.distill.label_game`` plays a self-play game of a search
teacher and
labels every decision with a choice. With a teacher whose search runs in C,
the whole game runs there (``jekyll_hyde_agents.self_play``); the peer is the Python
loop (``in_core=False``), which runs the same searches with the same seeds
between the Python engine's moves, views and observations. Both loops play the
same games (checked here), in one process, on one core.

Prints the mean seconds a game of each loop, the ratio, and the share of the
Python loop's time spent outside its calls of the teacher's ``search`` (which
include building the view's search spec and reading the results into numpy:
the C loop saves some of their time too). The two loops play game by game in
turn, ``--repeats`` times over ``--games`` deals, so that both see the
machine's speed alike: on a machine whose speed drifts, a loop timed after
the other would measure the drift.

    python benchmarks/label_speed.py [--teachers ismcts:500 az:450] [--policy DIR]
        [--hidden 128x128] [--games 20] [--repeats 2]

``az`` teachers use ``--policy`` (say a run's ``generation_03/policy``), or a
random relu network of ``--hidden`` widths with a value head; ``make train``
labels with ``value_weight=0.5`` (random playouts blended with the value head).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import tempfile
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from net_speed import random_policy  # noqa: E402

from _timing import pin_to_one_core  # noqa: E402
from jekyll_hyde_agents import AZSpec, make_agent, parse_az_spec  # noqa: E402
from jekyll_hyde_agents.policy_file import parse_layer_sizes  # noqa: E402
from jekyll_hyde_train.expert_iteration.distill import label_game  # noqa: E402


class Labelling:
    """One loop (in C or in Python) labelling games with a teacher, timed game by game."""

    def __init__(self, teacher: str | AZSpec, in_core: bool):
        self.agent, self.in_core = make_agent(teacher), in_core
        self.seconds = self.searching = 0.0
        self.labels: dict[int, dict] = {}
        search = self.agent.search

        def timed(*args, **kwargs):  # the Python loop's calls of the teacher's search
            start = time.perf_counter()
            try:
                return search(*args, **kwargs)
            finally:
                self.searching += time.perf_counter() - start

        self.agent.search = timed

    def play(self, deal: int) -> None:
        """Label the game of ``deal`` (its search seed too), adding to the time spent."""
        self.agent.reset(deal)
        start = time.perf_counter()
        self.labels[deal] = label_game(self.agent, deal, in_core=self.in_core)
        self.seconds += time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--teachers", nargs="+", default=["ismcts:500", "az:450"])
    parser.add_argument("--policy", help="the az teachers' policy (default: a random network)")
    parser.add_argument("--hidden", default="128x128", help="the random network's widths")
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    if args.games < 1 or args.repeats < 1:
        parser.error("--games and --repeats must be at least 1")
    pin_to_one_core()
    with tempfile.TemporaryDirectory() as folder:
        policy = args.policy or random_policy(folder, parse_layer_sizes(args.hidden))
        print(f"{args.games} deals, {args.repeats} times, the loops game by game in turn")
        print(
            "| teacher | decisions kept a game | C loop | Python loop | ratio | outside `search` |"
        )
        print("|---|---|---|---|---|---|")
        for teacher in args.teachers:
            name = teacher
            if teacher.startswith("az:"):
                typed = parse_az_spec(teacher.partition(":")[2])
                typed = AZSpec(None, dataclasses.replace(typed.config, value_weight=0.5))
                name, teacher = typed.name, typed.with_policy(policy)
            core, python = Labelling(teacher, True), Labelling(teacher, False)
            for _ in range(args.repeats):
                for deal in range(args.games):  # game by game in turn, either first by halves
                    first, second = (core, python) if deal % 2 else (python, core)
                    first.play(deal)
                    second.play(deal)
            for deal, mine in core.labels.items():
                theirs = python.labels[deal]
                if not all(np.array_equal(mine[k], theirs[k]) for k in ("obs", "target", "role")):
                    raise SystemExit(f"{name}: the two loops played different games")
            played = args.games * args.repeats
            outside = 1 - python.searching / python.seconds
            rows = sum(len(labels["role"]) for labels in core.labels.values()) / args.games
            print(
                f"| `{name}` | {rows:.0f} | {core.seconds / played * 1e3:.1f} ms "
                f"| {python.seconds / played * 1e3:.1f} ms | {python.seconds / core.seconds:.2f}x "
                f"| {outside:.1%} |"
            )


if __name__ == "__main__":
    main()
