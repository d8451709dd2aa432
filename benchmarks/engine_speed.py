"""Engine speed: decisions per second of ``legal_actions`` + ``apply_action``.

Random legal play, no observation, one core. Target: 250,000
decisions/s. Deals are drawn inside the timed loop, as in real play.

    python benchmarks/engine_speed.py [--seconds 3] [--repeats 3]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from _timing import pin_to_one_core, rate
from jekyll_hyde_env.engine import rules

TARGET = 250_000


def random_play(seconds: float) -> int:
    rng = np.random.default_rng(0)
    uniforms = rng.random(1 << 20).tolist()
    legal_actions, apply_action = rules.legal_actions, rules.apply_action
    game_over = rules.GAME_OVER
    decisions = 0
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        state = rules.new_game(rng)
        while state.phase != game_over:
            moves = legal_actions(state)
            apply_action(state, moves[int(uniforms[decisions & 0xFFFFF] * len(moves))])
            decisions += 1
    return decisions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    pin_to_one_core()
    speed = rate(random_play, args.seconds, args.repeats)
    verdict = "meets" if speed >= TARGET else "MISSES"
    print(f"engine: {speed:,.0f} decisions/s on one core ({verdict} the {TARGET:,} target)")


if __name__ == "__main__":
    main()
