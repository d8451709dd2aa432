"""A picture of the table for ``render_mode="rgb_array"``.

The picture is an ``HEIGHT x WIDTH x 3`` uint8 array of the same size in every
frame, so that gymnasium's ``RecordVideo`` can film games. From top to bottom:

- who is to do what (or, once the game is over, who won and why, R2.4);
- the identity track with the marker, the colour ranks (T4) and both trick counts;
- *this trick*: each card under the name of the player who played it, and the
  colour to follow: the colour led (T3a) or the colour declared with a potion
  (T2, T3b);
- *the last trick*: who led and who answered what, who won and why (T5), and
  what its potion did (T6);
- how many cards the opponent holds (face down), and one player's hand with the
  cards that may be played now outlined; once the game is over, each round's
  result instead;
- a legend: on a card the value is large and the card id (the action number)
  small, and what each border means.

``layout`` returns everything drawn as a list of named ``Item``s (texts with
their font size, boxes and cards), and ``draw_table`` paints that list. The
texts about tricks and the game's end are the ones ``jekyll-hyde play`` prints
(``engine.render``). Pillow is imported only when a picture is drawn; it comes
with the optional ``render`` extra.
"""

from __future__ import annotations

from functools import cache
from typing import NamedTuple

import numpy as np
from gymnasium.error import DependencyNotInstalled

from jekyll_hyde_env.engine.cards import (
    AGENTS,
    COLOUR_NAMES,
    COLOUR_OF,
    FIRST_POTION,
    MAX_ROUNDS,
    TRACK_END,
    TRICKS_PER_ROUND,
    Phase,
    mask_to_ids,
    value_of,
)
from jekyll_hyde_env.engine.render import effect_note, game_end_reason, marker_move, trick_reason
from jekyll_hyde_env.engine.rules import legal_action_mask
from jekyll_hyde_env.engine.state import GameState, RoundResult, Trick

WIDTH, HEIGHT = 880, 640  # multiples of 16, as video encoders prefer

BACKGROUND = (22, 96, 62)
INK = (245, 245, 235)
DIM_INK = (190, 210, 195)
ACCENT = (250, 215, 90)
PANEL = (16, 74, 47)
CARD_COLOURS = {0: (128, 64, 170), 1: (200, 50, 50), 2: (52, 168, 84), -1: (232, 190, 60)}
CARD_BACK = (40, 52, 112)
CARD_EDGE = (20, 20, 20)
LEGAL_BORDER = (255, 255, 255)  # a card that may be played now
CHOSEN_BORDER = (80, 220, 240)  # a card chosen to give in the exchange or a Greed swap
WON_BORDER = ACCENT  # the card that won the last trick
MARKER_FILL = (220, 60, 60)

CARD_W, CARD_H = 60, 84
VALUE_SIZE = 38  # font size of a card's value
ID_SIZE = 11  # font size of a card's id and colour name
TITLE_SIZE, LINE_SIZE, SMALL_SIZE = 22, 15, 13

_DOING: dict[int, str] = {
    Phase.EXCHANGE: "choose a card to give",
    Phase.LEAD: "lead a card",
    Phase.DECLARE: "declare a colour",
    Phase.FOLLOW: "answer the trick",
    Phase.SWAP: "choose a card to swap",
}


class Item(NamedTuple):
    """One thing drawn.

    ``kind`` is ``"text"`` (``text`` at the top left of ``box``, in a font of
    ``size`` pixels), ``"box"`` (a rectangle with ``fill``, ``outline`` and
    ``width``) or ``"card"`` (the face of card id ``card``, or its back when
    ``card`` is -1, with a border of ``outline``). ``name`` says what the item
    shows, e.g. ``"trick.lead.player"`` or ``"hand.card.value"``.
    """

    kind: str
    name: str
    box: tuple[int, int, int, int]
    text: str = ""
    size: int = 0
    fill: tuple[int, int, int] | None = None
    outline: tuple[int, int, int] | None = None
    width: int = 1
    card: int = -1


def _require_pillow():
    try:
        from PIL import Image, ImageDraw, ImageFont  # lazy: Pillow comes with the render extra
    except ImportError as error:
        raise DependencyNotInstalled(
            'render_mode="rgb_array" draws with Pillow, which is not installed; '
            'install it with: pip install "jekyll-hyde-env[render]"'
        ) from error
    return Image, ImageDraw, ImageFont


@cache
def font(size: int):
    """The font bundled with Pillow at ``size`` pixels (no system font: reproducible frames).

    Fonts are cached, one per size.

    Args:
        size: the font size in pixels.

    Returns:
        Pillow's default ``ImageFont.FreeTypeFont`` at that size.

    Raises:
        DependencyNotInstalled: Pillow is not installed, or it is older than 10.1
            or built without FreeType; the message says what to install.
    """
    _, _, ImageFont = _require_pillow()
    try:
        loaded = ImageFont.load_default(size=size)
    except TypeError:  # Pillow before 10.1 has a single bitmap size
        loaded = None
    if not isinstance(loaded, ImageFont.FreeTypeFont):
        raise DependencyNotInstalled(
            'render_mode="rgb_array" needs Pillow 10.1 or newer with FreeType (to draw '
            'text in several sizes); install it with: pip install "jekyll-hyde-env[render]"'
        )
    return loaded


def _name(player: int) -> str:
    return AGENTS[player].capitalize()


def _card_label(card: int) -> str:
    return f"{value_of(card)}+" if card >= FIRST_POTION else str(value_of(card))


class _Layout:
    """Collects the items of one picture."""

    def __init__(self) -> None:
        self.items: list[Item] = []

    def text(self, name: str, x: int, y: int, text: str, size: int, fill=INK) -> int:
        """Adds a text; returns its right edge."""
        right = x + round(font(size).getlength(text))
        self.items.append(Item("text", name, (x, y, right, y + size), text, size, fill))
        return right

    def wrapped(self, name: str, x: int, y: int, text: str, size: int, right: int, fill=INK) -> int:
        """Adds a text broken into lines that end before ``right``; returns the next line's y."""
        line = ""
        for word in text.split():
            candidate = f"{line} {word}" if line else word
            if line and x + font(size).getlength(candidate) > right:
                self.text(name, x, y, line, size, fill)
                y += size + 4
                line = word
            else:
                line = candidate
        if line:
            self.text(name, x, y, line, size, fill)
            y += size + 4
        return y

    def box(self, name: str, box, fill=None, outline=None, width: int = 1) -> None:
        self.items.append(Item("box", name, box, fill=fill, outline=outline, width=width))

    def card(self, name: str, x: int, y: int, card: int, outline=None) -> None:
        """A card face (value large, id small) or, for ``card`` -1, a card back."""
        box = (x, y, x + CARD_W, y + CARD_H)
        self.items.append(Item("card", name, box, outline=outline, card=card))
        if card < 0:
            return
        ink = CARD_EDGE if card >= FIRST_POTION else INK
        kind = "Potion" if card >= FIRST_POTION else COLOUR_NAMES[COLOUR_OF[card]].capitalize()
        self.text(f"{name}.colour", x + 6, y + 5, kind, ID_SIZE, ink)
        value = _card_label(card)
        width = font(VALUE_SIZE).getlength(value)
        self.text(f"{name}.value", x + round((CARD_W - width) / 2), y + 22, value, VALUE_SIZE, ink)
        card_id = f"#{card}"
        id_x = x + CARD_W - 6 - round(font(ID_SIZE).getlength(card_id))
        self.text(f"{name}.id", id_x, y + CARD_H - ID_SIZE - 6, card_id, ID_SIZE, ink)

    def swatch(self, name: str, x: int, y: int, colour: int, size: int) -> int:
        """A small square of the colour's card colour; returns its right edge."""
        self.box(name, (x, y + 1, x + size, y + size + 1), CARD_COLOURS[colour], CARD_EDGE)
        return x + size


def layout(state: GameState, hand_of: int | None = None) -> list[Item]:
    """Everything the picture of ``state`` shows, as named items (see the module docstring).

    Args:
        state: the game.
        hand_of: whose hand to show (0 Jekyll, 1 Hyde), the other player's hand
            being counted face down; by default the player to act. When it is
            given, the picture is that player's ("you won", "your hand").

    Returns:
        The items in drawing order, each later one drawn over the earlier ones;
        positions are pixels of the ``WIDTH x HEIGHT`` picture.

    Raises:
        ValueError: ``hand_of`` is not None, 0 or 1.
        DependencyNotInstalled: Pillow is not installed, or too old (``font``
            measures the texts).
    """
    if hand_of not in (None, 0, 1):
        raise ValueError(f"hand_of must be None, 0 (jekyll) or 1 (hyde), got {hand_of!r}")
    out = _Layout()
    over = state.phase == Phase.GAME_OVER
    player = state.to_act if hand_of is None else hand_of
    _header(out, state, hand_of)
    _track_and_counts(out, state)
    _this_trick(out, state, (20, 136, 436, 376))
    _last_trick(out, state, (444, 136, 860, 376))
    if over:
        _round_results(out, state, 388)
    elif player >= 0:
        _hands(out, state, player, you=hand_of is not None, top=388)
    _legend(out, (20, 540, 860, 634))
    return out.items


def _header(out: _Layout, state: GameState, hand_of: int | None) -> None:
    if state.phase == Phase.GAME_OVER:
        title = f"Game over after round {state.round}: {_name(state.winner)} wins"
        if hand_of is not None:
            title += " - you won" if state.winner == hand_of else " - you lost"
        out.text("title", 20, 10, title, TITLE_SIZE, ACCENT)
        reason = f"Why: {game_end_reason(state)} (R2.4)"
        out.text("reason", 20, 40, reason, LINE_SIZE + 2, ACCENT)
        return
    actor = state.to_act
    title = f"Round {state.round}/{MAX_ROUNDS}: {_name(actor)} to {_DOING[state.phase]}"
    if hand_of is not None:
        title += f" (you play {_name(hand_of)})"
    out.text("title", 20, 10, title, TITLE_SIZE)
    left = state.picks_left[actor]
    if state.phase == Phase.EXCHANGE:
        count = state.round
        what = (
            f"Exchange (R2.2): each player gives {count} card{'s' if count > 1 else ''}; "
            f"{_name(actor)} has {left} still to choose"
        )
    elif state.phase == Phase.SWAP:
        count = left + state.picks[actor].bit_count()
        what = (
            f"Greed swap (T6b): each player gives {count} card{'s' if count > 1 else ''}; "
            f"{_name(actor)} has {left} still to choose"
        )
    else:
        what = f"Trick {len(state.trick_log) + 1} of {TRICKS_PER_ROUND} in this round"
    out.text("doing", 20, 40, what, LINE_SIZE, DIM_INK)


def _track_and_counts(out: _Layout, state: GameState) -> None:
    top = 70
    out.text("track.jekyll", 20, top + 7, "Jekyll", LINE_SIZE)
    for space in range(TRACK_END + 1):
        x = 84 + space * 46
        marked = space == state.marker
        out.box(
            "track.marker" if marked else "track.space",
            (x, top, x + 38, top + 30),
            MARKER_FILL if marked else (30, 70, 50),
            INK,
            3 if marked else 1,
        )
        label = str(space)
        width = font(LINE_SIZE).getlength(label)
        out.text("track.number", x + round((38 - width) / 2), top + 7, label, LINE_SIZE)
    right = out.text("track.hyde", 84 + 11 * 46 + 2, top + 7, "Hyde", LINE_SIZE)
    note = f"marker on {state.marker}; Hyde wins at {TRACK_END}"
    out.text("track.note", right + 14, top + 8, note, SMALL_SIZE, DIM_INK)
    y = 110
    x = out.text("ranks.label", 20, y, "Colour ranks (T4):", LINE_SIZE) + 8
    if not state.ranks:
        out.text("ranks", x, y, "none ranked yet", LINE_SIZE)
    for i, colour in enumerate(state.ranks):
        if i:
            x = out.text("ranks.less", x + 6, y, "<", LINE_SIZE) + 6
        x = out.swatch("ranks.swatch", x, y, colour, LINE_SIZE) + 5
        x = out.text("ranks", x, y, COLOUR_NAMES[colour].capitalize(), LINE_SIZE)
    if state.ranks:
        out.text("ranks.note", x + 8, y + 1, "(weakest first)", SMALL_SIZE, DIM_INK)
    tricks = f"Tricks this round: Jekyll {state.tricks[0]}, Hyde {state.tricks[1]}"
    out.text("tricks", 520, y, tricks, LINE_SIZE)


def _follow_line(out: _Layout, name: str, x: int, y: int, lead: int, declared: int) -> int:
    """The colour the follower must answer (T3): led by a colour card, or declared."""
    if lead >= FIRST_POTION:
        if declared < 0:
            return out.text(name, x, y, "The colour is not declared yet (T2)", SMALL_SIZE)
        colour, why = declared, "declared with the potion (T2, T3b)"
        label = "Declared colour:"
    else:
        colour, why = COLOUR_OF[lead], "the colour led (T3a)"
        label = "Colour to follow:"
    x = out.text(name, x, y, label, SMALL_SIZE) + 6
    x = out.swatch(f"{name}.swatch", x, y, colour, SMALL_SIZE) + 5
    x = out.text(f"{name}.colour", x, y, COLOUR_NAMES[colour].capitalize(), SMALL_SIZE)
    return out.text(f"{name}.why", x + 6, y, why, SMALL_SIZE, DIM_INK)


def _slot(out: _Layout, name: str, x: int, y: int, label: str, card: int, outline=None) -> None:
    """A card under the label naming who played it, or an empty place."""
    out.text(f"{name}.player", x, y, label, SMALL_SIZE)
    if card >= 0:
        out.card(f"{name}.card", x, y + 20, card, outline)
    else:
        box = (x, y + 20, x + CARD_W, y + 20 + CARD_H)
        out.box(f"{name}.empty", box, None, DIM_INK)


def _this_trick(out: _Layout, state: GameState, panel) -> None:
    x0, y0, x1, y1 = panel
    out.box("trick.panel", panel, PANEL, None)
    if state.phase == Phase.GAME_OVER:
        out.text("result.title", x0 + 12, y0 + 8, "Result", LINE_SIZE)
        out.text("result.winner", x0 + 12, y0 + 40, f"{_name(state.winner)} wins", 30, ACCENT)
        reason = f"because {game_end_reason(state)} (R2.4)"
        out.wrapped("result.reason", x0 + 12, y0 + 84, reason, LINE_SIZE, x1 - 10)
        return
    if state.phase in (Phase.EXCHANGE, Phase.SWAP):
        out.text("trick.title", x0 + 12, y0 + 8, "This trick", LINE_SIZE)
        first = "the exchange (R2.2)" if state.phase == Phase.EXCHANGE else "the Greed swap (T6b)"
        text = f"No trick yet: {first} comes first, each player choosing without seeing the other."
        y = out.wrapped("trick.none", x0 + 12, y0 + 36, text, SMALL_SIZE, x1 - 10, DIM_INK)
        if state.round_log and not state.trick_log:  # a round has just ended
            text = _round_line(state.round_log, len(state.round_log))
            out.wrapped("trick.last_round", x0 + 12, y + 12, text, SMALL_SIZE, x1 - 10)
        return
    number = len(state.trick_log) + 1
    out.text("trick.title", x0 + 12, y0 + 8, f"This trick ({number} of this round)", LINE_SIZE)
    leader, follower = state.leader, 1 - state.leader
    led = state.lead_card >= 0
    lead_label = f"{_name(leader)} led" if led else f"{_name(leader)} leads"
    _slot(out, "trick.lead", x0 + 12, y0 + 34, lead_label, state.lead_card)
    _slot(out, "trick.follow", x0 + 132, y0 + 34, f"{_name(follower)} answers", -1)
    y = y0 + 148
    if led:
        _follow_line(out, "trick.follow_colour", x0 + 12, y, state.lead_card, state.declared)
    else:
        out.text("trick.note", x0 + 12, y, "The leader may play any card (T1).", SMALL_SIZE)


def _last_trick(out: _Layout, state: GameState, panel) -> None:
    x0, y0, x1, y1 = panel
    out.box("last.panel", panel, PANEL, None)
    title, trick, hands_empty = "Last trick", None, False
    if state.trick_log:
        trick = state.trick_log[-1]
        hands_empty = len(state.trick_log) == TRICKS_PER_ROUND
    elif state.round_log and state.round_log[-1].tricks:
        trick, hands_empty = state.round_log[-1].tricks[-1], True
        title = f"Last trick, round {len(state.round_log)}"
    out.text("last.title", x0 + 12, y0 + 8, title, LINE_SIZE)
    if trick is None:
        out.text("last.none", x0 + 12, y0 + 36, "None yet.", SMALL_SIZE, DIM_INK)
        return
    _last_trick_body(out, trick, hands_empty, panel)


def _round_line(round_log: list[RoundResult], number: int) -> str:
    """Round ``number``'s trick counts and how the marker moved (R2.4)."""
    result = round_log[number - 1]
    before = round_log[number - 2].marker if number > 1 else 0
    return (
        f"Round {number}: Jekyll {result.tricks_jekyll} tricks, Hyde {result.tricks_hyde}; "
        f"{marker_move(before, result.marker)} (R2.4)"
    )


def _last_trick_body(out: _Layout, trick: Trick, hands_empty: bool, panel) -> None:
    x0, y0, x1, _ = panel
    leader, follower = trick.leader, 1 - trick.leader
    lead_won = trick.winner == leader
    lead_border, follow_border = (WON_BORDER, None) if lead_won else (None, WON_BORDER)
    _slot(out, "last.lead", x0 + 12, y0 + 34, f"{_name(leader)} led", trick.lead_card, lead_border)
    follow_label = f"{_name(follower)} answered"
    _slot(out, "last.follow", x0 + 132, y0 + 34, follow_label, trick.follow_card, follow_border)
    y = y0 + 148
    _follow_line(out, "last.follow_colour", x0 + 12, y, trick.lead_card, trick.declared)
    y += SMALL_SIZE + 6
    won = f"{_name(trick.winner)} won: {trick_reason(trick)}"
    y = out.wrapped("last.reason", x0 + 12, y, won, SMALL_SIZE, x1 - 10, ACCENT)
    note = effect_note(trick, hands_empty)
    if note:
        out.wrapped("last.effect", x0 + 12, y, note, SMALL_SIZE, x1 - 10)


def _hands(out: _Layout, state: GameState, player: int, you: bool, top: int) -> None:
    opponent = 1 - player
    count = state.hands[opponent].bit_count()
    text = f"{_name(opponent)}'s hand: {count} card{'s' if count != 1 else ''}, face down"
    right = out.text("opponent", 20, top + 4, text, LINE_SIZE)
    for i in range(count):
        x = right + 16 + i * 22
        out.box("opponent.back", (x, top, x + 18, top + 26), CARD_BACK, INK)
    owner = f"Your hand ({_name(player)})" if you else f"{_name(player)}'s hand"
    if player == state.to_act:
        owner += f", {_name(player)} to act"
    out.text("hand.title", 20, top + 36, owner, LINE_SIZE)
    legal = legal_action_mask(state) if player == state.to_act else 0
    for i, card in enumerate(mask_to_ids(state.hands[player])):
        if state.picks[player] >> card & 1:
            outline = CHOSEN_BORDER
        elif legal >> card & 1:
            outline = LEGAL_BORDER
        else:
            outline = None
        out.card("hand.card", 20 + i * (CARD_W + 10), top + 60, card, outline)
    if not state.hands[player]:
        out.text("hand.empty", 20, top + 60, "(empty)", SMALL_SIZE, DIM_INK)


def _round_results(out: _Layout, state: GameState, top: int) -> None:
    out.text("rounds.title", 20, top + 4, "Rounds", LINE_SIZE)
    for number in range(1, len(state.round_log) + 1):
        text = _round_line(state.round_log, number)
        out.text("rounds.result", 20, top + 10 + number * 24, text, LINE_SIZE)


def _legend(out: _Layout, panel) -> None:
    x0, y0, x1, y1 = panel
    out.box("legend.panel", panel, PANEL, None)
    sample = 11  # wrath 5
    out.card("legend.card", x0 + 10, y0 + (y1 - y0 - CARD_H) // 2, sample)
    x = x0 + 84
    lines = (
        "Large: the value (a potion n+ counts n and a half, T5b)",
        "Small #: the card id, the number of the action",
        "Top: the colour (Pride, Wrath, Greed) or Potion",
    )
    for i, line in enumerate(lines):
        out.text("legend.face", x, y0 + 12 + i * 24, line, SMALL_SIZE)
    x = x0 + 470
    borders = (
        (LEGAL_BORDER, "legal", "white border: may be played now"),
        (CHOSEN_BORDER, "chosen", "blue border: chosen to give (R2.2, T6b)"),
        (WON_BORDER, "won", "gold border: won the last trick"),
    )
    for i, (colour, name, text) in enumerate(borders):
        y = y0 + 10 + i * 24
        out.box(f"legend.{name}", (x, y, x + 26, y + 18), CARD_COLOURS[1], colour, 3)
        out.text(f"legend.{name}.text", x + 36, y + 2, text, SMALL_SIZE)


def draw_table(state: GameState, hand_of: int | None = None) -> np.ndarray:
    """The table as a ``HEIGHT x WIDTH x 3`` uint8 array (see the module docstring).

    Args:
        state: the game.
        hand_of: whose hand to show, as in ``layout``.

    Returns:
        uint8 array of shape ``(HEIGHT, WIDTH, 3)`` (640 x 880), RGB.

    Raises:
        ValueError: ``hand_of`` is not None, 0 or 1.
        DependencyNotInstalled: Pillow is not installed, or too old; the message
            says what to install.
    """
    Image, ImageDraw, _ = _require_pillow()
    items = layout(state, hand_of)
    image = Image.new("RGB", (WIDTH, HEIGHT), BACKGROUND)
    draw = ImageDraw.Draw(image)
    for item in items:
        if item.kind == "text":
            draw.text(item.box[:2], item.text, fill=item.fill, font=font(item.size))
        elif item.kind == "box":
            draw.rectangle(item.box, fill=item.fill, outline=item.outline, width=item.width)
        else:
            _draw_card(draw, item)
    return np.asarray(image, dtype=np.uint8)


def _draw_card(draw, item: Item) -> None:
    """The card's body; its texts are items of their own, drawn after it."""
    if item.card < 0:
        fill = CARD_BACK
    else:
        fill = CARD_COLOURS[COLOUR_OF[item.card] if item.card < FIRST_POTION else -1]
    outline = item.outline or CARD_EDGE
    width = 4 if item.outline else 1
    draw.rounded_rectangle(item.box, radius=6, fill=fill, outline=outline, width=width)
