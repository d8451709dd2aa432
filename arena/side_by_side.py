"""Pairs played side by side, so that a model is asked once for all the games waiting on it.

A network's forward pass costs about as much for one observation as for dozens:
what costs is the call. ``play_side_by_side`` keeps up to ``slots`` pairs under
way at once (each a ``pair_moves`` generator of ``jekyll_hyde_arena.games``),
plays every decision of an ordinary agent as it comes, and collects the
decisions of models (``ModelAgent``s sharing one ``ScoringModel``) until every
game waits on a model; then each model scores all its waiting observations in
one call, and each game's own agent chooses from its row.

Each slot has its own agents: models and saved policies are ``spawn``ed (one
shared network, a generator and counts of their own), other agents are built
again from their source. A pair's moves therefore depend on its seeds alone, as
when the pairs are played one after another (up to the rounding of a batched
product).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from jekyll_hyde_agents.model_agent import ModelAgent, choose_many
from jekyll_hyde_arena.games import Decision, PairResult, pair_moves
from jekyll_hyde_env.engine.variant import FULL, Variant

DEFAULT_SLOTS = 64
"""Pairs under way at once: enough that a model's call serves dozens of decisions."""


def is_batched(agent: Any) -> bool:
    """Whether the arena asks ``agent`` for several games' moves at once.

    Args:
        agent: any agent.

    Returns:
        True for a ``ModelAgent``, whose model scores many games in one call.
    """
    return isinstance(agent, ModelAgent)


def slot_agents(agent: Any, build: Callable[[], Any], slots: int) -> list[Any]:
    """``slots`` agents playing as ``agent``: spawns of an agent that can spawn (a model,
    a saved policy: shared weights, a generator of their own), new builds of others.

    Args:
        agent: the agent of the first slot.
        build: builds another agent of the same side (its ``AgentSource.build``),
            for an agent that cannot ``spawn``.
        slots: how many agents, ``agent`` included.

    Returns:
        ``agent``, then ``slots - 1`` others.
    """
    if hasattr(agent, "spawn"):
        return [agent] + [agent.spawn() for _ in range(slots - 1)]
    return [agent] + [build() for _ in range(slots - 1)]


def play_side_by_side(
    agents_a: list[Any],
    agents_b: list[Any],
    indices: Iterable[int],
    seed: int,
    keep_records: bool = False,
    duplicate: bool = True,
    illegal: str = "error",
    variant: Variant = FULL,
) -> Iterator[PairResult]:
    """Yield the result of each pair in ``indices`` as it ends (in any order), playing
    ``len(agents_a)`` pairs at once; slot ``k`` plays with ``agents_a[k]`` and ``agents_b[k]``.

    Args:
        agents_a: agent A of each slot (``slot_agents``).
        agents_b: agent B of each slot, as many.
        indices: the indices of the pairs to play.
        seed: the match's seed (with a pair's index, its seeds: ``pair_seeds``).
        keep_records: keep each game's record in its ``GameResult``.
        duplicate: False gives the second game of each pair deals of its own.
        illegal: ``"error"`` or ``"forfeit"`` (see ``game_moves``).
        variant: the version of the game (RULES.md V1-V7); the full game by default.

    Yields:
        Each pair's ``PairResult`` as it ends, in any order.

    Raises:
        IllegalMoveError: an illegal action under ``illegal="error"``.
    """
    pending = iter(indices)
    running: dict[int, Any] = {}  # slot -> its pair's generator
    waiting: dict[int, Decision] = {}  # slot -> the model decision it waits for

    def advance(
        slot: int, moves: Any, action: Any = None, first: bool = False
    ) -> PairResult | None:
        """Run ``moves`` until it waits on a model (kept in ``waiting``) or ends (returned)."""
        try:
            decision = next(moves) if first else moves.send(action)
            while not is_batched(decision.agent):
                decision = moves.send(decision.agent.act(decision.view, decision.legal))
        except StopIteration as stop:
            running.pop(slot, None)
            return stop.value
        waiting[slot] = decision
        return None

    def start(slot: int) -> Iterator[PairResult]:
        """Start pairs in ``slot`` until one waits on a model or none are left."""
        for index in pending:
            moves = pair_moves(
                agents_a[slot],
                agents_b[slot],
                seed,
                index,
                keep_records,
                duplicate,
                illegal,
                variant,
            )
            running[slot] = moves
            result = advance(slot, moves, first=True)
            if result is None:
                return
            yield result

    for slot in range(len(agents_a)):
        yield from start(slot)
    while waiting:
        by_model: dict[int, list[int]] = {}
        for slot, decision in waiting.items():
            by_model.setdefault(id(decision.agent.model), []).append(slot)
        answered: dict[int, int] = {}  # slot -> the action its model chose
        for slots in by_model.values():
            decisions = [waiting[slot] for slot in slots]
            actions = choose_many(
                [d.agent for d in decisions],
                [d.view for d in decisions],
                [d.legal for d in decisions],
            )
            answered.update(zip(slots, actions, strict=True))
        waiting.clear()
        for slot, action in answered.items():
            result = advance(slot, running[slot], action)
            if result is not None:
                yield result
                yield from start(slot)
