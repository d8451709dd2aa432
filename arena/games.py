"""Games and duplicate pairs between two agents, written once as sequences of decisions.

A game is a generator (``game_moves``) that yields each ``Decision`` (the agent
to act, its view and its legal actions) and receives the chosen action. Played
one decision at a time (``drive``), it is an ordinary game; the arena's
side-by-side player (``jekyll_hyde_arena.side_by_side``) runs many of these
generators at once and answers the decisions of one model with one call. The
moves, and so the results, are the same either way (up to the last-bit rounding
of a batched product, which only an exact tie between two actions would show).

A *pair* is two games on the same deals (one seed fixes the shuffles of all
three rounds) with the roles swapped. Each game's seeds derive from (seed, pair
index) alone (``pair_seeds``), so results do not depend on the number of worker
processes or on which games were played side by side.

An illegal action is an error by default (``illegal="error"``). With
``illegal="forfeit"`` the game ends there and the player who chose it loses, as
competitions score it; the result records the forfeit.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

import numpy as np

from jekyll_hyde_env.engine import (
    apply_action,
    game_record,
    is_terminal,
    legal_actions,
    new_game,
    player_view,
)
from jekyll_hyde_env.engine.cards import AGENTS, HYDE, JEKYLL, TRACK_END
from jekyll_hyde_env.engine.state import PlayerView
from jekyll_hyde_env.engine.variant import FULL, Variant

ILLEGAL_MODES = ("error", "forfeit")


class IllegalMoveError(ValueError):
    """An agent chose an action that is not legal (``illegal="error"``)."""


@dataclass(frozen=True)
class Decision:
    """One decision a game waits for: who acts, what they see and what they may do."""

    agent: Any
    view: PlayerView
    legal: list[int]


@dataclass(frozen=True)
class GameResult:
    """One game: who won, the marker at the end and how many rounds were played.

    ``forfeit`` is the seat (0 Jekyll, 1 Hyde) that lost by an illegal action, or None.
    """

    winner: int
    marker: int
    rounds: int
    record: dict[str, Any] | None = None
    forfeit: int | None = None


@dataclass(frozen=True)
class PairResult:
    """The two games of a pair, seen from agent A.

    ``replaced`` counts, for A and for B, the illegal choices of a model that were
    replaced by its most probable legal action in this pair.
    """

    index: int
    a_as_jekyll: GameResult
    a_as_hyde: GameResult
    replaced: tuple[int, int] = (0, 0)

    @property
    def a_wins(self) -> int:
        return (self.a_as_jekyll.winner == JEKYLL) + (self.a_as_hyde.winner == HYDE)

    @property
    def forfeits(self) -> tuple[int, int]:
        """Games of this pair that A and that B lost by an illegal action."""
        a = (self.a_as_jekyll.forfeit == JEKYLL) + (self.a_as_hyde.forfeit == HYDE)
        b = (self.a_as_jekyll.forfeit == HYDE) + (self.a_as_hyde.forfeit == JEKYLL)
        return a, b

    @property
    def return_match(self) -> float:
        """A's return-match result: 1 win, 0.5 draw, 0 loss (RULES.md variant). A player
        who forfeited a game of the pair (``illegal="forfeit"``) loses the match, unless
        both did (a draw)."""
        a_forfeits, b_forfeits = self.forfeits
        if a_forfeits or b_forfeits:
            return 0.5 if a_forfeits and b_forfeits else float(b_forfeits > 0)
        a_score = self.a_as_hyde.marker  # A played Hyde in the second game
        b_score = self.a_as_jekyll.marker
        if a_score != b_score:
            return 1.0 if a_score > b_score else 0.0
        if a_score == TRACK_END and self.a_as_hyde.rounds != self.a_as_jekyll.rounds:
            return 1.0 if self.a_as_hyde.rounds < self.a_as_jekyll.rounds else 0.0
        return 0.5


def pair_seeds(seed: int, index: int) -> tuple[int, int, int, int]:
    """Seeds of pair ``index``, from ``seed`` alone.

    Args:
        seed: the match's seed.
        index: the pair's index in the match.

    Returns:
        deal: the deal seed of the pair's games.
        seed_a: A's agent seed (``reset`` before each of its games).
        seed_b: B's agent seed.
        other_deal: the second game's deal seed when the pair is not a duplicate.
    """
    deal, a, b, other_deal = np.random.SeedSequence([seed, index]).generate_state(4)
    return int(deal), int(a), int(b), int(other_deal)


def agent_name(agent: Any) -> str:
    """An agent's name in messages: its ``name``, or its class's.

    Args:
        agent: any agent.

    Returns:
        Its ``name`` when it has a non-empty one, else the name of its class.
    """
    return str(getattr(agent, "name", None) or type(agent).__name__)


Moves = Generator[Decision, Any, Any]


def game_moves(
    jekyll: Any,
    hyde: Any,
    deal_seed: int,
    keep_record: bool = False,
    illegal: str = "error",
    variant: Variant = FULL,
) -> Generator[Decision, Any, GameResult]:
    """One game on the deals of ``deal_seed``, as the decisions it waits for.

    Args:
        jekyll: the agent in the Jekyll seat.
        hyde: the agent in the Hyde seat.
        deal_seed: fixes the shuffles of all three rounds.
        keep_record: keep the game's record (``game_record``) in the result.
        illegal: ``"error"`` (an illegal action raises) or ``"forfeit"`` (the
            player who chose it loses the game, which ends there).
        variant: the version of the game (RULES.md V1-V7); the full game by default.

    Yields:
        Each ``Decision`` the game waits for: the agent to act, its view and its
            legal actions.

    Receives:
        The action chosen for that decision.

    Returns:
        The ``GameResult``: the winner, the marker's last space, the rounds played
            and, where one happened, the seat that forfeited.

    Raises:
        ValueError: ``illegal`` is neither ``"error"`` nor ``"forfeit"``.
        IllegalMoveError: an illegal action under ``illegal="error"``, naming the
            agent, its seat, the action and the legal ones.
    """
    if illegal not in ILLEGAL_MODES:
        raise ValueError(f"illegal={illegal!r}: one of {', '.join(ILLEGAL_MODES)}")
    state = new_game(np.random.default_rng(deal_seed), variant=variant)
    seats = (jekyll, hyde)
    while not is_terminal(state):
        player = state.to_act
        legal = legal_actions(state)
        action = yield Decision(seats[player], player_view(state, player), legal)
        if action not in legal:
            if illegal == "forfeit":
                return GameResult(
                    1 - player,
                    state.marker,
                    len(state.round_log),
                    game_record(state) if keep_record else None,
                    forfeit=player,
                )
            raise IllegalMoveError(
                f"agent {agent_name(seats[player])} playing {AGENTS[player]} chose illegal action "
                f"{action!r}; legal: {legal} (--illegal forfeit scores such a game as lost)"
            )
        apply_action(state, int(action))
    return GameResult(
        state.winner,
        state.marker,
        len(state.round_log),
        game_record(state) if keep_record else None,
    )


def _replacements(agent: Any) -> int:
    return int(getattr(agent, "replacements", 0))


def pair_moves(
    agent_a: Any,
    agent_b: Any,
    seed: int,
    index: int,
    keep_records: bool = False,
    duplicate: bool = True,
    illegal: str = "error",
    variant: Variant = FULL,
) -> Generator[Decision, Any, PairResult]:
    """Pair ``index`` as the decisions it waits for: both games on the same deals, roles
    swapped (with ``duplicate=False`` the second game gets deals of its own).

    Args:
        agent_a: agent A, Jekyll in the first game and Hyde in the second; reset
            with its seed of ``pair_seeds`` before each.
        agent_b: agent B, in the other seat.
        seed: the match's seed.
        index: the pair's index in the match.
        keep_records: keep each game's record in its ``GameResult``.
        duplicate: False gives the second game deals of its own.
        illegal: ``"error"`` or ``"forfeit"`` (see ``game_moves``).
        variant: the version of the game (RULES.md V1-V7); the full game by default.

    Yields:
        Each ``Decision`` of the two games, in order.

    Receives:
        The action chosen for that decision.

    Returns:
        The ``PairResult``, seen from A, with the illegal choices of each side's
            model that were replaced during the pair.

    Raises:
        ValueError: ``illegal`` is neither ``"error"`` nor ``"forfeit"``.
        IllegalMoveError: an illegal action under ``illegal="error"``.
    """
    deal_seed, seed_a, seed_b, other_deal_seed = pair_seeds(seed, index)
    before = _replacements(agent_a), _replacements(agent_b)
    agent_a.reset(seed_a)
    agent_b.reset(seed_b)
    first = yield from game_moves(agent_a, agent_b, deal_seed, keep_records, illegal, variant)
    agent_a.reset(seed_a)
    agent_b.reset(seed_b)
    second_deal = deal_seed if duplicate else other_deal_seed
    second = yield from game_moves(agent_b, agent_a, second_deal, keep_records, illegal, variant)
    replaced = (_replacements(agent_a) - before[0], _replacements(agent_b) - before[1])
    return PairResult(index, first, second, replaced)


def drive(moves: Moves) -> Any:
    """Play a game or pair of ``game_moves``/``pair_moves`` one decision at a time.

    Args:
        moves: the generator of a game or a pair; each decision goes to its
            agent's ``act``.

    Returns:
        What the generator returns: the ``GameResult`` or the ``PairResult``.
    """
    try:
        decision = next(moves)
        while True:
            decision = moves.send(decision.agent.act(decision.view, decision.legal))
    except StopIteration as stop:
        return stop.value


def play_game(
    jekyll: Any, hyde: Any, deal_seed: int, keep_record: bool = False, illegal: str = "error"
) -> GameResult:
    """Play one game between two agents on the deals of ``deal_seed``.

    Args:
        jekyll: the agent in the Jekyll seat.
        hyde: the agent in the Hyde seat.
        deal_seed: fixes the shuffles of all three rounds.
        keep_record: keep the game's record in the result.
        illegal: ``"error"`` or ``"forfeit"`` (see ``game_moves``).

    Returns:
        The ``GameResult``.

    Raises:
        ValueError: ``illegal`` is neither ``"error"`` nor ``"forfeit"``.
        IllegalMoveError: an illegal action under ``illegal="error"``.
    """
    return drive(game_moves(jekyll, hyde, deal_seed, keep_record, illegal))


def play_pair(
    agent_a: Any,
    agent_b: Any,
    seed: int,
    index: int,
    keep_records: bool = False,
    duplicate: bool = True,
    illegal: str = "error",
    variant: Variant = FULL,
) -> PairResult:
    """Pair ``index``: both games on the same deals, roles swapped.

    With ``duplicate=False`` the second game gets deals of its own, so the two
    games are independent (used to measure what duplication gains).

    Args:
        agent_a: agent A, Jekyll in the first game and Hyde in the second.
        agent_b: agent B, in the other seat.
        seed: the match's seed.
        index: the pair's index in the match (its seeds: ``pair_seeds``).
        keep_records: keep each game's record in its ``GameResult``.
        duplicate: False gives the second game deals of its own.
        illegal: ``"error"`` or ``"forfeit"`` (see ``game_moves``).
        variant: the version of the game (RULES.md V1-V7); the full game by default.

    Returns:
        The ``PairResult``, seen from A.

    Raises:
        ValueError: ``illegal`` is neither ``"error"`` nor ``"forfeit"``.
        IllegalMoveError: an illegal action under ``illegal="error"``.
    """
    return drive(
        pair_moves(agent_a, agent_b, seed, index, keep_records, duplicate, illegal, variant)
    )
