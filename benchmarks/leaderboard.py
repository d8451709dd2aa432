"""The leaderboard: every baseline and the shipped policy, by Elo, against ismcts:1000 and by ABR.

For the agents below (``--agents`` to change them) it measures, in one run:

1. **Elo**: a round robin of duplicate pairs (``--pairs`` a pairing), rated
   by Bradley-Terry on the Elo scale with bootstrap 95% intervals
   (``jekyll_hyde_arena.tournament``, as ``jekyll-hyde tournament``).
2. **Score against ``ismcts:1000``**: from the same round robin, with its interval.
3. **ABR score**: how beatable the agent is, by ``jekyll-hyde exploit``'s two
   responders: the RL responder (``--rl-steps`` training steps a seat, then
   ``--rl-games`` games a seat) and the search responder (ISMCTS-BR, ``br:N``
   with ``--abr-simulations``, ``--abr-games`` duplicate pairs). Each seat
   counts the stronger of the two, named with its budget; the score is the
   mean over the seats, with a 95% interval (0.5 is what an equilibrium
   concedes). A score below 0.5 means the responders are weaker against the
   agent than it is against itself: the cell says they failed, never that the
   agent is hard to exploit. The RL responder is left out, with the reason,
   where the agent plays too slowly for its budget (more than
   ``--rl-max-hours`` of the agent's own decisions, measured); the search
   responder cannot model a search (``ismcts``, ``az``) inside its own.

The exploit runs are kept in ``--runs`` (one folder an agent), so the responders
of an interrupted leaderboard continue where they stopped; the round robin and
the search responder alone (where the RL one is left out) are played again.

With ``--write-page`` the table replaces the ``leaderboard`` section of
docs/results/leaderboard.md. Deals come from ``--seed`` (default 2029), a seed
that chose nothing.

    python benchmarks/leaderboard.py [--pairs 200] [--rl-steps 3000000] [--write-page]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pathlib
import sys
import tempfile
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _results_page import check_section, write_section  # noqa: E402

from jekyll_hyde_agents import make_agent  # noqa: E402
from jekyll_hyde_arena import tournament  # noqa: E402
from jekyll_hyde_env.engine import legal_actions, new_game, player_view  # noqa: E402
from jekyll_hyde_env.engine.rules import apply_action, is_terminal  # noqa: E402
from jekyll_hyde_train.common.config_checks import ConfigError  # noqa: E402
from jekyll_hyde_train.common.files import FileFormatError  # noqa: E402
from jekyll_hyde_train.exploit.config import ExploitConfig  # noqa: E402
from jekyll_hyde_train.exploit.report import FAILED_BELOW, abr_summary, failed  # noqa: E402
from jekyll_hyde_train.exploit.run import run, run_folder_name  # noqa: E402
from jekyll_hyde_train.exploit.search import SearchSeat, run_search_responder  # noqa: E402

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


def seconds_a_decision(agent: str, decisions: int = 40) -> float:
    """The agent's mean time for a decision, over positions of games it plays itself."""
    player = make_agent(agent, seed=0)
    rng = np.random.default_rng(0)
    spent, made = 0.0, 0
    while made < decisions:
        state = new_game(rng)
        while not is_terminal(state) and made < decisions:
            legal = legal_actions(state)
            view = player_view(state, state.to_act)
            begun = time.perf_counter()
            action = player.act(view, legal)
            spent += time.perf_counter() - begun
            made += 1
            apply_action(state, action)
    return spent / made


def rl_left_out(agent: str, steps: int, max_hours: float) -> str | None:
    """Why the RL responder cannot meet ``agent`` within ``max_hours``, or None: its
    training makes the agent play about one decision per responder step, per seat."""
    per_decision = seconds_a_decision(agent)
    hours = 2 * steps * per_decision / 3600
    if hours <= max_hours:
        return None
    return (
        f"RL responder not run: {agent} takes {per_decision * 1000:.1f} ms a decision, so "
        f"{steps:,} training steps a seat would take about {hours:.0f} h of its play "
        f"(over --rl-max-hours {max_hours:g})"
    )


def abr(agent: str, args: argparse.Namespace, runs: pathlib.Path) -> dict:
    """Both responders against ``agent`` (``jekyll-hyde exploit``), or the search
    responder alone when the RL responder is left out; the stronger per seat counts."""
    reason = rl_left_out(agent, args.rl_steps, args.rl_max_hours)
    if reason is not None:
        search = search_abr(agent, args.abr_simulations, args.abr_games, args.workers, args.seed)
        if not search.get("agent"):
            return {"agent": None, "reason": f"{reason}; {search['reason']}"}
        return {**search, "rl_left_out": reason, "failed": failed(search["abr_score"])}
    config = ExploitConfig()
    config.run.seed = args.seed
    config.responder.steps = args.rl_steps
    config.responder.curve_every = min(config.responder.curve_every, args.rl_steps)
    config.evaluation.games = args.rl_games
    config.evaluation.seed = args.seed
    config.search.simulations = args.abr_simulations
    config.search.games = args.abr_games
    config.search.workers = args.workers
    config.check()
    name = f"{run_folder_name(agent)}-{hashlib.sha1(agent.encode()).hexdigest()[:8]}"
    return {"agent": "exploit", **run(agent, config, runs / name)}


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


def abr_cells(result: dict, args: argparse.Namespace) -> tuple[str, str]:
    """The ABR cell (stronger responder per seat, or failed, or why not measured) and
    the cell of each responder alone with its budget."""
    if not result.get("agent"):
        return f"not measured: {result['reason']}", "-"
    search_name = f"`br:{args.abr_simulations}`"
    if result["agent"] != "exploit":  # the search responder alone
        lo, hi = result["abr_ci"]
        alone = f"search {result['abr_score']:.3f} ({search_name})"
        score = f"{result['abr_score']:.3f} [{lo:.3f}, {hi:.3f}], search in both seats"
        left_out = "; " + result["rl_left_out"]
        if result["failed"]:
            return f"**failed**: {score} is below {FAILED_BELOW}{left_out}", alone + ", failed"
        return f"**{score}**{left_out}", alone
    lo, hi = result["abr_ci"]
    counted = ", ".join(
        f"{row['responder'].replace('rl', 'RL')} as {seat.capitalize()}"
        for seat, row in result["seats"].items()
    )
    score = f"{result['abr_score']:.3f} [{lo:.3f}, {hi:.3f}] ({counted})"
    parts = [
        f"RL {result['rl_abr_score']:.3f} ({args.rl_steps:,} steps a seat"
        + (", failed)" if result["rl_failed"] else ")")
    ]
    if "search_abr_score" in result:
        parts.append(
            f"search {result['search_abr_score']:.3f} ({search_name}"
            + (", failed)" if result["search_failed"] else ")")
        )
    else:
        parts.append(f"search not run: {result['search_left_out']}")
    cell = f"**failed**: {score} is below {FAILED_BELOW}" if result["failed"] else f"**{score}**"
    return cell, "; ".join(parts)


def markdown(rows: list[dict], args: argparse.Namespace) -> str:
    lines = [
        f"| agent | Elo (Bradley-Terry) | vs `{REFERENCE}` | ABR score (stronger responder per "
        "seat) | each responder alone |",
        "|---|---|---|---|---|",
    ]
    for row in rows:
        lo, hi = row["elo_ci"]
        if row["agent"] == REFERENCE:
            versus = "-"
        else:
            score, (slo, shi) = row["vs_reference"]
            versus = f"{score:.3f} [{slo:.3f}, {shi:.3f}]"
        cell, alone = abr_cells(row["abr"], args)
        lines.append(
            f"| `{row['agent']}` | {row['elo']:.0f} [{lo:.0f}, {hi:.0f}] | {versus} | {cell} "
            f"| {alone} |"
        )
    lines += [
        "",
        f"Round robin of {args.pairs} duplicate pairs a pairing on deals from seed "
        f"{args.seed} (Elo: 95% bootstrap intervals). ABR score: the mean over the two seats "
        "of the stronger responder's win rate, each seat naming which: the RL responder "
        f"(`jekyll-hyde exploit`'s, {args.rl_steps:,} training steps a seat from the "
        f"champion's network, then {args.rl_games:,} games a seat) or the search responder "
        f"(`br:{args.abr_simulations}`, {args.abr_games:,} duplicate pairs, heuristic "
        "playouts against saved policies). 0.5 is what an equilibrium concedes; a higher "
        f"score means a more beatable agent, and responders below {FAILED_BELOW} failed "
        "(they bound nothing). Written by `python benchmarks/leaderboard.py --write-page`.",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", default=",".join(AGENTS), help="comma-separated agent names")
    parser.add_argument("--pairs", type=int, default=200, help="duplicate pairs a pairing")
    parser.add_argument("--abr-simulations", type=int, default=300)
    parser.add_argument("--abr-games", type=int, default=1000, help="duplicate pairs")
    default = ExploitConfig()
    parser.add_argument(
        "--rl-steps", type=int, default=default.responder.steps,
        help="the RL responder's training steps a seat (default: jekyll-hyde exploit's)",
    )  # fmt: skip
    parser.add_argument("--rl-games", type=int, default=default.evaluation.games)
    parser.add_argument(
        "--rl-max-hours", type=float, default=1.0,
        help="leave the RL responder out where the agent's own play would take longer",
    )  # fmt: skip
    parser.add_argument("--runs", default="runs/leaderboard", help="the exploit runs' folder")
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
    if min(args.pairs, args.abr_simulations, args.abr_games, args.workers, args.rl_steps) < 1:
        parser.error(
            "--pairs, --abr-simulations, --abr-games, --rl-steps and --workers must be positive"
        )
    if args.rl_games < 1 or not args.rl_max_hours > 0:
        parser.error("--rl-games and --rl-max-hours must be positive")
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
        try:
            measured = abr(agent, args, pathlib.Path(args.runs))
        except (ConfigError, FileFormatError) as error:  # a start that does not fit, say
            raise SystemExit(f"error: {error}") from None
        except FileExistsError:  # a run of this agent with other settings
            raise SystemExit(
                f"error: {args.runs} holds an exploit run of {agent} with other settings; "
                "give the same --rl-*, --abr-* and --seed as before, or another --runs"
            ) from None
        print(
            f"ABR of {agent}: {measured.get('abr_score', '-')} "
            f"({time.perf_counter() - begun:.0f} s)",
            flush=True,
        )
        rows.append(
            {
                "agent": agent,
                "elo": rating["elo"],
                "elo_ci": list(rating["ci"]),
                "vs_reference": versus.get(agent),
                "abr": measured,
            }
        )
    table = markdown(rows, args)
    print(table)
    print(f"total {time.perf_counter() - started:.0f} s")
    if args.out:
        data = {"rows": rows, "tournament": result}
        pathlib.Path(args.out).write_text(json.dumps(data, indent=2))
    if args.write_page:
        write_section(*SECTION, table)


if __name__ == "__main__":
    main()
