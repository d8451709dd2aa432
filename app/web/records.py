"""Game records on the web: the shape of a posted record, and a record as replay frames.

``POST /api/replay`` takes a record from anyone, so ``record_problem`` checks its shape
(types, sizes, ranges) before anything replays it; whether its game follows the rules is
``replay_record``'s to say. ``replay_frames`` turns a record, posted or of a finished game,
into the frames the replay page steps through, one per step of play, both hands shown.
"""

from __future__ import annotations

from typing import Any, TypeGuard

from jekyll_hyde_app.web.views import rounds_json, spectator_frame, step_events_json
from jekyll_hyde_env.engine import apply_action, new_game, player_view, replay_record
from jekyll_hyde_env.engine.cards import AGENTS, MAX_ROUNDS, NUM_ACTIONS, Phase, mask_to_ids
from jekyll_hyde_env.engine.render import game_end_reason
from jekyll_hyde_env.engine.state import GameState

MAX_RECORD_ACTIONS = 400  # actions in a posted record (a game has about 150 at most)
MAX_NAME = 200  # characters of a player's name in a posted record


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def record_problem(record: Any) -> str | None:
    """What keeps ``record`` from having a game record's shape (``game_record``), or None.

    Only the shape that replaying needs is checked here (types, sizes, ranges);
    whether the game it tells follows the rules is for ``replay_record`` to say.
    """
    if not isinstance(record, dict):
        return "not a game record: expected a JSON object"
    for key in ("format", "version"):
        if not isinstance(record.get(key), (str, int)) or isinstance(record.get(key), bool):
            return f'not a game record: "{key}" is missing or not a string or number'
    if "variant" in record:  # game_record names a smaller variant; this app plays the full game
        return (
            '"variant": this app replays games of the full game; replay a game of a smaller '
            "variant with jekyll-hyde replay"
        )
    deals = record.get("deals")
    if not isinstance(deals, list) or len(deals) != MAX_ROUNDS:
        return f'"deals": expected a list of the {MAX_ROUNDS} rounds\' deals'
    for number, deal in enumerate(deals, start=1):
        for agent in AGENTS:
            cards = deal.get(agent) if isinstance(deal, dict) else None
            if not isinstance(cards, list) or not all(_is_int(card) for card in cards):
                return f'"deals" round {number}: expected {{"jekyll": [ids], "hyde": [ids]}}'
    actions = record.get("actions")
    if not isinstance(actions, list):
        return '"actions": expected a list of {"agent": name, "action": id}'
    if len(actions) > MAX_RECORD_ACTIONS:
        return f'"actions": {len(actions)} actions; a game has fewer than {MAX_RECORD_ACTIONS}'
    for number, item in enumerate(actions):
        if not isinstance(item, dict):
            return f'"actions" item {number}: expected {{"agent": name, "action": id}}'
        if not isinstance(item.get("agent"), str) or item.get("agent") not in AGENTS:
            return f'"actions" item {number}: "agent" must be jekyll or hyde'
        action = item.get("action")
        if not _is_int(action) or not 0 <= action < NUM_ACTIONS:
            return f'"actions" item {number}: "action" must be an action id from 0 to 27'
    result = record.get("result")
    if result is not None:
        if not isinstance(result, dict):
            return '"result": expected {"winner": name, "marker": space} or null'
        if not (result.get("winner") is None or isinstance(result.get("winner"), str)):
            return '"result": "winner" must be jekyll, hyde or null'
        if not _is_int(result.get("marker")):
            return '"result": "marker" must be a space of the track, a whole number'
    players = record.get("players")
    if players is not None and not (
        isinstance(players, dict)
        and all(isinstance(name, str) and len(name) <= MAX_NAME for name in players.values())
    ):
        return (
            f'"players": expected {{"jekyll": name, "hyde": name}}, names of at most '
            f"{MAX_NAME} characters"
        )
    return None


def replay_frames(record: dict[str, Any]) -> dict[str, Any]:
    """A recorded game as frames, one per step of play: each deal, each exchange, each
    trick (with the round's end) and each Greed swap, both hands shown, with what each
    player knows of the other's hand (``known``) and how many of the record's actions
    lead to the frame (``actions_applied``).

    Raises:
        ValueError: the record is not a valid game record (``replay_record``'s reason).
    """
    final = replay_record(record)
    state = new_game(None, [dict(deal) for deal in record["deals"]])
    frames = [_frame(state, "Round 1: the deal", [], 0)]
    for applied, item in enumerate(record["actions"], start=1):
        before = state.clone()
        apply_action(state, item["action"])
        events = step_events_json(before, state, None)
        if not events:
            continue
        kinds = {event["kind"] for event in events}
        trick = next((event for event in events if event["kind"] == "trick"), None)
        if "round" in kinds:
            # A round ends only with its last trick (the engine's _end_round runs from
            # _finish_trick), so the step's events hold that trick.
            assert trick is not None
            result = state.round_log[-1]
            title = f"Round {len(state.round_log)}, trick {trick['number']}: round over"
            frame = _frame(before, title, events, applied)
            frame.update(
                hands={agent: [] for agent in AGENTS},
                known={agent: [] for agent in AGENTS},
                tricks={"jekyll": result.tricks_jekyll, "hyde": result.tricks_hyde},
                marker=result.marker,
                rounds=rounds_json(state),
                trick=trick,
                current_trick=None,
            )
            if state.phase == Phase.GAME_OVER:
                frame.update(game_over=True, winner=AGENTS[state.winner])
                frame["reason"] = game_end_reason(state)
                frame["title"] = f"Round {state.round} over: the game is over"
            frames.append(frame)
            if state.phase != Phase.GAME_OVER:
                frames.append(_frame(state, f"Round {state.round}: the deal", [], applied))
            continue
        if trick is not None:
            title = f"Round {state.round}, trick {trick['number']}"
        else:
            title = f"Round {state.round}: {events[0]['kind'].replace('_', ' ')}"
        frame = _frame(state, title, events, applied)
        frame["trick"] = trick
        frames.append(frame)
    players = record.get("players", {})
    return {
        "players": {agent: players.get(agent, agent) for agent in AGENTS},
        "winner": AGENTS[final.winner] if final.winner >= 0 else None,
        "frames": frames,
    }


def _frame(
    state: GameState, title: str, events: list[dict[str, Any]], applied: int
) -> dict[str, Any]:
    """A replay frame: the whole table, and for each player the ids of the cards of the
    other's hand that player knows (``player_view``'s ``opp_known``: the cards it gave)."""
    frame = spectator_frame(state)
    frame.update(
        title=title,
        events=events,
        trick=None,
        known={
            agent: mask_to_ids(player_view(state, player).opp_known)
            for player, agent in enumerate(AGENTS)
        },
        actions_applied=applied,
    )
    return frame
