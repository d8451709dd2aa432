"""Jekyll vs Hyde for reinforcement learning.

``jekyll_hyde_v0`` is the PettingZoo AEC environment; importing this package
also registers it with PettingZoo (``pettingzoo.make("aec", "jekyll_hyde-v0")``).
The rules engine in ``jekyll_hyde_env.engine`` imports no RL library.
"""

from __future__ import annotations

import pettingzoo

from . import jekyll_hyde_v0
from .engine import IllegalActionError
from .jekyll_hyde import env, raw_env

__version__ = "0.1.0"

PETTINGZOO_ID = "jekyll_hyde-v0"


def _register() -> None:
    if PETTINGZOO_ID not in pettingzoo.env_registry.registration.aec_registry:
        pettingzoo.register("aec", PETTINGZOO_ID, entry_point="jekyll_hyde_env.jekyll_hyde_v0:env")


_register()

__all__ = ["IllegalActionError", "env", "jekyll_hyde_v0", "raw_env"]
