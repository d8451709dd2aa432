"""The agents a web client may play or watch: an allow list fixed when the server starts.

A client names an opponent by one of the listed specs, exactly; nothing else a
client sends reaches ``make_agent``, so no client loads a file or picks a budget.
Each listed spec is built once, at start-up, into a template agent whose work per
decision is bounded:

- ``random``, ``heuristic``, ``lowest``, ``champion``, saved policies (a run
  folder the operator lists) and models of other libraries (an SB3 zip, an RLlib
  checkpoint, a TorchScript or ONNX file the operator lists) decide in one pass
  of a network, with no search;
- ``ismcts:N`` and ``az:N`` (at most ``MAX_SIMULATIONS`` simulations), or their
  ``:Xs`` forms, search in C without holding Python's interpreter lock; their time
  budget is set to ``SEARCH_SHARE`` of the server's thinking limit (or their own,
  if shorter), so that the search stops before the limit and leaves the rest to its
  own overhead. A spec that asks for more seconds than the limit is refused.

Any other agent is refused, because the server cannot bound it or cannot stay
responsive while it thinks: a Python function (``python:...``) runs for as long as it
likes while holding the interpreter lock; ``pimc:N`` solves each world in C while holding the
interpreter lock (its solver shares one table), which would stall every other
request for as long as a world takes; best-response search and OpenSpiel's bots
have no time budget. A game's agent is a shallow copy of its template with its own
seeded randomness; the network weights and settings are shared, read-only, so a
game costs no more memory than its state.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterable, Mapping

from jekyll_hyde_agents import TIMED_SIMULATIONS as MAX_SIMULATIONS
from jekyll_hyde_agents import (
    Agent,
    AZAgent,
    HeuristicAgent,
    ISMCTSAgent,
    LowestAgent,
    ModelAgent,
    PIMCAgent,
    PolicyAgent,
    RandomAgent,
    make_agent,
)

DEFAULT_OPPONENTS = ("champion", "heuristic", "ismcts:200", "ismcts:1000", "random")
SEARCH_SHARE = 0.8  # of the thinking limit, given to a search's own time budget
_ONE_PASS = (RandomAgent, HeuristicAgent, LowestAgent, PolicyAgent, ModelAgent)
_SEARCHES = (ISMCTSAgent, AZAgent)  # their config: num_simulations, time_budget
_MAX_SHOWN = 80  # characters of a refused spec repeated in an answer


def split_specs(text: str) -> list[str]:
    """``"champion,ismcts:1000,az:200,policy=runs/a"`` as a list of specs: a comma starts a
    new spec unless what follows is an option (``key=value`` with no ``:`` before the
    ``=``), which stays with the spec before it."""
    specs: list[str] = []
    for item in text.split(","):
        item = item.strip()
        key, equals, _ = item.partition("=")
        if equals and ":" not in key and specs:
            specs[-1] += "," + item
        elif item:
            specs.append(item)
    return specs


def shown(spec: str) -> str:
    """A client's spec as an answer repeats it: quoted, and cut short if long."""
    text = spec if len(spec) <= _MAX_SHOWN else spec[:_MAX_SHOWN] + "..."
    return repr(text)


def bounded(agent: Agent, spec: str, max_think_seconds: float) -> Agent:
    """``agent`` with its work per decision bounded as this module's docstring says.

    Raises:
        ValueError: the agent's budget exceeds the bounds, or its kind cannot be bounded.
    """
    if isinstance(agent, _ONE_PASS):
        return agent
    if isinstance(agent, PIMCAgent):
        raise ValueError(
            f"{spec!r}: the server does not offer pimc: its solver holds Python's interpreter "
            "lock, which would stall every other request while it thinks; offer ismcts:N or az:N"
        )
    if not isinstance(agent, _SEARCHES):
        raise ValueError(
            f"{spec!r}: the server cannot bound the thinking time of this agent; it offers "
            "random, heuristic, lowest, champion, saved policies, models (SB3, RLlib, "
            "Tianshou, TorchScript, ONNX), ismcts:N and az:N"
        )
    config = agent.config
    if config.time_budget is None and config.num_simulations > MAX_SIMULATIONS:
        raise ValueError(
            f"{spec!r}: at most {MAX_SIMULATIONS} simulations a decision here "
            "(or a number of seconds, such as ':1s')"
        )
    if config.time_budget is not None and config.time_budget > max_think_seconds:
        raise ValueError(
            f"{spec!r} thinks {config.time_budget:g} s a decision, more than the "
            f"server's limit of {max_think_seconds:g} s (--max-think-seconds)"
        )
    budget = SEARCH_SHARE * max_think_seconds
    if config.time_budget is not None:
        budget = min(budget, config.time_budget)
    agent.config = dataclasses.replace(config, time_budget=budget)
    return agent


class OpponentMenu:
    """The allowed specs and their template agents; ``build`` gives a game its agent."""

    def __init__(self, templates: Mapping[str, Agent]) -> None:
        if not templates:
            raise ValueError("the allow list of opponents is empty")
        self._templates = dict(templates)

    @classmethod
    def from_specs(cls, specs: Iterable[str], max_think_seconds: float) -> OpponentMenu:
        """Build and bound every spec (``make_agent``'s names, saved policies' paths).

        Raises:
            ValueError: a spec ``make_agent`` refuses, or one the server cannot bound;
                the message names it.
        """
        templates: dict[str, Agent] = {}
        for spec in specs:
            spec = spec.strip()
            if not spec or spec in templates:
                continue
            try:
                agent = make_agent(spec)
            except (TypeError, OSError, RuntimeError) as error:
                raise ValueError(f"opponent {spec!r}: {error}") from None
            templates[spec] = bounded(agent, spec, max_think_seconds)
        return cls(templates)

    @property
    def allowed(self) -> list[str]:
        return list(self._templates)

    def build(self, spec: str, seed: int) -> Agent:
        """A fresh agent for ``spec``, its randomness seeded with ``seed``.

        Raises:
            ValueError: ``spec`` is not on the list; the message lists what is.
        """
        template = self._templates.get(spec) if isinstance(spec, str) else None
        if template is None:
            raise ValueError(
                f"{shown(str(spec))} is not offered by this server; choose one of: "
                + ", ".join(self._templates)
            )
        agent = copy.copy(template)
        agent.reset(seed)
        return agent
