"""Any RLCard agent as an arena agent: ``RLCardAgent(agent)`` or ``RLCardAgent([jekyll, hyde])``.

RLCard's agents (``RandomAgent``, ``DQNAgent``, ``NFSPAgent``, the DMC agents of
``DMCTrainer``, or one's own) choose with ``eval_step(state) -> (action, info)``
from the state dict of an RLCard environment. ``RLCardAgent`` builds that dict
from the player's view with
``jekyll_hyde_env.integrations.rlcard_state_dict.rlcard_state``, the same function
(and so the same observation encoder) as the RLCard environment ``"jekyll-hyde"``,
and plays the action through the project's ``act(view,
legal_actions)`` interface, so the arena (``jekyll_hyde_arena``) can match it
against any other agent. The player ids are the seats, as in the environment: 0
Jekyll, 1 Hyde; an RLCard agent trained on one player id should play that role.

The state's ``action_record`` holds the actions this agent chose in the current
game: the arena shows an agent its views, not the opponent's moves one by one
(the view has the current round's tricks and the cards received). The RLCard
agents named above do not read it. An agent with ``use_raw = True`` (RLCard's
human agents) answers with an action name (``rlcard_env.RAW_ACTIONS``), as it
does in RLCard's environments.

RLCard's agents draw their random choices from numpy's global generator (their
own code), so ``reset(seed)`` does not fix them; DMC and DQN play their greedy
action in ``eval_step`` and need no seed. This module needs the ``rlcard`` extra.
"""

from __future__ import annotations

from typing import Any

from jekyll_hyde_env.engine.cards import AGENTS
from jekyll_hyde_env.engine.state import PlayerView
from jekyll_hyde_env.integrations.rlcard_state_dict import (
    RAW_ACTIONS,
    action_from_raw,
    checked_action_id,
    rlcard_state,
)


class RLCardAgent:
    """Plays RLCard agents' ``eval_step`` as an arena agent.

    Args:
        agent: an object with ``eval_step(state) -> (action, info)`` (RLCard's
            agent interface) that plays both roles, or a list of two, one per
            player id (0 Jekyll, 1 Hyde), as ``env.set_agents`` takes them (the
            DMC trainer's agents are one network per player id). ``use_raw``
            (default False) says whether an agent answers with action names.
        name: the agent's name in reports.

    Raises:
        ValueError: an agent without a callable ``eval_step``, or a list that is
            not one agent per player id.
    """

    def __init__(self, agent: Any, name: str = "rlcard"):
        agents = list(agent) if isinstance(agent, (list, tuple)) else [agent] * len(AGENTS)
        if len(agents) != len(AGENTS):
            raise ValueError(
                f"give one RLCard agent, or a list of {len(AGENTS)} (player 0 {AGENTS[0]}, "
                f"player 1 {AGENTS[1]}); got a list of {len(agents)}"
            )
        for each in agents:
            if not callable(getattr(each, "eval_step", None)):
                raise ValueError(
                    f"{type(each).__name__} is not an RLCard agent: it needs "
                    "eval_step(state) -> (action, info)"
                )
        self.agents = agents
        self.name = name
        self._records: dict[int, list[tuple[int, int]]] = {p: [] for p in range(len(AGENTS))}

    def reset(self, seed: int | None = None) -> None:
        """Start a new game (the records of the agent's own actions empty).

        Args:
            seed: ignored: RLCard's agents draw from numpy's global generator.
        """
        self._records = {player: [] for player in self._records}

    def state(self, view: PlayerView, legal_actions: list[int]) -> dict[str, Any]:
        """The RLCard state dict the agent receives for ``view``: its ``action_record``
        holds that seat's own actions only, even when this adapter plays both seats
        (the other seat's exchange and swap picks are hidden from it, R2.2/T6b).

        Args:
            view: what the player to act knows.
            legal_actions: the ids of the legal actions.

        Returns:
            RLCard's state dict: ``obs`` (the encoded view), ``legal_actions`` (an
            ordered dict of the legal ids), ``raw_obs``, ``raw_legal_actions`` (the
            action names) and ``action_record`` (``(player_id, action_id)`` pairs).
        """
        return rlcard_state(view, legal_actions, self._records[view.player])

    def act(self, view: PlayerView, legal_actions: list[int]) -> int:
        """The agent's ``eval_step`` choice among ``legal_actions``.

        Args:
            view: what the player to act knows; ``view.player`` picks the RLCard
                agent that plays.
            legal_actions: the ids of the legal actions.

        Returns:
            The chosen action id, recorded in that seat's ``action_record``.

        Raises:
            ValueError: the agent answered with something that is not an action,
                or with an action that is not legal; the message names the legal ones.
        """
        agent = self.agents[view.player]
        answer = agent.eval_step(self.state(view, legal_actions))
        if not isinstance(answer, tuple) or len(answer) != 2:
            raise ValueError(
                f"{self.name}: eval_step must return (action, info), got {_short(answer)}"
            )
        action = answer[0]
        try:
            if getattr(agent, "use_raw", False):
                action = action_from_raw(action)
            else:
                action = checked_action_id(action)
        except ValueError as error:
            raise ValueError(f"{self.name} playing {AGENTS[view.player]}: {error}") from None
        if action not in legal_actions:
            legal = sorted(legal_actions)
            raise ValueError(
                f"{self.name} playing {AGENTS[view.player]} chose action {action} "
                f"({RAW_ACTIONS[action]}), which is not legal; legal action ids: {legal}"
            )
        self._records[view.player].append((view.player, action))
        return action


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
