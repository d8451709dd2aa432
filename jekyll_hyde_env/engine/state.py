"""The game state and a player's view of it: plain data, no behaviour.

``GameState`` holds everything, hidden information included; only the rules
module changes it. ``PlayerView`` holds what one player knows (RULES.md, "What
each player knows"); agents receive views, never states. Card sets are 25-bit
masks (see ``cards``); per-player lists are indexed by player id (0 Jekyll,
1 Hyde).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from jekyll_hyde_env.engine.variant import FULL, Variant


class Trick(NamedTuple):
    """One finished trick, as every player saw it."""

    leader: int
    lead_card: int
    declared: int  # colour id declared after a potion lead (T2), else -1
    follow_card: int
    winner: int
    effect: int  # cards.Effect (T6)
    pride_steal: bool  # True when T6a moved a trick from the loser to the winner


class RoundResult(NamedTuple):
    """A finished round: trick counts after Pride steals, marker after R2.4, its tricks."""

    tricks_jekyll: int
    tricks_hyde: int
    marker: int
    tricks: tuple[Trick, ...]


@dataclass(slots=True)
class GameState:
    """Complete state of one game.

    ``deals[r]`` is the (Jekyll, Hyde) hand dealt in round ``r + 1``. All three
    deals are drawn when the game starts, so ``apply_action`` needs no
    randomness; the deals of later rounds are hidden from both players.
    ``history`` lists every action applied, so that ``deals`` and ``history``
    together replay the game exactly; ``round_log`` holds a ``RoundResult`` for
    each finished round. ``variant`` is the version of the game being played
    (RULES.md V1-V7; ``FULL`` unless a smaller one was asked for).
    """

    deals: list[tuple[int, int]]
    round: int = 1
    marker: int = 0
    phase: int = 0
    to_act: int = 0
    leader: int = 0
    hands: list[int] = field(default_factory=lambda: [0, 0])
    set_aside: int = 0
    potion_rule: list[bool] = field(default_factory=lambda: [False, False])
    picks: list[int] = field(default_factory=lambda: [0, 0])
    picks_left: list[int] = field(default_factory=lambda: [0, 0])
    lead_card: int = -1
    declared: int = -1
    ranks: list[int] = field(default_factory=list)
    tricks: list[int] = field(default_factory=lambda: [0, 0])
    played: list[int] = field(default_factory=lambda: [0, 0])
    exch_given: list[int] = field(default_factory=lambda: [0, 0])
    swap_given: list[int] = field(default_factory=lambda: [0, 0])
    void: list[int] = field(default_factory=lambda: [0, 0])
    trick_log: list[Trick] = field(default_factory=list)
    history: list[int] = field(default_factory=list)
    round_log: list[RoundResult] = field(default_factory=list)
    winner: int = -1
    variant: Variant = FULL

    def clone(self) -> GameState:
        """An independent copy (the only copy search needs).

        Returns:
            A new ``GameState`` equal to this one whose lists (hands, picks, ranks, trick
            counts, logs, history, ...) are copies, so that applying actions to one
            leaves the other unchanged. ``deals`` is shared: the rules never change it.
        """
        return GameState(
            self.deals,
            self.round,
            self.marker,
            self.phase,
            self.to_act,
            self.leader,
            self.hands[:],
            self.set_aside,
            self.potion_rule[:],
            self.picks[:],
            self.picks_left[:],
            self.lead_card,
            self.declared,
            self.ranks[:],
            self.tricks[:],
            self.played[:],
            self.exch_given[:],
            self.swap_given[:],
            self.void[:],
            self.trick_log[:],
            self.history[:],
            self.round_log[:],
            self.winner,
            self.variant,
        )


class PlayerView(NamedTuple):
    """What ``player`` knows at one moment of the game, and nothing more.

    Masks and pairs are seen from the player's side: ``tricks`` is
    ``(mine, opponent's)``, ``played`` is what the player played this round and
    ``opp_played`` what the opponent played. ``opp_known`` are the cards the
    player gave to the opponent that the opponent still holds. ``opp_void`` has
    bit ``c`` set when the opponent failed to follow colour ``c`` this round
    (T3), so the opponent holds no card of that colour beyond ``opp_known``;
    ``void`` is the same public fact about the player.
    ``opp_dealt_potions_seen`` counts the potions the player has seen pass
    through the opponent's hands that the player was not dealt, so the opponent
    was dealt them. ``opp_gave_potion`` is None until the exchange is complete,
    then whether the opponent's exchange cards included a potion (R2.2). A view
    is a tuple of plain values, so it is hashable and cheap to build.
    """

    player: int
    round: int
    marker: int
    phase: int
    to_act: int
    leader: int
    hand: int
    dealt: int
    picks: int
    picks_left: int
    opp_picks_made: int
    opp_hand_size: int
    played: int
    opp_played: int
    exch_given: int
    exch_received: int
    swap_given: int
    swap_received: int
    opp_known: int
    void: int
    opp_void: int
    opp_dealt_potions_seen: int
    opp_gave_potion: bool | None
    lead_card: int
    declared: int
    ranks: tuple[int, ...]
    tricks: tuple[int, int]
    trick_log: tuple[Trick, ...]
    winner: int
    variant: Variant = FULL
