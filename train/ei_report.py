"""The report of an expert-iteration run: a table and curves per generation, the final arena."""

from __future__ import annotations

import pathlib

from jekyll_hyde_train.config import EITrainConfig, dump_config
from jekyll_hyde_train.files import atomic_write_text, read_csv_rows
from jekyll_hyde_train.report import final_arena

METRICS_WHAT = "the run's metrics, a row per generation (CSV)"


def read_metrics(run_dir: pathlib.Path) -> list[dict[str, str]]:
    """The rows of the run's ``metrics.csv``, checked: a whole generation number in
    each, numbers in every column but the teacher's (empty where not measured).

    Raises:
        FileFormatError: naming the file and the first bad line.
    """
    path = run_dir / "metrics.csv"
    if not path.exists():
        return []
    columns = {"generation": int, "teacher": str}
    return read_csv_rows(path, METRICS_WHAT, columns, required=("generation",), others=float)


def plot_curves(rows: list[dict[str, str]], out: pathlib.Path) -> list[str]:
    """PNG curves per generation (scores, held-out losses); returns the file names."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not rows:
        return []
    generations = [int(r["generation"]) for r in rows]
    written = []
    scores = [k for k in rows[0] if k.startswith("score_vs_")]
    fig, ax = plt.subplots(figsize=(7, 4))
    for key in scores:  # a score added on --resume is empty in the rows before it
        measured = [r for r in rows if r.get(key)]
        ax.plot(
            [int(r["generation"]) for r in measured],
            [float(r[key]) for r in measured],
            marker="o",
            label=key[9:],
        )
    ax.axhline(0.5, color="grey", linestyle=":")
    ax.set(
        xlabel="generation",
        ylabel="duplicate score",
        ylim=(0, 1),
        title="Each generation's policy (no search) against fixed opponents",
    )
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "score_curve.png", dpi=100)
    plt.close(fig)
    written.append("score_curve.png")
    fig, ax = plt.subplots(figsize=(7, 4))
    for key, label in (
        ("validation_loss", "policy (cross-entropy)"),
        ("validation_value_loss", "value (squared error)"),
    ):
        values = [float(r[key]) for r in rows if r.get(key)]
        if len(values) == len(rows):
            ax.plot(generations, values, marker="o", label=label)
    ax.set(xlabel="generation", ylabel="held-out loss", title="Fit of each generation")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "loss_curve.png", dpi=100)
    plt.close(fig)
    written.append("loss_curve.png")
    return written


def write_report(run_dir: pathlib.Path, config: EITrainConfig, seconds: float) -> str:
    """Play the final arena and write ``report.md``; returns its text."""
    rows = read_metrics(run_dir)
    columns = [
        "generation",
        "teacher",
        "games",
        "decisions",
        "label_seconds",
        "fit_seconds",
        "validation_loss",
        "validation_value_loss",
    ]
    columns += [k for k in (rows[0] if rows else {}) if k.startswith("score_vs_")]
    lines = [
        f"# Run {run_dir.name}",
        "",
        "- algorithm: expert iteration",
        f"- wall time: {seconds:.0f} s",
        f"- policy: `{run_dir / 'policy'}` (play it with `jekyll-hyde eval {run_dir} heuristic`)",
        "",
        "## Generations",
        "",
        "| " + " | ".join(columns) + " |",
        "|" + "---|" * len(columns),
    ]
    for row in rows:
        lines.append("| " + " | ".join(row.get(c, "") for c in columns) + " |")
    pairs = config.run.final_pairs
    lines += ["", *final_arena(run_dir, config.run.final_opponents, pairs, config.run.workers)]
    images = plot_curves(rows, run_dir)
    if images:
        lines += ["", "## Curves", ""] + [f"![{name}]({name})" for name in images]
    lines += ["", "## Config", "", "```yaml", dump_config(config).rstrip(), "```", ""]
    text = "\n".join(lines)
    atomic_write_text(run_dir / "report.md", text)
    return text
