"""AEC throughput: jekyll_hyde_v0 against PettingZoo's texas_holdem_v4 and leduc_holdem_v4.

Each environment is built with its ``env()`` factory (PettingZoo's wrappers
included) and driven the same way: ``agent_iter``, ``last()`` (which observes
the acting agent every step), a uniformly random legal action from the mask.
Measured in one run on one core; prints decisions/s and the ratios. Target:
at least 15x texas_holdem_v4.

    python benchmarks/env_throughput.py [--seconds 3] [--repeats 3]
"""

from __future__ import annotations

import argparse
import warnings

from pettingzoo.classic import leduc_holdem_v4, texas_holdem_v4

from _timing import pin_to_one_core, play_aec_randomly, rate
from jekyll_hyde_env import jekyll_hyde_v0

TARGET_RATIO = 15.0


def make_driver(make_env):
    def drive(seconds: float) -> int:
        env = make_env()
        _, decisions = play_aec_randomly(env, seconds)
        env.close()
        return decisions

    return drive


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    pin_to_one_core()
    warnings.filterwarnings("ignore")
    envs = {
        "jekyll_hyde_v0": jekyll_hyde_v0.env,
        "texas_holdem_v4": texas_holdem_v4.env,
        "leduc_holdem_v4": leduc_holdem_v4.env,
    }
    speeds = {
        name: rate(make_driver(make), args.seconds, args.repeats) for name, make in envs.items()
    }
    ours = speeds["jekyll_hyde_v0"]
    print(f"{'environment':<18}{'decisions/s':>14}{'ours / it':>12}")
    for name, speed in speeds.items():
        print(f"{name:<18}{speed:>14,.0f}{ours / speed:>11.1f}x")
    ratio = ours / speeds["texas_holdem_v4"]
    verdict = "meets" if ratio >= TARGET_RATIO else "MISSES"
    print(f"ratio to texas_holdem_v4: {ratio:.1f}x ({verdict} the {TARGET_RATIO:.0f}x target)")


if __name__ == "__main__":
    main()
