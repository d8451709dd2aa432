"""The report of a PPO run (Stable-Baselines3 or RLlib): learning curves from its
``metrics.csv`` and the final arena, laid out by ``run_folder``."""

from __future__ import annotations

import pathlib
from typing import Any

from jekyll_hyde_env.engine.variant import FULL, parse_variant
from jekyll_hyde_train.common.config import dump_config
from jekyll_hyde_train.common.run_folder import MetricsFile, line_chart
from jekyll_hyde_train.common.run_folder import write_report as write_run_report

METRICS = MetricsFile(
    key="steps",
    what="the run's metrics, a row per phase (CSV)",
    columns={"phase": int, "role": str},
)
"""A PPO run's ``metrics.csv``: a row per phase, keyed by the steps done after it."""
RLLIB_METRICS = MetricsFile(
    key="iteration", what="the run's metrics, a row per RLlib iteration (CSV)", columns={}
)
"""An RLlib run's ``metrics.csv``: a row per training iteration."""


def plot_curves(rows: list[dict[str, str]], out: pathlib.Path) -> list[str]:
    """PNG learning curves from metrics.csv; returns the file names written."""
    evaluated = [r for r in rows if r.get("score_vs_heuristic")]
    steps = [int(r["steps"]) for r in evaluated]
    scores = line_chart(
        out,
        "eval_curve.png",
        [
            (label, steps, [float(r[key]) for r in evaluated])
            for key, label in (
                ("score_vs_random", "vs random"),
                ("score_vs_heuristic", "vs heuristic"),
            )
        ],
        xlabel="environment steps",
        ylabel="duplicate score",
        title="Exported policy against the baselines",
        ylim=(0, 1),
        baseline=0.5,
    )
    rewarded = [r for r in rows if r.get("ep_rew_mean")]
    rewards = line_chart(
        out,
        "reward_curve.png",
        [
            (
                role,
                [int(r["steps"]) for r in rewarded if r["role"] == role],
                [float(r["ep_rew_mean"]) for r in rewarded if r["role"] == role],
            )
            for role in sorted({r["role"] for r in rewarded})
        ],
        xlabel="environment steps",
        ylabel="mean episode reward (learner)",
        title="Training reward against the opponent pool",
        ylim=(-1, 1),
        marker=".",
    )
    return [name for name in (scores, rewards) if name]


def write_report(
    run_dir: pathlib.Path,
    config: Any,
    steps: int,
    seconds: float,
    metrics: MetricsFile = METRICS,
) -> str:
    """Play the final arena matches and write ``report.md``; returns its text.

    ``config`` is the run's ``TrainConfig`` or ``RLlibTrainConfig`` (both have the
    ``run`` keys the arena needs, its games of ``run.variant``), ``metrics`` its
    metrics file."""
    variant = parse_variant(config.run.variant)
    summary = [
        f"- environment steps: {steps:,}",
        f"- wall time: {seconds:.0f} s ({steps / max(seconds, 1e-9):,.0f} steps/s)",
        f"- policies: `{run_dir / 'policy'}` (load with `jekyll-hyde eval {run_dir} heuristic`)",
    ]
    if variant != FULL:
        summary.append(f"- variant: {variant.name} (`{variant.spec()}`)")
    arena = (config.run.final_opponents, config.run.final_pairs, config.run.workers)
    images = plot_curves(metrics.read(run_dir), run_dir)
    return write_run_report(
        run_dir,
        summary,
        [],
        arena,
        images,
        dump_config(config),
        "Learning curves",
        variant=variant,
    )
