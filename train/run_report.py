"""A run folder's report, for every trainer: ``report.md`` with the run's summary, its
tables, the final arena against fixed opponents, the curves and the resolved config.

Each trainer says what to put in (``ppo_report`` for PPO and RLlib, ``ei_report`` for
expert iteration); the layout of the report, the arena and the drawing of curves are
here, once.
"""

from __future__ import annotations

import pathlib
from collections.abc import Sequence

from jekyll_hyde_arena import evaluate
from jekyll_hyde_train.files import atomic_write_text

FINAL_SEED = 777  # the final arena's deals, stated in the report

Series = tuple[str, Sequence[float], Sequence[float]]
"""One line of a chart: its label, x values and y values."""


def line_chart(
    out: pathlib.Path,
    name: str,
    series: Sequence[Series],
    xlabel: str,
    ylabel: str,
    title: str,
    ylim: tuple[float, float] | None = None,
    baseline: float | None = None,
    marker: str = "o",
) -> str | None:
    """Draw ``series`` into ``out/name`` (PNG); returns ``name``, or None with nothing to draw."""
    drawn = [line for line in series if len(line[1])]
    if not drawn:
        return None
    import matplotlib  # the train extra; imported only when a report is written

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for label, xs, ys in drawn:
        ax.plot(list(xs), list(ys), marker=marker, label=label)
    if baseline is not None:
        ax.axhline(baseline, color="grey", linestyle=":")
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
    if ylim is not None:
        ax.set_ylim(*ylim)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / name, dpi=100)
    plt.close(fig)
    return name


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


def write_report(
    run_dir: pathlib.Path,
    summary: list[str],
    sections: list[str],
    arena: tuple[list[str], int, int],
    images: list[str],
    config_yaml: str,
    curves_title: str = "Curves",
) -> str:
    """Write ``run_dir/report.md`` atomically; returns its text.

    Args:
        summary: the bullet lines under the title.
        sections: Markdown lines between the summary and the final arena.
        arena: the final arena's opponents, pairs per opponent and worker processes.
        images: chart files in ``run_dir`` (``line_chart``'s names).
        config_yaml: the run's resolved config.
    """
    opponents, pairs, workers = arena
    lines = [f"# Run {run_dir.name}", "", *summary, ""]
    if sections:
        lines += [*sections, ""]
    lines += final_arena(run_dir, opponents, pairs, workers)
    if images:
        lines += ["", f"## {curves_title}", ""] + [f"![{name}]({name})" for name in images]
    lines += ["", "## Config", "", "```yaml", config_yaml.rstrip(), "```", ""]
    text = "\n".join(lines)
    atomic_write_text(run_dir / "report.md", text)
    return text
