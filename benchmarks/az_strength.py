"""Network-guided search strength: speed per decision and duplicate matches.

Measures, in one run, a saved policy with a value head (``--policy``, a run
folder or a policy folder; the shipped champion when left out) searched by
``az`` (``agents/az.py``) with ``--az-options`` (for instance
``value_weight=0.5,playouts=heuristic``), at every budget N of
``--simulations`` (comma-separated, default 1,000):

1. Time per decision of ``az:N`` on one core, over the decisions with more
   than one legal action of a few self-play games (``--games``): mean and
   95th percentile. Target: a mean of at most 50 ms per decision.
2. ``az:N`` against ``ismcts:1000`` over ``--pairs`` duplicate pairs (default
   1,000), the same deals for every N, so the rows compare the budgets, with
   the 95% interval and the win rates as each role. Target: a score of at
   least 0.90.
3. Equal seconds per decision: ``az:Xs`` against ``ismcts:Xs`` for every X in
   ``--seconds`` (default 0.01; empty for none) over ``--equal-pairs`` pairs
   (default 500). Target: az wins, the interval's lower bound above 0.5.
   Both sides run on the clock, so these rows want the cores otherwise idle.
4. With ``--raw``, the policy itself (no search, its most likely legal action)
   against ``ismcts:1000`` on the same pairs as row 2, for reference (no target).

The deals come from ``--seed`` (default 2027); give a seed that chose
nothing: seeds 2026 and below were used while developing the search and its
training. Prints a table (match, pairs, score, 95% CI, as Jekyll, as Hyde,
target, meets/MISSES) and the wall seconds each measurement cost. With
``--write-page`` the budget rows (1 and 2) replace the ``az-budgets`` section of
docs/results/champion.md; the page is checked before any game.

    python benchmarks/az_strength.py [--policy runs/NAME] [--simulations 4000,6000]
        [--az-options value_weight=0.5,playouts=heuristic] [--pairs 1000]
        [--seconds 0.01,0.05] [--equal-pairs 500] [--raw] [--workers 2] [--seed S]
        [--out FILE] [--write-page]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import time

import numpy as np
from _results_page import check_section, write_section

from jekyll_hyde_agents import make_agent
from jekyll_hyde_arena import evaluate, pair_seeds
from jekyll_hyde_env.engine import apply_action, is_terminal, legal_actions, new_game, player_view

TARGET_MS = 50.0
TARGET_SCORE = 0.90
OPPONENT = "ismcts:1000"
SECTION = ("champion.md", "az-budgets", "benchmarks/az_strength.py")


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


def parse_budgets(text: str) -> list[int]:
    """The budgets of ``--simulations`` ("4000,6000"): positive whole numbers, each once."""
    try:
        budgets = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ValueError(
            f"--simulations: {text!r} is not a comma-separated list of whole numbers"
        ) from None
    if not budgets or min(budgets) < 1:
        raise ValueError(f"--simulations: {text!r} must name one or more budgets of at least 1")
    if len(set(budgets)) != len(budgets):
        raise ValueError(f"--simulations: {text!r} names a budget twice")
    return budgets


def az_spec(budget: str, policy: str | None, options: str) -> str:
    """``az:BUDGET`` with the policy (left out: the shipped champion) and the options."""
    extra = ([f"policy={policy}"] if policy else []) + ([options] if options else [])
    return ",".join([f"az:{budget}", *extra])


def budget_table(rows: list[dict], seed: int, policy: str | None) -> str:
    """The budget rows as the results page shows them: time per decision and score."""
    lines = [
        f"| search | ms a decision (95th percentile) | vs `{OPPONENT}` | 95% interval "
        "| as Jekyll | as Hyde | pairs |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        timing, report = row["timing"], row["report"]
        lo, hi = report["score_ci"]
        lines.append(
            f"| `{row['agent']}` | {timing['mean_ms']:.1f} ({timing['p95_ms']:.1f}) "
            f"| {report['score']:.3f} | [{lo:.3f}, {hi:.3f}] "
            f"| {report['by_role']['jekyll']['win_rate']:.3f} "
            f"| {report['by_role']['hyde']['win_rate']:.3f} | {report['pairs']:,} |"
        )
    who = f"`{policy}`" if policy else "the shipped champion"
    lines += [
        "",
        f"`az:N` with {who} at each budget, on the same duplicate pairs from seed {seed}, "
        f"which chose nothing. Time: the mean over the decisions with a choice of "
        f"{rows[0]['timing']['games']} self-play games on one core of an otherwise idle "
        f"machine. Targets: at most {TARGET_MS:.0f} ms a decision on average and a score "
        f"of at least {TARGET_SCORE:.2f}. Written by `python benchmarks/az_strength.py "
        "--write-page`.",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--policy", help="run folder or policy folder with a value head (default: the champion)"
    )
    parser.add_argument(
        "--simulations", default="1000", help="comma-separated budgets N of az:N"
    )  # fmt: skip
    parser.add_argument(
        "--az-options", default="",
        help="az options after the budget, e.g. value_weight=0.5,playouts=heuristic",
    )  # fmt: skip
    parser.add_argument("--pairs", type=int, default=1000)
    parser.add_argument(
        "--seconds", default="0.01",
        help="comma-separated seconds per decision (equal-time rows); empty for none",
    )  # fmt: skip
    parser.add_argument("--equal-pairs", type=int, default=500)
    parser.add_argument("--games", type=int, default=4, help="self-play games timed")
    parser.add_argument("--raw", action="store_true", help="also the policy without search")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=2027)
    parser.add_argument("--out", help="write the timing and all reports as JSON")
    parser.add_argument(
        "--write-page", action="store_true",
        help="write the budget rows into docs/results/champion.md",
    )  # fmt: skip
    args = parser.parse_args()
    policy = args.policy
    if policy is not None:
        if "," in policy:
            parser.error("--policy: the path may not contain a comma (agent names use commas)")
        if not pathlib.Path(policy).exists():
            parser.error(f"--policy: no such folder or file: {policy}")
    try:
        budgets = parse_budgets(args.simulations)
        seconds = [float(x) for x in args.seconds.split(",") if x.strip()]
    except ValueError as error:
        parser.error(str(error))
    if any(not x > 0 for x in seconds):
        parser.error("--seconds: every budget must be positive")
    if min(args.pairs, args.equal_pairs, args.games, args.workers) < 1:
        parser.error("--pairs, --equal-pairs, --games and --workers must be positive")
    if args.out and not pathlib.Path(args.out).parent.is_dir():
        parser.error(f"--out: the folder {pathlib.Path(args.out).parent} does not exist")
    if args.write_page:
        check_section(*SECTION)
    for budget in budgets:  # a bad option or policy is refused before any game
        try:
            make_agent(az_spec(str(budget), policy, args.az_options))
        except (ValueError, FileNotFoundError) as error:
            parser.error(f"--az-options or --policy: {error}")

    costs: list[tuple[str, float]] = []
    timings = {}
    for budget in budgets:
        az = az_spec(str(budget), policy, args.az_options)
        start = time.perf_counter()
        timing = timings[az] = time_decisions(az, args.games, args.seed)
        costs.append(("timing " + az, time.perf_counter() - start))
        verdict = "meets" if timing["mean_ms"] <= TARGET_MS else "MISSES"
        print(
            f"{az}: {timing['mean_ms']:.1f} ms per decision on average, 95th percentile "
            f"{timing['p95_ms']:.1f} ms, max {timing['max_ms']:.1f} ms, over "
            f"{timing['decisions']} decisions of {timing['games']} self-play games "
            f"({timing['simulations_per_second']:,.0f} simulations/s); "
            f"target mean <= {TARGET_MS:.0f} ms: {verdict}",
            flush=True,
        )

    matches = [(az, OPPONENT, args.pairs, f">= {TARGET_SCORE:.2f}") for az in timings]
    for x in seconds:
        matches.append(
            (az_spec(f"{x:g}s", policy, args.az_options), f"ismcts:{x:g}s", args.equal_pairs,
             "> 0.5 (CI)")
        )  # fmt: skip
    if args.raw:
        matches.append((policy or "champion", OPPONENT, args.pairs, "none"))

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
        if report.interrupted:
            print("interrupted: the remaining matches are not played", flush=True)
            break

    print("\ncosts (wall seconds):")
    for label, spent in costs:
        print(f"  {spent:8.1f}  {label}")
    print(f"  {sum(s for _, s in costs):8.1f}  total")
    interrupted = len(reports) < len(matches) or reports[-1]["interrupted"]
    if args.write_page and interrupted:
        print("nothing written to the page: the run was interrupted")
    elif args.write_page:
        rows = [
            {"agent": az, "timing": timing, "report": report}
            for (az, timing), report in zip(timings.items(), reports[: len(timings)], strict=True)
        ]
        write_section(*SECTION, budget_table(rows, args.seed, policy))
    if args.out:
        pathlib.Path(args.out).write_text(
            json.dumps(
                {
                    "seed": args.seed,
                    "timings": list(timings.values()),
                    "reports": reports,
                    "costs": [{"label": label, "seconds": s} for label, s in costs],
                },
                indent=2,
            )
        )


if __name__ == "__main__":
    main()
