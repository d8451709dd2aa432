"""The AEC environment for RL libraries that read PettingZoo envs their own way.

- Tianshou's ``tianshou.env.pettingzoo_env.PettingZooEnv`` takes
  ``jekyll_hyde_v0.env()`` as it is: it reads the ``observation`` and
  ``action_mask`` keys, and stores the infos, whose keys, types and shapes are
  the same at every step (see ``jekyll_hyde_env.jekyll_hyde``).
- RLlib's ``ray.rllib.env.wrappers.pettingzoo_env.PettingZooEnv`` passes the
  observations on unchanged, and RLlib's action-masking modules
  (``ray.rllib.examples.rl_modules.classes.action_masking_rlm``) expect a dict
  with the keys ``observations`` and ``action_mask``, both float. ``rllib_env()``
  is the AEC env with its observations in that form; ``rllib_pettingzoo_env()``
  wraps it in RLlib's ``PettingZooEnv`` and fits ``ray.tune.register_env``.

This module imports Ray only inside ``rllib_pettingzoo_env``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils.wrappers import BaseWrapper

from jekyll_hyde_env.engine.cards import NUM_ACTIONS
from jekyll_hyde_env.jekyll_hyde import env as make_env
from jekyll_hyde_env.observation import OBS_SIZE

# The keys an env_config of rllib_pettingzoo_env may hold: raw_env's arguments.
RLLIB_CONFIG_KEYS = ("render_mode",)


class RLlibObservations(BaseWrapper):
    """The AEC env with the observation ``{"observations": float32[327],
    "action_mask": float32[28]}``, the names and dtype RLlib's action-masking
    modules read.

    The values are those of ``observe`` (0 or 1); only the key ``observation``
    becomes ``observations`` and int8 becomes float32. Actions, rewards, infos and
    the turn order are the wrapped env's.

    Args:
        env: the AEC env to wrap, e.g. ``jekyll_hyde_v0.env()``.

    Raises:
        TypeError: ``env`` is not a PettingZoo ``AECEnv``.
    """

    def __init__(self, env: AECEnv):
        if not isinstance(env, AECEnv):
            raise TypeError(
                f"RLlibObservations wraps a PettingZoo AECEnv, got {type(env).__name__}"
            )
        super().__init__(env)
        self._space = spaces.Dict(
            {
                "observations": spaces.Box(0.0, 1.0, (OBS_SIZE,), np.float32),
                "action_mask": spaces.Box(0.0, 1.0, (NUM_ACTIONS,), np.float32),
            }
        )

    def observation_space(self, agent: str) -> spaces.Space:
        """The observation space of ``agent``, the same for both.

        Args:
            agent: ``"jekyll"`` or ``"hyde"``; another name raises as in the
                wrapped env.

        Returns:
            ``Dict`` of ``observations`` (float32 (327,)) and ``action_mask``
            (float32 (28,)), both in [0, 1].
        """
        self.env.observation_space(agent)  # an unknown agent raises as in the wrapped env
        return self._space

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``agent``'s observation in RLlib's form.

        Args:
            agent: ``"jekyll"`` or ``"hyde"``.

        Returns:
            ``{"observations": float32 (327,), "action_mask": float32 (28,)}``:
            the wrapped env's ``observation`` and ``action_mask`` as new float32
            arrays of 0s and 1s.
        """
        observation = self.env.observe(agent)
        return {
            "observations": observation["observation"].astype(np.float32),
            "action_mask": observation["action_mask"].astype(np.float32),
        }


def rllib_env(**kwargs: Any) -> RLlibObservations:
    """``jekyll_hyde_v0.env(**kwargs)`` with the observations RLlib's action-masking
    modules read (see ``RLlibObservations``); wrap it in RLlib's ``PettingZooEnv``.

    Args:
        **kwargs: ``jekyll_hyde_v0.env``'s arguments (``render_mode``).

    Returns:
        The wrapped AEC env.

    Raises:
        ValueError: an unsupported ``render_mode``.
    """
    return RLlibObservations(make_env(**kwargs))


def rllib_pettingzoo_env(config: dict[str, Any] | None = None) -> Any:
    """RLlib's ``PettingZooEnv`` around ``rllib_env()``, for
    ``ray.tune.register_env("jekyll_hyde", rllib_pettingzoo_env)``.

    ``config`` (RLlib's ``env_config``) may hold ``render_mode``; any other key
    raises ``ValueError``. Needs Ray RLlib (the ``rllib`` extra).

    Args:
        config: RLlib's ``env_config``, None or a dict with at most the key
            ``render_mode``.

    Returns:
        ``ray.rllib.env.wrappers.pettingzoo_env.PettingZooEnv(rllib_env(**config))``.

    Raises:
        ValueError: a key other than ``render_mode``, or an unsupported
            ``render_mode``.
        ImportError: Ray RLlib is not installed.
    """
    config = dict(config or {})
    unknown = sorted(map(str, set(config) - set(RLLIB_CONFIG_KEYS)))
    if unknown:
        raise ValueError(
            f"env_config keys {unknown} are not known; allowed keys: {list(RLLIB_CONFIG_KEYS)}"
        )
    try:
        from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv  # lazy: the rllib extra
    except ImportError as error:
        raise ImportError(
            "rllib_pettingzoo_env needs Ray RLlib: pip install 'jekyll-hyde-env[rllib]'"
        ) from error
    return PettingZooEnv(rllib_env(**config))
