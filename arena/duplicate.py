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

import contextlib
import json
import math
import multiprocessing
import pathlib
import signal
import sys
import time
from collections.abc import Iterator
from typing import Any

from threadpoolctl import threadpool_limits

from jekyll_hyde_agents.sources import source_of
from jekyll_hyde_arena.games import (
    ILLEGAL_MODES,
    GameResult,
    PairResult,
    drive,
    pair_moves,
    pair_seeds,
    play_game,
    play_pair,
)
from jekyll_hyde_arena.report import MatchReport, summarise
from jekyll_hyde_arena.side_by_side import DEFAULT_SLOTS, is_batched, play_side_by_side, slot_agents
from jekyll_hyde_env.engine.variant import FULL, Variant

__all__ = [
    "GameResult",
    "PairResult",
    "drive",
    "pair_moves",
    "pair_seeds",
    "play_game",
    "play_pair",
]


# --- running pairs in parallel ----------------------------------------------

_WORKER: dict[str, Any] = {}

AgentLike = Any
"""A side of a match: a spec string (a name, a file, ``jekyll=A,hyde=B``), an ``Agent``, a
function ``f(observation, action_mask)``, a library's object (an SB3 model, an RLlib
``Algorithm`` or ``RLModule``, ...), an ``AgentSource``, or a function of no arguments that
builds the agent in each worker (for agents that load models of their own; under
``start_method="spawn"`` it must be importable by name, or a ``functools.partial`` of
one). See ``jekyll_hyde_agents.sources``."""


def one_blas_thread() -> Any:
    """Limit numpy's BLAS to one thread until the returned limiter is restored.

    A policy's forward pass is a chain of matrix-vector products: threads
    cannot speed those up, and when the arena's workers already keep every
    core busy, BLAS threads spinning for work take the cores from the games.
    Beside labelling work, 1,000 pairs of a 1024-wide ensemble against
    ismcts:1000 took 9 minutes where a 512-wide policy took 2.

    Returns:
        threadpoolctl's limiter: ``restore_original_limits()``, or the end of a
            ``with`` block over it, gives BLAS its threads back.
    """
    return threadpool_limits(limits=1, user_api="blas")


def _one_torch_thread() -> None:
    """Torch on one thread in a worker process, when a model brought torch in: the
    workers already keep the cores busy, and torch's thread pool does not survive a fork."""
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)


@contextlib.contextmanager
def one_torch_thread_here() -> Iterator[None]:
    """Torch on one thread in this process while the games run, then as it was: a model's
    forward pass on a few dozen rows gains nothing from threads, and under load torch's
    threads wait for each other (a match ran 40 times slower with them).

    Yields:
        Control, once, to the ``with`` block; torch's thread count is restored when
            the block ends (nothing is changed where torch is not loaded).
    """
    torch = sys.modules.get("torch")
    if torch is None:
        yield
        return
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def _init_worker(
    source_a: AgentLike,
    source_b: AgentLike,
    seed: int,
    keep_records: bool,
    duplicate: bool = True,
    illegal: str = "error",
    slots: int = 1,
    built: tuple[Any, Any] | None = None,
    variant: Variant = FULL,
) -> None:
    """Build this process's agents (or take ``built``, agents this process built already),
    one per slot where a side is a model."""
    if multiprocessing.parent_process() is not None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
        _WORKER["blas"] = one_blas_thread()  # the worker process's own, for its lifetime
    source_a, source_b = source_of(source_a), source_of(source_b)
    a, b = built if built is not None else (source_a.build(), source_b.build())
    if multiprocessing.parent_process() is not None:
        _one_torch_thread()
    own_copies = all(
        source.rebuildable or hasattr(agent, "spawn")
        for source, agent in ((source_a, a), (source_b, b))
    )  # an object that can be neither rebuilt nor spawned plays one game at a time
    if slots > 1 and (is_batched(a) or is_batched(b)) and own_copies:
        agents_a = slot_agents(a, source_a.build, slots)
        agents_b = slot_agents(b, source_b.build, slots)
    else:
        agents_a, agents_b = [a], [b]
    _WORKER.update(
        a=agents_a,
        b=agents_b,
        seed=seed,
        keep=keep_records,
        dup=duplicate,
        illegal=illegal,
        variant=variant,
    )


def _init_worker_or_keep_error(*args: Any) -> None:
    """``_init_worker`` in a worker process: an agent that cannot be built there is kept
    as an error that the worker's first chunk raises, so that the match stops with it
    (an initializer that raises makes the pool start new workers without end)."""
    try:
        _init_worker(*args)
    except Exception as error:  # noqa: BLE001 - passed on to the parent as it is
        _WORKER["error"] = error


def _run_chunk(indices: list[int]) -> list[PairResult]:
    worker = _WORKER
    if "error" in worker:
        raise worker["error"]
    if len(worker["a"]) == 1:
        a, b = worker["a"][0], worker["b"][0]
        return [
            drive(
                pair_moves(
                    a,
                    b,
                    worker["seed"],
                    i,
                    worker["keep"],
                    worker["dup"],
                    worker["illegal"],
                    worker["variant"],
                )  # fmt: skip
            )
            for i in indices
        ]
    return list(
        play_side_by_side(
            worker["a"], worker["b"], indices, worker["seed"], worker["keep"], worker["dup"],
            worker["illegal"], worker["variant"],
        )
    )  # fmt: skip


def _chunks(pairs: int, size: int) -> list[list[int]]:
    return [list(range(start, min(start + size, pairs))) for start in range(0, pairs, size)]


def run_pairs(
    spec_a: AgentLike,
    spec_b: AgentLike,
    pairs: int,
    seed: int,
    workers: int = 1,
    keep_records: bool = False,
    duplicate: bool = True,
    start_method: str | None = None,
    illegal: str = "error",
    slots: int = DEFAULT_SLOTS,
    built: tuple[Any, Any] | None = None,
    variant: Variant = FULL,
) -> Iterator[PairResult]:
    """Yield pair results (in any order) as they finish; ``workers`` processes.

    Where a side is a model (``ModelAgent``), each process plays up to ``slots``
    pairs side by side and asks the model once per batch of waiting decisions
    (``jekyll_hyde_arena.side_by_side``); otherwise pairs are played one by one.
    The results are the same either way (up to the last-bit rounding of a
    batched product: ``jekyll_hyde_agents.model_agent``). Games run with BLAS on one thread
    (``one_blas_thread``); with one worker, the limit holds in this process until
    the generator finishes or closes. ``built`` (A's and B's agents, built
    already) saves building them again when one process plays.

    The workers fork unless ``start_method`` says otherwise, or spawn on macOS,
    and where a side is a model while torch is loaded: torch's threads do not
    survive a fork, and a forked worker running torch can hang.

    Args:
        spec_a: agent A, anything ``evaluate`` takes (``AgentLike``).
        spec_b: agent B, the same kinds.
        pairs: how many pairs to play; their indices are ``0 .. pairs - 1``.
        seed: with each pair's index, fixes its deals and its agents' seeds
            (``pair_seeds``).
        workers: processes playing pairs; 1 plays them in this process.
        keep_records: keep each game's record in its ``GameResult.record``.
        duplicate: False gives the second game of each pair deals of its own.
        start_method: ``multiprocessing``'s start method for the workers
            (``"fork"``, ``"spawn"``, ``"forkserver"``), or None to choose as above.
        illegal: ``"error"`` (an illegal action raises) or ``"forfeit"`` (the
            player who chose it loses the game).
        slots: at most this many pairs played side by side in each process where a
            side is a model (never more than the pairs each worker gets).
        built: A's and B's agents, built already: one process plays with them, and
            several workers build their own but look at these to choose the
            start method.
        variant: the version of the game (RULES.md V1-V7); the full game by default.

    Yields:
        Each pair's ``PairResult`` as it finishes, in any order.

    Raises:
        ValueError: ``illegal`` is neither ``"error"`` nor ``"forfeit"`` (when the
            generator starts).
        IllegalMoveError: an illegal action under ``illegal="error"``.
    """
    if illegal not in ILLEGAL_MODES:
        raise ValueError(f"illegal={illegal!r}: one of {', '.join(ILLEGAL_MODES)}")
    source_a, source_b = source_of(spec_a), source_of(spec_b)
    slots = max(1, min(slots, pairs if workers <= 1 else math.ceil(pairs / workers)))
    if workers <= 1:
        _init_worker(
            source_a, source_b, seed, keep_records, duplicate, illegal, slots, built, variant
        )
        with one_blas_thread(), one_torch_thread_here():
            if len(_WORKER["a"]) == 1:
                for index in range(pairs):
                    yield _run_chunk([index])[0]
            else:
                yield from play_side_by_side(
                    _WORKER["a"], _WORKER["b"], range(pairs), seed, keep_records, duplicate,
                    illegal, variant,
                )  # fmt: skip
        return
    if start_method is None:
        torch_models = built is not None and any(holds_model(agent) for agent in built)
        torch_models = torch_models and "torch" in sys.modules
        start_method = "spawn" if sys.platform == "darwin" or torch_models else "fork"
    context = multiprocessing.get_context(start_method)
    initargs = (source_a, source_b, seed, keep_records, duplicate, illegal, slots, None, variant)
    size = max(1, min(slots, math.ceil(pairs / workers)))
    with context.Pool(workers, _init_worker_or_keep_error, initargs) as pool:
        try:
            for chunk in pool.imap_unordered(_run_chunk, _chunks(pairs, size), chunksize=1):
                yield from chunk
        except BaseException:
            pool.terminate()
            raise


def holds_model(agent: Any) -> bool:
    """Whether ``agent`` plays a model (``ModelAgent``), itself or inside a wrapper.

    Args:
        agent: an agent, or a wrapper holding its agents in ``agents`` (as the
            ``jekyll=A,hyde=B`` agent does) or in ``agent``.

    Returns:
        True when ``agent``, or an agent it holds at any depth, is a ``ModelAgent``.
    """
    inner = list(getattr(agent, "agents", ())) + [getattr(agent, "agent", None)]
    return is_batched(agent) or any(holds_model(a) for a in inner if a is not None)


def check_agent_spec(spec: AgentLike) -> Any:
    """The agent ``spec`` names; ValueError, with the accepted names, when it names none.

    Args:
        spec: a side of a match, anything ``evaluate`` takes (``AgentLike``).

    Returns:
        The agent, built in this process.

    Raises:
        ValueError: ``spec`` names no agent or cannot be built; the message says
            what is accepted (``AgentTypeError``, a ``TypeError`` too, for an
            object of no accepted kind).
    """
    return source_of(spec).build()


def evaluate(
    spec_a: AgentLike,
    spec_b: AgentLike,
    pairs: int,
    seed: int = 0,
    workers: int = 1,
    progress: bool = False,
    save_games: str | None = None,
    duplicate: bool = True,
    illegal: str = "error",
    deterministic: bool = True,
    labels: tuple[str | None, str | None] = (None, None),
    variant: Variant = FULL,
) -> MatchReport:
    """Play ``pairs`` duplicate pairs between two agents; on Ctrl-C, report the pairs
    finished so far.

    Args:
        spec_a: agent A: a spec string, an ``Agent``, a function
            ``f(observation, action_mask) -> action``, a library's model in memory
            (SB3, RLlib, Tianshou, RLCard, OpenSpiel) or an ``AgentSource``
            (see ``AgentLike``).
        spec_b: agent B, the same kinds.
        pairs: duplicate pairs to play (two games each).
        seed: fixes every deal and every agent's own randomness.
        workers: processes playing games. An agent that cannot be rebuilt in a
            worker (an object that does not pickle) plays in this process: the
            match then says so on stderr and uses one worker.
        progress: show a progress bar on a terminal.
        save_games: a folder to write every game's record into.
        duplicate: False gives each game its own deals (independent games).
        illegal: ``"error"`` (an illegal action stops the match) or ``"forfeit"``
            (the game is lost by the player who chose it, and counted).
        deterministic: models given as files or library objects play their best
            action (True) or sample from their policy.
        labels: names of A and B in the report (default: the spec, or the agent's name).
        variant: the version of the game (RULES.md V1-V7); the full game by default.

    Returns:
        The ``MatchReport``: A's score with its 95% interval, per-role win rates,
            return matches, illegal choices replaced and games forfeited.

    Raises:
        ValueError: an agent that cannot be built (its message names it; an object
            of no accepted kind raises ``AgentTypeError``, a ``TypeError`` too), an
            illegal action under ``illegal="error"``, or an agent's own error
            (``AgentError``, ``ModelError``).
    """
    source_a = source_of(spec_a, deterministic, labels[0])
    source_b = source_of(spec_b, deterministic, labels[1])
    built = (check_agent_spec(source_a), check_agent_spec(source_b))
    if workers > 1:
        notes = [source.note for source in (source_a, source_b) if not source.rebuildable]
        if notes:
            print(f"note: {notes[0]}: one worker plays this match", file=sys.stderr)
            workers = 1
    names = (source_a.label, source_b.label)
    results: list[PairResult] = []
    bar = progress_bar(pairs, f"{names[0]} vs {names[1]}") if progress else None
    start = time.perf_counter()
    interrupted = False
    try:
        for result in run_pairs(
            source_a, source_b, pairs, seed, workers, keep_records=bool(save_games),
            duplicate=duplicate, illegal=illegal, built=built, variant=variant,
        ):  # fmt: skip
            results.append(result)
            if save_games:
                _save_pair(save_games, names[0], names[1], result)
            if bar is not None:
                bar.update(1)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        if bar is not None:
            bar.close()
    elapsed = time.perf_counter() - start
    return summarise(names, seed, results, pairs, elapsed, interrupted)


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
    tqdm is missing. Every progress bar of the project is this one.

    Args:
        total: the count at which the bar is full.
        description: the text shown before the bar.
        unit: what one step of the bar counts (``"pair"``, ``"game"``, ...).
        initial: the steps done already (a run that resumes).

    Returns:
        The ``tqdm`` bar, on stderr (call ``update(n)`` and ``close()``), or None.
    """
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
