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

It writes the variant's calibration into ``docs/results/abr_calibration.json`` (keyed by
variant, the others' kept) and the ``abr`` section of ``docs/results/exact.md``, a table
per variant.

    python benchmarks/abr_calibration.py [--variant tiny] [--seeds 3] [--steps 30000]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import pathlib

from _results_page import RESULTS, check_section, write_section

from jekyll_hyde_agents.sources import load_agent
from jekyll_hyde_app.cli import main as cli
from jekyll_hyde_env.engine.variant import parse_variant
from jekyll_hyde_train.common.files import atomic_write_text
from jekyll_hyde_train.exact.solve import exact_exploit
from jekyll_hyde_train.exact.table import InfosetTable
from jekyll_hyde_train.exact.tree import build_tree
from jekyll_hyde_train.exploit.config import load_exploit_config
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


def exact_scores(game, specs: dict[str, str]) -> dict[str, float]:
    """Each target's exact score, on one tree, in a process of its own: the tree (several
    GB on ``small``) is gone before the responders train."""
    with concurrent.futures.ProcessPoolExecutor(1) as pool:
        return pool.submit(_exact_scores, game, specs).result()


def _exact_scores(game, specs: dict[str, str]) -> dict[str, float]:
    tree = build_tree(game)
    table = InfosetTable.build(tree)
    return {
        label: exact_exploit(load_agent(spec), game, tree, table).score
        for label, spec in specs.items()
    }


def calibrate(
    variant: str, seeds: int, steps: int, runs: pathlib.Path, exact_runs: pathlib.Path
) -> dict:
    """Every target's exact score and its ABR score for each responder seed."""
    game = parse_variant(variant)
    specs = targets(variant, runs, exact_runs)
    exact = exact_scores(game, specs)
    rows = {}
    for label, spec in specs.items():
        abr = []
        for seed in range(seeds):
            overrides = [
                f"run.variant={game.name}",
                f"run.seed={seed}",
                f"responder.steps={steps}",
                f"responder.curve_every={max(steps // 4, 1)}",
                "responder.init=null",
                "search.workers=1",
            ]
            config = load_exploit_config(None, overrides)
            slug = label.replace("=", "-").replace(" ", "_")
            folder = runs / "exploit" / game.name / f"{slug}-{seed}"
            summary = run_exploit(spec, config, folder)
            abr.append(summary["abr_score"])
            print(
                f"{label}: seed {seed}: ABR {summary['abr_score']:.4f} (exact {exact[label]:.4f})"
            )
        rows[label] = {
            "target": spec,
            "exact_score": exact[label],
            "abr_scores": abr,
            "abr_max": max(abr),
            "abr_spread": max(abr) - min(abr),
            "shortfall": exact[label] - max(abr),
        }
    return {"variant": game.name, "seeds": seeds, "steps_per_seat": steps, "targets": rows}


def page(by_variant: dict[str, dict]) -> str:
    """The calibration tables, one per variant calibrated, each with its budget."""
    return "\n\n".join(variant_table(data) for data in by_variant.values())


def variant_table(data: dict) -> str:
    """One variant's calibration table, with its budget."""
    lines = [
        f"ABR on `{data['variant']}`: `jekyll-hyde exploit --variant {data['variant']}` with "
        f"{data['steps_per_seat']:,} responder steps per seat (random initial weights) and "
        f"{data['seeds']} responder seeds per target, beside the exact score.",
        "",
        "| target | exact score | ABR per seed | ABR max | spread | exact minus ABR max |",
        "|---|---|---|---|---|---|",
    ]
    for label, row in data["targets"].items():
        seeds = ", ".join(f"{score:.3f}" for score in row["abr_scores"])
        lines.append(
            f"| {label} | {row['exact_score']:.3f} | {seeds} | {row['abr_max']:.3f} | "
            f"{row['abr_spread']:.3f} | {row['shortfall']:+.3f} |"
        )
    return "\n".join(lines)


def main() -> None:
    """Calibrate, then write the data and the page's section."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", default="tiny")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=30_000)
    parser.add_argument("--runs", type=pathlib.Path, default=pathlib.Path("runs/abr-calibration"))
    parser.add_argument("--exact-runs", type=pathlib.Path, default=pathlib.Path("runs/exact"))
    args = parser.parse_args()
    if args.seeds < 3:
        raise SystemExit("--seeds must be at least 3: one responder seed is one noisy draw")
    check_section(PAGE, "abr", SCRIPT)
    data = calibrate(args.variant, args.seeds, args.steps, args.runs, args.exact_runs)
    by_variant = json.loads(DATA.read_text()) if DATA.is_file() else {}
    by_variant[data["variant"]] = data
    atomic_write_text(DATA, json.dumps(by_variant, indent=2) + "\n")
    write_section(PAGE, "abr", SCRIPT, page(by_variant))
    print(f"written: {DATA} and {RESULTS / PAGE}")


if __name__ == "__main__":
    main()
