"""The leaderboard: every baseline and the shipped policy, by Elo, against ismcts:1000 and by ABR.

For the agents below (``--agents`` to change them) it measures, in one run:

1. **Elo**: a round robin of duplicate pairs (``--pairs`` a pairing), rated
   by Bradley-Terry on the Elo scale with bootstrap 95% intervals
   (``jekyll_hyde_arena.tournament``, as ``jekyll-hyde tournament``).
2. **Score against ``ismcts:1000``**: from the same round robin, with its interval.
3. **ABR score**: how beatable the agent is, by the search responder of
   ``jekyll-hyde exploit`` (ISMCTS-BR, ``br:N`` with ``--abr-simulations``,
   playing ``--abr-games`` duplicate pairs against it: the mean of its win
   rates in the two seats, with a 95% interval; 0.5 is what an equilibrium
   concedes). Searches (``ismcts``, ``az``) cannot be modelled inside
   another search, so their cell says so. ``jekyll-hyde exploit`` adds the
   RL responder for any target, at a larger budget.

With ``--write-page`` the table replaces the ``leaderboard`` section of
docs/results/leaderboard.md. Deals come from ``--seed`` (default 2029), a seed
that chose nothing.

    python benchmarks/leaderboard.py [--pairs 200] [--abr-games 1000] [--write-page]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _results_page import check_section, write_section  # noqa: E402

from jekyll_hyde_arena import tournament  # noqa: E402
from jekyll_hyde_train.exploit import (  # noqa: E402
    ExploitConfig,
    SearchSeat,
    abr_summary,
    run_search_responder,
)

SECTION = ("leaderboard.md", "leaderboard", "benchmarks/leaderboard.py")
AGENTS = ["random", "lowest", "heuristic", "ismcts:1000", "champion", "az:200"]
REFERENCE = "ismcts:1000"


def search_abr(target: str, simulations: int, games: int, workers: int, seed: int) -> dict:
    """The search responder's ABR score against ``target`` (or why it cannot be measured)."""
    config = ExploitConfig()
    config.search.simulations = simulations
    config.search.games = games
    config.search.workers = workers
    config.evaluation.seed = seed
    with tempfile.TemporaryDirectory() as folder:
        data = run_search_responder(target, config, pathlib.Path(folder))
    if not data.get("agent"):
        return {"agent": None, "reason": data["reason"]}
    seats = {
        seat: SearchSeat(seat, round(row["win_rate"] * row["games"]), row["games"])
        for seat, row in data["seats"].items()
    }
    return {
        "agent": data["agent"],
        "seconds": data["seconds"],
        "seats": data["seats"],
        **abr_summary(seats),
    }


def reference_scores(result: dict, reference: str) -> dict[str, tuple[float, list[float]]]:
    """Each agent's score (and interval) against ``reference`` from the round robin."""
    scores = {}
    for match in result["matches"]:
        a, b = match["agents"]["A"], match["agents"]["B"]
        if b == reference:
            scores[a] = (match["score"], list(match["score_ci"]))
        elif a == reference:
            lo, hi = match["score_ci"]
            scores[b] = (1 - match["score"], [1 - hi, 1 - lo])
    return scores


def markdown(rows: list[dict], args: argparse.Namespace, abr_agent_note: str) -> str:
    lines = [
        f"| agent | Elo (Bradley-Terry) | vs `{REFERENCE}` | ABR score (search responder) |",
        "|---|---|---|---|",
    ]
    for row in rows:
        lo, hi = row["elo_ci"]
        if row["agent"] == REFERENCE:
            versus = "-"
        else:
            score, (slo, shi) = row["vs_reference"]
            versus = f"{score:.3f} [{slo:.3f}, {shi:.3f}]"
        abr = row["abr"]
        if abr.get("agent"):
            alo, ahi = abr["abr_ci"]
            cell = f"{abr['abr_score']:.3f} [{alo:.3f}, {ahi:.3f}]"
        else:
            cell = "not measured: a search cannot be modelled inside another"
        lines.append(
            f"| `{row['agent']}` | {row['elo']:.0f} [{lo:.0f}, {hi:.0f}] | {versus} | {cell} |"
        )
    lines += [
        "",
        f"Round robin of {args.pairs} duplicate pairs a pairing on deals from seed "
        f"{args.seed} (Elo: 95% bootstrap intervals). ABR score: the mean of the "
        f"search responder's win rates in the two seats over {args.abr_games:,} duplicate "
        f"pairs ({abr_agent_note}); 0.5 is what an equilibrium concedes, and a higher "
        "score means a more beatable agent. Written by `python benchmarks/leaderboard.py "
        "--write-page`.",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", default=",".join(AGENTS), help="comma-separated agent names")
    parser.add_argument("--pairs", type=int, default=200, help="duplicate pairs a pairing")
    parser.add_argument("--abr-simulations", type=int, default=300)
    parser.add_argument("--abr-games", type=int, default=1000, help="duplicate pairs")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=2029)
    parser.add_argument("--out", help="also write everything as JSON to this file")
    parser.add_argument(
        "--write-page", action="store_true", help="write the table into its results page"
    )
    args = parser.parse_args()
    agents = [a for a in args.agents.split(",") if a]
    if REFERENCE not in agents:
        parser.error(f"--agents must include {REFERENCE} (the reference column)")
    if min(args.pairs, args.abr_simulations, args.abr_games, args.workers) < 1:
        parser.error("--pairs, --abr-simulations, --abr-games and --workers must be positive")
    if args.out and not pathlib.Path(args.out).parent.is_dir():
        parser.error(f"--out: the folder {pathlib.Path(args.out).parent} does not exist")
    if args.write_page:
        check_section(*SECTION)

    started = time.perf_counter()
    result = tournament(agents, args.pairs, seed=args.seed, workers=args.workers, progress=True)
    print(f"round robin: {time.perf_counter() - started:.0f} s", flush=True)
    if result.get("interrupted"):
        raise SystemExit("interrupted during the round robin: nothing written")
    versus = reference_scores(result, REFERENCE)
    rows = []
    for rating in result["ratings"]:
        agent = rating["agent"]
        begun = time.perf_counter()
        abr = search_abr(agent, args.abr_simulations, args.abr_games, args.workers, args.seed)
        print(f"ABR of {agent}: {abr.get('abr_score', '-')} ({time.perf_counter() - begun:.0f} s)")
        rows.append(
            {
                "agent": agent,
                "elo": rating["elo"],
                "elo_ci": list(rating["ci"]),
                "vs_reference": versus.get(agent),
                "abr": abr,
            }
        )
    note = f"`br:{args.abr_simulations}`, against saved policies with heuristic playouts"
    table = markdown(rows, args, note)
    print(table)
    print(f"total {time.perf_counter() - started:.0f} s")
    if args.out:
        data = {"rows": rows, "tournament": result}
        pathlib.Path(args.out).write_text(json.dumps(data, indent=2))
    if args.write_page:
        write_section(*SECTION, table)


if __name__ == "__main__":
    main()
