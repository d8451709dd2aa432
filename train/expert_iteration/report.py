"""The report of an expert-iteration run: a table and curves per generation, the final arena."""

from __future__ import annotations

import pathlib

from jekyll_hyde_env.engine.variant import FULL
from jekyll_hyde_train.common.config import dump_config
from jekyll_hyde_train.common.run_folder import MetricsFile, line_chart
from jekyll_hyde_train.common.run_folder import write_report as write_run_report
from jekyll_hyde_train.expert_iteration.config import EITrainConfig

METRICS = MetricsFile(
    key="generation",
    what="the run's metrics, a row per generation (CSV)",
    columns={"teacher": str},
)
"""An expert-iteration run's ``metrics.csv``: a row per generation."""


def plot_curves(rows: list[dict[str, str]], out: pathlib.Path) -> list[str]:
    """PNG curves per generation (scores, held-out losses); returns the file names."""
    scores = [k for k in (rows[0] if rows else {}) if k.startswith("score_vs_")]
    score_chart = line_chart(
        out,
        "score_curve.png",
        [  # a score added on --resume is empty in the rows before it
            (
                key[len("score_vs_") :],
                [int(r["generation"]) for r in rows if r.get(key)],
                [float(r[key]) for r in rows if r.get(key)],
            )
            for key in scores
        ],
        xlabel="generation",
        ylabel="duplicate score",
        title="Each generation's policy (no search) against fixed opponents",
        ylim=(0, 1),
        baseline=0.5,
    )
    losses = [
        (label, [int(r["generation"]) for r in rows], [float(r[key]) for r in rows])
        for key, label in (
            ("validation_loss", "policy (cross-entropy)"),
            ("validation_value_loss", "value (squared error)"),
        )
        if rows and all(r.get(key) for r in rows)
    ]
    loss_chart = line_chart(
        out,
        "loss_curve.png",
        losses,
        xlabel="generation",
        ylabel="held-out loss",
        title="Fit of each generation",
    )
    return [name for name in (score_chart, loss_chart) if name]


def write_report(run_dir: pathlib.Path, config: EITrainConfig, seconds: float) -> str:
    """Play the final arena (in the run's variant) and write ``report.md``; returns its text."""
    rows = METRICS.read(run_dir)
    columns = [
        "generation",
        "teacher",
        "games",
        "train_decisions",
        "label_seconds",
        "fit_seconds",
        "validation_loss",
        "validation_value_loss",
    ]
    columns += [k for k in (rows[0] if rows else {}) if k.startswith("score_vs_")]
    columns += [
        key for key in ("exploiter_before", "exploiter_after") if any(row.get(key) for row in rows)
    ]
    variant = config.run.game_variant
    option = "" if variant == FULL else f" --variant {variant.name}"
    summary = [
        "- algorithm: expert iteration",
        *([] if variant == FULL else [f"- variant: {variant.name} (RULES.md V1-V7)"]),
        f"- wall time: {seconds:.0f} s",
        f"- policy: `{run_dir / 'policy'}` (play it with "
        f"`jekyll-hyde eval {run_dir} heuristic{option}`)",
    ]
    table = [
        "## Generations",
        "",
        "| " + " | ".join(columns) + " |",
        "|" + "---|" * len(columns),
    ]
    table += ["| " + " | ".join(row.get(c, "") for c in columns) + " |" for row in rows]
    arena = (config.run.final_opponents, config.run.final_pairs, config.run.workers)
    images = plot_curves(rows, run_dir)
    return write_run_report(
        run_dir,
        summary,
        table,
        arena,
        images,
        dump_config(config),
        variant=variant,
    )
