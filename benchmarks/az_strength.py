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

The deals come from ``--seed`` (default 2027, used while developing the
search; give a seed that chose nothing). Prints a table (match, pairs, score,
95% CI, as Jekyll, as Hyde, target, meets/MISSES) and the wall seconds each
measurement cost. With ``--write-page`` (the champion's rows, so without
``--policy``, and an explicit ``--seed``) the budget rows (1 and 2) replace
the ``az-budgets`` section of docs/results/champion.md, with the command that
measured them; the page is checked before any game and left alone when a
budget's match is interrupted. Every agent is built, so every option checked,
before the first game.

    python benchmarks/az_strength.py [--policy runs/NAME] [--simulations 4000,6000]
        [--az-options value_weight=0.5,playouts=heuristic] [--pairs 1000]
        [--seconds 0.01,0.05] [--equal-pairs 500] [--raw] [--workers 2] [--seed S]
        [--out FILE] [--write-page]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pathlib
import time

import numpy as np
from _results_page import check_section, write_section

from jekyll_hyde_agents import AZSpec, make_agent, parse_az_spec
from jekyll_hyde_arena import evaluate, pair_seeds
from jekyll_hyde_env.engine import apply_action, is_terminal, legal_actions, new_game, player_view
from jekyll_hyde_train.common.files import atomic_write_text

TARGET_MS = 50.0
TARGET_SCORE = 0.90
OPPONENT = "ismcts:1000"
DEFAULT_SEED = 2027
SECTION = ("champion.md", "az-budgets", "benchmarks/az_strength.py")


def time_decisions(spec: str | AZSpec, games: int, seed: int) -> dict:
    """Milliseconds per decision of ``spec`` (an agent name or spec) playing both roles of
    ``games`` self-play games.

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
        "agent": agent_label(spec),
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


def parse_seconds(text: str) -> list[float]:
    """The budgets of ``--seconds`` ("0.01,0.05", or empty for none): positive, finite
    seconds, each once, written as the agents' names write them (``0.01s``)."""
    try:
        seconds = [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        seconds = [math.nan]
    if any(not (0 < x < math.inf) or float(f"{x:g}") != x for x in seconds):
        raise ValueError(
            f"--seconds: {text!r} is not a comma-separated list of positive, finite seconds "
            "of at most 6 significant digits (or empty for none)"
        )
    if len(set(seconds)) != len(seconds):
        raise ValueError(f"--seconds: {text!r} names a budget twice")
    return seconds


def check_az_options(options: str) -> None:
    """``--az-options`` may not choose the policy: ``--policy`` does, so the report names it."""
    keys = [part.split("=", 1)[0].strip() for part in options.split(",") if part.strip()]
    if "policy" in keys:
        raise ValueError("--az-options may not hold policy=...; give the policy as --policy")


def az_spec(budget: str, policy: str | None, options: str) -> AZSpec:
    """The az agent of ``BUDGET`` (``1000`` or ``0.01s``) with ``--az-options``'s text, as
    an ``az:`` name reads it, searching with ``policy`` (None: the shipped champion; a
    path may hold a comma, since it is never written into a name).

    Raises:
        ValueError: a bad option, as ``make_agent`` words it.
    """
    return parse_az_spec(f"{budget},{options}" if options else budget).with_policy(policy)


def agent_label(agent: str | AZSpec) -> str:
    """An agent's name in the tables: a name as given, a spec by its ``name``."""
    return agent if isinstance(agent, str) else agent.name


def page_command(budgets: list[int], options: str, pairs: int, games: int, seed: int) -> str:
    """The command that measures the page's rows again."""
    words = ["python benchmarks/az_strength.py", f"--simulations {','.join(map(str, budgets))}"]
    if options:
        words.append(f"--az-options {options}")
    words += [f"--pairs {pairs}", f"--games {games}", f"--seed {seed}", "--write-page"]
    return " ".join(words)


def budget_table(rows: list[dict], seed: int, command: str) -> str:
    """The budget rows of the shipped champion as its results page shows them: time per
    decision and score, with the command that measured them."""
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
    lines += [
        "",
        f"`az:N` with the shipped champion at each budget, on the same duplicate pairs from "
        f"seed {seed}. Time: the mean over the decisions with a choice of "
        f"{rows[0]['timing']['games']} self-play games, on one core. Targets: at most "
        f"{TARGET_MS:.0f} ms a decision on average and a score of at least "
        f"{TARGET_SCORE:.2f}. Written by `{command}`.",
    ]
    return "\n".join(lines)


def _rate(report, role: str) -> str:
    rate = report.by_role[role]["win_rate"]
    return "-" if rate is None else f"{rate:.3f}"


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
    parser.add_argument(
        "--seed", type=int, help=f"the deals' seed (default {DEFAULT_SEED}; --write-page needs one)"
    )  # fmt: skip
    parser.add_argument("--out", help="write the timing and all reports as JSON")
    parser.add_argument(
        "--write-page", action="store_true",
        help="write the budget rows of the champion into docs/results/champion.md",
    )  # fmt: skip
    args = parser.parse_args()
    policy = args.policy
    if policy is not None and not pathlib.Path(policy).exists():
        parser.error(f"--policy: no such folder or file: {policy}")
    try:
        budgets = parse_budgets(args.simulations)
        seconds = parse_seconds(args.seconds)
        check_az_options(args.az_options)
    except ValueError as error:
        parser.error(str(error))
    for name in ("pairs", "equal_pairs", "games", "workers"):
        if getattr(args, name) < 1:
            parser.error(
                f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}"
            )
    if args.seed is not None and args.seed < 0:
        parser.error(f"--seed must be 0 or more, got {args.seed}")
    if args.out and not pathlib.Path(args.out).parent.is_dir():
        parser.error(f"--out: the folder {pathlib.Path(args.out).parent} does not exist")
    if args.write_page:
        if policy is not None:
            parser.error("--write-page writes the champion's page: leave --policy out")
        if args.seed is None:
            parser.error("--write-page needs --seed: give one that chose nothing")
        check_section(*SECTION)
    seed = DEFAULT_SEED if args.seed is None else args.seed

    try:
        budget_specs = [az_spec(str(budget), policy, args.az_options) for budget in budgets]
        timed_specs = [az_spec(f"{x:g}s", policy, args.az_options) for x in seconds]
    except ValueError as error:
        parser.error(f"{error} (check --az-options and --seconds)")
    matches = [(az, OPPONENT, args.pairs, f">= {TARGET_SCORE:.2f}") for az in budget_specs]
    for x, az in zip(seconds, timed_specs, strict=True):
        matches.append((az, f"ismcts:{x:g}s", args.equal_pairs, "> 0.5 (CI)"))
    if args.raw:
        matches.append((policy or "champion", OPPONENT, args.pairs, "none"))
    for a, b, _, _ in matches:  # a bad option or policy is refused before any game
        for spec in (a, b):
            try:
                make_agent(spec)
            except (ValueError, FileNotFoundError) as error:
                parser.error(
                    f"{agent_label(spec)}: {error} (check --az-options, --policy and --seconds)"
                )

    costs: list[tuple[str, float]] = []
    timings = {}
    for az in budget_specs:
        start = time.perf_counter()
        try:
            timing = timings[az] = time_decisions(az, args.games, seed)
        except KeyboardInterrupt:
            raise SystemExit("interrupted while timing: nothing measured or written") from None
        costs.append(("timing " + az.name, time.perf_counter() - start))
        verdict = "meets" if timing["mean_ms"] <= TARGET_MS else "MISSES"
        print(
            f"{az.name}: {timing['mean_ms']:.1f} ms per decision on average, 95th percentile "
            f"{timing['p95_ms']:.1f} ms, max {timing['max_ms']:.1f} ms, over "
            f"{timing['decisions']} decisions of {timing['games']} self-play games "
            f"({timing['simulations_per_second']:,.0f} simulations/s); "
            f"target mean <= {TARGET_MS:.0f} ms: {verdict}",
            flush=True,
        )

    print(f"\nseed {seed}, duplicate pairs, {args.workers} workers")
    print("| match | pairs | score | 95% CI | as Jekyll | as Hyde | target | result |")
    print("|---|---|---|---|---|---|---|---|")
    reports = []
    for a, b, pairs, target in matches:
        start = time.perf_counter()
        report = evaluate(a, b, pairs, seed=seed, workers=args.workers, progress=True)
        a = agent_label(a)
        costs.append((f"{a} vs {b}", time.perf_counter() - start))
        reports.append(report.to_json())
        if report.pairs == 0:
            print(f"| {a} vs {b} | 0 | - | - | - | - | {target} | - |", flush=True)
        else:
            lo, hi = report.score_ci
            if target.startswith(">="):
                result = "meets" if report.score >= TARGET_SCORE else "MISSES"
            elif target.startswith(">"):
                result = "meets" if lo > 0.5 else "MISSES"
            else:
                result = "-"
            print(
                f"| {a} vs {b} | {report.pairs} | {report.score:.3f} | [{lo:.3f}, {hi:.3f}] "
                f"| {_rate(report, 'jekyll')} | {_rate(report, 'hyde')} | {target} | {result} |",
                flush=True,
            )
        if report.interrupted:
            print("interrupted: the remaining matches are not played", flush=True)
            break

    print("\ncosts (wall seconds):")
    for label, spent in costs:
        print(f"  {spent:8.1f}  {label}")
    print(f"  {sum(s for _, s in costs):8.1f}  total")
    if args.out:
        data = {
            "seed": seed,
            "timings": list(timings.values()),
            "reports": reports,
            "costs": [{"label": label, "seconds": s} for label, s in costs],
        }
        atomic_write_text(pathlib.Path(args.out), json.dumps(data, indent=2))
    budget_reports = reports[: len(budget_specs)]
    if not args.write_page:
        return
    if len(budget_reports) < len(budget_specs) or any(r["interrupted"] for r in budget_reports):
        print("nothing written to the page: a budget's match was interrupted")
        return
    rows = [
        {"agent": az.name, "timing": timings[az], "report": report}
        for az, report in zip(budget_specs, budget_reports, strict=True)
    ]
    command = page_command(budgets, args.az_options, args.pairs, args.games, seed)
    write_section(*SECTION, budget_table(rows, seed, command))


if __name__ == "__main__":
    main()
