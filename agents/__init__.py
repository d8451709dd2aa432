"""Agents: every player, from random to search, behind one ``act(view, legal_actions)``.

Importing this package registers the agent names used by ``make_agent``, the
arena and the Gym environment's ``opponent=``: ``random``, ``heuristic``,
``ismcts:N`` (N simulations per decision), ``pimc:N`` (N worlds per decision),
``ismcts:Xs`` and ``pimc:Xs`` (X seconds per decision), ``az:N,policy=PATH``
(network-guided search, see ``agents.az``), and the paths of saved policies.
"""

from jekyll_hyde_env.opponents import register_path_loader

from .az import AZAgent, AZConfig, parse_az
from .base import Agent, agent_names, make_agent, no_argument, parse_budget, register_agent
from .heuristic import HeuristicAgent
from .ismcts import ISMCTSAgent, ISMCTSConfig
from .pimc import PIMCAgent, PIMCConfig
from .policy_agent import PolicyAgent
from .policy_file import PolicyFileError
from .random_agent import RandomAgent

# Caps on the work of one decision when a name gives seconds (``ismcts:0.05s``):
# far above what fits in any sensible budget, so the clock decides.
TIMED_SIMULATIONS = 100_000
TIMED_WORLDS = 10_000


def _random(argument: str | None) -> RandomAgent:
    no_argument(argument, "random")
    return RandomAgent()


def _heuristic(argument: str | None) -> HeuristicAgent:
    no_argument(argument, "heuristic")
    return HeuristicAgent()


def _ismcts(argument: str | None) -> ISMCTSAgent:
    simulations, seconds = parse_budget(argument, "ismcts", ISMCTSConfig.num_simulations)
    if seconds is not None:
        return ISMCTSAgent(ISMCTSConfig(num_simulations=TIMED_SIMULATIONS, time_budget=seconds))
    return ISMCTSAgent(ISMCTSConfig(num_simulations=simulations))


def _pimc(argument: str | None) -> PIMCAgent:
    worlds, seconds = parse_budget(argument, "pimc", PIMCConfig.num_worlds)
    if seconds is not None:
        return PIMCAgent(PIMCConfig(num_worlds=TIMED_WORLDS, time_budget=seconds))
    return PIMCAgent(PIMCConfig(num_worlds=worlds))


def _az(argument: str | None) -> AZAgent:
    return parse_az(argument)


register_agent("random", _random)
register_agent("heuristic", _heuristic)
register_agent("ismcts", _ismcts)
register_agent("pimc", _pimc)
register_agent("az", _az)
register_path_loader(PolicyAgent)

__all__ = [
    "AZAgent",
    "AZConfig",
    "Agent",
    "HeuristicAgent",
    "ISMCTSAgent",
    "ISMCTSConfig",
    "PIMCAgent",
    "PIMCConfig",
    "PolicyAgent",
    "PolicyFileError",
    "RandomAgent",
    "agent_names",
    "make_agent",
    "register_agent",
]
