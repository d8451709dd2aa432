"""What the pages are sent: cards, tables, tricks and the events of a step, as JSON.

The play page draws the person's table (``table_json``, from what the person's player
knows, ``player_view``); the replay and watch pages draw the whole table
(``spectator_frame``); every page's log lists the events of ``jekyll_hyde_app.narration``
as ``event_json`` writes them. Kept in one module so that what the pages' JavaScript
(``static/*.js``) reads is written in one place, apart from the games the server keeps
(``sessions``).
"""

from __future__ import annotations

from typing import Any

from jekyll_hyde_app.narration import (
    HANDOVER_PHASES,
    Event,
    RoundOver,
    TrickDone,
    step_events,
)
from jekyll_hyde_app.play import prompt as terminal_prompt
from jekyll_hyde_env.engine import apply_action, legal_actions, player_view
from jekyll_hyde_env.engine.cards import (
    AGENTS,
    COLOUR_NAMES,
    DECLARE_BASE,
    EFFECT_NAMES,
    PHASE_NAMES,
    TRACK_END,
    Phase,
    card_name,
    colour_of,
    is_potion,
    mask_to_ids,
    value_of,
)
from jekyll_hyde_env.engine.render import trick_reason
from jekyll_hyde_env.engine.state import GameState


def card_json(card: int) -> dict[str, Any]:
    """A card for the page: id, name, colour name (or ``potion``), value, potion flag."""
    potion = is_potion(card)
    return {
        "id": card,
        "name": card_name(card),
        "colour": "potion" if potion else COLOUR_NAMES[colour_of(card)],
        "value": value_of(card),
        "potion": potion,
    }


def cards_json(mask: int) -> list[dict[str, Any]]:
    return [card_json(card) for card in mask_to_ids(mask)]


def trick_json(done: TrickDone) -> dict[str, Any]:
    """A finished trick: who played what, who won and why (T5), what the potion did (T6)."""
    trick = done.trick
    follower = 1 - trick.leader
    return {
        "kind": "trick",
        "round": done.round,
        "number": done.number,
        "leader": AGENTS[trick.leader],
        "cards": {
            AGENTS[trick.leader]: card_json(trick.lead_card),
            AGENTS[follower]: card_json(trick.follow_card),
        },
        "declared": COLOUR_NAMES[trick.declared] if trick.declared >= 0 else None,
        "winner": AGENTS[trick.winner],
        "reason": trick_reason(trick),
        "effect": EFFECT_NAMES[trick.effect],
        "effect_note": done.note,
        "text": done.text(),
    }


def event_json(event: Event, seen_by: int | None) -> dict[str, Any]:
    """An event for a page's log: its kind, round and text (an exchange or Greed swap told
    as ``seen_by`` saw it, or both sides when None); a trick in full (``trick_json``);
    a round's end with the marker's new space."""
    if isinstance(event, TrickDone):
        return trick_json(event)
    entry: dict[str, Any] = {"kind": event.kind, "round": event.round}
    if isinstance(event, RoundOver):
        entry["marker"] = event.marker
    entry["text"] = event.text(seen_by)
    return entry


def step_events_json(
    before: GameState, after: GameState, seen_by: int | None
) -> list[dict[str, Any]]:
    """What happened between two states, for a page's log: a finished exchange or Greed
    swap (as ``seen_by`` saw it, or both sides when None), trick, round (R2.4) and game."""
    return [event_json(event, seen_by) for event in step_events(before, after)]


def current_trick_json(state: GameState) -> dict[str, Any] | None:
    """The trick being played: its leader and lead card (T1) and a declared colour (T2)."""
    if state.lead_card < 0:
        return None
    return {
        "leader": AGENTS[state.leader],
        "lead": card_json(state.lead_card),
        "declared": COLOUR_NAMES[state.declared] if state.declared >= 0 else None,
    }


def rounds_json(state: GameState) -> list[dict[str, Any]]:
    """The finished rounds: each player's tricks and where the marker ended (R2.4)."""
    return [
        {"round": i + 1, "jekyll": r.tricks_jekyll, "hyde": r.tricks_hyde, "marker": r.marker}
        for i, r in enumerate(state.round_log)
    ]


def prompt_text(state: GameState) -> str:
    """What the player to act must do; for the exchange and swaps, how many cards."""
    return terminal_prompt(state).rstrip(": ")


def legal_gives(state: GameState) -> list[list[int]]:
    """Every set of cards the player to act may give to finish an exchange or a Greed swap:
    ``picks_left`` more cards beside the picks already made (R2.2, whose potion rule asks
    for a potion unless one is picked already; T6b), each listed in an order the engine
    accepts.

    The page lets the person choose only cards that still belong to one of these sets.
    They follow from the player's own hand, picks and deal alone. Empty in other phases.
    """
    if state.phase not in HANDOVER_PHASES or state.to_act < 0:
        return []
    gives: dict[int, list[int]] = {}  # by mask of the cards: the order they were applied in
    reached: set[int] = set()

    def extend(trial: GameState, chosen: list[int], mask: int, left: int) -> None:
        for action in legal_actions(trial):
            give = mask | 1 << action
            if left == 1:
                gives.setdefault(give, [*chosen, action])
            elif give not in reached:  # the same picks in another order: the same state
                reached.add(give)
                after = trial.clone()
                apply_action(after, action)
                extend(after, [*chosen, action], give, left - 1)

    extend(state, [], 0, state.picks_left[state.to_act])
    return sorted(gives.values())


def table_json(state: GameState, human: int) -> dict[str, Any]:
    """The play page's table: what ``human``'s player knows now (``player_view``), and,
    on the person's turn, the prompt and the legal cards, colours and gives."""
    view = player_view(state, human)
    your_turn = state.to_act == human
    legal = legal_actions(state) if your_turn else []
    return {
        "round": view.round,
        "marker": view.marker,
        "track_end": TRACK_END,
        "phase": PHASE_NAMES[view.phase],
        "to_act": AGENTS[view.to_act] if view.to_act >= 0 else None,
        "your_turn": your_turn,
        "prompt": prompt_text(state) if your_turn else None,
        "legal_cards": [a for a in legal if a < DECLARE_BASE],
        "declare": [
            {"action": a, "colour": COLOUR_NAMES[a - DECLARE_BASE]}
            for a in legal
            if a >= DECLARE_BASE
        ],
        "choose": view.picks_left if view.phase in HANDOVER_PHASES and your_turn else 0,
        "legal_gives": legal_gives(state) if your_turn else [],
        "ranks": [COLOUR_NAMES[c] for c in view.ranks],
        "tricks": {"you": view.tricks[0], "opponent": view.tricks[1]},
        "hand": cards_json(view.hand),
        "picks": cards_json(view.picks),
        "opponent_hand_size": view.opp_hand_size,
        "opponent_known": cards_json(view.opp_known),
        "current_trick": current_trick_json(state),
        "round_tricks": [
            trick_json(TrickDone(t, view.round, i + 1, False)) for i, t in enumerate(view.trick_log)
        ],
        "rounds": rounds_json(state),
    }


def spectator_frame(state: GameState) -> dict[str, Any]:
    """The whole table, both hands included, for replays and watched games."""
    return {
        "round": state.round,
        "marker": state.marker,
        "track_end": TRACK_END,
        "phase": PHASE_NAMES[state.phase],
        "to_act": AGENTS[state.to_act] if state.to_act >= 0 else None,
        "ranks": [COLOUR_NAMES[c] for c in state.ranks],
        "tricks": {"jekyll": state.tricks[0], "hyde": state.tricks[1]},
        "hands": {agent: cards_json(state.hands[p]) for p, agent in enumerate(AGENTS)},
        "current_trick": current_trick_json(state),
        "rounds": rounds_json(state),
        "game_over": state.phase == Phase.GAME_OVER,
        "winner": AGENTS[state.winner] if state.winner >= 0 else None,
    }
