"""The arena: agents played against each other on the same deals, scored with intervals.

``duplicate`` plays duplicate pairs between two agents (``evaluate``, ``jekyll-hyde eval``);
``ratings`` plays every pairing of several agents and rates them (``tournament``,
``jekyll-hyde tournament``). Training scores its networks here and the application's
commands report from here.
"""

from __future__ import annotations

from jekyll_hyde_arena.duplicate import (
    GameResult,
    PairResult,
    check_agent_spec,
    evaluate,
    pair_seeds,
    play_game,
    play_pair,
    run_pairs,
)
from jekyll_hyde_arena.ratings import (
    bradley_terry,
    elo_from_log_strength,
    format_tournament,
    tournament,
)
from jekyll_hyde_arena.report import MatchReport, format_report, mean_ci, summarise, wilson_ci

__all__ = [
    "GameResult",
    "MatchReport",
    "PairResult",
    "bradley_terry",
    "check_agent_spec",
    "elo_from_log_strength",
    "evaluate",
    "format_report",
    "format_tournament",
    "mean_ci",
    "pair_seeds",
    "play_game",
    "play_pair",
    "run_pairs",
    "summarise",
    "tournament",
    "wilson_ci",
]
