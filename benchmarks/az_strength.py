"""Network-guided search strength: speed per decision and duplicate matches.

Measures, in one run, a saved policy with a value head (``--policy``, a run
folder or a policy folder) searched by ``az`` (``agents/az.py``):

1. Time per decision of ``az:N,policy=P`` (N = ``--simulations``, default
   1,000) on one core, over the decisions with more than one legal action of
   a few self-play games (``--games``): mean and 95th percentile.
   Target: a mean of at most 50 ms per decision.
2. ``az:N,policy=P`` against ``ismcts:1000`` over ``--pairs`` duplicate pairs
   (default 1,000), with the 95% interval and the win rates as each role.
   Target: a score of at least 0.80.
3. Equal seconds per decision: ``az:Xs,policy=P`` against ``ismcts:Xs`` for
   every X in ``--seconds`` (default 0.01) over ``--equal-pairs`` pairs
   (default 500). Target: az wins, the interval's lower bound above 0.5.
   Both sides run on the clock, so these rows want the cores otherwise idle.
4. With ``--raw``, the policy itself (no search, its most likely legal action)
   against ``ismcts:1000`` on the same pairs as row 2, for reference (no target).

The deals come from ``--seed`` (default 2027), a seed not used to choose
anything: seeds 2026 and below were used while developing the search and its
training. Prints a table (match, pairs, score, 95% CI, as Jekyll, as Hyde,
target, meets/MISSES) and the wall seconds each measurement cost.

    python benchmarks/az_strength.py --policy runs/NAME [--simulations 1000] [--pairs 1000]
        [--seconds 0.01,0.05] [--equal-pairs 500] [--raw] [--workers 2] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import time

import numpy as np

from jekyll_hyde_agents import make_agent
from jekyll_hyde_arena import evaluate, pair_seeds
from jekyll_hyde_env.engine import apply_action, is_terminal, legal_actions, new_game, player_view

TARGET_MS = 50.0
TARGET_SCORE = 0.80
OPPONENT = "ismcts:1000"


def time_decisions(spec: str, games: int, seed: int) -> dict:
    """Milliseconds per decision of ``spec`` playing both roles of ``games`` self-play games.

    Only decisions with more than one legal action are timed (the agent
    answers the others without searching). Runs pinned to one core, which is
    given back afterwards so that the matches' workers may use every core.
    """
    agent = make_agent(spec)
    affinity = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    if affinity is not None:
        os.sched_setaffinity(0, {min(affinity)})
    times: list[float] = []
    simulations: list[int] = []
    try:
        for game in range(games):
            deal_seed, agent_seed, _, _ = pair_seeds(seed, game)
            agent.reset(agent_seed)
            state = new_game(np.random.default_rng(deal_seed))
            while not is_terminal(state):
                legal = legal_actions(state)
                view = player_view(state, state.to_act)
                if len(legal) > 1:
                    start = time.perf_counter()
                    action = agent.act(view, legal)
                    times.append(1000 * (time.perf_counter() - start))
                    simulations.append(agent.last_simulations)
                else:
                    action = legal[0]
                apply_action(state, action)
    finally:
        if affinity is not None:
            os.sched_setaffinity(0, affinity)
    ms = np.asarray(times)
    return {
        "agent": spec,
        "games": games,
        "decisions": len(times),
        "mean_ms": float(ms.mean()),
        "p95_ms": float(np.percentile(ms, 95)),
        "max_ms": float(ms.max()),
        "mean_simulations": float(np.mean(simulations)),
        "simulations_per_second": float(np.sum(simulations) / (ms.sum() / 1000)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--policy", required=True, help="run folder or policy folder (with a value head)"
    )
    parser.add_argument("--simulations", type=int, default=1000)
    parser.add_argument("--pairs", type=int, default=1000)
    parser.add_argument(
        "--seconds", default="0.01", help="comma-separated seconds per decision (equal-time rows)"
    )
    parser.add_argument("--equal-pairs", type=int, default=500)
    parser.add_argument("--games", type=int, default=4, help="self-play games timed")
    parser.add_argument("--raw", action="store_true", help="also the policy without search")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=2027)
    parser.add_argument("--out", help="write the timing and all reports as JSON")
    args = parser.parse_args()
    policy = str(args.policy)
    if "," in policy:
        parser.error("--policy: the path may not contain a comma (agent names use commas)")
    if not pathlib.Path(policy).exists():
        parser.error(f"--policy: no such folder or file: {policy}")
    seconds = [float(x) for x in args.seconds.split(",") if x.strip()]
    if any(not x > 0 for x in seconds):
        parser.error("--seconds: every budget must be positive")

    az = f"az:{args.simulations},policy={policy}"
    start = time.perf_counter()
    timing = time_decisions(az, args.games, args.seed)
    costs = [("timing " + az, time.perf_counter() - start)]
    verdict = "meets" if timing["mean_ms"] <= TARGET_MS else "MISSES"
    print(
        f"{az}: {timing['mean_ms']:.1f} ms per decision on average, 95th percentile "
        f"{timing['p95_ms']:.1f} ms, max {timing['max_ms']:.1f} ms, over "
        f"{timing['decisions']} decisions of {timing['games']} self-play games "
        f"({timing['simulations_per_second']:,.0f} simulations/s); "
        f"target mean <= {TARGET_MS:.0f} ms: {verdict}",
        flush=True,
    )

    matches = [(az, OPPONENT, args.pairs, f">= {TARGET_SCORE:.2f}")]
    for x in seconds:
        matches.append(
            (f"az:{x:g}s,policy={policy}", f"ismcts:{x:g}s", args.equal_pairs, "> 0.5 (CI)")
        )
    if args.raw:
        matches.append((policy, OPPONENT, args.pairs, "none"))

    print(f"\nseed {args.seed}, duplicate pairs, {args.workers} workers")
    print("| match | pairs | score | 95% CI | as Jekyll | as Hyde | target | result |")
    print("|---|---|---|---|---|---|---|---|")
    reports = []
    for a, b, pairs, target in matches:
        start = time.perf_counter()
        report = evaluate(a, b, pairs, seed=args.seed, workers=args.workers, progress=True)
        costs.append((f"{a} vs {b}", time.perf_counter() - start))
        reports.append(report.to_json())
        lo, hi = report.score_ci
        if target.startswith(">="):
            result = "meets" if report.score >= TARGET_SCORE else "MISSES"
        elif target.startswith(">"):
            result = "meets" if lo > 0.5 else "MISSES"
        else:
            result = "-"
        jekyll = report.by_role["jekyll"]["win_rate"]
        hyde = report.by_role["hyde"]["win_rate"]
        print(
            f"| {a} vs {b} | {report.pairs} | {report.score:.3f} | [{lo:.3f}, {hi:.3f}] "
            f"| {jekyll:.3f} | {hyde:.3f} | {target} | {result} |",
            flush=True,
        )

    print("\ncosts (wall seconds):")
    for label, spent in costs:
        print(f"  {spent:8.1f}  {label}")
    print(f"  {sum(s for _, s in costs):8.1f}  total")
    if args.out:
        pathlib.Path(args.out).write_text(
            json.dumps(
                {
                    "seed": args.seed,
                    "timing": timing,
                    "reports": reports,
                    "costs": [{"label": label, "seconds": s} for label, s in costs],
                },
                indent=2,
            )
        )


if __name__ == "__main__":
    main()
