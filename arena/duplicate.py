"""The arena: duplicate matches between agents, with confidence intervals.

A *pair* is two games on the same deals (one seed fixes the shuffles of all
three rounds) with the roles swapped: A as Jekyll against B as Hyde, then B as
Jekyll against A as Hyde. Luck of the deal cancels within a pair, so the
interval on A's score, computed over pairs, is narrower than over independent
games. Each game's seeds derive from (seed, pair index) alone, so results do
not depend on the number of worker processes.

A's score is the mean over pairs of A's wins in the pair divided by two. The
pair is also a return match (the RULES.md variant): in each game the Hyde
player scores the spaces the marker advanced; the higher score wins, and at 10
each the one who reached 10 in fewer rounds; otherwise a draw.
"""

from __future__ import annotations

import json
import math
import multiprocessing
import pathlib
import signal
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from jekyll_hyde_agents import make_agent
from jekyll_hyde_env.engine import (
    apply_action,
    game_record,
    is_terminal,
    legal_actions,
    new_game,
    player_view,
)
from jekyll_hyde_env.engine.cards import AGENTS, HYDE, JEKYLL, TRACK_END

Z95 = 1.959963984540054


@dataclass(frozen=True)
class GameResult:
    """One game: who won, the marker at the end and how many rounds were played."""

    winner: int
    marker: int
    rounds: int
    record: dict[str, Any] | None = None


@dataclass(frozen=True)
class PairResult:
    """The two games of a pair, seen from agent A."""

    index: int
    a_as_jekyll: GameResult
    a_as_hyde: GameResult

    @property
    def a_wins(self) -> int:
        return (self.a_as_jekyll.winner == JEKYLL) + (self.a_as_hyde.winner == HYDE)

    @property
    def return_match(self) -> float:
        """A's return-match result: 1 win, 0.5 draw, 0 loss (RULES.md variant)."""
        a_score = self.a_as_hyde.marker  # A played Hyde in the second game
        b_score = self.a_as_jekyll.marker
        if a_score != b_score:
            return 1.0 if a_score > b_score else 0.0
        if a_score == TRACK_END and self.a_as_hyde.rounds != self.a_as_jekyll.rounds:
            return 1.0 if self.a_as_hyde.rounds < self.a_as_jekyll.rounds else 0.0
        return 0.5


def pair_seeds(seed: int, index: int) -> tuple[int, int, int, int]:
    """Seeds of pair ``index``, from ``seed`` alone.

    Returns (deal seed, A's agent seed, B's agent seed, the second game's deal
    seed when the pair is not a duplicate).
    """
    deal, a, b, other_deal = np.random.SeedSequence([seed, index]).generate_state(4)
    return int(deal), int(a), int(b), int(other_deal)


def play_game(jekyll: Any, hyde: Any, deal_seed: int, keep_record: bool = False) -> GameResult:
    """Play one game between two agents on the deals of ``deal_seed``."""
    state = new_game(np.random.default_rng(deal_seed))
    seats = (jekyll, hyde)
    while not is_terminal(state):
        player = state.to_act
        legal = legal_actions(state)
        action = seats[player].act(player_view(state, player), legal)
        if action not in legal:
            raise ValueError(
                f"agent {getattr(seats[player], 'name', type(seats[player]).__name__)} "
                f"playing {AGENTS[player]} chose illegal action {action!r}; legal: {legal}"
            )
        apply_action(state, action)
    return GameResult(
        state.winner,
        state.marker,
        len(state.round_log),
        game_record(state) if keep_record else None,
    )


def play_pair(
    agent_a: Any,
    agent_b: Any,
    seed: int,
    index: int,
    keep_records: bool = False,
    duplicate: bool = True,
) -> PairResult:
    """Pair ``index``: both games on the same deals, roles swapped.

    With ``duplicate=False`` the second game gets deals of its own, so the two
    games are independent (used to measure what duplication gains).
    """
    deal_seed, seed_a, seed_b, other_deal_seed = pair_seeds(seed, index)
    agent_a.reset(seed_a)
    agent_b.reset(seed_b)
    first = play_game(agent_a, agent_b, deal_seed, keep_records)
    agent_a.reset(seed_a)
    agent_b.reset(seed_b)
    second = play_game(agent_b, agent_a, deal_seed if duplicate else other_deal_seed, keep_records)
    return PairResult(index, first, second)


# --- statistics ------------------------------------------------------------


def mean_ci(values: Sequence[float]) -> tuple[float, tuple[float, float]]:
    """Mean and 95% normal interval of the mean (clipped to [0, 1])."""
    n = len(values)
    if n == 0:
        return float("nan"), (float("nan"), float("nan"))
    mean = float(np.mean(values))
    half = Z95 * float(np.std(values, ddof=1)) / math.sqrt(n) if n > 1 else float("inf")
    return mean, (max(0.0, mean - half), min(1.0, mean + half))


def wilson_ci(wins: float, n: int) -> tuple[float, float]:
    """95% Wilson interval of a proportion."""
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
    games_per_second: float
    interrupted: bool = False
    pair_scores: list[float] = field(default_factory=list, repr=False)

    def to_json(self) -> dict[str, Any]:
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
    """Scores, per-role win rates with intervals, return matches and speed."""
    results = sorted(results, key=lambda r: r.index)
    n = len(results)
    scores = [r.a_wins / 2 for r in results]
    score, ci = mean_ci(scores)
    jekyll_wins = sum(r.a_as_jekyll.winner == JEKYLL for r in results)
    hyde_wins = sum(r.a_as_hyde.winner == HYDE for r in results)
    matches = [r.return_match for r in results]
    games = [
        g for r in results for g in (r.a_as_jekyll.winner == JEKYLL, r.a_as_hyde.winner == HYDE)
    ]
    p = float(np.mean(games)) if games else float("nan")
    independent_width = 2 * Z95 * math.sqrt(p * (1 - p) / len(games)) if games else float("nan")
    return MatchReport(
        agents=names,
        seed=seed,
        pairs=n,
        requested_pairs=requested,
        score=score,
        score_ci=ci,
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
    )


def _role_line(label: str, role: dict[str, Any]) -> str:
    lo, hi = role["ci"]
    return f"  {label:<24}{role['win_rate']:.3f}  95% CI [{lo:.3f}, {hi:.3f}]"


def format_report(report: MatchReport) -> str:
    """The terminal table."""
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
        _role_line("A as Jekyll win rate", j),
        _role_line("A as Hyde win rate", h),
        f"  {'return matches (A)':<24}{rm['wins']} won, {rm['draws']} drawn, {rm['losses']} lost"
        f" (score {rm['score']:.3f})",
        f"  {'speed':<24}{report.games_per_second:.1f} games/s",
    ]
    return "\n".join(lines)


# --- running pairs in parallel ----------------------------------------------

_WORKER: dict[str, Any] = {}

AgentSource = str | Callable[[], Any]
"""A side of a match: an agent name (``make_agent``), or a function of no arguments
that builds the agent in each worker, for agents that load models of their own
(an RLCard agent's torch networks). Under ``start_method="spawn"`` the function
must be importable by name from its module (a module-level function, or a
``functools.partial`` of one)."""


def build_agent(source: AgentSource) -> Any:
    """The agent a match side names: ``make_agent(name)``, or the builder's agent."""
    return make_agent(source) if isinstance(source, str) else source()


def one_blas_thread() -> Any:
    """Limit numpy's BLAS to one thread until the returned limiter is restored.

    A policy's forward pass is a chain of matrix-vector products: threads
    cannot speed those up, and when the arena's workers already keep every
    core busy, BLAS threads spinning for work take the cores from the games.
    Beside labelling work, 1,000 pairs of a 1024-wide ensemble against
    ismcts:1000 took 9 minutes where a 512-wide policy took 2.
    """
    return threadpool_limits(limits=1, user_api="blas")


def _init_worker(
    spec_a: AgentSource,
    spec_b: AgentSource,
    seed: int,
    keep_records: bool,
    duplicate: bool = True,
) -> None:
    if multiprocessing.parent_process() is not None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
        _WORKER["blas"] = one_blas_thread()  # the worker process's own, for its lifetime
    _WORKER.update(
        a=build_agent(spec_a), b=build_agent(spec_b), seed=seed, keep=keep_records, dup=duplicate
    )


def _run_pair(index: int) -> PairResult:
    worker = _WORKER
    return play_pair(worker["a"], worker["b"], worker["seed"], index, worker["keep"], worker["dup"])


def run_pairs(
    spec_a: AgentSource,
    spec_b: AgentSource,
    pairs: int,
    seed: int,
    workers: int = 1,
    keep_records: bool = False,
    duplicate: bool = True,
    start_method: str | None = None,
) -> Iterator[PairResult]:
    """Yield pair results (in any order) as they finish; ``workers`` processes.

    Games run with BLAS on one thread (``one_blas_thread``); with one worker,
    the limit holds in this process until the generator finishes or closes.
    The workers fork (spawn on macOS) unless ``start_method`` says otherwise:
    "spawn" for agents built with torch, whose threads do not survive a fork.
    """
    if workers <= 1:
        _init_worker(spec_a, spec_b, seed, keep_records, duplicate)
        with one_blas_thread():
            for index in range(pairs):
                yield _run_pair(index)
        return
    if start_method is None:
        start_method = "spawn" if sys.platform == "darwin" else "fork"
    context = multiprocessing.get_context(start_method)
    initargs = (spec_a, spec_b, seed, keep_records, duplicate)
    with context.Pool(workers, _init_worker, initargs) as pool:
        try:
            yield from pool.imap_unordered(_run_pair, range(pairs), chunksize=1)
        except BaseException:
            pool.terminate()
            raise


def check_agent_spec(spec: str) -> None:
    """Raise ValueError with the accepted names when ``spec`` names no agent."""
    make_agent(spec)


def evaluate(
    spec_a: str,
    spec_b: str,
    pairs: int,
    seed: int = 0,
    workers: int = 1,
    progress: bool = False,
    save_games: str | None = None,
    duplicate: bool = True,
) -> MatchReport:
    """Play ``pairs`` duplicate pairs; on Ctrl-C, report the pairs finished so far.

    ``duplicate=False`` gives each game its own deals (independent games).
    """
    check_agent_spec(spec_a)
    check_agent_spec(spec_b)
    results: list[PairResult] = []
    bar = progress_bar(pairs, f"{spec_a} vs {spec_b}") if progress else None
    start = time.perf_counter()
    interrupted = False
    try:
        for result in run_pairs(
            spec_a, spec_b, pairs, seed, workers, keep_records=bool(save_games), duplicate=duplicate
        ):
            results.append(result)
            if save_games:
                _save_pair(save_games, spec_a, spec_b, result)
            if bar is not None:
                bar.update(1)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        if bar is not None:
            bar.close()
    elapsed = time.perf_counter() - start
    return summarise((spec_a, spec_b), seed, results, pairs, elapsed, interrupted)


def _save_pair(directory: str, spec_a: str, spec_b: str, result: PairResult) -> None:
    folder = pathlib.Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    for label, game, jekyll, hyde in (
        ("a_jekyll", result.a_as_jekyll, spec_a, spec_b),
        ("a_hyde", result.a_as_hyde, spec_b, spec_a),
    ):
        record = dict(game.record or {})
        record["players"] = {"jekyll": jekyll, "hyde": hyde}
        path = folder / f"pair{result.index:05d}_{label}.json"
        temporary = path.with_suffix(".json.tmp")
        temporary.write_text(json.dumps(record))
        temporary.replace(path)


def progress_bar(total: int, description: str, unit: str = "pair", initial: int = 0) -> Any:
    """A tqdm bar on a terminal; None when stderr is a file or pipe (no bars in logs) or
    tqdm is missing. Every progress bar of the project is this one."""
    if not sys.stderr.isatty():
        return None
    try:
        from tqdm import tqdm  # lazy: tqdm comes with the train extra
    except ImportError:
        return None
    return tqdm(
        total=total, initial=initial, desc=description, unit=unit, file=sys.stderr,
        dynamic_ncols=True,
    )  # fmt: skip


# --- tournaments -----------------------------------------------------------
