"""The state dict of the RLCard environment ``"jekyll-hyde"``, built from a player's view.

RLCard's agents choose from a dict per decision: ``obs`` (the AEC env's 327-entry
observation, ``observation.encode`` of the player's view), ``legal_actions`` (an
``OrderedDict`` of the legal action ids), ``raw_obs`` (what the player knows, in plain
values: seat and role, phase, round, marker, hand, tricks, colour ranks, lead card,
declared colour, legal ids and the engine's ``PlayerView``), ``raw_legal_actions``
(the legal actions' names) and ``action_record``. The RLCard environment
(``jekyll_hyde_env.integrations.rlcard``, whose module docstring tables these keys)
and the arena adapter (``jekyll_hyde_agents.rlcard_agent.RLCardAgent``) both build
the dict with ``rlcard_state``, so an RLCard agent reads the same state in training
and in the arena.

The 28 action ids are named here too: ``RAW_ACTIONS[a]`` is the name of action ``a``
(0-24 play, give or swap that card, e.g. ``"wrath 5"`` or ``"potion 3+"``; 25-27
``"declare pride"``, ``"declare wrath"``, ``"declare greed"``, T2).
``action_from_raw`` reads an action name (an agent with ``use_raw = True`` answers
with one) and ``checked_action_id`` an action id, refusing anything else with a
``ValueError`` that names what is allowed; whether the action is legal is the
rules' question (``engine.legal_action_mask``), not theirs.

This module needs only the engine and the observation encoder, not RLCard.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from jekyll_hyde_env.arguments import ACTIONS_TEXT, as_action
from jekyll_hyde_env.engine.cards import AGENTS, NUM_ACTIONS, PHASE_NAMES, action_name, mask_to_ids
from jekyll_hyde_env.engine.state import PlayerView
from jekyll_hyde_env.observation import encode

RAW_ACTIONS: tuple[str, ...] = tuple(action_name(a) for a in range(NUM_ACTIONS))
_ACTION_OF_RAW = {name: action for action, name in enumerate(RAW_ACTIONS)}


def raw_observation(view: PlayerView, legal_actions: Sequence[int]) -> dict[str, Any]:
    """The ``raw_obs`` of a view: what the player knows, in plain values (see the module doc).

    Args:
        view: the player's view (``engine.player_view``).
        legal_actions: the player's legal action ids (empty when not to act).

    Returns:
        A new dict with the keys ``player``, ``role``, ``current_player``,
        ``phase``, ``round``, ``marker``, ``hand``, ``tricks``, ``colour_ranks``,
        ``lead_card``, ``declared``, ``legal_actions`` (sorted) and ``view``.
    """
    return {
        "player": view.player,
        "role": AGENTS[view.player],
        "current_player": view.to_act,
        "phase": PHASE_NAMES[view.phase],
        "round": view.round,
        "marker": view.marker,
        "hand": mask_to_ids(view.hand),
        "tricks": list(view.tricks),
        "colour_ranks": list(view.ranks),
        "lead_card": view.lead_card,
        "declared": view.declared,
        "legal_actions": sorted(legal_actions),
        "view": view,
    }


def rlcard_state(
    view: PlayerView,
    legal_actions: Sequence[int],
    action_record: Sequence[tuple[int, int | None]] = (),
) -> dict[str, Any]:
    """The state dict RLCard's agents read, for the player whose view this is.

    Args:
        view: the player's view (``engine.player_view``).
        legal_actions: the player's legal action ids (empty when not to act).
        action_record: ``(player_id, action_id or None)`` pairs the player may see.

    Returns:
        A new dict with the keys ``obs`` (int8, 327 entries), ``legal_actions``
        (an ``OrderedDict`` of the legal ids to None), ``raw_obs``
        (``raw_observation``), ``raw_legal_actions`` (their names) and
        ``action_record`` (a list copy).
    """
    return _state_from_raw(raw_observation(view, legal_actions), action_record)


def _state_from_raw(
    raw: dict[str, Any], action_record: Sequence[tuple[int, int | None]]
) -> dict[str, Any]:
    legal = raw["legal_actions"]
    return {
        "obs": encode(raw["view"]),
        "legal_actions": OrderedDict((action, None) for action in legal),
        "raw_obs": raw,
        "raw_legal_actions": [RAW_ACTIONS[action] for action in legal],
        "action_record": list(action_record),
    }


def action_from_raw(raw_action: Any) -> int:
    """The action id of an action name in ``RAW_ACTIONS``.

    Args:
        raw_action: an action name, e.g. ``"wrath 5"``, ``"potion 3+"`` or
            ``"declare greed"``.

    Returns:
        Its action id, 0-27.

    Raises:
        ValueError: not one of the names; the message lists them.
    """
    if isinstance(raw_action, str) and raw_action in _ACTION_OF_RAW:
        return _ACTION_OF_RAW[raw_action]
    raise ValueError(
        f"unknown raw action {raw_action!r}; raw actions are the action names {list(RAW_ACTIONS)}"
    )


def checked_action_id(action: Any) -> int:
    """``action`` as an action id 0-27.

    Args:
        action: a Python or numpy integer (or a 0-d integer array).

    Returns:
        The action id as a Python int; whether it is legal is not checked.

    Raises:
        ValueError: not an integer, or outside 0-27; the message names the ids allowed.
    """
    action = as_action(action)
    if not 0 <= action < NUM_ACTIONS:
        raise ValueError(f"unknown action id {action}; an action must be {ACTIONS_TEXT}")
    return action
