"""Scripted positions for rule tests: explicit hands in a short card notation.

``"P3"``, ``"W7"``, ``"G1"`` are Pride 3, Wrath 7, Greed 1; ``"2+"`` to ``"5+"``
are potions; ``"pride"``, ``"wrath"``, ``"greed"`` as actions declare a colour.
"""

from __future__ import annotations

import numpy as np

from jekyll_hyde_env.engine import rules
from jekyll_hyde_env.engine.cards import (
    ALL_CARDS,
    COLOUR_NAMES,
    DECLARE_BASE,
    JEKYLL,
    Phase,
    card_id,
    ids_to_mask,
    potion_id,
)
from jekyll_hyde_env.engine.state import GameState

_COLOUR_LETTERS = {"P": 0, "W": 1, "G": 2}


def card(name: str) -> int:
    """Card id of a short name such as ``"W5"`` or ``"3+"``."""
    if name.endswith("+"):
        return potion_id(int(name[:-1]))
    return card_id(_COLOUR_LETTERS[name[0]], int(name[1:]))


def action(name: str) -> int:
    """Action id of a card name or a colour to declare."""
    if name in COLOUR_NAMES:
        return DECLARE_BASE + COLOUR_NAMES.index(name)
    return card(name)


def hand(*names: str) -> int:
    """Card mask of short card names."""
    return ids_to_mask(card(n) for n in names)


def play(state: GameState, *names: str) -> None:
    """Apply actions given by name, in order."""
    for name in names:
        rules.apply_action(state, action(name))


def later_deals(seed: int = 0) -> list[tuple[int, int]]:
    """Three valid deals, used for rounds after a scripted one."""
    rng = np.random.default_rng(seed)
    return [rules.deal_from_rng(rng) for _ in range(3)]


def trick_state(
    jekyll: list[str] | tuple[str, ...],
    hyde: list[str] | tuple[str, ...],
    *,
    leader: int = JEKYLL,
    ranks: tuple[int, ...] = (),
    tricks: tuple[int, int] = (0, 0),
    marker: int = 0,
    round_number: int = 1,
) -> GameState:
    """A state at the lead of a trick with exactly the given hands.

    Cards in neither hand count as set aside or played in earlier tricks; the
    hands must be of equal size, as they are at every lead.
    """
    j, h = hand(*jekyll), hand(*hyde)
    assert len(jekyll) == len(hyde), "hands are equal at every lead"
    deals = later_deals()
    deals[round_number - 1] = (j, h)
    state = GameState(deals=deals)
    state.round = round_number
    state.marker = marker
    state.phase = int(Phase.LEAD)
    state.to_act = leader
    state.leader = leader
    state.hands = [j, h]
    state.set_aside = ALL_CARDS ^ j ^ h
    state.ranks = list(ranks)
    state.tricks = list(tricks)
    return state
