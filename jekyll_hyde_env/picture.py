"""A picture of the table for ``render_mode="rgb_array"``.

Draws the identity track with the marker, the colour ranks, both trick counts,
the current trick and one player's hand (legal cards outlined) into an
``H x W x 3`` uint8 array, so that gymnasium's ``RecordVideo`` can film games.
Pillow is imported only when a picture is drawn; it comes with the optional
``render`` extra.
"""

from __future__ import annotations

import numpy as np

from .engine.cards import (
    AGENTS,
    COLOUR_NAMES,
    FIRST_POTION,
    MAX_ROUNDS,
    PHASE_NAMES,
    TRACK_END,
    Phase,
    colour_of,
    mask_to_ids,
    value_of,
)
from .engine.state import GameState

WIDTH, HEIGHT = 720, 420
_BACKGROUND = (22, 96, 62)
_INK = (245, 245, 235)
_CARD_COLOURS = {0: (128, 64, 170), 1: (200, 50, 50), 2: (40, 150, 70), -1: (230, 190, 60)}
_CARD_W, _CARD_H = 48, 70


def _require_pillow():
    try:
        from PIL import Image, ImageDraw
    except ImportError as error:
        from gymnasium.error import DependencyNotInstalled

        raise DependencyNotInstalled(
            'render_mode="rgb_array" draws with Pillow, which is not installed; '
            'install it with: pip install "jekyll-hyde-env[render]"'
        ) from error
    return Image, ImageDraw


def _card(draw, x: int, y: int, card: int, outline: tuple[int, int, int] | None = None) -> None:
    fill = _CARD_COLOURS[colour_of(card)]
    draw.rounded_rectangle(
        (x, y, x + _CARD_W, y + _CARD_H),
        radius=6,
        fill=fill,
        outline=outline or (20, 20, 20),
        width=4 if outline else 1,
    )
    label = f"{value_of(card)}+" if card >= FIRST_POTION else str(value_of(card))
    draw.text((x + 8, y + 6), label, fill=_INK)
    name = "potion" if card >= FIRST_POTION else COLOUR_NAMES[colour_of(card)]
    draw.text((x + 4, y + _CARD_H - 16), name[:6], fill=_INK)
    draw.text((x + _CARD_W - 18, y + 6), str(card), fill=(255, 255, 255))


def draw_table(state: GameState, hand_of: int | None = None) -> np.ndarray:
    """The table as an ``HEIGHT x WIDTH x 3`` uint8 array (see the module docstring)."""
    from .engine.rules import legal_action_mask

    Image, ImageDraw = _require_pillow()
    image = Image.new("RGB", (WIDTH, HEIGHT), _BACKGROUND)
    draw = ImageDraw.Draw(image)
    if state.phase == Phase.GAME_OVER:
        title = f"Game over: {AGENTS[state.winner]} wins"
    else:
        title = (
            f"Round {state.round}/{MAX_ROUNDS}   phase {PHASE_NAMES[state.phase]}   "
            f"{AGENTS[state.to_act]} to act"
        )
    draw.text((20, 12), title, fill=_INK)
    # identity track: space 0 (Jekyll) to 10 (Hyde)
    draw.text((20, 44), "Jekyll", fill=_INK)
    for space in range(TRACK_END + 1):
        x = 80 + space * 50
        marked = space == state.marker
        draw.rectangle(
            (x, 36, x + 40, 66), outline=_INK, fill=(220, 60, 60) if marked else (30, 70, 50)
        )
        draw.text((x + 14, 44), str(space), fill=_INK)
    draw.text((80 + 11 * 50 + 4, 44), "Hyde", fill=_INK)
    ranks = " < ".join(COLOUR_NAMES[c] for c in state.ranks) or "none ranked"
    draw.text((20, 84), f"Colour ranks (weakest first): {ranks}", fill=_INK)
    draw.text((20, 104), f"Tricks  jekyll {state.tricks[0]}   hyde {state.tricks[1]}", fill=_INK)
    # current trick, or the last one
    draw.text((20, 134), "Trick", fill=_INK)
    if state.lead_card >= 0:
        _card(draw, 80, 130, state.lead_card)
        led = f"{AGENTS[state.leader]} led"
        if state.declared >= 0:
            led += f", declared {COLOUR_NAMES[state.declared]}"
        draw.text((140, 160), led, fill=_INK)
    elif state.trick_log:
        last = state.trick_log[-1]
        _card(draw, 80, 130, last.lead_card)
        _card(draw, 136, 130, last.follow_card)
        draw.text((200, 160), f"last trick: {AGENTS[last.winner]} won", fill=_INK)
    # a hand
    player = state.to_act if hand_of is None else hand_of
    if player >= 0:
        legal = legal_action_mask(state) if player == state.to_act else 0
        draw.text((20, 236), f"Hand of {AGENTS[player]}", fill=_INK)
        for i, card in enumerate(mask_to_ids(state.hands[player])):
            outline = (255, 255, 255) if legal >> card & 1 else None
            _card(draw, 20 + i * (_CARD_W + 8), 260, card, outline)
    return np.asarray(image, dtype=np.uint8)
