"""What a step of the game did, found once and told to the terminal and to the web pages.

A step is one action applied to a game state. ``step_events(before, after)`` lists what it
finished, in the order it happened: an exchange (R2.2) or Greed swap (T6b), a trick (T5,
T6), a round (R2.4) and the game. ``move(state, action)`` is the action itself. Each is a
small frozen dataclass of facts, with its sentences as methods:

- ``text(seen_by)``: the sentence of the web pages' logs, cards named by their names
  (``jekyll_hyde_app.web.views`` sends it with the facts as JSON);
- ``line(seen_by)``: the line ``jekyll-hyde play`` and ``replay`` print in the terminal,
  where cards are named with their ids, the ids the person types.

``seen_by`` is the player whose side an exchange or swap is told from (None: both sides,
as a replay or a watched game tells it); the other events read the same for everyone.
A round's and the game's end read the same in the terminal and on the pages. A trick, a
handover and a move are worded for each: the terminal names cards with ids, tells the
person only what an exchange brought, and says of a hidden pick that it stays hidden;
a page numbers the tricks and names the phase of a pick.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar, Literal

from jekyll_hyde_env.engine.cards import (
    AGENTS,
    COLOUR_NAMES,
    DECLARE_BASE,
    PHASE_NAMES,
    Phase,
    action_name,
    card_name,
    mask_to_ids,
)
from jekyll_hyde_env.engine.render import (
    cards_line,
    effect_note,
    game_end_reason,
    marker_move,
    trick_line,
    trick_plays,
    trick_reason,
)
from jekyll_hyde_env.engine.state import GameState, Trick

# The phases in which both players choose cards to hand over: the exchange and Greed swaps.
HANDOVER_PHASES = (int(Phase.EXCHANGE), int(Phase.SWAP))


def card_names(mask: int) -> str:
    """The cards of ``mask`` by name, ``wrath 5, potion 3+`` (``nothing`` when empty)."""
    return ", ".join(card_name(card) for card in mask_to_ids(mask)) or "nothing"


@dataclass(frozen=True)
class Move:
    """An action of the player to act: a card chosen for an exchange or Greed swap (kept
    hidden until both players have chosen), a card played, or a colour declared (T2)."""

    player: int
    phase: int  # the phase the action was taken in
    action: int

    def text(self) -> str:
        """What the watch page says of the move."""
        if self.phase in HANDOVER_PHASES:
            return f"{AGENTS[self.player]} chose a card for the {PHASE_NAMES[self.phase]}"
        return self._played()

    def line(self) -> str:
        """What the terminal says of the opponent's move."""
        if self.phase in HANDOVER_PHASES:
            return f"{AGENTS[self.player]} chose a card (hidden until both have chosen)"
        return self._played()

    def _played(self) -> str:
        if self.phase == Phase.DECLARE:
            return f"{AGENTS[self.player]} declares {COLOUR_NAMES[self.action - DECLARE_BASE]}"
        return f"{AGENTS[self.player]} plays {action_name(self.action)}"


def move(state: GameState, action: int) -> Move:
    """The move ``action`` of the player to act in ``state``, before it is applied."""
    return Move(state.to_act, int(state.phase), action)


@dataclass(frozen=True)
class Handover:
    """An exchange (R2.2) or Greed swap (T6b) just made: the chosen cards changed hands.

    ``given`` is, for each player, what the state records as given by this handover (its
    ``exch_given``, or what it adds to ``swap_given``: a card a player gives a second
    time in one round's swaps is recorded once, the first time). ``received`` is what
    each player's hand gained.
    """

    kind: Literal["exchange", "greed_swap"]
    round: int
    given: tuple[int, int]
    received: tuple[int, int]

    @property
    def name(self) -> str:
        return "Exchange" if self.kind == "exchange" else "Greed swap"

    def text(self, seen_by: int | None = None) -> str:
        """For a page's log: what ``seen_by`` gave and received, or what both players gave."""
        if seen_by is None:
            return self._both_gave(card_names)
        return (
            f"{self.name}: you gave {card_names(self.given[seen_by])} and received "
            f"{card_names(self.given[1 - seen_by])}"
        )

    def line(self, seen_by: int | None = None) -> str:
        """For the terminal: what ``seen_by`` received, or what both players gave."""
        if seen_by is None:
            return self._both_gave(cards_line)
        return f"{self.name}: you received {cards_line(self.received[seen_by])}"

    def _both_gave(self, names: Callable[[int], str]) -> str:
        return f"{self.name}: jekyll gave {names(self.given[0])}; hyde gave {names(self.given[1])}"


@dataclass(frozen=True)
class TrickDone:
    """A finished trick: who played what, who won and why (T5), what its potion did (T6)."""

    kind: ClassVar[str] = "trick"
    trick: Trick
    round: int
    number: int  # of the trick in its round, from 1
    hands_empty: bool  # the round's last trick, after which a Greed potion has nothing to swap

    @property
    def note(self) -> str:
        """What the trick's potion did, or why it did nothing (T6); empty without a potion."""
        return effect_note(self.trick, self.hands_empty)

    def text(self, seen_by: int | None = None) -> str:
        """For a page's log: ``Trick 3: <plays>; <winner> wins: <why>. <potion note>``."""
        trick, note = self.trick, self.note
        text = (
            f"Trick {self.number}: {trick_plays(trick)}; {AGENTS[trick.winner]} wins: "
            f"{trick_reason(trick)}"
        )
        return text + (f". {note}" if note else "")

    def line(self, seen_by: int | None = None) -> str:
        """For the terminal: ``Trick: <plays>: <winner> wins, <why> -- <potion note>``."""
        trick, note = self.trick, self.note
        return f"Trick: {trick_line(trick)}, {trick_reason(trick)}" + (
            f" -- {note}" if note else ""
        )


@dataclass(frozen=True)
class RoundOver:
    """A round's end: both trick counts and how the marker moved by their difference (R2.4)."""

    kind: ClassVar[str] = "round"
    round: int
    tricks: tuple[int, int]  # jekyll's, hyde's
    marker_before: int
    marker: int

    def text(self, seen_by: int | None = None) -> str:
        return (
            f"Round {self.round} over: jekyll {_tricks(self.tricks[0])}, hyde {self.tricks[1]}; "
            f"{marker_move(self.marker_before, self.marker)} (R2.4)"
        )

    line = text


def _tricks(count: int) -> str:
    return f"{count} trick" if count == 1 else f"{count} tricks"


@dataclass(frozen=True)
class GameOver:
    """The game's end: who won, and why (R2.4)."""

    kind: ClassVar[str] = "game"
    round: int
    winner: int
    reason: str

    def text(self, seen_by: int | None = None) -> str:
        return f"Game over: {AGENTS[self.winner]} wins: {self.reason}"

    line = text


Event = Handover | TrickDone | RoundOver | GameOver


def step_events(before: GameState, after: GameState) -> list[Event]:
    """What the step from ``before`` to ``after`` finished: an exchange or Greed swap, a
    trick (at a round's end, the round's last trick) with the round, and the game."""
    events: list[Event] = []
    if (
        before.phase in HANDOVER_PHASES
        and after.phase == Phase.LEAD
        and after.round == before.round
    ):
        events.append(_handover(before, after))
    round_over = after.round != before.round or after.phase == Phase.GAME_OVER
    if round_over and after.round_log:
        result = after.round_log[-1]
        number = len(after.round_log)
        if result.tricks:
            events.append(TrickDone(result.tricks[-1], number, len(result.tricks), True))
        tricks = (result.tricks_jekyll, result.tricks_hyde)
        events.append(RoundOver(number, tricks, before.marker, result.marker))
    elif len(after.trick_log) > len(before.trick_log):
        events.append(TrickDone(after.trick_log[-1], after.round, len(after.trick_log), False))
    if after.phase == Phase.GAME_OVER and before.phase != Phase.GAME_OVER:
        events.append(GameOver(after.round, after.winner, game_end_reason(after)))
    return events


def _handover(before: GameState, after: GameState) -> Handover:
    if before.phase == Phase.EXCHANGE:
        kind: Literal["exchange", "greed_swap"] = "exchange"
        given = (after.exch_given[0], after.exch_given[1])
    else:
        kind = "greed_swap"
        given = (
            after.swap_given[0] & ~before.swap_given[0],
            after.swap_given[1] & ~before.swap_given[1],
        )
    received = (
        after.hands[0] & ~before.hands[0],
        after.hands[1] & ~before.hands[1],
    )
    return Handover(kind, after.round, given, received)
