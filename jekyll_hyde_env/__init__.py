"""Jekyll vs Hyde for reinforcement learning.

``jekyll_hyde_v0`` is the PettingZoo AEC environment, ``JekyllHydeGymEnv`` the
Gymnasium single-agent one, ``vector.BatchedGames`` many two-player games
stepped together in C, and ``JekyllHydeVectorEnv`` the Gymnasium vector env on
those games. Importing this package registers them:
``pettingzoo.make("aec", "jekyll_hyde-v0")``, ``gymnasium.make("JekyllHyde-v0")``
and ``gymnasium.make_vec("JekyllHyde-v0", num_envs=N,
vectorization_mode="vector_entry_point")`` (from another project without an
import: ``gymnasium.make("jekyll_hyde_env:JekyllHyde-v0")``). The rules engine in
``jekyll_hyde_env.engine`` imports no RL library. The adapters to other frameworks
(OpenSpiel, RLCard, Stable-Baselines3, RLlib) are the modules of
``jekyll_hyde_env.integrations``, which this package never imports.
"""

from __future__ import annotations

import importlib
from typing import Any

import gymnasium
import pettingzoo

from jekyll_hyde_env import jekyll_hyde_v0
from jekyll_hyde_env.engine import IllegalActionError
from jekyll_hyde_env.jekyll_hyde import env, raw_env
from jekyll_hyde_env.single_agent import JekyllHydeGymEnv

__version__ = "0.1.0"

PETTINGZOO_ID = "jekyll_hyde-v0"
GYMNASIUM_ID = "JekyllHyde-v0"  # its version follows jekyll_hyde_v0's


def _register() -> None:
    if PETTINGZOO_ID not in pettingzoo.env_registry.registration.aec_registry:
        pettingzoo.register("aec", PETTINGZOO_ID, entry_point="jekyll_hyde_env.jekyll_hyde_v0:env")
    if GYMNASIUM_ID not in gymnasium.registry:
        gymnasium.register(
            GYMNASIUM_ID,
            entry_point="jekyll_hyde_env.single_agent:JekyllHydeGymEnv",
            vector_entry_point="jekyll_hyde_env.gym_vector:JekyllHydeVectorEnv",
        )


_register()

# The batched games need the compiled C core; they load on first use, so that the
# engine and the AEC and Gym envs work even where it could not be built.
_LAZY = {"BatchedGames": "vector", "JekyllHydeVectorEnv": "gym_vector"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BatchedGames",
    "IllegalActionError",
    "JekyllHydeGymEnv",
    "JekyllHydeVectorEnv",
    "env",
    "jekyll_hyde_v0",
    "raw_env",
]
