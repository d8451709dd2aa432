"""Agents: every player, from random to search, behind one ``act(view, legal_actions)``.

Importing this package registers the agent names used by ``make_agent``, the
arena and the Gym environment's ``opponent=``: ``random``, ``heuristic``,
``ismcts:N`` (N simulations per decision), ``pimc:N`` (N worlds per decision),
``ismcts:Xs`` and ``pimc:Xs`` (X seconds per decision), ``champion`` (the shipped
policy, see ``jekyll_hyde_agents.champion``), ``lowest`` (always the lowest legal action),
``br:N,target=SPEC`` (best-response search against a known policy, see
``jekyll_hyde_agents.best_response``), ``openspiel-ismcts:N`` and ``openspiel-mcts:N``
(OpenSpiel's bots, ``jekyll_hyde_agents.openspiel_bots``), ``az:N`` (network-guided search
with the champion, or ``az:N,policy=PATH``; see ``jekyll_hyde_agents.az``), the paths of
saved policies, and models of other libraries: SB3 zips, RLlib checkpoints, Tianshou
policies, TorchScript and ONNX modules and Python functions, detected from the file or
named by a prefix (``sb3:PATH``, ``python:file.py:name``; see ``jekyll_hyde_agents.sources``).
"""

import functools

from jekyll_hyde_agents.az import AZAgent, AZConfig, AZSpec, parse_az, parse_az_spec
from jekyll_hyde_agents.base import (
    Agent,
    agent_names,
    make_agent,
    no_argument,
    parse_budget,
    register_agent,
)
from jekyll_hyde_agents.best_response import BestResponseAgent, BRSpec, parse_br_spec
from jekyll_hyde_agents.champion import champion_path, champion_provenance
from jekyll_hyde_agents.heuristic import HeuristicAgent
from jekyll_hyde_agents.ismcts import ISMCTSAgent, ISMCTSConfig
from jekyll_hyde_agents.lowest_agent import LowestAgent
from jekyll_hyde_agents.model_agent import ModelAgent, ModelError, ScoringModel
from jekyll_hyde_agents.openspiel_bots import openspiel_ismcts, openspiel_mcts
from jekyll_hyde_agents.pimc import PIMCAgent, PIMCConfig
from jekyll_hyde_agents.policy_agent import PolicyAgent
from jekyll_hyde_agents.policy_format import PolicyFileError
from jekyll_hyde_agents.random_agent import RandomAgent
from jekyll_hyde_agents.sources import (
    KINDS,
    AgentSource,
    as_agent,
    load_agent,
    load_kind,
    load_unnamed,
    source_of,
)
from jekyll_hyde_agents.tabular import TabularAgent, save_tabular
from jekyll_hyde_env.opponents import register_object_adapter, register_path_loader

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
    assert simulations is not None  # parse_budget gives a count or seconds
    return ISMCTSAgent(ISMCTSConfig(num_simulations=simulations))


def _pimc(argument: str | None) -> PIMCAgent:
    worlds, seconds = parse_budget(argument, "pimc", PIMCConfig.num_worlds)
    if seconds is not None:
        return PIMCAgent(PIMCConfig(num_worlds=TIMED_WORLDS, time_budget=seconds))
    assert worlds is not None  # parse_budget gives a count or seconds
    return PIMCAgent(PIMCConfig(num_worlds=worlds))


def _champion(argument: str | None) -> PolicyAgent:
    no_argument(argument, "champion")
    return PolicyAgent(champion_path(), label="champion")


def _lowest(argument: str | None) -> LowestAgent:
    no_argument(argument, "lowest")
    return LowestAgent()


def _br(argument: str | None) -> BestResponseAgent:
    return parse_br_spec(argument).build()


def _az(argument: str | None) -> AZAgent:
    return parse_az(argument, default_policy=champion_path)


register_agent("random", _random)
register_agent("heuristic", _heuristic)
register_agent("ismcts", _ismcts)
register_agent("pimc", _pimc)
register_agent("champion", _champion)
register_agent("lowest", _lowest)
register_agent("br", _br)
register_agent("az", _az)
register_agent("openspiel-ismcts", openspiel_ismcts)
register_agent("openspiel-mcts", openspiel_mcts)
for _prefix in KINDS:
    register_agent(_prefix, functools.partial(load_kind, _prefix))
register_path_loader(load_unnamed)
register_object_adapter(as_agent)

__all__ = [
    "AZAgent",
    "AZConfig",
    "AZSpec",
    "BRSpec",
    "Agent",
    "AgentSource",
    "ModelAgent",
    "ModelError",
    "ScoringModel",
    "as_agent",
    "load_agent",
    "source_of",
    "BestResponseAgent",
    "HeuristicAgent",
    "ISMCTSAgent",
    "ISMCTSConfig",
    "LowestAgent",
    "PIMCAgent",
    "PIMCConfig",
    "PolicyAgent",
    "PolicyFileError",
    "RandomAgent",
    "agent_names",
    "champion_path",
    "champion_provenance",
    "make_agent",
    "parse_az_spec",
    "parse_br_spec",
    "register_agent",
    "TabularAgent",
    "save_tabular",
]
