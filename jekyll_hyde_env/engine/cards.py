"""Every number RULES.md tabulates, declared once.

Cards are ids 0-24 (Pride 1-7, Wrath 1-7, Greed 1-7, Potions 2+ to 5+), colours
are ids 0-2 (Pride, Wrath, Greed), and the action space is ``Discrete(28)``: ids
0-24 play or choose a card, ``DECLARE_BASE + colour`` (25-27) declares a colour.
Sets of cards are 25-bit integers (bit ``i`` set means card ``i`` is in the
set); this module also provides the tables that turn such masks back into ids.
No other module spells out one of these numbers.
"""

from __future__ import annotations

from enum import IntEnum

NUM_CARDS = 25
NUM_COLOURS = 3
VALUES_PER_COLOUR = 7
NUM_POTIONS = 4
FIRST_POTION = NUM_COLOURS * VALUES_PER_COLOUR  # card id 21 is potion 2+
DECLARE_BASE = NUM_CARDS
NUM_ACTIONS = DECLARE_BASE + NUM_COLOURS  # 28

HAND_SIZE = 10
TRICKS_PER_ROUND = HAND_SIZE
MAX_ROUNDS = 3  # R1
TRACK_END = 10  # marker space that makes Hyde win (R2.4)
HYDE_LEADS_FROM = 5  # R3: Hyde leads the first trick from space 5 on
GREED_SWAP_SIZE = 2  # T6b: each player swaps min(2, cards in hand)
POTION_RULE_THRESHOLD = 2  # R2.2: holding 2+ dealt potions forces giving one

AGENTS = ("jekyll", "hyde")
JEKYLL = 0
HYDE = 1

COLOUR_NAMES = ("pride", "wrath", "greed")
PRIDE = 0
WRATH = 1
GREED = 2


class Phase(IntEnum):
    """Decision points of RULES.md, in the order a round visits them."""

    EXCHANGE = 0
    LEAD = 1
    DECLARE = 2
    FOLLOW = 3
    SWAP = 4
    GAME_OVER = 5


NUM_PHASES = 5  # decision phases; GAME_OVER is not a decision point
PHASE_NAMES = ("exchange", "lead", "declare", "follow", "swap", "game_over")


class Effect(IntEnum):
    """Potion effect of a trick (T6); NONE when zero or two potions were played."""

    NONE = 0
    PRIDE = 1
    WRATH = 2
    GREED = 3


EFFECT_NAMES = ("none", "pride", "wrath", "greed")
EFFECT_OF_COLOUR = (Effect.PRIDE, Effect.WRATH, Effect.GREED)

ALL_CARDS = (1 << NUM_CARDS) - 1
POTIONS = ((1 << NUM_POTIONS) - 1) << FIRST_POTION
COLOUR_MASKS = tuple(
    ((1 << VALUES_PER_COLOUR) - 1) << (VALUES_PER_COLOUR * c) for c in range(NUM_COLOURS)
)
DECLARE_MASK = ((1 << NUM_COLOURS) - 1) << DECLARE_BASE


def is_potion(card: int) -> bool:
    """True for card ids 21-24.

    Args:
        card: a card id, 0-24.

    Returns:
        True for a potion (2+ to 5+), False for a colour card.
    """
    return card >= FIRST_POTION


def colour_of(card: int) -> int:
    """Colour id of a colour card (0-2), or -1 for a potion.

    Args:
        card: a card id, 0-24.

    Returns:
        0 Pride (ids 0-6), 1 Wrath (7-13), 2 Greed (14-20), or -1 for a potion (21-24).
    """
    return card // VALUES_PER_COLOUR if card < FIRST_POTION else -1


def value_of(card: int) -> int:
    """Face value: 1-7 for a colour card, the potion's number 2-5 for a potion.

    Args:
        card: a card id, 0-24.

    Returns:
        The colour card's value, 1-7, or the potion's number, 2-5 (a potion's strength
        is that number and a half, T5b).
    """
    if card < FIRST_POTION:
        return card % VALUES_PER_COLOUR + 1
    return card - FIRST_POTION + 2


def card_id(colour: int, value: int) -> int:
    """Card id of the colour card ``value`` (1-7) of ``colour`` (0-2).

    Args:
        colour: the colour id, 0 Pride, 1 Wrath or 2 Greed.
        value: the card's value, 1-7.

    Returns:
        The card id, ``7 * colour + value - 1`` (0-20).

    Raises:
        ValueError: ``colour`` is not 0-2 or ``value`` is not 1-7.
    """
    if not 0 <= colour < NUM_COLOURS or not 1 <= value <= VALUES_PER_COLOUR:
        raise ValueError(
            f"no colour card with colour {colour} and value {value}: colours are "
            f"0-{NUM_COLOURS - 1}, values 1-{VALUES_PER_COLOUR}"
        )
    return colour * VALUES_PER_COLOUR + value - 1


def potion_id(number: int) -> int:
    """Card id of the potion ``number``+ (2-5).

    Args:
        number: the potion's number, 2-5.

    Returns:
        The card id, 21 (potion 2+) to 24 (potion 5+).

    Raises:
        ValueError: ``number`` is not 2-5.
    """
    if not 2 <= number <= NUM_POTIONS + 1:
        raise ValueError(f"no potion {number}+: potions are 2+ to {NUM_POTIONS + 1}+")
    return FIRST_POTION + number - 2


def card_name(card: int) -> str:
    """Human name of a card id, e.g. ``"wrath 5"`` or ``"potion 3+"``.

    Args:
        card: a card id, 0-24.

    Returns:
        The colour's name and the value (``"pride 1"`` to ``"greed 7"``), or ``"potion"``
        and the potion's number (``"potion 2+"`` to ``"potion 5+"``).

    Raises:
        ValueError: ``card`` is not 0-24.
    """
    if not 0 <= card < NUM_CARDS:
        raise ValueError(f"card id {card} is out of range 0-{NUM_CARDS - 1}")
    if card >= FIRST_POTION:
        return f"potion {value_of(card)}+"
    return f"{COLOUR_NAMES[colour_of(card)]} {value_of(card)}"


def action_name(action: int) -> str:
    """Human name of an action id: a card name, or ``"declare <colour>"``.

    Args:
        action: an action id, 0-27: 0-24 a card, 25-27 the colour declared (T2), Pride,
            Wrath or Greed.

    Returns:
        ``card_name(action)`` for actions 0-24; ``"declare pride"``, ``"declare wrath"``
        or ``"declare greed"`` for actions 25-27.

    Raises:
        ValueError: ``action`` is not 0-27.
    """
    if 0 <= action < NUM_CARDS:
        return card_name(action)
    if DECLARE_BASE <= action < NUM_ACTIONS:
        return f"declare {COLOUR_NAMES[action - DECLARE_BASE]}"
    raise ValueError(f"action {action} is out of range 0-{NUM_ACTIONS - 1}")


# Doubled strength, so a potion's "number plus one half" stays an integer (T5b):
# colour card of value v -> 2v, potion n+ -> 2n + 1.
STRENGTH2 = tuple(2 * value_of(c) + (1 if c >= FIRST_POTION else 0) for c in range(NUM_CARDS))
COLOUR_OF = tuple(colour_of(c) for c in range(NUM_CARDS))

# Mask -> ids tables, split in two halves so that they stay small.
_LOW_BITS = 13
_LOW_MASK = (1 << _LOW_BITS) - 1
_HIGH_SIZE = 1 << (NUM_ACTIONS - _LOW_BITS)


def _ids_table(size: int, offset: int) -> tuple[tuple[int, ...], ...]:
    return tuple(
        tuple(offset + i for i in range(m.bit_length()) if m >> i & 1) for m in range(size)
    )


_LOW_IDS = _ids_table(1 << _LOW_BITS, 0)
_HIGH_IDS = _ids_table(_HIGH_SIZE, _LOW_BITS)


def mask_to_ids(mask: int) -> list[int]:
    """Ids of the bits set in a card or action mask, ascending.

    Args:
        mask: a 25-bit card mask or a 28-bit action mask (bit ``i`` set for id ``i``).

    Returns:
        The ids whose bits are set, ascending; empty for 0.
    """
    return [*_LOW_IDS[mask & _LOW_MASK], *_HIGH_IDS[mask >> _LOW_BITS]]


def ids_to_mask(ids) -> int:
    """Mask with the bits of ``ids`` set (ids may repeat; callers validate).

    Args:
        ids: card ids (0-24) or action ids (0-27), any iterable of non-negative integers;
            nothing is checked.

    Returns:
        The mask with bit ``i`` set for each ``i`` in ``ids``; 0 when ``ids`` is empty.
    """
    mask = 0
    for i in ids:
        mask |= 1 << i
    return mask
