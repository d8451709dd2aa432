"""Tournaments: every pair of agents in duplicate matches, and ratings from the results.

Each pairing plays ``jekyll_hyde_arena.duplicate.evaluate``; the wins feed a
Bradley-Terry model, whose strengths are shown on the Elo scale.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any, TypedDict

import numpy as np

from jekyll_hyde_agents.sources import source_of
from jekyll_hyde_arena.duplicate import check_agent_spec, evaluate
from jekyll_hyde_env.engine.variant import FULL, Variant


class Rating(TypedDict):
    """A row of a tournament's ratings: an agent that played no game has no rating."""

    agent: str
    elo: float | None
    ci: tuple[float, float] | None  # the bootstrap's 95% interval of elo


def bradley_terry(wins: np.ndarray, iterations: int = 500) -> np.ndarray:
    """Bradley-Terry strengths from a matrix of (fractional) wins, by MM updates.

    ``wins[i, j]`` is what i scored against j. Returns log-strengths with mean 0.
    A small prior (half a win each way against every opponent) keeps agents
    that won or lost everything finite.

    Args:
        wins: (n, n) what each agent scored against each other (games won, draws
            counting half); the diagonal is 0.
        iterations: MM updates to run.

    Returns:
        The (n,) natural-log strengths, mean 0: agent i beats agent j with
            probability ``1 / (1 + exp(s[j] - s[i]))``.
    """
    games = wins + wins.T
    w = wins + 0.5 * (games > 0)
    games = w + w.T
    strength = np.ones(wins.shape[0])
    total = w.sum(axis=1)
    for _ in range(iterations):
        denominator = (games / (strength[:, None] + strength[None, :])).sum(axis=1)
        strength = total / np.maximum(denominator, 1e-12)
        strength /= np.exp(np.mean(np.log(strength)))
    return np.log(strength)


def elo_from_log_strength(log_strength: np.ndarray) -> np.ndarray:
    """Bradley-Terry log-strengths on the Elo scale (400 points per factor 10).

    Args:
        log_strength: natural-log strengths (``bradley_terry``'s).

    Returns:
        The ratings, same shape: ``400 * log_strength / ln(10)`` (mean 0 when the
            strengths' mean is 0).
    """
    return 400 * log_strength / math.log(10)


def tournament(
    specs: Sequence[Any],
    pairs: int,
    seed: int = 0,
    workers: int = 1,
    progress: bool = False,
    bootstrap: int = 200,
    illegal: str = "error",
    deterministic: bool = True,
    variant: Variant = FULL,
) -> dict[str, Any]:
    """Round robin: every two agents play ``pairs`` pairs; Elo-scale Bradley-Terry ratings.

    ``specs`` are agents of any kind ``evaluate`` takes (spec strings, ``Agent``s,
    functions, library objects); each is built once and its label names it in the table.
    ``illegal`` and ``deterministic`` are ``evaluate``'s.

    Intervals come from a bootstrap over each pairing's pairs. On Ctrl-C the round
    robin stops and rates what was played: ``interrupted`` is then true, ``matches``
    holds the pairings with at least one pair (the last one maybe in part), and an
    agent that played no game has no rating (``elo`` and ``ci`` None).

    Args:
        specs: the agents, of any kind ``evaluate`` takes.
        pairs: duplicate pairs each pairing plays.
        seed: the seed of every pairing's match and of the bootstrap.
        workers: processes playing each match's games.
        progress: show a progress bar per match on a terminal.
        bootstrap: resamples of the pairs behind each rating's interval.
        illegal: ``"error"`` or ``"forfeit"``, as ``evaluate`` takes it.
        deterministic: models play their best action (True) or sample, as
            ``evaluate`` takes it.
        variant: the version of the game (RULES.md V1-V7); the full game by default.

    Returns:
        A dict of JSON values: ``ratings``, one ``Rating`` per agent, best first
            (those without a rating last); ``matches``, each pairing's
            ``MatchReport.to_json()``; ``pairs``, ``seed``, ``pairings`` (the
            number of pairings of a full round robin) and ``interrupted``.

    Raises:
        ValueError: a spec that names no agent, before any game is played; or
            an error of ``evaluate`` (an illegal action under ``illegal="error"``).
    """
    sources = [source_of(spec, deterministic) for spec in specs]
    for source in sources:
        check_agent_spec(source)
    labels = [source.label for source in sources]
    n = len(sources)
    pair_scores: dict[tuple[int, int], np.ndarray] = {}
    matches = []
    interrupted = False
    for i, j in itertools.combinations(range(n), 2):
        report = evaluate(
            sources[i], sources[j], pairs, seed, workers, progress, illegal=illegal, variant=variant
        )
        if report.pairs:
            pair_scores[(i, j)] = np.asarray(report.pair_scores)
            matches.append(report)
        if report.interrupted:
            interrupted = True
            break
    rated = sorted({agent for pairing in pair_scores for agent in pairing})

    def ratings(sample: dict[tuple[int, int], np.ndarray]) -> np.ndarray:
        wins = np.zeros((n, n))
        for (i, j), scores in sample.items():
            wins[i, j] += 2 * scores.sum()
            wins[j, i] += 2 * (len(scores) - scores.sum())
        elo = np.full(n, np.nan)
        if rated:
            elo[rated] = elo_from_log_strength(bradley_terry(wins[np.ix_(rated, rated)]))
        return elo

    point = ratings(pair_scores)
    rng = np.random.default_rng(seed)
    draws = np.array(
        [
            ratings({k: v[rng.integers(len(v), size=len(v))] for k, v in pair_scores.items()})
            for _ in range(bootstrap)
        ]
    )
    low, high = np.percentile(draws, [2.5, 97.5], axis=0)
    table: list[Rating] = [
        {"agent": labels[i], "elo": float(point[i]), "ci": (float(low[i]), float(high[i]))}
        if i in rated
        else {"agent": labels[i], "elo": None, "ci": None}
        for i in range(n)
    ]
    table.sort(key=lambda row: -row["elo"] if row["elo"] is not None else math.inf)
    return {
        "ratings": table,
        "matches": [m.to_json() for m in matches],
        "pairs": pairs,
        "seed": seed,
        "pairings": n * (n - 1) // 2,
        "interrupted": interrupted,
    }


def format_tournament(result: dict[str, Any]) -> str:
    """The ratings, then the head-to-head scores of every pairing with their intervals;
    first, for an interrupted round robin, how much of it was played.

    Args:
        result: what ``tournament`` returns (or that dict read back from JSON).

    Returns:
        The tables as text (no final newline).
    """
    lines = []
    if result.get("interrupted"):
        matches = result["matches"]
        done = sum(m["pairs"] == m["requested_pairs"] for m in matches)
        partial = [m for m in matches if m["pairs"] < m["requested_pairs"]]
        part = ""
        if partial:
            part = f", one in part ({partial[0]['pairs']} of {partial[0]['requested_pairs']} pairs)"
        lines += [
            f"interrupted: {done} of {result['pairings']} pairings played in full{part}; "
            "the ratings rest on these games only",
            "",
        ]
    lines += [f"{'agent':<28}{'Elo (BT)':>10}   95% CI", "-" * 56]
    for row in result["ratings"]:
        if row["elo"] is None:
            lines.append(f"{row['agent']:<28}{'-':>10}   (no game played)")
            continue
        lo, hi = row["ci"]
        lines.append(f"{row['agent']:<28}{row['elo']:>10.0f}   [{lo:.0f}, {hi:.0f}]")
    if result["matches"]:
        lines += ["", "head to head (A's score against B, duplicate pairs, 95% CI)", "-" * 72]
        for match in result["matches"]:
            a, b = match["agents"]["A"], match["agents"]["B"]
            lo, hi = match["score_ci"]
            lines.append(f"{a:<24} vs {b:<24} {match['score']:.3f}  [{lo:.3f}, {hi:.3f}]")
    return "\n".join(lines)
