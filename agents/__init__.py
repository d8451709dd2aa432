"""Agents: every player, from random to search, behind one ``act(view, legal_actions)``.

Importing this package registers the agent names (``random``, ``heuristic``,
``ismcts:N`` with N simulations per decision, and paths of saved policies) used by
``make_agent``, the arena and the Gym environment's ``opponent=``.
"""

from jekyll_hyde_env.opponents import register_path_loader

from .base import Agent, agent_names, make_agent, no_argument, parse_count, register_agent
from .heuristic import HeuristicAgent
from .ismcts import ISMCTSAgent, ISMCTSConfig
from .policy_agent import PolicyAgent
from .policy_file import PolicyFileError
from .random_agent import RandomAgent


def _random(argument: str | None) -> RandomAgent:
    no_argument(argument, "random")
    return RandomAgent()


def _heuristic(argument: str | None) -> HeuristicAgent:
    no_argument(argument, "heuristic")
    return HeuristicAgent()


def _ismcts(argument: str | None) -> ISMCTSAgent:
    simulations = parse_count(argument, "ismcts", ISMCTSConfig.num_simulations)
    return ISMCTSAgent(ISMCTSConfig(num_simulations=simulations))


register_agent("random", _random)
register_agent("heuristic", _heuristic)
register_agent("ismcts", _ismcts)
register_path_loader(PolicyAgent)

__all__ = [
    "Agent",
    "HeuristicAgent",
    "ISMCTSAgent",
    "ISMCTSConfig",
    "PolicyAgent",
    "PolicyFileError",
    "RandomAgent",
    "agent_names",
    "make_agent",
    "register_agent",
]
