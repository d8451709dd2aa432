"""How loose is ABR? ``jekyll-hyde exploit``'s score beside the exact score, on a small variant.

For each target strategy, ``jekyll-hyde exploit`` (the RL and the search responders,
``--variant``) runs with ``--seeds`` responder seeds, and the exact best response
(``jekyll_hyde_train.exact``) scores the same target on the whole tree. The table gives,
per target, the exact score, the ABR score of each responder seed, their maximum and
their spread, and how far the maximum falls short of the exact score: ABR is a lower
bound, and this is how loose it is at the budget used.

The targets, of different strength: uniform random play; the equilibrium of
``benchmarks/exact_variants.py`` (``runs/exact/<variant>``); that equilibrium in one
seat with random play in the other, both ways; and policies trained on the variant,
one by expert iteration and one by PPO (their ``smoke`` configs with ``--variant``,
trained into ``--runs`` when absent). Every run folder is kept, so an interrupted
calibration continues where it stopped (``exploit`` resumes a seat from its files).

Calibrating at several ``--steps`` shows how the looseness shrinks as the responders
train longer. The run folders are ``RUNS/exploit/VARIANT/STEPS-steps/TARGET-PIN-SEED``,
``PIN`` the start of the sha256 of the target's files (``pin``): a target whose files
change (a policy trained again, an equilibrium solved again) gets new runs, not the
old ones beside a new exact score.

It writes the calibration into ``docs/results/abr_calibration.json`` (keyed by variant,
then by steps per seat; the others are kept) and the ``abr`` section of
``docs/results/exact.md``, a table per variant and budget. Each table says what its
budget of steps is in games, beside the full game's default budget
(``decisions_per_game``): the budget scaled from the full game to the variant.

    python benchmarks/abr_calibration.py [--variant tiny] [--seeds 3] [--steps 30000] [--jobs 1]
    python benchmarks/abr_calibration.py --page-only   # the page again, from the data
"""

from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import itertools
import json
import os
import pathlib
import re
import statistics

import numpy as np
from _results_page import RESULTS, check_section, write_section

from jekyll_hyde_agents.sources import load_agent
from jekyll_hyde_app.cli import main as cli
from jekyll_hyde_env.engine import apply_action, is_terminal, legal_actions, new_game
from jekyll_hyde_env.engine.variant import FULL, Variant, parse_variant
from jekyll_hyde_train.common.files import atomic_write_text
from jekyll_hyde_train.exact.solve import exact_exploit
from jekyll_hyde_train.exact.table import InfosetTable
from jekyll_hyde_train.exact.tree import build_tree
from jekyll_hyde_train.exploit.config import load_exploit_config
from jekyll_hyde_train.exploit.run import files_sha256
from jekyll_hyde_train.exploit.run import run as run_exploit

PAGE = "exact.md"
SCRIPT = "benchmarks/abr_calibration.py"
DATA = RESULTS / "abr_calibration.json"


def trained(kind: str, variant: str, runs: pathlib.Path) -> str:
    """A policy trained on the variant by ``kind`` (expert iteration or PPO, smoke size)."""
    folder = runs / f"{kind}-{variant}"
    if not (folder / "policy" / "policy.json").is_file():
        config = "smoke" if kind == "ei" else "ppo_smoke"
        status = cli(["train", "--config", config, "--run-dir", str(folder), "--variant", variant])
        if status != 0:
            raise SystemExit(f"training {kind} on {variant} failed ({status})")
    return str(folder)


def targets(variant: str, runs: pathlib.Path, exact_runs: pathlib.Path) -> dict[str, str]:
    """The targets by label, as agent specs."""
    equilibrium = exact_runs / parse_variant(variant).name
    if not (equilibrium / "tabular.npz").is_file():
        raise SystemExit(f"{equilibrium} holds no equilibrium: run benchmarks/exact_variants.py")
    return {
        "random": "random",
        "equilibrium": str(equilibrium),
        "jekyll=equilibrium,hyde=random": f"jekyll={equilibrium},hyde=random",
        "jekyll=random,hyde=equilibrium": f"jekyll=random,hyde={equilibrium}",
        "expert iteration (smoke)": trained("ei", variant, runs),
        "PPO (smoke)": trained("ppo", variant, runs),
    }


def _exact_scores(game, specs: dict[str, str]) -> dict[str, float]:
    """Each target's exact score, on one tree (several GB on ``small``; run in a process
    of its own, so that the memory is returned when it is done)."""
    tree = build_tree(game)
    table = InfosetTable.build(tree)
    return {
        label: exact_exploit(load_agent(spec), game, tree, table).score
        for label, spec in specs.items()
    }


def calibrate(
    variant: str,
    seeds: int,
    steps: int,
    runs: pathlib.Path,
    exact_runs: pathlib.Path,
    jobs: int = 1,
) -> dict:
    """Every target's exact score and its ABR score for each responder seed.

    The exact scores are computed in a process of their own beside the responders (or
    read back from ``RUNS/exact-VARIANT.json`` when every target's files are unchanged);
    ``jobs`` exploit runs go at once, each with an equal share of the cores for torch.
    """
    game = parse_variant(variant)
    specs = targets(variant, runs, exact_runs)
    cache = runs / f"exact-{game.name}.json"
    pinned = {label: pin(spec) for label, spec in specs.items()}
    threads = max(1, (os.cpu_count() or 1) // jobs)
    runs_by_label: dict[str, list[concurrent.futures.Future]] = {}
    with (
        concurrent.futures.ProcessPoolExecutor(1) as exact_pool,
        concurrent.futures.ProcessPoolExecutor(jobs) as pool,
    ):
        known = json.loads(cache.read_text()) if cache.is_file() else {}
        stale = known.get("pins") != pinned
        exact_future = exact_pool.submit(_exact_scores, game, specs) if stale else None
        for label, spec in specs.items():
            slug = label.replace("=", "-").replace(" ", "_")
            runs_by_label[label] = [
                pool.submit(
                    _abr_run,
                    spec,
                    [
                        f"run.variant={game.name}",
                        f"run.seed={seed}",
                        f"run.threads={threads}",
                        f"responder.steps={steps}",
                        f"responder.curve_every={max(steps // 4, 1)}",
                        "responder.init=null",
                        "search.workers=1",
                    ],
                    runs
                    / "exploit"
                    / game.name
                    / f"{steps}-steps"
                    / f"{slug}-{pinned[label][:8]}-{seed}",
                )
                for seed in range(seeds)
            ]
        if exact_future is not None:
            known = {"pins": pinned, "scores": exact_future.result()}
            atomic_write_text(cache, json.dumps(known, indent=2) + "\n")
        exact = known["scores"]
        rows = {}
        for label, futures in runs_by_label.items():
            done = [future.result() for future in futures]
            abr = [score for score, _ in done]
            print(f"{label}: ABR {', '.join(f'{a:.4f}' for a in abr)} (exact {exact[label]:.4f})")
            rows[label] = {
                "target": specs[label],
                "exact_score": exact[label],
                "abr_scores": abr,
                "stronger_responders": [responders for _, responders in done],
                "abr_max": max(abr),
                "abr_spread": max(abr) - min(abr),
                "shortfall": exact[label] - max(abr),
            }
    return {"variant": game.name, "seeds": seeds, "steps_per_seat": steps, "targets": rows}


def pin(spec: str) -> str:
    """The sha256 of every saved file an agent spec names (``files_sha256`` of each part
    of the spec that is a path, in order): a target's exact score is reused only while
    this is unchanged."""
    digest = hashlib.sha256(spec.encode())
    for part in re.split("[,=]", spec):
        if pathlib.Path(part).exists():
            digest.update(files_sha256(pathlib.Path(part)).encode())
    return digest.hexdigest()


def _abr_run(
    spec: str, overrides: list[str], folder: pathlib.Path
) -> tuple[float, tuple[str, str]]:
    """One exploit run's ABR score and the stronger responder of each seat (Jekyll's,
    Hyde's: ``rl`` or ``search``), read back from its folder when already done."""
    summary = run_exploit(spec, load_exploit_config(None, overrides), folder)
    seats = summary["seats"]
    return summary["abr_score"], (seats["jekyll"]["responder"], seats["hyde"]["responder"])


def page(by_variant: dict[str, dict[str, dict]]) -> str:
    """The calibration tables, one per variant and responder budget calibrated."""
    return "\n\n".join(
        variant_table(data) for budgets in by_variant.values() for data in budgets.values()
    )


def variant_table(data: dict) -> str:
    """One variant's calibration table, with its budget."""
    scale = data["budget_scale"]
    games = data["steps_per_seat"] / scale["decisions_per_game"]
    full_games = scale["full_default_steps"] / scale["full_decisions_per_game"]
    lines = [
        f"ABR on `{data['variant']}`: `jekyll-hyde exploit --variant {data['variant']}` with "
        f"{data['steps_per_seat']:,} responder steps per seat (random initial weights) and "
        f"{data['seeds']} responder seeds per target, beside the exact score. A seat "
        f"decides {scale['decisions_per_game']:.1f} times a game here and "
        f"{scale['full_decisions_per_game']:.1f} times in the full game (random play), so "
        f"this budget is about {about(games):,} games, where the full game's default of "
        f"{scale['full_default_steps']:,} steps is about {about(full_games):,}.",
        "",
        "| target | exact score | ABR per seed | ABR max | spread | exact minus ABR max "
        "| stronger responder (Jekyll, Hyde) |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, row in data["targets"].items():
        seeds = ", ".join(f"{score:.3f}" for score in row["abr_scores"])
        lines.append(
            f"| {label} | {row['exact_score']:.3f} | {seeds} | {row['abr_max']:.3f} | "
            f"{row['abr_spread']:.3f} | {row['shortfall']:+.3f} | "
            f"{stronger(row['stronger_responders'])} |"
        )
    rows = list(data["targets"].values())
    shortfalls = sorted(row["shortfall"] for row in rows)
    same, pairs = order_agreement(rows)
    lines += [
        "",
        f"At this budget the seeds' maximum falls short of the exact score by "
        f"{shortfalls[0]:+.3f} to {shortfalls[-1]:+.3f} (median "
        f"{statistics.median(shortfalls):+.3f}), and it orders the targets as the exact "
        f"scores do in {same} of {pairs} pairs.",
    ]
    return "\n".join(lines)


def decisions_per_game(variant: Variant, games: int = 2000, seed: int = 0) -> float:
    """How many times a seat decides in a game of ``variant``, on average over both seats
    and ``games`` games of uniform random play: what scales a budget of responder steps
    (decisions) from one variant to another.

    Args:
        variant: the version of the game.
        games: the games played.
        seed: seeds the deals and the moves.

    Returns:
        The mean decisions per seat per game.
    """
    rng = np.random.default_rng(seed)
    decisions = 0
    for _ in range(games):
        state = new_game(rng, variant=variant)
        while not is_terminal(state):
            apply_action(state, int(rng.choice(legal_actions(state))))
            decisions += 1
    return decisions / (2 * games)


def about(x: float) -> int:
    """``x`` rounded to two significant digits (9,265 is about 9,300)."""
    return int(round(x, 2 - len(str(int(x)))))


def stronger(per_seed: list[list[str]]) -> str:
    """The stronger responder of each seat, ``RL`` or ``search``: once when every seed
    agrees, else per seed."""
    names = [", ".join("RL" if r == "rl" else r for r in seats) for seats in per_seed]
    return names[0] if len(set(names)) == 1 else "; ".join(names)


def order_agreement(rows: list[dict]) -> tuple[int, int]:
    """How many pairs of targets the seeds' ABR maximum orders as the exact score does,
    of the pairs whose exact scores differ (by more than 1e-9)."""
    same = pairs = 0
    for first, second in itertools.combinations(rows, 2):
        exact = first["exact_score"] - second["exact_score"]
        if abs(exact) <= 1e-9:
            continue
        pairs += 1
        same += (first["abr_max"] - second["abr_max"]) * exact > 0
    return same, pairs


def main() -> None:
    """Calibrate, then write the data and the page's section."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", default="tiny")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=30_000)
    parser.add_argument("--runs", type=pathlib.Path, default=pathlib.Path("runs/abr-calibration"))
    parser.add_argument("--exact-runs", type=pathlib.Path, default=pathlib.Path("runs/exact"))
    parser.add_argument("--jobs", type=int, default=1, help="exploit runs at once")
    parser.add_argument(
        "--page-only", action="store_true", help="write the page from the data, running nothing"
    )
    args = parser.parse_args()
    if args.jobs < 1:
        raise SystemExit(f"--jobs must be at least 1, not {args.jobs}")
    if args.seeds < 3:
        raise SystemExit("--seeds must be at least 3: one responder seed is one noisy draw")
    check_section(PAGE, "abr", SCRIPT)
    by_variant = json.loads(DATA.read_text()) if DATA.is_file() else {}
    if not args.page_only:
        data = calibrate(
            args.variant, args.seeds, args.steps, args.runs, args.exact_runs, args.jobs
        )
        by_variant.setdefault(data["variant"], {})[str(data["steps_per_seat"])] = data
    full = {
        "full_default_steps": load_exploit_config(None, []).responder.steps,
        "full_decisions_per_game": decisions_per_game(FULL),
    }
    for variant, budgets in by_variant.items():
        scale = {"decisions_per_game": decisions_per_game(parse_variant(variant)), **full}
        for data in budgets.values():
            data["budget_scale"] = scale
    atomic_write_text(DATA, json.dumps(by_variant, indent=2) + "\n")
    write_section(PAGE, "abr", SCRIPT, page(by_variant))
    print(f"written: {DATA} and {RESULTS / PAGE}")


if __name__ == "__main__":
    main()
