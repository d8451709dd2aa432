"""The run report: learning curves and the final arena table, in ``report.md``."""

from __future__ import annotations

import pathlib

from jekyll_hyde_arena import evaluate
from jekyll_hyde_train.config import TrainConfig, dump_config
from jekyll_hyde_train.files import atomic_write_text, read_csv_rows

FINAL_SEED = 777  # the final arena's deals, stated in the report


def read_metrics(path: pathlib.Path, needed: tuple[str, ...] = ()) -> list[dict[str, str]]:
    """The rows of a run's ``metrics.csv`` (none when there is no file), checked:
    numbers in every column but the role (empty where not measured), whole numbers
    of steps (in every row) and phases.

    Args:
        needed: columns the header must have (a PPO run's ``steps``; an RLlib run's
            file has other columns).

    Raises:
        FileFormatError: naming the file and the first bad line.
    """
    if not path.exists():
        return []
    columns = {"steps": int, "phase": int, "role": str}
    return read_csv_rows(
        path,
        "the run's metrics (CSV)",
        columns,
        required=("steps",),
        others=float,
        optional=tuple(name for name in columns if name not in needed),
    )


def plot_curves(rows: list[dict[str, str]], out: pathlib.Path) -> list[str]:
    """PNG learning curves from metrics.csv; returns the file names written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    evaluated = [r for r in rows if r.get("score_vs_heuristic")]
    if evaluated:
        steps = [int(r["steps"]) for r in evaluated]
        fig, ax = plt.subplots(figsize=(7, 4))
        for key, label in (
            ("score_vs_random", "vs random"),
            ("score_vs_heuristic", "vs heuristic"),
        ):
            ax.plot(steps, [float(r[key]) for r in evaluated], marker="o", label=label)
        ax.axhline(0.5, color="grey", linestyle=":")
        ax.set(
            xlabel="environment steps",
            ylabel="duplicate score",
            ylim=(0, 1),
            title="Exported policy against the baselines",
        )
        ax.legend()
        fig.tight_layout()
        fig.savefig(out / "eval_curve.png", dpi=100)
        plt.close(fig)
        written.append("eval_curve.png")
    rewarded = [r for r in rows if r.get("ep_rew_mean")]
    if rewarded:
        fig, ax = plt.subplots(figsize=(7, 4))
        for role in sorted({r["role"] for r in rewarded}):
            mine = [r for r in rewarded if r["role"] == role]
            ax.plot(
                [int(r["steps"]) for r in mine],
                [float(r["ep_rew_mean"]) for r in mine],
                marker=".",
                label=role,
            )
        ax.set(
            xlabel="environment steps",
            ylabel="mean episode reward (learner)",
            ylim=(-1, 1),
            title="Training reward against the opponent pool",
        )
        ax.legend()
        fig.tight_layout()
        fig.savefig(out / "reward_curve.png", dpi=100)
        plt.close(fig)
        written.append("reward_curve.png")
    return written


def final_arena(run_dir: pathlib.Path, opponents: list[str], pairs: int, workers: int) -> list[str]:
    """The report's final arena: duplicate matches of the run's policy against each
    opponent on the deals of ``FINAL_SEED``, as Markdown lines (also printed)."""
    lines = [
        "## Final arena",
        "",
        f"Duplicate pairs ({pairs} per opponent, deals from seed {FINAL_SEED}), 95% intervals "
        f"over pairs. Reproduce a row with `jekyll-hyde eval {run_dir} OPPONENT "
        f"--pairs {pairs} --seed {FINAL_SEED}`.",
        "",
        "| opponent | score | 95% CI | as Jekyll | as Hyde |",
        "|---|---|---|---|---|",
    ]
    for opponent in opponents:
        report = evaluate(str(run_dir), opponent, pairs, seed=FINAL_SEED, workers=workers)
        lo, hi = report.score_ci
        jekyll = report.by_role["jekyll"]["win_rate"]
        hyde = report.by_role["hyde"]["win_rate"]
        lines.append(
            f"| {opponent} | {report.score:.3f} | [{lo:.3f}, {hi:.3f}] "
            f"| {jekyll:.3f} | {hyde:.3f} |"
        )
    print("\n".join(lines[-len(opponents) - 2 :]))
    return lines


def write_report(run_dir: pathlib.Path, config: TrainConfig, steps: int, seconds: float) -> str:
    """Play the final arena matches and write ``report.md``; returns its text."""
    policy = run_dir / "policy"
    lines = [
        f"# Run {run_dir.name}",
        "",
        f"- environment steps: {steps:,}",
        f"- wall time: {seconds:.0f} s ({steps / max(seconds, 1e-9):,.0f} steps/s)",
        f"- policies: `{policy}` (load with `jekyll-hyde eval {run_dir} heuristic`)",
        "",
    ]
    lines += final_arena(
        run_dir, config.run.final_opponents, config.run.final_pairs, config.run.workers
    )
    images = plot_curves(read_metrics(run_dir / "metrics.csv"), run_dir)
    if images:
        lines += ["", "## Learning curves", ""] + [f"![{name}]({name})" for name in images]
    lines += ["", "## Config", "", "```yaml", dump_config(config).rstrip(), "```", ""]
    text = "\n".join(lines)
    atomic_write_text(run_dir / "report.md", text)
    return text
