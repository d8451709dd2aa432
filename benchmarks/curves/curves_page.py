"""The table and the figure of docs/results/curves.md, from the curves' results.

``results`` is what ``benchmarks/exploitability_curves.py`` writes to
``docs/results/curves.json``: per trainer, its scored checkpoints (``points``), each
with its mark, CPU-seconds and exact score, and the budgets.
"""

from __future__ import annotations

import math
from typing import Any

COLOURS = ("#1b6ac9", "#d1495b", "#edae49", "#00798c", "#6a4c93", "#8a9a5b", "#e07a5f", "#333333")
WIDTH, HEIGHT, LEFT, RIGHT, TOP, BOTTOM = 760, 420, 70, 200, 20, 50


def at_budget(points: list[dict], budget: float) -> dict | None:
    """The checkpoint of a trainer at a budget: the one asked for at that mark.

    Args:
        points: the trainer's scored checkpoints.
        budget: CPU-seconds.

    Returns:
        The point, or None if the trainer has no checkpoint at that mark.
    """
    for point in points:
        if point["mark"] == budget:
            return point
    return None


def leaders(results: dict[str, Any]) -> dict[float, str]:
    """The learning trainer with the lowest exact score at each budget.

    Args:
        results: the curves' results.

    Returns:
        Budget (CPU-seconds) -> trainer name, for budgets every learning trainer
        reached.
    """
    out = {}
    learners = [n for n in results["points"] if n != results["reference"]]
    for budget in results["budgets_cpu_seconds"]:
        scored = {n: at_budget(results["points"][n], budget) for n in learners}
        if learners and all(scored.values()):
            out[budget] = min(learners, key=lambda n: scored[n]["score"])  # type: ignore[index]
    return out


MAIN_JOB = "expert-iteration"
"""The project's main training job, whose standing the page states at each budget."""


def _standing(results: dict[str, Any], budget: float, leader: str | None) -> str:
    """One budget's leader, and the main job's rank and distance to the leader."""
    if leader is None:
        return "not every learning trainer reached it"
    learners = [n for n in results["points"] if n != results["reference"]]
    scores = {n: at_budget(results["points"][n], budget)["score"] for n in learners}  # type: ignore[index]
    text = f"`{leader}` ({scores[leader]:.4f})"
    if MAIN_JOB not in scores or leader == MAIN_JOB:
        return text + (", the main job" if leader == MAIN_JOB else "")
    rank = sorted(scores.values()).index(scores[MAIN_JOB]) + 1
    gap = scores[MAIN_JOB] - scores[leader]
    return text + f"; the main job is {rank} of {len(learners)}, {gap:.4f} above it"


def _reference_check(results: dict[str, Any]) -> list[str]:
    """The reference's last checkpoint brackets the game value; the LP's should lie inside.

    Against any strategy, the best response as Jekyll wins at least the game value and
    the best response as Hyde leaves Jekyll at most it, so the two bracket it.
    """
    points = results["points"].get(results["reference"]) or []
    if not points:
        return []
    last = points[-1]
    low, high = 1.0 - last["seats"]["hyde"], last["seats"]["jekyll"]
    text = (
        f"Check of the solver: at {last['cpu_seconds'] / 60:.1f} CPU-minutes, "
        f"`{results['reference']}`'s best responses put Jekyll's win probability at "
        f"equilibrium between {low:.7f} and {high:.7f}"
    )
    value = results.get("lp_jekyll_win_probability")
    if value is None:
        return [text + "."]
    inside = "inside" if low - 1e-9 <= value <= high + 1e-9 else "OUTSIDE"
    return [text + f"; the LP's value ({value:.7f}, [exact answers](exact.md)) lies {inside}."]


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:g} min"


def page_table(results: dict[str, Any]) -> str:
    """The markdown between the page's markers: scores per budget and the leaders.

    Args:
        results: the curves' results.

    Returns:
        Markdown: one row per trainer, one column per budget, the leader in bold, then
        the figure and each trainer's settings.
    """
    budgets = results["budgets_cpu_seconds"]
    lead = leaders(results)
    head = "| trainer | " + " | ".join(_minutes(b) for b in budgets) + " |"
    lines = [
        f"Exact score (0.5 is an equilibrium) on `{results['variant_name']}` after each "
        f"budget of CPU-seconds on {results['cores']} cores, seed {results['seed']}; the "
        "lowest among the learning trainers in bold.",
        "",
        head,
        "|---|" + "---|" * len(budgets),
    ]
    for name, points in results["points"].items():
        cells = []
        for budget in budgets:
            point = at_budget(points, budget)
            if point is None:
                cells.append("not run")
                continue
            text = f"{point['score']:.4f}"
            cells.append(f"**{text}**" if lead.get(budget) == name else text)
        label = f"{name} (reference)" if name == results["reference"] else name
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines += ["", "Leader among the learning trainers, and where the main job stands:", ""]
    for budget in budgets:
        lines.append(f"- {_minutes(budget)}: {_standing(results, budget, lead.get(budget))}")
    lines += ["", *_reference_check(results)]
    lines += ["", "![exact score against CPU-seconds](curves.svg)", "", "The trainers:", ""]
    lines += [f"- `{name}`: {label}" for name, label in results["labels"].items()]
    return "\n".join(lines)


def svg_plot(results: dict[str, Any]) -> str:
    """The curves as an SVG: exact score against CPU-seconds (log scale), one line each.

    Args:
        results: the curves' results.

    Returns:
        The SVG document.
    """
    points = {n: p for n, p in results["points"].items() if p}
    seconds = [p["cpu_seconds"] for ps in points.values() for p in ps] or [1.0]
    scores = [p["score"] for ps in points.values() for p in ps] or [1.0]
    low_x, high_x = math.log10(min(seconds) / 1.2), math.log10(max(seconds) * 1.2)
    low_y, high_y = 0.5, max(0.55, min(1.0, max(scores) + 0.02))
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(value: float) -> float:
        return LEFT + (math.log10(value) - low_x) / (high_x - low_x) * plot_w

    def y(value: float) -> float:
        return TOP + (high_y - value) / (high_y - low_y) * plot_h

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'font-family="sans-serif" font-size="12">',
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
        f'<line x1="{LEFT}" y1="{TOP + plot_h}" x2="{LEFT + plot_w}" y2="{TOP + plot_h}" '
        'stroke="black"/>',
        f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{TOP + plot_h}" stroke="black"/>',
    ]
    for tick in (10, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200):
        if low_x <= math.log10(tick) <= high_x:
            parts.append(
                f'<text x="{x(tick):.1f}" y="{TOP + plot_h + 16}" text-anchor="middle">'
                f"{tick / 60:g}</text>"
            )
    steps = 5
    for i in range(steps + 1):
        value = low_y + (high_y - low_y) * i / steps
        parts.append(
            f'<text x="{LEFT - 6}" y="{y(value) + 4:.1f}" text-anchor="end">{value:.2f}</text>'
        )
    parts.append(
        f'<text x="{LEFT + plot_w / 2}" y="{HEIGHT - 10}" text-anchor="middle">'
        "CPU-minutes (log scale)</text>"
    )
    parts.append(
        f'<text x="16" y="{TOP + plot_h / 2}" text-anchor="middle" '
        f'transform="rotate(-90 16 {TOP + plot_h / 2})">exact score (0.5: equilibrium)</text>'
    )
    for i, (name, series) in enumerate(points.items()):
        colour = COLOURS[i % len(COLOURS)]
        line = " ".join(f"{x(p['cpu_seconds']):.1f},{y(p['score']):.1f}" for p in series)
        dash = ' stroke-dasharray="5,3"' if name == results["reference"] else ""
        parts.append(
            f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>'
        )
        for p in series:
            parts.append(
                f'<circle cx="{x(p["cpu_seconds"]):.1f}" cy="{y(p["score"]):.1f}" r="3" '
                f'fill="{colour}"/>'
            )
        legend_y = TOP + 14 + 18 * i
        parts.append(
            f'<line x1="{WIDTH - RIGHT + 12}" y1="{legend_y - 4}" x2="{WIDTH - RIGHT + 32}" '
            f'y2="{legend_y - 4}" stroke="{colour}" stroke-width="2"{dash}/>'
        )
        parts.append(f'<text x="{WIDTH - RIGHT + 38}" y="{legend_y}">{name}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
