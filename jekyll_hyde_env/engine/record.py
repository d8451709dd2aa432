"""Game records: a JSON-serialisable account of a game, and its replay.

A record holds the three rounds' deals (a round the game never reached
included, so that a replay is exact), every action with its agent, each trick's
cards, winner and potion effect, the exchange and swap picks, each round's
trick counts and marker, and the result. It is derived by replaying the
state's ``deals`` and ``history`` through the rules, so it cannot disagree with
them; ``replay_record`` rebuilds the final state from a record.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .cards import (
    AGENTS,
    ALL_CARDS,
    COLOUR_NAMES,
    EFFECT_NAMES,
    MAX_ROUNDS,
    PHASE_NAMES,
    Phase,
    mask_to_ids,
)
from .rules import apply_action, start_from_masks, validate_deal
from .state import GameState, Trick

RECORD_FORMAT = "jekyll_hyde_record"
RECORD_VERSION = 1
_EXCHANGE = int(Phase.EXCHANGE)
_SWAP = int(Phase.SWAP)


def _trick_entry(trick: Trick) -> dict[str, Any]:
    return {
        "leader": AGENTS[trick.leader],
        "cards": {
            AGENTS[trick.leader]: trick.lead_card,
            AGENTS[1 - trick.leader]: trick.follow_card,
        },
        "declared": COLOUR_NAMES[trick.declared] if trick.declared >= 0 else None,
        "winner": AGENTS[trick.winner],
        "effect": EFFECT_NAMES[trick.effect],
        "pride_steal": trick.pride_steal,
    }


def game_record(state: GameState) -> dict[str, Any]:
    """The record of the game that led to ``state``, finished or not.

    Raises:
        ValueError: ``state``'s history does not replay to ``state`` (a
            sampled world, which carries no history).
    """
    replay = start_from_masks(state.deals)
    actions: list[dict[str, Any]] = []
    exchanges: dict[int, dict[str, list[int]]] = {}
    swaps: dict[tuple[int, int], dict[str, list[int]]] = {}
    for action in state.history:
        phase = replay.phase
        agent = AGENTS[replay.to_act]
        actions.append(
            {"agent": agent, "action": action, "phase": PHASE_NAMES[phase], "round": replay.round}
        )
        if phase == _EXCHANGE:
            exchanges.setdefault(replay.round, {a: [] for a in AGENTS})[agent].append(action)
        elif phase == _SWAP:
            key = (replay.round, len(replay.trick_log) - 1)
            swaps.setdefault(key, {a: [] for a in AGENTS})[agent].append(action)
        apply_action(replay, action)
    if replay != state:
        raise ValueError("the state's history does not replay to the state: no record can be made")

    rounds = []
    finished = len(replay.round_log)
    for number in range(1, replay.round + 1):
        jekyll, hyde = replay.deals[number - 1]
        entry: dict[str, Any] = {
            "round": number,
            "deal": {
                "jekyll": mask_to_ids(jekyll),
                "hyde": mask_to_ids(hyde),
                "set_aside": mask_to_ids(ALL_CARDS ^ jekyll ^ hyde),
            },
            "exchange": exchanges.get(number, {a: [] for a in AGENTS}),
        }
        result = replay.round_log[number - 1] if number <= finished else None
        tricks = result.tricks if result else tuple(replay.trick_log)
        entry["tricks"] = []
        for i, trick in enumerate(tricks):
            item = _trick_entry(trick)
            item["swap"] = swaps.get((number, i))
            entry["tricks"].append(item)
        if result:
            entry["tricks_won"] = {"jekyll": result.tricks_jekyll, "hyde": result.tricks_hyde}
            entry["marker"] = result.marker
        rounds.append(entry)
    return {
        "format": RECORD_FORMAT,
        "version": RECORD_VERSION,
        "deals": [{"jekyll": mask_to_ids(j), "hyde": mask_to_ids(h)} for j, h in replay.deals],
        "rounds": rounds,
        "actions": actions,
        "result": {
            "winner": AGENTS[replay.winner] if replay.winner >= 0 else None,
            "marker": replay.marker,
            "rounds_played": finished,
        },
    }


def replay_record(record: Mapping[str, Any]) -> GameState:
    """Rebuild the state a record ends in by replaying its deals and actions.

    Raises:
        ValueError: the record is malformed, an action's agent is not the one
            to act, an action is illegal, or the replay's result differs from
            the record's.
    """
    if not isinstance(record, Mapping) or record.get("format") != RECORD_FORMAT:
        raise ValueError(f"not a game record: expected 'format': '{RECORD_FORMAT}'")
    if record.get("version") != RECORD_VERSION:
        raise ValueError(
            f"unsupported record version {record.get('version')!r}; this engine reads "
            f"version {RECORD_VERSION}"
        )
    deals = [validate_deal(d, i + 1) for i, d in enumerate(record.get("deals", []))]
    if len(deals) != MAX_ROUNDS:
        raise ValueError(f"a record holds the {MAX_ROUNDS} deals of the game, got {len(deals)}")
    state = start_from_masks(deals)
    for step, item in enumerate(record.get("actions", [])):
        agent = item.get("agent")
        if state.to_act < 0 or agent != AGENTS[state.to_act]:
            expected = AGENTS[state.to_act] if state.to_act >= 0 else "nobody (game over)"
            raise ValueError(
                f"record action {step}: agent {agent!r} acts, but {expected} is to act"
            )
        apply_action(state, item.get("action"))
    result = record.get("result")
    if result is not None:
        winner = AGENTS[state.winner] if state.winner >= 0 else None
        if result.get("winner") != winner or result.get("marker") != state.marker:
            raise ValueError(
                f"record says winner {result.get('winner')!r} at marker {result.get('marker')}, "
                f"but the replay ends with winner {winner!r} at marker {state.marker}"
            )
    return state
