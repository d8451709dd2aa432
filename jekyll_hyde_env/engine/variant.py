"""Smaller versions of the game: which cards are in play and a few counts (RULES.md, V1-V7).

A ``Variant`` keeps the card ids of the full game (0-24) and plays with a subset of
them: the lowest ``values`` cards of each colour and the potions named in
``potions``. The other counts are the hand size, the number of rounds, the cards
exchanged in each round, the track's end space and the space from which Hyde leads a
round's first trick. ``FULL`` is the game of RULES.md itself; every rule generalises
as RULES.md's "Variants" section states, and with ``FULL`` the rules read exactly as
they do without variants.

Because the ids are the full game's, an observation keeps its 327 entries and an
action mask its 28: a card absent from the variant is never set in either.

Variants are named by a preset (``"full"``, ``"small"``, ``"tiny"``) or spelled out
as ``key=value`` pairs, ``"values=2,potions=3,hand=2,rounds=1,exchange=1,track=2"``
(keys left out keep the full game's value, except that the exchange gives ``r`` cards in
round ``r`` at most a hand, and the lead changes half way along the track, rounded up, as
in the full game); ``parse_variant`` reads every form and
refuses an impossible combination in one line that names the limit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from jekyll_hyde_env.engine.cards import (
    FIRST_POTION,
    HAND_SIZE,
    HYDE_LEADS_FROM,
    MAX_ROUNDS,
    NUM_COLOURS,
    NUM_POTIONS,
    TRACK_END,
    VALUES_PER_COLOUR,
)

_POTION_NUMBERS = tuple(range(2, NUM_POTIONS + 2))  # 2+ to 5+


@dataclass(frozen=True)
class Variant:
    """One version of the game: the cards in play and the counts of RULES.md's V rules.

    Args:
        values: V1: the values of each colour in play, the lowest ``values`` (1-7).
        potions: V1: the potions in play by number, ascending (each 2-5, none repeated;
            may be empty).
        hand_size: V2: cards dealt to each player per round (1-10); the deck must hold
            both hands.
        rounds: V3: the number of rounds (1-3).
        exchange: V4: cards each player gives in the exchange of each round, one count
            per round (each 0 to 3, and at most ``hand_size``).
        track_end: V5: the marker space that makes Hyde win (1-10).
        hyde_leads_from: V6: the marker space from which Hyde leads a round's first
            trick (0 to ``track_end``).

    Raises:
        ValueError: an impossible combination, naming the value and the limit.
    """

    values: int = VALUES_PER_COLOUR
    potions: tuple[int, ...] = _POTION_NUMBERS
    hand_size: int = HAND_SIZE
    rounds: int = MAX_ROUNDS
    exchange: tuple[int, ...] = tuple(range(1, MAX_ROUNDS + 1))
    track_end: int = TRACK_END
    hyde_leads_from: int = HYDE_LEADS_FROM
    deck: int = field(init=False, repr=False, compare=False)
    potion_mask: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _check(self)
        colours = 0
        for colour in range(NUM_COLOURS):
            colours |= ((1 << self.values) - 1) << (colour * VALUES_PER_COLOUR)
        potion_mask = 0
        for number in self.potions:
            potion_mask |= 1 << (FIRST_POTION + number - 2)
        object.__setattr__(self, "deck", colours | potion_mask)
        object.__setattr__(self, "potion_mask", potion_mask)

    @property
    def deck_size(self) -> int:
        """The number of cards in play (V1)."""
        return 3 * self.values + len(self.potions)

    @property
    def name(self) -> str:
        """The preset's name, or the ``key=value`` spelling of a variant that is none."""
        for preset, variant in PRESETS.items():
            if variant == self:
                return preset
        return self.spec()

    def spec(self) -> str:
        """The ``key=value`` spelling that ``parse_variant`` reads back to this variant.

        Returns:
            Every key, e.g. ``"values=2,potions=3,hand=2,rounds=1,exchange=1,track=2,lead=1"``.
        """
        return ",".join(
            [
                f"values={self.values}",
                f"potions={'+'.join(map(str, self.potions)) or 'none'}",
                f"hand={self.hand_size}",
                f"rounds={self.rounds}",
                f"exchange={'+'.join(map(str, self.exchange))}",
                f"track={self.track_end}",
                f"lead={self.hyde_leads_from}",
            ]
        )

    def core_fields(self) -> tuple[int, ...]:
        """The variant as the C core reads it (``core/jh_rules.h``'s ``JhVariant``).

        Returns:
            Eight ints: the deck's card mask, the hand size, the rounds, the three
            rounds' exchange counts (0 for rounds the variant does not play), the
            track's end and the space from which Hyde leads.
        """
        exchange = (*self.exchange, 0, 0, 0)[:MAX_ROUNDS]
        return (
            self.deck,
            self.hand_size,
            self.rounds,
            *exchange,
            self.track_end,
            self.hyde_leads_from,
        )

    def to_json(self) -> dict[str, Any]:
        """The variant as JSON values, for records and saved policies.

        Returns:
            ``{"name": ..., "values": ..., "potions": [...], ...}``; ``parse_variant``
            reads it back.
        """
        data: dict[str, Any] = {"name": self.name}
        for item in fields(self):
            if item.init:
                value = getattr(self, item.name)
                data[item.name] = list(value) if isinstance(value, tuple) else value
        return data


def _short(value: Any) -> str:
    """``repr(value)``, cut to 60 characters: a message stays one short line."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _whole(name: str, value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"variant {name} must be an integer {low}-{high}, got {_short(value)}")
    if not low <= value <= high:
        raise ValueError(f"variant {name} must be {low}-{high}, got {value}")
    return value


def _check(variant: Variant) -> None:
    """Refuse an impossible variant, naming the value and its limit."""
    _whole("values", variant.values, 1, VALUES_PER_COLOUR)
    potions = variant.potions
    if not isinstance(potions, tuple):
        raise ValueError(f"variant potions must be a tuple of potion numbers, got {potions!r}")
    for number in potions:
        _whole("potion", number, 2, NUM_POTIONS + 1)
    if list(potions) != sorted(set(potions)):
        raise ValueError(
            f"variant potions must be distinct and ascending (numbers 2-5), got {list(potions)}"
        )
    deck = 3 * variant.values + len(potions)
    _whole("rounds", variant.rounds, 1, MAX_ROUNDS)
    _whole("hand_size", variant.hand_size, 1, HAND_SIZE)
    if 2 * variant.hand_size > deck:
        raise ValueError(
            f"variant hand_size {variant.hand_size} needs {2 * variant.hand_size} cards, "
            f"but the deck has {deck} (3 x {variant.values} values + {len(potions)} potions)"
        )
    exchange = variant.exchange
    if not isinstance(exchange, tuple) or len(exchange) != variant.rounds:
        raise ValueError(
            f"variant exchange must give one count per round ({variant.rounds}), got {exchange!r}"
        )
    for count in exchange:
        _whole("exchange count", count, 0, min(MAX_ROUNDS, variant.hand_size))
    _whole("track_end", variant.track_end, 1, TRACK_END)
    _whole("hyde_leads_from", variant.hyde_leads_from, 0, variant.track_end)


FULL = Variant()
"""The game of RULES.md: 21 colour cards and 4 potions, hands of 10, three rounds."""

SMALL = Variant(
    values=3, potions=(3,), hand_size=3, rounds=1, exchange=(1,), track_end=2, hyde_leads_from=1
)
"""Three values a colour and the potion 3+: hands of 3, one round, one card exchanged;
Hyde wins when the trick counts differ by 2 or more."""

TINY = Variant(
    values=2, potions=(3,), hand_size=2, rounds=1, exchange=(1,), track_end=2, hyde_leads_from=1
)
"""Two values a colour and the potion 3+: hands of 2, one round, one card exchanged;
Hyde wins when one player takes both tricks."""

PRESETS: dict[str, Variant] = {"full": FULL, "small": SMALL, "tiny": TINY}

# The ``key=value`` keys and the fields they set.
_KEYS = {
    "values": "values",
    "potions": "potions",
    "hand": "hand_size",
    "hand_size": "hand_size",
    "rounds": "rounds",
    "exchange": "exchange",
    "track": "track_end",
    "track_end": "track_end",
    "lead": "hyde_leads_from",
    "hyde_leads_from": "hyde_leads_from",
}


def _numbers(key: str, text: str) -> tuple[int, ...]:
    if text in ("", "none"):
        return ()
    try:
        return tuple(int(part) for part in text.split("+"))
    except ValueError:
        raise ValueError(
            f"variant {key} must be numbers joined by '+' (e.g. 2+3), got {_short(text)}"
        ) from None


def _from_spec(text: str) -> Variant:
    settings: dict[str, Any] = {}
    for item in text.split(","):
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or key not in _KEYS:
            raise ValueError(
                f"unknown variant {_short(text)}: give a preset ({', '.join(PRESETS)}) or "
                f"key=value pairs with keys {', '.join(sorted(set(_KEYS)))}"
            )
        name = _KEYS[key]
        if name in settings:
            raise ValueError(f"variant key {_short(key)} is given twice in {_short(text)}")
        if name in ("potions", "exchange"):
            settings[name] = _numbers(key, value.strip())
        else:
            try:
                settings[name] = int(value)
            except ValueError:
                raise ValueError(f"variant {key} must be an integer, got {_short(value)}") from None
    return _with_defaults(settings)


def _with_defaults(settings: Mapping[str, Any]) -> Variant:
    rounds = settings.get("rounds", MAX_ROUNDS)
    if "exchange" not in settings and isinstance(rounds, int):
        # The full game's exchange: r cards in round r (R2.2), capped by the hand.
        hand = settings.get("hand_size", HAND_SIZE)
        cap = hand if isinstance(hand, int) else HAND_SIZE
        settings = {**settings, "exchange": tuple(min(r, cap) for r in range(1, rounds + 1))}
    if "hyde_leads_from" not in settings and isinstance(settings.get("track_end"), int):
        # The full game's lead changes half way along the track (R3: 5 of 10).
        settings = {**settings, "hyde_leads_from": (settings["track_end"] + 1) // 2}
    return Variant(**settings)


def parse_variant(variant: str | Variant | Mapping[str, Any] | None) -> Variant:
    """The variant that a user names, in any of its forms.

    Args:
        variant: a ``Variant``; a preset's name (``"full"``, ``"small"``, ``"tiny"``);
            ``key=value`` pairs joined by commas (keys ``values``, ``potions``,
            ``hand``, ``rounds``, ``exchange``, ``track``, ``lead``; lists joined by
            ``+``); a mapping of ``Variant``'s field names (as ``Variant.to_json``
            writes, its ``name`` ignored); or None for the full game.

    Returns:
        The variant.

    Raises:
        ValueError: an unknown preset or key, or an impossible combination.
    """
    if variant is None:
        return FULL
    if isinstance(variant, Variant):
        return variant
    if isinstance(variant, str):
        text = variant.strip()
        if text in PRESETS:
            return PRESETS[text]
        if "=" not in text:
            raise ValueError(
                f"unknown variant {_short(variant)}: the presets are {', '.join(PRESETS)}, or give "
                "key=value pairs such as 'values=2,potions=3,hand=2,rounds=1'"
            )
        return _from_spec(text)
    if isinstance(variant, Mapping):
        known = {item.name for item in fields(Variant) if item.init}
        settings = {k: v for k, v in variant.items() if k != "name"}
        unknown = sorted(set(map(str, settings)) - known)
        if unknown:
            raise ValueError(f"unknown variant keys {unknown}; the keys are {sorted(known)}")
        for key in ("potions", "exchange"):
            if isinstance(settings.get(key), list):
                settings[key] = tuple(settings[key])
        return _with_defaults(settings)
    raise ValueError(
        f"a variant is a preset name, key=value pairs or a mapping, got {type(variant).__name__}"
    )
