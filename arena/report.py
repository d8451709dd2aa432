"""A match's statistics and its report: A's score with its 95% interval, the win rate in
each seat, the return matches, and the table ``jekyll-hyde eval`` prints.

``score_interval`` is the interval of A's mean pair score: the normal interval over
pairs, or with few pairs (or pairs all alike) Wilson's over the games. ``summarise``
turns a match's pair results into a ``MatchReport``; ``format_report`` writes it for
a terminal, with what the interval means in words (``interval_in_words``).
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from jekyll_hyde_arena.games import (
    PairResult,
)
from jekyll_hyde_env.engine.cards import HYDE, JEKYLL

Z95 = 1.959963984540054


# --- statistics ------------------------------------------------------------


def mean_ci(values: Sequence[float]) -> tuple[float, tuple[float, float]]:
    """Mean and 95% normal interval of the mean (clipped to [0, 1]).

    Args:
        values: one score per pair (A's wins in the pair divided by two), or any
            sample of numbers in [0, 1].

    Returns:
        mean: the mean of ``values``; NaN when there are none.
        interval: its 95% normal interval (low, high), clipped to [0, 1]; NaN for
            no values, and [0, 1] for one (an infinite half-width, clipped).
    """
    n = len(values)
    if n == 0:
        return float("nan"), (float("nan"), float("nan"))
    mean = float(np.mean(values))
    half = Z95 * float(np.std(values, ddof=1)) / math.sqrt(n) if n > 1 else float("inf")
    return mean, (max(0.0, mean - half), min(1.0, mean + half))


MIN_PAIRS_FOR_NORMAL = 30
"""Below this many pairs, or when every pair scored the same, the normal interval of
the pairs' mean says nothing true (four pairs all won give [1, 1]); the score's
interval is then Wilson's over the games, which a few games keep wide."""


def score_interval(scores: Sequence[float]) -> tuple[float, tuple[float, float], bool]:
    """A's mean pair score, its 95% interval, and whether the interval is Wilson's over
    the games (few pairs, or all alike: ``MIN_PAIRS_FOR_NORMAL``) rather than the
    normal interval of the pairs' mean.

    Args:
        scores: A's score in each pair (its wins in the pair divided by two).

    Returns:
        mean: A's mean pair score.
        interval: its 95% interval (low, high).
        few_pairs: True when the interval is Wilson's over the ``2 * len(scores)``
            games, False when it is the normal interval of the pairs' mean.
    """
    mean, ci = mean_ci(scores)
    if len(scores) >= MIN_PAIRS_FOR_NORMAL and ci[1] > ci[0]:
        return mean, ci, False
    return mean, wilson_ci(2 * sum(scores), 2 * len(scores)), True


def wilson_ci(wins: float, n: int) -> tuple[float, float]:
    """95% Wilson interval of a proportion.

    Args:
        wins: successes (games won), a whole or a fractional count.
        n: trials (games played).

    Returns:
        low: the interval's lower end, at least 0; NaN when ``n`` is 0.
        high: its upper end, at most 1; NaN when ``n`` is 0.
    """
    if n == 0:
        return (float("nan"), float("nan"))
    p = wins / n
    denominator = 1 + Z95**2 / n
    centre = (p + Z95**2 / (2 * n)) / denominator
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95**2 / (4 * n * n)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass
class MatchReport:
    """What ``jekyll-hyde eval`` reports; ``to_json`` gives the ``--out`` file."""

    agents: tuple[str, str]
    seed: int
    pairs: int
    requested_pairs: int
    score: float
    score_ci: tuple[float, float]
    by_role: dict[str, dict[str, Any]]
    return_match: dict[str, Any]
    independent_ci_width: float
    """The width of the score's interval had the same games been independent (Wilson's
    over the games): what duplicate pairs gain, by comparison."""
    games_per_second: float
    interrupted: bool = False
    few_pairs: bool = False
    """True when the pairs were too few (or all alike) for the normal interval of their
    mean, so that ``score_ci`` is Wilson's over the games (``score_interval``)."""
    pair_scores: list[float] = field(default_factory=list, repr=False)
    illegal: dict[str, dict[str, int]] = field(default_factory=dict)
    """For agents A and B: ``replaced``, a model's illegal choices replaced by its most
    probable legal action, and ``forfeited``, games lost by an illegal action."""

    def to_json(self) -> dict[str, Any]:
        """The report as plain JSON values, for ``jekyll-hyde eval --out``.

        Returns:
            The report's fields as a dict (``dataclasses.asdict``), with ``agents``
                as ``{"A": label, "B": label}``.
        """
        data = asdict(self)
        data["agents"] = {"A": self.agents[0], "B": self.agents[1]}
        return data


def summarise(
    names: tuple[str, str],
    seed: int,
    results: list[PairResult],
    requested: int,
    seconds: float,
    interrupted: bool = False,
) -> MatchReport:
    """Scores, per-role win rates with intervals, return matches and speed.

    Args:
        names: the labels of A and B in the report.
        seed: the match's seed, recorded in the report.
        results: the pairs played, in any order (they are sorted by index here).
        requested: the pairs the match asked for (more than ``len(results)`` when
            it was interrupted).
        seconds: the time the games took, for ``games_per_second``.
        interrupted: whether Ctrl-C stopped the match before it was done.

    Returns:
        The ``MatchReport`` of these pairs.
    """
    results = sorted(results, key=lambda r: r.index)
    n = len(results)
    scores = [r.a_wins / 2 for r in results]
    score, ci, few_pairs = score_interval(scores)
    jekyll_wins = sum(r.a_as_jekyll.winner == JEKYLL for r in results)
    hyde_wins = sum(r.a_as_hyde.winner == HYDE for r in results)
    matches = [r.return_match for r in results]
    games = [
        g for r in results for g in (r.a_as_jekyll.winner == JEKYLL, r.a_as_hyde.winner == HYDE)
    ]
    independent = wilson_ci(sum(games), len(games)) if games else (float("nan"), float("nan"))
    independent_width = independent[1] - independent[0]
    illegal = {
        side: {
            "replaced": sum(r.replaced[k] for r in results),
            "forfeited": sum(r.forfeits[k] for r in results),
        }
        for k, side in enumerate(("A", "B"))
    }
    return MatchReport(
        agents=names,
        seed=seed,
        pairs=n,
        requested_pairs=requested,
        score=score,
        score_ci=ci,
        few_pairs=few_pairs,
        by_role={
            "jekyll": {
                "games": n,
                "wins": jekyll_wins,
                "win_rate": jekyll_wins / n if n else None,
                "ci": wilson_ci(jekyll_wins, n),
            },
            "hyde": {
                "games": n,
                "wins": hyde_wins,
                "win_rate": hyde_wins / n if n else None,
                "ci": wilson_ci(hyde_wins, n),
            },
        },
        return_match={
            "wins": sum(m == 1.0 for m in matches),
            "draws": sum(m == 0.5 for m in matches),
            "losses": sum(m == 0.0 for m in matches),
            "score": float(np.mean(matches)) if matches else None,
        },
        independent_ci_width=independent_width,
        games_per_second=2 * n / seconds if seconds > 0 else float("nan"),
        interrupted=interrupted,
        pair_scores=scores,
        illegal=illegal,
    )


def _role_line(label: str, role: dict[str, Any]) -> str:
    lo, hi = role["ci"]
    return f"  {label:<24}{role['win_rate']:.3f}  95% CI [{lo:.3f}, {hi:.3f}]"


def interval_in_words(report: MatchReport) -> list[str]:
    """What the score's interval says, for a reader new to intervals (wrapped lines).

    Args:
        report: the match to describe.

    Returns:
        Lines of at most 88 characters, each indented by two spaces: the score and
            its interval in words, then, where they apply, that the pairs are few
            and that the interval holds 0.5 (no winner can be told).
    """
    lo, hi = report.score_ci
    said = [
        f"{report.agents[0]} won {report.score:.1%} of these games; with 95% confidence its "
        f"long-run share against this opponent lies between {lo:.1%} and {hi:.1%}."
    ]
    if report.few_pairs:
        said.append(
            f"{report.pairs} pairs are few (or all scored alike), so the interval is Wilson's "
            f"over the {2 * report.pairs} games; {MIN_PAIRS_FOR_NORMAL} pairs or more give "
            "the narrower interval of duplicate pairs."
        )
    if lo <= 0.5 <= hi:
        said.append(
            "The interval holds 0.5: these pairs cannot tell which agent is stronger; "
            "play more pairs (--pairs) to say."
        )
    return [
        line
        for text in said
        for line in textwrap.wrap(text, 88, initial_indent="  ", subsequent_indent="  ")
    ]


def format_report(report: MatchReport) -> str:
    """The terminal table.

    Args:
        report: the match to show.

    Returns:
        The table as text, one line per figure (no final newline): A's score and
            its interval, the interval in words, per-role win rates, return
            matches, speed, and any illegal choices replaced or games forfeited.
    """
    a, b = report.agents
    lo, hi = report.score_ci
    j, h = report.by_role["jekyll"], report.by_role["hyde"]
    rm = report.return_match
    lines = [
        f"{a} (A) against {b} (B): {report.pairs} duplicate pairs, seed {report.seed}"
        + (
            f"  [interrupted after {report.pairs} of {report.requested_pairs}]"
            if report.interrupted
            else ""
        ),
        f"  {'A score':<24}{report.score:.3f}  95% CI [{lo:.3f}, {hi:.3f}] "
        f"(width {hi - lo:.3f}; independent games would give {report.independent_ci_width:.3f})",
        *interval_in_words(report),
        _role_line("A as Jekyll win rate", j),
        _role_line("A as Hyde win rate", h),
        f"  {'return matches (A)':<24}{rm['wins']} won, {rm['draws']} drawn, {rm['losses']} lost"
        f" (score {rm['score']:.3f})",
        f"  {'speed':<24}{report.games_per_second:.1f} games/s",
    ]
    for side, name in zip(("A", "B"), report.agents, strict=True):
        counts = report.illegal.get(side, {})
        if counts.get("replaced"):
            lines.append(
                f"  {'illegal choices (' + side + ')':<24}{counts['replaced']} of {name}'s choices "
                "were illegal and replaced by its most probable legal action"
            )
        if counts.get("forfeited"):
            lines.append(
                f"  {'forfeits (' + side + ')':<24}{counts['forfeited']} games lost by an "
                "illegal action"
            )
    return "\n".join(lines)
