"""Trained policies against the baselines, and the training throughput of their run.

Plays a run's exported policies (both roles, duplicate pairs) against the
opponents of ``configs/benchmarks/eval.yaml`` (heuristic and ismcts:1000, 1,000 pairs
each by default) and prints the table with 95% intervals, after the run's
cost: environment steps, wall time and steps/s from a PPO run's checkpoint,
or the labelled games and decisions of a distillation run (``jekyll-hyde
distill``). Targets: the default run beats heuristic; the long run
beats ismcts:1000.

    python benchmarks/training.py runs/NAME [--pairs N] [--opponents a,b] [--workers W]
"""

from __future__ import annotations

import argparse
import json
import pathlib

import yaml

from jekyll_hyde_agents.policy_file import load_policy
from jekyll_hyde_arena import evaluate

ROOT = pathlib.Path(__file__).resolve().parents[1]


def describe_run(run: pathlib.Path) -> dict:
    """Print and return what the run cost.

    A PPO run gives its checkpoint's state, a distillation its fit; a policy
    folder alone (an ensemble, say) gives how its policy was trained.
    """
    checkpoint = run / "checkpoint" / "state.json"
    if checkpoint.exists():
        state = json.loads(checkpoint.read_text())
        steps, seconds = state["steps"], state["wall_time"]
        print(
            f"run {run}: {steps:,} environment steps in {seconds:.0f} s of training "
            f"({steps / max(seconds, 1e-9):,.0f} steps/s)"
        )
        return state
    if not (run / "fit.json").exists():
        metadata, _ = load_policy(run)
        training = metadata.get("training", {})
        members = training.get("members", [])
        print(
            f"policy {run}: {training.get('method', 'unknown method')}"
            + "".join(
                f"\n  member {m['path']}: {m['hidden']}, {m.get('decisions', 0):,} decisions "
                f"of {m.get('games', 0):,} games of {m.get('teacher', '?')}"
                for m in members
            )
        )
        return metadata
    fitted = json.loads((run / "fit.json").read_text())
    fitted.pop("history")
    print(
        f"run {run}: distilled from {fitted['settings']['teacher']}: {fitted['decisions']:,} "
        f"decisions of {fitted['games']:,} games, fit in {fitted['seconds']:.0f} s"
    )
    return fitted


def main() -> None:
    settings = yaml.safe_load((ROOT / "configs" / "benchmarks" / "eval.yaml").read_text())
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir")
    parser.add_argument("--pairs", type=int, default=settings["pairs"])
    parser.add_argument("--workers", type=int, default=settings["workers"])
    parser.add_argument("--seed", type=int, default=settings["seed"])
    parser.add_argument("--opponents", default=",".join(settings["opponents"]))
    parser.add_argument("--out", help="write the reports as JSON")
    args = parser.parse_args()
    run = pathlib.Path(args.run_dir)

    state = describe_run(run)
    print("| opponent | pairs | score | 95% CI | beats it | as Jekyll | as Hyde |")
    print("|---|---|---|---|---|---|---|")
    reports = []
    for opponent in args.opponents.split(","):
        report = evaluate(
            str(run), opponent, args.pairs, seed=args.seed, workers=args.workers, progress=True
        )
        reports.append(report.to_json())
        lo, hi = report.score_ci
        beats = "yes" if lo > 0.5 else ("no" if hi < 0.5 else "not separable")
        jekyll = report.by_role["jekyll"]["win_rate"]
        hyde = report.by_role["hyde"]["win_rate"]
        print(
            f"| {opponent} | {report.pairs} | {report.score:.3f} | [{lo:.3f}, {hi:.3f}] | {beats} "
            f"| {jekyll:.3f} | {hyde:.3f} |",
            flush=True,
        )
    if args.out:
        pathlib.Path(args.out).write_text(
            json.dumps({"state": state, "reports": reports}, indent=2)
        )


if __name__ == "__main__":
    main()
