"""Jekyll vs Hyde for reinforcement learning.

``jekyll_hyde_v0`` is the PettingZoo AEC environment and ``JekyllHydeGymEnv``
the Gymnasium single-agent one. Importing this package registers both:
``pettingzoo.make("aec", "jekyll_hyde-v0")`` and
``gymnasium.make("JekyllHyde-v0")`` (from another project without an import:
``gymnasium.make("jekyll_hyde_env:JekyllHyde-v0")``). The rules engine in
``jekyll_hyde_env.engine`` imports no RL library.
"""

from __future__ import annotations

import gymnasium
import pettingzoo

from . import jekyll_hyde_v0
from .engine import IllegalActionError
from .jekyll_hyde import env, raw_env
from .single_agent import JekyllHydeGymEnv

__version__ = "0.1.0"

PETTINGZOO_ID = "jekyll_hyde-v0"
GYMNASIUM_ID = "JekyllHyde-v0"  # its version follows jekyll_hyde_v0's


def _register() -> None:
    if PETTINGZOO_ID not in pettingzoo.env_registry.registration.aec_registry:
        pettingzoo.register("aec", PETTINGZOO_ID, entry_point="jekyll_hyde_env.jekyll_hyde_v0:env")
    if GYMNASIUM_ID not in gymnasium.registry:
        gymnasium.register(
            GYMNASIUM_ID, entry_point="jekyll_hyde_env.single_agent:JekyllHydeGymEnv"
        )


_register()

__all__ = ["IllegalActionError", "JekyllHydeGymEnv", "env", "jekyll_hyde_v0", "raw_env"]
