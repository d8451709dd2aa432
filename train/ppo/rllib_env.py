"""The Jekyll and Hyde game for Ray RLlib: ``JekyllHydeMultiAgentEnv``.

A turn-based multi-agent env: only the agent to act gets an observation, a dict
of the encoded view (``observations``) and the action mask (``action_mask``),
and both agents get their +1 / -1 at the end (R4). An illegal action ends the
episode with -1 for its author and 0 for the other side. Each env deals its
games from the run's seed, the iteration the run started at (``stretch``) and
its env runner's and vector's indices, of the env config's ``variant`` (RULES.md
V1-V7; absent: the full game). The class subclasses RLlib's
``MultiAgentEnv``, so ``make_multi_agent_env_class`` defines it only once Ray
is importable (``_require_ray`` names the extra to install otherwise);
``jekyll_hyde_train.ppo.rllib`` trains its PPO modules on it.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import gymnasium as gym
import numpy as np

from jekyll_hyde_env.engine import (
    GameState,
    IllegalActionError,
    apply_action,
    legal_action_mask,
    new_game,
    player_view,
    returns,
)
from jekyll_hyde_env.engine.cards import AGENTS, NUM_ACTIONS
from jekyll_hyde_env.engine.variant import parse_variant
from jekyll_hyde_env.observation import OBS_SIZE, encode_with_mask


def _require_ray():
    try:
        # lazy: the rllib extra, whose absence this function reports
        from ray.rllib.env.multi_agent_env import MultiAgentEnv
    except ImportError as error:
        raise ImportError(
            'a config of algorithm rllib needs Ray RLlib: pip install "jekyll-hyde-env[rllib]"'
        ) from error
    return MultiAgentEnv


def make_multi_agent_env_class():
    """``JekyllHydeMultiAgentEnv``, defined once Ray is importable."""
    _require_ray()
    from ray.rllib.env.multi_agent_env import MultiAgentEnv  # lazy: the rllib extra

    class JekyllHydeMultiAgentEnv(MultiAgentEnv):
        """The game for RLlib: turn-based, one observation per decision.

        An illegal action (which a masking module never samples) ends the
        episode with -1 for its author and 0 for the other side, as PettingZoo's
        illegal-move wrapper does.
        """

        def __init__(self, config: dict | None = None):
            super().__init__()
            self.agents = self.possible_agents = list(AGENTS)
            space = gym.spaces.Dict(
                {
                    "observations": gym.spaces.Box(0.0, 1.0, (OBS_SIZE,), np.float32),
                    "action_mask": gym.spaces.Box(0.0, 1.0, (NUM_ACTIONS,), np.float32),
                }
            )
            self.observation_spaces = dict.fromkeys(AGENTS, space)
            self.action_spaces = {agent: gym.spaces.Discrete(NUM_ACTIONS) for agent in AGENTS}
            config = config or {}
            worker = getattr(config, "worker_index", 0)
            vector = getattr(config, "vector_index", 0)
            seeds = [int(config.get("seed", 0)), int(config.get("stretch", 0)), worker, vector]
            self._rng = np.random.default_rng(seeds)
            self.variant = parse_variant(config.get("variant"))
            self.game: GameState | None = None

        def _state(self) -> GameState:
            """The game being played (``reset`` starts one before any step)."""
            assert self.game is not None
            return self.game

        def _observe(self, player: int) -> dict[str, np.ndarray]:
            game = self._state()
            legal = legal_action_mask(game) if game.to_act == player else 0
            observation, mask = encode_with_mask(player_view(game, player), legal)
            return {
                "observations": observation.astype(np.float32),
                "action_mask": mask.astype(np.float32),
            }

        def reset(self, *, seed: int | None = None, options: dict | None = None):
            if seed is not None:
                self._rng = np.random.default_rng(seed)
            self.game = new_game(self._rng, None, self.variant)
            player = self.game.to_act
            return {AGENTS[player]: self._observe(player)}, {}

        def step(self, action_dict: dict[Hashable | str, Any]):  # RLlib's MultiAgentDict
            game = self._state()
            player = game.to_act
            agent = AGENTS[player]
            try:
                apply_action(game, int(action_dict[agent]))
            except IllegalActionError:
                observations = {a: self._observe(i) for i, a in enumerate(AGENTS)}
                rewards = {agent: -1.0, AGENTS[1 - player]: 0.0}
                return observations, rewards, {"__all__": True}, {"__all__": False}, {}
            if game.to_act < 0:
                result = returns(game)
                observations = {a: self._observe(i) for i, a in enumerate(AGENTS)}
                rewards = {a: float(result[i]) for i, a in enumerate(AGENTS)}
                return observations, rewards, {"__all__": True}, {"__all__": False}, {}
            following = game.to_act
            # RLlib wants a reward for every agent that acted before its next observation.
            return (
                {AGENTS[following]: self._observe(following)},
                {agent: 0.0},
                {"__all__": False},
                {"__all__": False},
                {},
            )

    return JekyllHydeMultiAgentEnv
