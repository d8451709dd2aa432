"""Text forms of a game for logs, debugging, the terminal and game records."""

from __future__ import annotations

from jekyll_hyde_env.engine.cards import (
    AGENTS,
    COLOUR_NAMES,
    COLOUR_OF,
    EFFECT_NAMES,
    FIRST_POTION,
    HYDE,
    PHASE_NAMES,
    TRACK_END,
    Phase,
    card_name,
    mask_to_ids,
)
from jekyll_hyde_env.engine.rules import legal_action_mask
from jekyll_hyde_env.engine.state import GameState, Trick


def track_line(marker: int, end: int = TRACK_END) -> str:
    """The identity track, e.g. ``Jekyll [ . . X . . . . . . . . ] Hyde  (2/10)``.

    Args:
        marker: the marker's space.
        end: the track's end space (V5; 10 in the full game).

    Returns:
        One line, the marker's space drawn as ``X``.
    """
    spaces = " ".join("X" if i == marker else "." for i in range(end + 1))
    return f"Jekyll [ {spaces} ] Hyde  ({marker}/{end})"


def ranks_line(ranks: list[int] | tuple[int, ...]) -> str:
    """Colour ranks, weakest first (T4).

    Args:
        ranks: the colour ids ranked, weakest first (``GameState.ranks``).

    Returns:
        E.g. ``"pride < wrath < greed  (weakest first)"``, or ``"no colour ranked"``.
    """
    if not ranks:
        return "no colour ranked"
    return " < ".join(COLOUR_NAMES[c] for c in ranks) + "  (weakest first)"


def cards_line(mask: int, legal: int | None = None) -> str:
    """Card names with ids; with ``legal``, legal cards are marked with ``*``.

    Args:
        mask: the cards to list, a 25-bit card mask.
        legal: an action mask (``legal_action_mask``) whose cards are marked, or None
            to mark none.

    Returns:
        The cards in id order, e.g. ``"wrath 5 [11]*, potion 3+ [22]"``, or
        ``"(empty)"`` for no card.
    """
    parts = []
    for card in mask_to_ids(mask):
        mark = "*" if legal is not None and legal >> card & 1 else ""
        parts.append(f"{card_name(card)} [{card}]{mark}")
    return ", ".join(parts) if parts else "(empty)"


def trick_plays(trick: Trick) -> str:
    """Who played what in a trick: the lead (with a potion's declared colour, T2), the answer.

    Args:
        trick: a finished trick.

    Returns:
        E.g. ``"jekyll led potion 3+ declaring wrath, hyde answered wrath 5"``.
    """
    lead = card_name(trick.lead_card)
    if trick.declared >= 0:
        lead += f" declaring {COLOUR_NAMES[trick.declared]}"
    return (
        f"{AGENTS[trick.leader]} led {lead}, {AGENTS[1 - trick.leader]} answered "
        f"{card_name(trick.follow_card)}"
    )


def trick_line(trick: Trick) -> str:
    """One finished trick: who played what, who won, and any potion effect (T6).

    Args:
        trick: a finished trick.

    Returns:
        ``trick_plays`` and the winner, the effect's name in brackets after one
        potion, e.g. ``"jekyll led wrath 2, hyde answered potion 3+: hyde wins (wrath)"``;
        ``(pride, a trick is taken)`` when Pride took a trick (T6a).
    """
    text = f"{trick_plays(trick)}: {AGENTS[trick.winner]} wins"
    if trick.effect:
        text += f" ({EFFECT_NAMES[trick.effect]}"
        text += ", a trick is taken)" if trick.pride_steal else ")"
    return text


def trick_reason(trick: Trick) -> str:
    """Why the trick's winner won: strength (T5b, T5c), value or colour rank (T5a).

    Args:
        trick: a finished trick.

    Returns:
        The reason in words, ending with its rule tag, e.g. ``"the higher potion (T5c)"``
        or ``"wrath ranks above pride, whatever the values (T5a)"``.
    """
    lead, follow = trick.lead_card, trick.follow_card
    if lead >= FIRST_POTION or follow >= FIRST_POTION:
        if lead >= FIRST_POTION and follow >= FIRST_POTION:
            return "the higher potion (T5c)"
        return "the higher strength, a potion counting its number and a half (T5b)"
    if COLOUR_OF[lead] == COLOUR_OF[follow]:
        return "the higher value in the colour led (T5a)"
    # Two colours: the winner's colour was the higher ranked when the trick was compared (T4).
    winner_card = lead if trick.winner == trick.leader else follow
    loser_card = follow if winner_card == lead else lead
    return (
        f"{COLOUR_NAMES[COLOUR_OF[winner_card]]} ranks above "
        f"{COLOUR_NAMES[COLOUR_OF[loser_card]]}, whatever the values (T5a)"
    )


def effect_note(trick: Trick, hands_empty: bool) -> str:
    """What the trick's potion did (T6), or why it did nothing; empty without an effect.

    Args:
        trick: a finished trick.
        hands_empty: whether the hands were empty after it (the round's last trick).

    Returns:
        One sentence with its rule tag, e.g. ``"Wrath: the colour ranks are cleared (T6c)"``;
        ``""`` when the trick had no effect (no potion or two).
    """
    name = EFFECT_NAMES[trick.effect]
    if name == "pride":
        if trick.pride_steal:
            return "Pride: the winner also takes a trick from the loser (T6a)"
        return "Pride: the loser has no trick to take, so nothing more happens (T6a)"
    if name == "greed":
        if hands_empty:
            return "Greed: the hands are empty, so nothing is swapped (T6b)"
        return "Greed: each player now gives two cards, one if only one is left (T6b)"
    if name == "wrath":
        return "Wrath: the colour ranks are cleared (T6c)"
    return ""


def marker_move(before: int, after: int) -> str:
    """How the marker moved at the end of a round (R2.4), e.g. ``the marker moves 2 spaces, from
    0 to 2`` or ``the marker stays on 3``.

    Args:
        before: the marker's space when the round began.
        after: its space when the round ended (never less than ``before``).

    Returns:
        The sentence, in lower case and without a final stop.
    """
    moved = after - before
    if moved == 0:
        return f"the marker stays on {before}"
    return f"the marker moves {moved} space{'s' if moved > 1 else ''}, from {before} to {after}"


def game_end_reason(state: GameState) -> str:
    """Why the finished game ``state`` was won (R2.4).

    Args:
        state: a finished game.

    Returns:
        The reason in words, e.g. ``"the marker reached space 10"``.
    """
    end = state.variant.track_end
    if state.winner == HYDE:
        return f"the marker reached space {end}"
    return f"after round {state.round} the marker is on {state.marker}, short of {end}"


def render_state(state: GameState, hand_of: int | None = None) -> str:
    """The table: round, phase, track, ranks, trick counts, current trick, a hand.

    Args:
        state: the game.
        hand_of: whose hand to show; by default the player to act.

    Returns:
        The table as lines of text.
    """
    lines = []
    if state.phase == Phase.GAME_OVER:
        lines.append(f"Game over after round {state.round}: {AGENTS[state.winner]} wins")
    else:
        lines.append(
            f"Round {state.round}/{state.variant.rounds}, phase {PHASE_NAMES[state.phase]}, "
            f"{AGENTS[state.to_act]} to act"
        )
    lines.append("Track  " + track_line(state.marker, state.variant.track_end))
    lines.append("Ranks  " + ranks_line(state.ranks))
    lines.append(f"Tricks jekyll {state.tricks[0]}, hyde {state.tricks[1]}")
    if state.trick_log:
        lines.append("Last   " + trick_line(state.trick_log[-1]))
    if state.lead_card >= 0:
        current = f"{AGENTS[state.leader]} led {card_name(state.lead_card)}"
        if state.declared >= 0:
            current += f", declaring {COLOUR_NAMES[state.declared]}"
        lines.append("Trick  " + current)
    player = state.to_act if hand_of is None else hand_of
    if player >= 0:
        legal = legal_action_mask(state) if player == state.to_act else None
        lines.append(f"Hand   {AGENTS[player]}: {cards_line(state.hands[player], legal)}")
        if state.picks[player]:
            lines.append(f"Chosen {cards_line(state.picks[player])}")
    return "\n".join(lines)
