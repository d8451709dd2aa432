"""An agent's exact action probabilities at each information set of a tree.

An exact best response needs to know what the fixed seat plays with what
probability, everywhere chance and that seat reach. Agents say it in one of these ways:

- ``action_probabilities(view, legal_actions)``, as tabular strategies
  (``jekyll_hyde_agents.tabular``) and any user agent that defines it do;
- uniform play (``RandomAgent``, whose ``uniform_random`` is set);
- a saved policy (``PolicyAgent``): the softmax of its legal logits when it samples,
  its most likely action when deterministic, as its ``act`` plays;
- a role pair (``jekyll=A,hyde=B``): each role's agent in its seat.

Any other agent (a search such as ``ismcts``, whose play depends on its random
simulations) is refused, naming why: its distribution cannot be enumerated.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from jekyll_hyde_agents.policy_agent import PolicyAgent
from jekyll_hyde_agents.sources import RoleAgent
from jekyll_hyde_env.engine.cards import AGENTS
from jekyll_hyde_env.engine.information import player_view
from jekyll_hyde_env.observation import encode
from jekyll_hyde_train.exact.best_response import Strategy
from jekyll_hyde_train.exact.table import InfosetTable, policy_probabilities, table_strategy
from jekyll_hyde_train.exact.tree import GameTree, InfoSet

ENUMERABLE = (
    "agents with action_probabilities(view, legal_actions) (tabular strategies from "
    "jekyll-hyde solve), random, saved policies, and role pairs of these"
)


def seat_agent(agent: Any, seat: int) -> Any:
    """The agent that plays ``seat``: a role pair's agent for that role, else ``agent``.

    Args:
        agent: an agent or a role pair (``jekyll=A,hyde=B``).
        seat: 0 Jekyll or 1 Hyde.

    Returns:
        The seat's agent.
    """
    if isinstance(agent, RoleAgent):
        return agent.agents[seat]
    return agent


def _policy_probabilities(agent: PolicyAgent, view: Any, legal: list[int]) -> np.ndarray:
    agent.check_variant(view)
    logits = agent.logits(encode(view), AGENTS[view.player])[legal].astype(np.float64)
    if agent.deterministic:
        out = np.zeros(len(legal))
        out[int(np.argmax(logits))] = 1.0
        return out
    probabilities = np.exp(logits - logits.max())
    return probabilities / probabilities.sum()


def agent_strategy(
    agent: Any, tree: GameTree, seat: int, table: InfosetTable | None = None
) -> Strategy:
    """The exact strategy of ``agent`` in ``seat`` on ``tree``'s information sets.

    Args:
        agent: an agent (see the module's docstring for those that can be enumerated).
        tree: the variant's tree.
        seat: the seat the agent plays, 0 Jekyll or 1 Hyde.
        table: ``tree``'s information sets as arrays: a saved policy then plays them
            all in a few batches instead of one view at a time.

    Returns:
        A function (information set index, set) -> probabilities of its actions.

    Raises:
        ValueError: an agent whose action probabilities cannot be enumerated, naming
            the agent and the kinds that can.
    """
    player = seat_agent(agent, seat)
    name = getattr(player, "name", type(player).__name__)

    def view_of(k: int, infoset: InfoSet) -> Any:
        return player_view(tree.views[k], infoset.player)

    if hasattr(player, "action_probabilities"):

        def given(k: int, infoset: InfoSet) -> np.ndarray:
            return np.asarray(player.action_probabilities(view_of(k, infoset), infoset.actions))

        return given
    if getattr(player, "uniform_random", False):
        return lambda k, infoset: np.full(len(infoset.actions), 1.0 / len(infoset.actions))
    if isinstance(player, PolicyAgent) and table is not None:
        return table_strategy(policy_probabilities(player, table, seats=(seat,)))
    if isinstance(player, PolicyAgent):

        def policy(k: int, infoset: InfoSet) -> np.ndarray:
            return _policy_probabilities(player, view_of(k, infoset), infoset.actions)

        return policy
    raise ValueError(
        f"an exact best response needs the action probabilities of {name} as "
        f"{AGENTS[seat]}, and they cannot be enumerated (a search or a sampler plays "
        f"differently from game to game); exact best responses are computed for {ENUMERABLE}"
    )
