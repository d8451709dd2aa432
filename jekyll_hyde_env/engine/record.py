"""Game records: a JSON-serialisable account of a game, and its replay.

A record holds the three rounds' deals (a round the game never reached
included, so that a replay is exact), every action with its agent, each trick's
cards, winner and potion effect, the exchange and swap picks, each round's
trick counts and marker, and the result. It is derived by replaying the
state's ``deals`` and ``history`` through the rules, so it cannot disagree with
them; ``replay_record`` rebuilds the final state from a record.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from jekyll_hyde_env.engine.cards import (
    AGENTS,
    COLOUR_NAMES,
    EFFECT_NAMES,
    NUM_ACTIONS,
    PHASE_NAMES,
    Phase,
    mask_to_ids,
)
from jekyll_hyde_env.engine.rules import apply_action, start_from_masks, validate_deal
from jekyll_hyde_env.engine.state import GameState, Trick
from jekyll_hyde_env.engine.variant import FULL, parse_variant

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

    Args:
        state: a game started at round 1 with the marker on 0 (``new_game``), whose
            ``history`` holds every action applied since.

    Returns:
        A JSON-serialisable dict: ``format`` and ``version``; ``variant`` (as
        ``Variant.to_json``, only for a game other than the full one); ``deals``, each
        round's hands as card ids, rounds not reached included; ``rounds``, for each
        round reached, its deal with the set-aside cards, the exchange picks (R2.2),
        its tricks (with any Greed swap picks, T6b) and, once it is finished, the
        tricks won and the marker (R2.4); ``actions``, each with its agent, phase and
        round; ``result``, the winner (None while the game goes on), the marker and
        the rounds played. ``replay_record`` reads it back.

    Raises:
        ValueError: ``state``'s history does not replay to ``state`` (a
            sampled world, which carries no history).
    """
    variant = state.variant
    replay = start_from_masks(state.deals, variant=variant)
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
                "set_aside": mask_to_ids(variant.deck ^ jekyll ^ hyde),
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
    record: dict[str, Any] = {"format": RECORD_FORMAT, "version": RECORD_VERSION}
    if variant != FULL:  # a full game's record is the same as before variants
        record["variant"] = variant.to_json()
    return {
        **record,
        "deals": [{"jekyll": mask_to_ids(j), "hyde": mask_to_ids(h)} for j, h in replay.deals],
        "rounds": rounds,
        "actions": actions,
        "result": {
            "winner": AGENTS[replay.winner] if replay.winner >= 0 else None,
            "marker": replay.marker,
            "rounds_played": finished,
        },
    }


RECORD_KEYS = ("format", "version", "variant", "deals", "rounds", "actions", "result", "players")
_ACTION_KEYS = ("agent", "action", "phase", "round")
_RESULT_KEYS = ("winner", "marker", "rounds_played")


class RecordError(ValueError):
    """A game record that cannot be replayed; the message says where and why."""


def replay_record(record: Mapping[str, Any]) -> GameState:
    """Rebuild the state a record ends in by replaying its deals and actions.

    The record is checked against its schema as it is read: ``format`` and
    ``version``; the three ``deals``; ``actions``, a list of objects whose
    ``agent`` is the player to act and whose ``action`` is an integer action
    id (not a boolean, a float or a string) that the rules allow (with
    ``phase`` and ``round``, when given, those of the replay); ``result``
    (optional) the replay's; ``rounds`` (optional) what ``game_record`` derives
    from the replay; ``players`` (optional) a name per role. No other key is
    allowed.

    Args:
        record: a game record, as ``game_record`` writes it or as parsed from its
            JSON.

    Returns:
        The state after the record's last action, finished or not: the record's
        variant and deals, its actions as ``history``.

    Raises:
        RecordError: (a ValueError) the first thing wrong with the record, in
            one line: a missing, unknown or mistyped key, an agent that is not
            the one to act, an illegal action, or a result or round summary
            that differs from the replay's.
    """
    try:
        return _replay(record)
    except RecordError:
        raise
    except RecursionError:  # a caller's parser let absurd nesting through
        raise RecordError("the record is nested too deeply to be a game record") from None
    except ValueError as error:  # the rules' own checks (deals, legality)
        raise RecordError(str(error)) from None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _replay(record: Any) -> GameState:
    if not isinstance(record, Mapping) or record.get("format") != RECORD_FORMAT:
        raise RecordError(f"not a game record: expected 'format': '{RECORD_FORMAT}'")
    version = record.get("version")
    if not _is_int(version) or version != RECORD_VERSION:
        raise RecordError(
            f"unsupported record version {_short(version)}; this engine reads "
            f"version {RECORD_VERSION}"
        )
    unknown = [str(key) for key in record if key not in RECORD_KEYS]
    if unknown:
        raise RecordError(f"unknown keys {unknown} in the record; its keys are {list(RECORD_KEYS)}")
    for key in ("deals", "actions"):
        if key not in record:
            raise RecordError(f"the record lacks its {key!r}")
    variant = FULL
    if "variant" in record:
        try:
            variant = parse_variant(record["variant"])
        except (ValueError, TypeError) as error:
            raise RecordError(f"the record's 'variant': {error}") from None
    deals = record["deals"]
    if not isinstance(deals, list) or len(deals) != variant.rounds:
        count = len(deals) if isinstance(deals, list) else _short(deals)
        raise RecordError(f"'deals' must list the {variant.rounds} deals of the game, got {count}")
    for number, deal in enumerate(deals, start=1):
        for agent, cards in deal.items() if isinstance(deal, Mapping) else ():
            if agent in AGENTS and not isinstance(cards, list):
                raise RecordError(
                    f"deal of round {number}: {agent}'s cards must be a list of card ids, "
                    f"got {_short(cards)}"
                )
    state = start_from_masks(
        [validate_deal(d, i + 1, variant) for i, d in enumerate(deals)], variant=variant
    )
    actions = record["actions"]
    if not isinstance(actions, list):
        raise RecordError(f"'actions' must be a list of actions, got {_short(actions)}")
    for step, item in enumerate(actions):
        _replay_action(state, step, item)
    _check_result(state, record.get("result"))
    _check_players(record.get("players"))
    if "rounds" in record:
        _check_rounds(state, record["rounds"])
    return state


def _check_object(value: Any, what: str, keys: Sequence[str]) -> None:
    """Refuse ``value`` unless it is an object whose keys are among ``keys``."""
    if not isinstance(value, Mapping):
        raise RecordError(f"{what} must be an object with {list(keys)}, got {_short(value)}")
    unknown = [str(key) for key in value if key not in keys]
    if unknown:
        raise RecordError(f"{what} has unknown keys {unknown}; its keys are {list(keys)}")


def _replay_action(state: GameState, step: int, item: Any) -> None:
    where = f"record action {step}"
    _check_object(item, where, _ACTION_KEYS)
    agent = item.get("agent")
    if state.to_act < 0 or agent != AGENTS[state.to_act]:
        expected = AGENTS[state.to_act] if state.to_act >= 0 else "nobody (game over)"
        raise RecordError(f"{where}: agent {_short(agent)} acts, but {expected} is to act")
    if "action" not in item:
        raise RecordError(f"{where} has no 'action'")
    action = item["action"]
    if not _is_int(action) or not 0 <= action < NUM_ACTIONS:
        raise RecordError(
            f"{where}: action {_short(action)} is not an action id, an integer 0-{NUM_ACTIONS - 1}"
        )
    if "phase" in item and item["phase"] != PHASE_NAMES[state.phase]:
        raise RecordError(
            f"{where}: phase {_short(item['phase'])}, but the replay is in phase "
            f"{PHASE_NAMES[state.phase]!r}"
        )
    if "round" in item and (not _is_int(item["round"]) or item["round"] != state.round):
        raise RecordError(
            f"{where}: round {_short(item['round'])}, but the replay is in round {state.round}"
        )
    try:
        apply_action(state, int(action))
    except ValueError as error:
        raise RecordError(f"{where}: {error}") from None


def _check_result(state: GameState, result: Any) -> None:
    if result is None:
        return
    _check_object(result, "'result'", _RESULT_KEYS)
    winner = AGENTS[state.winner] if state.winner >= 0 else None
    marker = result.get("marker")
    if result.get("winner") != winner or not _is_int(marker) or marker != state.marker:
        raise RecordError(
            f"record says winner {_short(result.get('winner'))} at marker {_short(marker)}, "
            f"but the replay ends with winner {winner!r} at marker {state.marker}"
        )
    played = result.get("rounds_played", len(state.round_log))
    if not _is_int(played) or played != len(state.round_log):
        raise RecordError(
            f"record says {_short(played)} rounds played, but the replay played "
            f"{len(state.round_log)}"
        )


def _check_players(players: Any) -> None:
    if players is None:
        return
    if not isinstance(players, Mapping):
        raise RecordError(
            f'\'players\' must map roles to names, e.g. {{"jekyll": "you"}}, got {_short(players)}'
        )
    for role, name in players.items():
        if role not in AGENTS or not isinstance(name, str):
            raise RecordError(
                f"'players' must map roles {list(AGENTS)} to names (strings), "
                f"got {_short(role)}: {_short(name)}"
            )


def _check_rounds(state: GameState, rounds: Any) -> None:
    """The record's round summaries must be what the replay derives (``game_record``)."""
    derived = game_record(state)["rounds"]
    if not isinstance(rounds, list) or len(rounds) != len(derived):
        count = len(rounds) if isinstance(rounds, list) else _short(rounds)
        raise RecordError(f"'rounds' must list the {len(derived)} rounds replayed, got {count}")
    for number, (given, made) in enumerate(zip(rounds, derived, strict=True), start=1):
        if given == made:
            continue
        if not isinstance(given, Mapping):
            raise RecordError(f"round {number} of 'rounds' must be an object, got {_short(given)}")
        keys = [key for key in made if given.get(key) != made[key]]
        keys += [str(key) for key in given if key not in made]
        raise RecordError(
            f"round {number} of 'rounds' disagrees with the replay of the actions (in {keys})"
        )
