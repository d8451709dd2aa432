"""Batched speed: BatchedGames decisions per second against the AEC env, and its memory.

``BatchedGames(num_games, autoreset=True)`` plays uniformly random legal
actions drawn in C (``sample_actions(out)`` into a preallocated int64 array,
then ``step(out)``), so every step also writes every game's observation and
mask. A decision is one move of a game that was not over before the step: the
autoreset step that starts a finished game anew is not counted (random games
last about 83 decisions, so that is about 1 game-step in 84). The AEC env
``jekyll_hyde_v0.env()`` is driven by ``play_aec_randomly`` in the same run, on
the same core. Prints decisions/s per batch size and the ratio to the AEC env.
Targets: at least 3,000,000 decisions/s on one core (best batch
size) and at least 25x the AEC env.

The memory check then plays ``--memory-steps`` decisions with 4096 games,
reading the resident set size (current, from /proc/self/statm) at 10 evenly
spaced points after a warm-up; it is flat if it grows by less than 1 MiB. A
shorter slice of 1,000,000 decisions runs under tracemalloc, for the Python
allocations it leaves behind.

    python benchmarks/batched_speed.py [--seconds 3] [--repeats 3]
        [--games 256 1024 4096] [--memory-steps 10000000]
"""

from __future__ import annotations

import argparse
import os
import resource
import time
import tracemalloc
import warnings

import numpy as np

from _timing import pin_to_one_core, play_aec_randomly, rate
from jekyll_hyde_env import jekyll_hyde_v0
from jekyll_hyde_env.vector import BatchedGames

TARGET_SPEED = 3_000_000
TARGET_RATIO = 25.0
MEMORY_GAMES = 4096
MEMORY_POINTS = 10
FLAT_BYTES = 1 << 20
TRACED_DECISIONS = 1_000_000
MIB = float(1 << 20)


def new_games(num_games: int) -> tuple[BatchedGames, np.ndarray]:
    """A reset batch with autoreset, and its preallocated action array."""
    games = BatchedGames(num_games, autoreset=True)
    games.reset(seed=0)
    return games, np.empty(num_games, np.int64)


def play(games: BatchedGames, out: np.ndarray, decisions: int) -> int:
    """Random play until at least ``decisions`` decisions; returns how many were made."""
    made = 0
    num_games, terminated = games.num_games, games.terminated
    while made < decisions:
        made += num_games - int(terminated.sum())
        games.step(games.sample_actions(out))
    return made


def batched_driver(num_games: int):
    def drive(seconds: float) -> int:
        games, out = new_games(num_games)
        num, terminated = games.num_games, games.terminated
        sample, step = games.sample_actions, games.step
        decisions = 0
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            # Games over before this step only restart in it: no decision there.
            decisions += num - int(terminated.sum())
            step(sample(out))
        return decisions

    return drive


def aec_driver(seconds: float) -> int:
    env = jekyll_hyde_v0.env()
    _, decisions = play_aec_randomly(env, seconds)
    env.close()
    return decisions


def rss_bytes() -> int:
    """The current resident set size (the peak where /proc is missing)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def memory_check(total: int) -> None:
    games, out = new_games(MEMORY_GAMES)
    play(games, out, max(total // MEMORY_POINTS, 1))  # warm-up
    print(f"\nmemory: {MEMORY_GAMES} games, {total:,} decisions after a warm-up")
    points = []
    done = 0
    for i in range(1, MEMORY_POINTS + 1):
        done += play(games, out, total * i // MEMORY_POINTS - done)
        points.append(rss_bytes())
        print(f"  after {done:>12,} decisions: RSS {points[-1] / MIB:8.2f} MiB")
    growth = points[-1] - points[0]
    verdict = "flat" if growth < FLAT_BYTES else "NOT flat"
    print(f"RSS growth, first to last point: {growth / 1024:+,.0f} KiB ({verdict}: < 1 MiB)")

    tracemalloc.start()
    before, _ = tracemalloc.get_traced_memory()
    done = play(games, out, TRACED_DECISIONS)
    after, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(
        f"tracemalloc over {done:,} decisions: {after - before:+,} bytes traced "
        f"(peak {peak - before:+,} bytes above the start)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--games", type=int, nargs="+", default=[256, 1024, 4096])
    parser.add_argument("--memory-steps", type=int, default=10_000_000)
    args = parser.parse_args()
    pin_to_one_core()
    warnings.filterwarnings("ignore")

    aec = rate(aec_driver, args.seconds, args.repeats)
    speeds = {n: rate(batched_driver(n), args.seconds, args.repeats) for n in args.games}
    print(f"{'driver':<22}{'decisions/s':>14}{'/ AEC':>9}")
    print(f"{'AEC jekyll_hyde_v0':<22}{aec:>14,.0f}{1.0:>8.1f}x")
    for n, speed in speeds.items():
        print(f"{f'BatchedGames({n})':<22}{speed:>14,.0f}{speed / aec:>8.1f}x")
    best_n = max(speeds, key=speeds.__getitem__)
    best = speeds[best_n]
    verdict = "meets" if best >= TARGET_SPEED else "MISSES"
    print(
        f"best: {best:,.0f} decisions/s on one core with {best_n} games "
        f"({verdict} the {TARGET_SPEED:,} target)"
    )
    ratio = best / aec
    verdict = "meets" if ratio >= TARGET_RATIO else "MISSES"
    print(f"ratio to the AEC env: {ratio:.1f}x ({verdict} the {TARGET_RATIO:.0f}x target)")

    if args.memory_steps > 0:
        memory_check(args.memory_steps)


if __name__ == "__main__":
    main()
