"""PIMC against ISMCTS at equal thinking time: which is stronger per second?

Each row is a duplicate match ``pimc:Xs`` against ``ismcts:Xs``: both agents
get the same X seconds per decision (decisions with one legal action are free
for both). PIMC is stronger per second at that budget if its score is above
0.5 with the interval excluding 0.5. Alongside, a few games of each agent
against the heuristic, in one process, give the time each actually spends per
decision and how often PIMC falls back to the heuristic (positions too big to
solve to the end of the round within the budget).

    python benchmarks/pimc_vs_ismcts.py [--budgets 0.02,0.1] [--pairs 200] [--workers 2]
"""

from __future__ import annotations

import argparse
import time

from jekyll_hyde_agents import make_agent
from jekyll_hyde_arena import evaluate, play_game


def decision_profile(spec: str, games: int) -> tuple[float, float]:
    """(mean seconds per decision with a choice, share of PIMC fallbacks) against heuristic."""
    agent = make_agent(spec, seed=1)
    opponent = make_agent("heuristic", seed=2)
    decisions = fallbacks = 0
    spent = 0.0
    choose = agent.act

    def timed(view, legal):
        nonlocal decisions, fallbacks, spent
        start = time.perf_counter()
        action = choose(view, legal)
        if len(legal) > 1:
            spent += time.perf_counter() - start
            decisions += 1
            fallbacks += bool(getattr(agent, "last_fallback", False))
        return action

    agent.act = timed
    for game in range(games):
        play_game(agent, opponent, game)
        play_game(opponent, agent, game)
    return spent / decisions, fallbacks / decisions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budgets", default="0.02,0.1", help="seconds per decision, a,b,...")
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--profile-games", type=int, default=5)
    args = parser.parse_args()
    lines = [
        "| budget/decision | PIMC score vs ISMCTS | 95% CI | PIMC as Jekyll | PIMC as Hyde "
        "| s/decision PIMC / ISMCTS | PIMC fallbacks |",
        "|---" * 7 + "|",
    ]
    for budget in [float(b) for b in args.budgets.split(",")]:
        pimc, ismcts = f"pimc:{budget:g}s", f"ismcts:{budget:g}s"
        report = evaluate(pimc, ismcts, args.pairs, args.seed, args.workers, progress=True)
        pimc_time, fallback = decision_profile(pimc, args.profile_games)
        ismcts_time, _ = decision_profile(ismcts, args.profile_games)
        lo, hi = report.score_ci
        verdict = "no difference"
        if lo > 0.5 or hi < 0.5:
            verdict = "PIMC stronger" if lo > 0.5 else "ISMCTS stronger"
        roles = report.by_role
        lines.append(
            f"| {budget:g} s | {report.score:.3f} ({verdict}) | [{lo:.3f}, {hi:.3f}] "
            f"| {roles['jekyll']['win_rate']:.3f} | {roles['hyde']['win_rate']:.3f} "
            f"| {pimc_time:.4f} / {ismcts_time:.4f} | {fallback:.0%} |"
        )
        print("\n".join(lines), flush=True)


if __name__ == "__main__":
    main()
