"""OpenSpiel speed: decisions/s of python_jekyll_hyde against OpenSpiel's C++ hearts and oh_hell.

One random game loop, run through ``pyspiel`` on every game: chance outcomes
drawn from ``chance_outcomes()``, decisions uniform over ``legal_actions()``,
both with pre-drawn uniforms so that sampling costs the same everywhere. A
decision is one non-chance ``apply_action``. Two loops: ``play`` (legal
actions and apply) and ``play + observe`` (also the acting player's
``information_state_tensor``, as a learner reads it). Ratios are this game's
speed over each C++ game's; one core.

    python benchmarks/openspiel_speed.py [--seconds 3] [--repeats 3]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pyspiel

from _timing import pin_to_one_core, rate
from jekyll_hyde_env.integrations import openspiel

PEERS = ("hearts", "oh_hell")


def random_loop(game, observe: bool):
    """A ``run(seconds) -> decisions`` function playing ``game`` at random."""
    uniforms = np.random.default_rng(0).random(1 << 16).tolist()

    def run(seconds: float) -> int:
        decisions = draws = 0
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            state = game.new_initial_state()
            while not state.is_terminal():
                u = uniforms[draws & 0xFFFF]
                draws += 1
                if state.is_chance_node():
                    outcomes = state.chance_outcomes()
                    action = outcomes[-1][0]
                    for outcome, probability in outcomes:
                        u -= probability
                        if u < 0:
                            action = outcome
                            break
                    state.apply_action(action)
                    continue
                if observe:
                    state.information_state_tensor(state.current_player())
                moves = state.legal_actions()
                state.apply_action(moves[int(u * len(moves))])
                decisions += 1
        return decisions

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    pin_to_one_core()
    games = {openspiel.GAME_NAME: pyspiel.load_game(openspiel.GAME_NAME)}
    games.update({name: pyspiel.load_game(name) for name in PEERS})
    for observe in (False, True):
        label = "play + observe" if observe else "play"
        speeds = {
            name: rate(random_loop(game, observe), args.seconds, args.repeats)
            for name, game in games.items()
        }
        ours = speeds[openspiel.GAME_NAME]
        print(f"{label}: decisions/s through pyspiel, one core")
        for name, speed in speeds.items():
            ratio = "" if name == openspiel.GAME_NAME else f"  (ours / {name}: {ours / speed:.3f})"
            print(f"  {name:<20} {speed:>10,.0f}{ratio}")


if __name__ == "__main__":
    main()
