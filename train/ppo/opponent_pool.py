"""Self-play opponents: a weighted pool of past snapshots and fixed baselines.

Each role learns against the other role's snapshots (the latest one, and older
ones kept in a pool) plus baseline agents, with the chances set in the config's
``selfplay`` section. A ``PoolOpponent`` picks one member per episode in its
``reset``, so it can sit inside every environment of a ``SubprocVecEnv``; the
trainer replaces it with ``set_opponent`` when the pool changes.

On a smaller variant (``run.variant``, RULES.md V1-V7) ``check_opponents`` refuses,
before a run starts, an opponent that plays only the full game.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from jekyll_hyde_agents import PolicyAgent, make_agent
from jekyll_hyde_env.engine import legal_actions, new_game, player_view
from jekyll_hyde_env.engine.state import PlayerView
from jekyll_hyde_env.engine.variant import FULL, Variant
from jekyll_hyde_train.common.config_checks import ConfigError
from jekyll_hyde_train.common.files import one_line
from jekyll_hyde_train.ppo.config import SelfPlayConfig


class PoolOpponent:
    """Plays as a member of a weighted pool, drawn anew each episode.

    Members are ``(spec, weight)``: an agent name, or ``"policy:<path>"`` for a
    saved snapshot (played with sampling, for variety). Agents are built on
    first use in the process that plays them, so the pool pickles small.
    """

    def __init__(self, members: list[tuple[str, float]]):
        weights = np.array([w for _, w in members], dtype=float)
        if not members or weights.sum() <= 0 or (weights < 0).any():
            raise ValueError(f"a pool needs members with non-negative weights, got {members}")
        self.members = list(members)
        self._p = weights / weights.sum()
        self._agents: dict[str, Any] = {}
        self._rng = np.random.default_rng()
        self.current: Any = None
        self.current_spec = ""

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_agents"] = {}  # rebuilt where the pool plays
        state["current"] = None
        return state

    def agent_for(self, spec: str) -> Any:
        """The member ``spec`` as an agent, built once (the batched envs play members directly)."""
        if spec not in self._agents:
            if spec.startswith("policy:"):
                self._agents[spec] = PolicyAgent(spec[len("policy:") :], deterministic=False)
            else:
                self._agents[spec] = make_agent(spec)
        return self._agents[spec]

    def reset(self, seed: int | None = None) -> None:
        self._rng = np.random.default_rng(seed)
        index = int(self._rng.choice(len(self.members), p=self._p))
        self.current_spec = self.members[index][0]
        self.current = self.agent_for(self.current_spec)
        self.current.reset(int(self._rng.integers(2**31)))

    def act(self, view: PlayerView, legal_actions: list[int]) -> int:
        if self.current is None:
            self.reset()
        return self.current.act(view, legal_actions)


def pool_members(config: SelfPlayConfig, snapshots: list[str]) -> list[tuple[str, float]]:
    """The weighted opponents for a learner, given the other side's snapshot folders.

    ``snapshots`` are oldest first; the last one is the latest. The latest gets
    ``latest_weight``, the ``pool_size`` before it share ``past_weight``, and each
    baseline gets its own weight. Missing parts (no snapshot yet) drop out.
    """
    members: list[tuple[str, float]] = []
    if snapshots:
        members.append((f"policy:{snapshots[-1]}", config.latest_weight))
        past = snapshots[-1 - config.pool_size : -1]
        for path in past:
            members.append((f"policy:{path}", config.past_weight / len(past)))
    members.extend((name, weight) for name, weight in config.baselines.items())
    members = [(spec, weight) for spec, weight in members if weight > 0]
    if not members:
        members = list(config.baselines.items()) or [("random", 1.0)]
    return members


def check_opponents(variant: Variant, opponents: dict[str, list[str]]) -> None:
    """Refuse, before a run starts, an opponent that does not play the run's variant.

    Each opponent is built and asked for the first move of a game of ``variant``; an
    agent that plays another version of the game (``pimc:N``, ``az:N`` with the
    champion, a policy saved from a run on another variant) refuses the view with a
    ``ValueError``, which becomes the one-line error.

    Args:
        variant: the run's variant (``run.variant``); the full game checks nothing.
        opponents: each config key (``run.final_opponents``) to the agent specs it names.

    Raises:
        ConfigError: naming the key, the opponent, the variant and the agent's reason.
        ValueError: a spec that builds no agent (``make_agent``'s message).
    """
    if variant == FULL:
        return
    game = new_game(np.random.default_rng(0), None, variant)
    view = player_view(game, game.to_act)
    legal = legal_actions(game)
    for key, specs in opponents.items():
        for spec in specs:
            agent = make_agent(spec, seed=0)
            try:
                agent.act(view, legal)
            except ValueError as error:
                raise ConfigError(
                    f"{key}: opponent {spec!r} cannot play variant {variant.name} "
                    f"({one_line(str(error))})"
                ) from None
