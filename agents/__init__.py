"""Agents: every player, from random to search, behind one ``act(view, legal_actions)``.

Importing this package registers the agent names (``random``, ...) used by
``make_agent``, the arena and the Gym environment's ``opponent=``.
"""

from .base import Agent, agent_names, make_agent, no_argument, register_agent
from .random_agent import RandomAgent


def _random(argument: str | None) -> RandomAgent:
    no_argument(argument, "random")
    return RandomAgent()


register_agent("random", _random)

__all__ = ["Agent", "RandomAgent", "agent_names", "make_agent", "register_agent"]
