"""Labelling expert iteration's games: the game loop in C against the Python loop.

``train.distill.label_game`` plays a self-play game of a search teacher and
labels every decision with a choice. With a teacher whose search runs in C,
the whole game now runs there (``agents.self_play``); the peer is the Python
loop (``in_core=False``), which runs the same searches with the same seeds
between the Python engine's moves, views and observations. Both loops play the
same games (checked here), one after the other in one process, on one core.

Prints seconds a game for each loop, best of ``--repeats``, the ratio, and the
share of the Python loop's time spent outside its calls of the teacher's
``search`` (which include building the view's search spec and reading the
results into numpy: the C loop saves some of their time too).

    python benchmarks/label_speed.py [--teachers ismcts:500 az:450] [--policy DIR]
        [--hidden 128x128] [--games 20] [--repeats 2]

``az`` teachers use ``--policy`` (say a run's ``generation_03/policy``), or a
random relu network of ``--hidden`` widths with a value head; ``make train``
labels with ``value_weight=0.5`` (random playouts blended with the value head).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from net_speed import random_policy  # noqa: E402

from _timing import pin_to_one_core  # noqa: E402
from agents import make_agent  # noqa: E402
from agents.policy_file import parse_layer_sizes  # noqa: E402
from train.distill import label_game  # noqa: E402


def seconds_a_game(teacher: str, games: int, repeats: int, in_core: bool) -> tuple:
    """Best of ``repeats`` runs over deals 0..games-1: mean seconds a game, of them
    those inside the teacher's ``search`` calls (the Python loop makes them), and
    the labels."""
    agent = make_agent(teacher)
    search, inside = agent.search, [0.0]

    def timed(*args, **kwargs):
        start = time.perf_counter()
        try:
            return search(*args, **kwargs)
        finally:
            inside[0] += time.perf_counter() - start

    agent.search = timed
    best = (float("inf"), 0.0, [])
    for _ in range(repeats):
        labels, inside[0] = [], 0.0
        start = time.perf_counter()
        for deal in range(games):
            agent.reset(deal)
            labels.append(label_game(agent, deal, in_core=in_core))
        seconds = (time.perf_counter() - start) / games
        if seconds < best[0]:
            best = (seconds, inside[0] / games, labels)
    return best


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
        print(f"{args.games} games a loop, best of {args.repeats}, one core")
        print(
            "| teacher | decisions kept a game | C loop | Python loop | ratio | outside `search` |"
        )
        print("|---|---|---|---|---|---|")
        for teacher in args.teachers:
            name = teacher
            if teacher.startswith("az:"):
                name += ",value_weight=0.5"
                teacher = f"{name},policy={policy}"
            core, _, core_labels = seconds_a_game(teacher, args.games, args.repeats, True)
            python, searching, python_labels = seconds_a_game(
                teacher, args.games, args.repeats, False
            )
            for mine, theirs in zip(core_labels, python_labels, strict=True):
                if not all(np.array_equal(mine[k], theirs[k]) for k in ("obs", "target", "role")):
                    raise SystemExit(f"{teacher}: the two loops played different games")
            outside = 1 - searching / python
            rows = sum(len(labels["role"]) for labels in core_labels) / args.games
            print(
                f"| `{name}` | {rows:.0f} | {core * 1e3:.1f} ms | {python * 1e3:.1f} ms "
                f"| {python / core:.2f}x | {outside:.1%} |"
            )


if __name__ == "__main__":
    main()
