"""The rules engine: plain Python and numpy, no RL library.

Environments and agents share this one source of truth. See ``rules`` for the
game flow, ``information`` for hidden information and ``record`` for game
records.
"""

from jekyll_hyde_env.engine.cards import AGENTS, NUM_ACTIONS, NUM_CARDS, Effect, Phase
from jekyll_hyde_env.engine.information import info_key, player_view, sample_world
from jekyll_hyde_env.engine.record import game_record, replay_record
from jekyll_hyde_env.engine.render import render_state
from jekyll_hyde_env.engine.rules import (
    IllegalActionError,
    apply_action,
    current_player,
    is_terminal,
    legal_action_mask,
    legal_actions,
    new_game,
    returns,
)
from jekyll_hyde_env.engine.state import GameState, PlayerView, RoundResult, Trick

__all__ = [
    "AGENTS",
    "NUM_ACTIONS",
    "NUM_CARDS",
    "Effect",
    "GameState",
    "IllegalActionError",
    "Phase",
    "PlayerView",
    "RoundResult",
    "Trick",
    "apply_action",
    "current_player",
    "game_record",
    "info_key",
    "is_terminal",
    "legal_action_mask",
    "legal_actions",
    "new_game",
    "player_view",
    "render_state",
    "replay_record",
    "returns",
    "sample_world",
]
