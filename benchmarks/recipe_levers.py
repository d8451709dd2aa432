"""Which lever buys strength per CPU-hour: a training recipe's variants, each run once
and scored against ``ismcts:1000`` generation by generation.

Each variant is the base config (``--config``, ``default`` by default: ``make
train``'s recipe) with some ``--set`` overrides, for example playout-cap
randomisation, exploiters in the loop or Gumbel root selection. Every variant
trains in its own run folder under ``--runs`` (an interrupted benchmark resumes
each run where it stopped, and scores only what no earlier run of it scored:
``scores.json``), then every generation's raw policy (no search) plays ``--pairs``
duplicate pairs against ``ismcts:1000`` on deals from ``--seed``, a seed that
chose nothing, and the final one ``--final-pairs``. A run's cost is the CPU time
of its training processes (theirs and their workers', summed over resumptions
in ``cpu.json``), shared among its generations in proportion to their wall
time: the curve is score against CPU-hours, which other work on the machine
does not inflate as it does wall time. The cost includes each generation's
scoring against the config's ``eval_opponents`` and the final arena (the same
for every variant) and, for exploiters, their before and after matches. Beside
the scores, each variant's labels say what its searches taught: how sharp the
policy targets are and how well the value labels foretell the outcomes.

    python benchmarks/recipe_levers.py [--variant NAME=KEY=VALUE;KEY=VALUE ...]
        [--runs runs/levers] [--pairs 200] [--final-pairs 1000] [--write-page]

With ``--write-page`` the table and the curve go to docs/results/levers.md: the
variants measured now replace their rows, and the rows of variants the page holds
and this run did not measure stay, so one new variant can be added without
training the others again. The page's rows must come from the same base config,
pairs and deals; the script refuses to mix them otherwise.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pathlib
import resource
import subprocess
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _results_page import check_section, read_section, write_section  # noqa: E402

from jekyll_hyde_arena import evaluate  # noqa: E402
from jekyll_hyde_train.common.config import load_config, read_algorithm  # noqa: E402
from jekyll_hyde_train.common.config_checks import ConfigError  # noqa: E402
from jekyll_hyde_train.common.files import (  # noqa: E402
    FileFormatError,
    atomic_write_text,
    folder_slug,
)
from jekyll_hyde_train.expert_iteration.config import EITrainConfig  # noqa: E402
from jekyll_hyde_train.expert_iteration.distill import DATA_FOLDER, read_shard  # noqa: E402
from jekyll_hyde_train.expert_iteration.report import METRICS  # noqa: E402

SECTION = ("levers.md", "levers", "benchmarks/recipe_levers.py")
REFERENCE = "ismcts:1000"
VARIANT_HEADER = "| variant | overrides |"  # the table of variants
CURVE_HEADER = "| variant | generation |"  # the curve, a row per generation
DEFAULT_VARIANTS = [
    "today=",
    "playout cap=expert_iteration.full_search_share=0.3;expert_iteration.fast_simulations=64;"
    "expert_iteration.games=6000",
    "exploiters=expert_iteration.exploiters=[3, 4];expert_iteration.exploiter_steps=300000;"
    "expert_iteration.exploiter_games=600",
    "gumbel=expert_iteration.gumbel_actions=16;expert_iteration.simulations=100",
]


def parse_variant(text: str) -> tuple[str, list[str]]:
    """``NAME=KEY=VALUE;KEY=VALUE`` as the name and its ``--set`` overrides."""
    name, sep, overrides = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(
            f"--variant {text!r}: expected NAME=KEY=VALUE;KEY=VALUE (or NAME= for the config)"
        )
    if "|" in name:
        raise argparse.ArgumentTypeError(
            f"--variant {text!r}: a name may not hold '|', which separates the page's cells"
        )
    return name.strip(), [item.strip() for item in overrides.split(";") if item.strip()]


def folder_name(name: str) -> str:
    return folder_slug(name.lower())


def _children_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def train(config: str, overrides: list[str], run: pathlib.Path) -> float:
    """Train the variant into ``run`` (or resume it) with the project's command;
    returns the CPU seconds its training has taken in all (``cpu.json``)."""
    command = [sys.executable, "-m", "jekyll_hyde_app.cli", "train"]
    if (run / "config.yaml").exists():
        wanted = load_config(config, overrides, schema=EITrainConfig)
        saved = load_config(run / "config.yaml", schema=EITrainConfig)
        if (saved.expert_iteration, saved.run.seed) != (wanted.expert_iteration, wanted.run.seed):
            raise SystemExit(
                f"error: {run} holds a run of other settings than this variant's; "
                "remove it, or choose another --runs"
            )
        command += ["--resume", str(run)]
    else:
        command += ["--config", config, "--run-dir", str(run)]
        for item in overrides:
            command += ["--set", item]
    spent = run / "cpu.json"
    before = _children_cpu_seconds()
    try:
        subprocess.run(command, check=True)
    except subprocess.CalledProcessError as error:
        raise SystemExit(
            f"error: training {run} stopped (exit {error.returncode}); rerun to continue it"
        ) from None
    finally:
        total = (json.loads(spent.read_text())["seconds"] if spent.exists() else 0.0) + (
            _children_cpu_seconds() - before
        )
        if run.is_dir():
            spent.write_text(json.dumps({"seconds": total}))
    return total


def generations(run: pathlib.Path, cpu_seconds: float) -> list[dict]:
    """Each finished generation: its number, its policy and the CPU-hours spent when
    it was done (the run's CPU time shared in proportion to the wall time)."""
    rows = METRICS.read(run)
    if not rows:
        raise SystemExit(f"error: {run} finished no generation")
    last = float(rows[-1]["wall_time"])
    return [
        {
            "generation": int(row["generation"]),
            "policy": run / f"generation_{int(row['generation']):02d}" / "policy",
            "cpu_hours": cpu_seconds * float(row["wall_time"]) / last / 3600,
            "exploiter_before": row.get("exploiter_before") or None,
            "exploiter_after": row.get("exploiter_after") or None,
        }
        for row in rows
    ]


def label_statistics(run: pathlib.Path) -> dict:
    """What the searches taught, over the labels of every searched generation (1 on;
    generation 0's teacher is plain ISMCTS, the same for every variant), on the
    decisions with a choice: the mean share of the policy target's top action, its
    mean entropy as a share of the uniform target's (1: uniform), and how well the
    search's value labels foretell the outcomes (their correlation)."""
    top, entropy, values, outcomes = [], [], [], []
    for shard in sorted(run.glob(f"generation_*/{DATA_FOLDER}/shard_*.npz")):
        if shard.parts[-3] == "generation_00":
            continue
        labels = read_shard(shard)
        target = labels["target"].astype(np.float64)
        legal = labels["mask"].sum(axis=1)
        choice = legal > 1
        logs = np.log(np.where(target > 0, target, 1.0))
        top.append(target.max(axis=1)[choice])
        entropy.append((-(target * logs).sum(axis=1) / np.log(np.maximum(legal, 2)))[choice])
        values.append(labels["search_value"][choice])
        outcomes.append(labels["outcome"][choice])
    if not top:
        return {"top_share": None, "entropy": None, "value_outcome_correlation": None}
    values, outcomes = np.concatenate(values), np.concatenate(outcomes)
    spread = values.std() * outcomes.std()
    return {
        "top_share": float(np.concatenate(top).mean()),
        "entropy": float(np.concatenate(entropy).mean()),
        "value_outcome_correlation": (
            float(np.corrcoef(values, outcomes)[0, 1]) if spread > 0 else None
        ),
    }


SCORES_FILE = "scores.json"
"""A run's scores already measured: a benchmark run again (say with a new variant)
scores only what changed. Keyed by the policy's files (weights and metadata), the
reference, pairs and seed, so a policy trained anew is scored anew."""


def score(policy: pathlib.Path, pairs: int, seed: int, workers: int) -> dict:
    """The raw policy against ``REFERENCE`` over ``pairs`` duplicate pairs, from the
    run's ``scores.json`` when this measurement was made before."""
    weights = hashlib.sha256(
        (policy / "policy.npz").read_bytes() + (policy / "policy.json").read_bytes()
    ).hexdigest()  # the weights and how they are read
    key = f"{policy.parent.name}|{REFERENCE}|{pairs}|{seed}"  # generation_NN/policy
    cache = policy.parents[1] / SCORES_FILE
    scores = json.loads(cache.read_text()) if cache.exists() else {}
    known = scores.get(key)
    if known is not None and known.get("weights") == weights:
        return {name: known[name] for name in ("score", "ci", "pairs")}
    report = evaluate(str(policy), REFERENCE, pairs, seed=seed, workers=workers)
    result = {"score": report.score, "ci": list(report.score_ci), "pairs": pairs}
    scores[key] = {**result, "weights": weights}
    atomic_write_text(cache, json.dumps(scores, indent=2))
    return result


def markdown(results: dict, args: argparse.Namespace) -> str:
    lines = [
        VARIANT_HEADER + f" CPU-hours | final raw policy vs `{REFERENCE}` | "
        "policy targets: top share / entropy | value labels: correlation with the outcome | "
        "exploiters before / after the fit |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, result in results.items():
        final = result["final"]
        lo, hi = final["ci"]
        exploited = [
            f"gen {g['generation']}: {float(g['exploiter_before']):.3f} / "
            f"{float(g['exploiter_after']):.3f}"
            for g in result["generations"]
            if g["exploiter_before"] is not None
        ]
        overrides = "<br>".join(f"`{o}`" for o in result["overrides"]) or "(the config)"
        labels = result["labels"]
        targets = (
            f"{labels['top_share']:.2f} / {labels['entropy']:.2f}"
            if labels["top_share"] is not None
            else "-"
        )
        correlation = labels["value_outcome_correlation"]
        lines.append(
            f"| {name} | {overrides} | {result['cpu_hours']:.2f} | "
            f"**{final['score']:.3f}** [{lo:.3f}, {hi:.3f}] | {targets} | "
            f"{'-' if correlation is None else f'{correlation:.2f}'} | "
            f"{'; '.join(exploited) or '-'} |"
        )
    lines += ["", settings_note(args)]
    lines += [
        "",
        "The curve: each generation's raw policy against "
        f"`{REFERENCE}` by the CPU-hours its run had spent when it was done.",
        "",
        CURVE_HEADER + " CPU-hours | score | 95% CI | pairs |",
        "|---|---|---|---|---|---|",
    ]
    for name, result in results.items():
        for g in result["generations"]:
            lo, hi = g["ci"]
            lines.append(
                f"| {name} | {g['generation']} | {g['cpu_hours']:.2f} | {g['score']:.3f} "
                f"| [{lo:.3f}, {hi:.3f}] | {g['pairs']} |"
            )
    return "\n".join(lines)


def settings_note(args: argparse.Namespace) -> str:
    """The paragraph under the table: what every row was measured with."""
    return (
        f"Base config `{args.config}`; every variant trained once on 2 cores (CPU-hours: "
        "the CPU time of the training processes and their workers, each generation's scoring "
        "and the final arena included). Raw policy: the network "
        "alone, no search. The final "
        f"policy plays {args.final_pairs:,} duplicate pairs and each generation {args.pairs} "
        f"(the curve) against `{REFERENCE}` on deals from seed {args.seed}; 95% intervals. "
        "Policy targets and value labels: what the searches of generations 1 on taught, "
        "over the decisions with a choice: the mean share of a target's top action, its "
        "mean entropy as a share of the uniform target's (1 is uniform), and the "
        "correlation of the search's value labels with the games' outcomes. "
        "Exploiters: the responders' score against the network before its generation's fit "
        "and against the network it produced. Written by `python "
        "benchmarks/recipe_levers.py --write-page`."
    )


def _table_span(lines: list[str], header: str) -> tuple[int, int]:
    """The first and past-the-last line index of the rows under the table ``header``."""
    top = next((i for i, line in enumerate(lines) if line.startswith(header)), None)
    if top is None:
        raise SystemExit(f"error: the levers page has no table starting {header!r}")
    end = top + 2  # past the header and its separator
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return top + 2, end


def _by_variant(rows: list[str]) -> dict[str, list[str]]:
    """A table's rows grouped by their first cell, the variant, in order."""
    groups: dict[str, list[str]] = {}
    for row in rows:
        groups.setdefault(row.split("|")[1].strip(), []).append(row)
    return groups


def merge_with_page(table: str, page: str) -> str:
    """``table`` (this run's variants) with the rows of the variants ``page`` holds and
    this run did not measure: the page's order first, then the new variants."""
    if not page.startswith(VARIANT_HEADER):  # the page holds no measurement yet
        return table
    note = next(line for line in table.splitlines() if line.startswith("Base config"))
    if note not in page.splitlines():
        raise SystemExit(
            "error: the levers page's rows were measured with other settings than this "
            "run's (the paragraph under its table differs); measure every variant again, "
            "or use the page's --config, --pairs, --final-pairs and --seed"
        )
    new, old = table.splitlines(), page.splitlines()
    for header in (CURVE_HEADER, VARIANT_HEADER):  # the later table first: spans stay valid
        (new_top, new_end), (old_top, old_end) = _table_span(new, header), _table_span(old, header)
        # a dict union keeps the page's order, takes this run's rows for a variant
        # both hold, and puts the variants new to the page last
        merged = _by_variant(old[old_top:old_end]) | _by_variant(new[new_top:new_end])
        new[new_top:new_end] = [row for rows in merged.values() for row in rows]
    return "\n".join(new)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="default", help="the base config")
    parser.add_argument(
        "--variant",
        action="append",
        type=parse_variant,
        help="NAME=KEY=VALUE;KEY=VALUE (repeatable; default: today, playout cap, exploiters, "
        "gumbel)",
    )
    parser.add_argument("--runs", default="runs/levers", help="the folder of the runs")
    parser.add_argument("--pairs", type=int, default=200, help="pairs per generation")
    parser.add_argument("--final-pairs", type=int, default=1000, help="pairs for the last one")
    parser.add_argument("--seed", type=int, default=2063)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--write-page", action="store_true")
    args = parser.parse_args()
    variants = args.variant or [parse_variant(v) for v in DEFAULT_VARIANTS]
    if min(args.pairs, args.final_pairs, args.workers) < 1:
        parser.error("--pairs, --final-pairs and --workers must be positive")
    if len({folder_name(name) for name, _ in variants}) != len(variants):
        parser.error("two variants have the same name")
    try:
        if read_algorithm(args.config) != "expert_iteration":
            parser.error(f"--config {args.config} is not an expert-iteration config")
        for _, overrides in variants:
            load_config(args.config, overrides, schema=EITrainConfig)
    except (ConfigError, FileFormatError) as error:
        parser.error(str(error))
    if args.write_page:
        check_section(*SECTION)
    runs = pathlib.Path(args.runs)
    runs.mkdir(parents=True, exist_ok=True)
    results: dict[str, dict] = {}
    for name, overrides in variants:
        run = runs / folder_name(name)
        started = time.perf_counter()
        cpu = train(args.config, overrides, run)
        print(f"{name}: trained ({time.perf_counter() - started:.0f} s this time)", flush=True)
        done = generations(run, cpu)
        for row in done[:-1]:
            row.update(score(row["policy"], args.pairs, args.seed, args.workers))
        final = score(done[-1]["policy"], args.final_pairs, args.seed, args.workers)
        done[-1].update(final)
        results[name] = {
            "overrides": overrides,
            "cpu_hours": done[-1]["cpu_hours"],
            "final": final,
            "labels": label_statistics(run),
            "generations": [{**g, "policy": str(g["policy"])} for g in done],
        }
        print(f"{name}: {json.dumps(results[name]['final'])}", flush=True)
    (runs / "levers.json").write_text(json.dumps(results, indent=2))
    table = markdown(results, args)
    print(table)
    if args.write_page:
        write_section(*SECTION, merge_with_page(table, read_section(*SECTION)))


if __name__ == "__main__":
    main()
