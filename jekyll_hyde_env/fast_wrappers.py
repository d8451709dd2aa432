"""PettingZoo's three classic-game wrappers as one object.

PettingZoo's classic games wrap their raw env as
``OrderEnforcingWrapper(AssertOutOfBoundsWrapper(TerminateIllegalWrapper(env)))``.
Each layer forwards every attribute read (``agent_selection``,
``terminations``, ``rewards``, ...) through ``__getattr__`` and adds a call to
every ``observe`` and ``step``; three layers deep this costs more than a whole
step of this game.

``ClassicWrapper`` is one object that is an instance of all three classes.
``reset``, ``render``, ``state``, ``agent_iter`` and attribute access are
theirs, inherited in the nested order. ``step``, ``observe`` and ``last``,
which run every turn, do in one call what the three layers do in turn: the order
checks, then the bounds check, then the illegal-move termination, then the
raw env. ``tests/test_fast_wrappers.py`` plays the same scripts through
PettingZoo's own nested chain and through this class and compares everything
they expose.

``FastDiscrete`` is a ``Discrete`` space whose ``contains`` answers plain
Python ints without numpy, as ``AssertOutOfBoundsWrapper`` asks it every step.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger

# OrderEnforcingWrapper refuses these before reset; _cumulative_rewards it never refuses.
_CHECKED_BEFORE_RESET = (
    "agent_selection",
    "agents",
    "rewards",
    "terminations",
    "truncations",
    "infos",
)


class FastDiscrete(spaces.Discrete):
    """``Discrete(n)`` whose membership test is quick for Python ints."""

    def __init__(self, n: int, seed: int | np.random.Generator | None = None, start: int = 0):
        super().__init__(n, seed=seed, start=start)
        self._low = int(start)
        self._high = int(start) + int(n)

    def contains(self, x: Any) -> bool:
        if type(x) is int:
            return self._low <= x < self._high
        return super().contains(x)


class ClassicWrapper(
    wrappers.OrderEnforcingWrapper,
    wrappers.AssertOutOfBoundsWrapper,
    wrappers.TerminateIllegalWrapper,
):
    """``OrderEnforcing(AssertOutOfBounds(TerminateIllegal(env, illegal_reward)))`` in one object.

    Game attributes are read from the raw env through ``_game``, which exists
    only once ``reset`` has run. Before that the getters raise
    ``AttributeError``, Python falls back to ``OrderEnforcingWrapper.__getattr__``,
    and the user reads its message: the attribute "cannot be accessed before
    reset".

    Two hooks let an env refine the checks: ``_as_action`` (the action as the
    bounds check and the env see it; unchanged here) and ``_is_legal`` (the
    mask last handed out, as TerminateIllegalWrapper reads it; an env that can
    ask its rules directly should, rather than trust a mask its caller holds).
    """

    _terminated: bool  # TerminateIllegalWrapper's: the game was ended by an illegal action

    def __init__(self, env: AECEnv, illegal_reward: float):
        if not isinstance(env, AECEnv):
            raise TypeError(f"ClassicWrapper wraps an AECEnv, got {type(env).__name__}")
        # The three constructors do not chain (only TerminateIllegalWrapper
        # takes illegal_reward): run TerminateIllegalWrapper's, which ends in
        # BaseWrapper's, then set OrderEnforcingWrapper's two flags.
        wrappers.TerminateIllegalWrapper.__init__(self, env, illegal_reward)
        self._has_reset = False
        self._has_updated = False
        self._raw = env.unwrapped

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        super().reset(seed=seed, options=options)
        self._game = self._raw

    def observe(self, agent: str) -> Any:
        """OrderEnforcingWrapper's check, then TerminateIllegalWrapper's note of the mask."""
        if not self._has_reset:
            EnvLogger.error_observe_before_reset()
        raw = self._raw
        observation = raw.observe(agent)
        if agent == raw.agent_selection:
            self._prev_obs = observation
            self._prev_info = raw.infos.get(agent, {})
        return observation

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """``AECEnv.last``, reading the raw env's dicts directly."""
        agent = self.agent_selection  # refused before reset, as by OrderEnforcingWrapper
        raw = self._raw
        return (
            self.observe(agent) if observe else None,
            raw._cumulative_rewards[agent],
            raw.terminations[agent],
            raw.truncations[agent],
            raw.infos[agent],
        )

    def step(self, action: Any) -> None:
        """The three wrappers' ``step`` in their nesting order, then the raw env's."""
        # OrderEnforcingWrapper
        if not self._has_reset:
            EnvLogger.error_step_before_reset()
        raw = self._raw
        self._has_updated = True
        if not raw.agents:
            EnvLogger.warn_step_after_terminated_truncated()
            return
        agent = raw.agent_selection
        done = raw.terminations[agent] or raw.truncations[agent]
        # AssertOutOfBoundsWrapper (raised, not asserted, so that -O keeps it)
        if not (action is None and done):  # None: the step of an agent whose game is over
            action = self._as_action(action)
            if not raw.action_space(agent).contains(action):
                raise AssertionError("action is not in action space")
        # TerminateIllegalWrapper
        legal = done or self._is_legal(agent, action)
        self._prev_obs = None
        self._prev_info = None
        if self._terminated and done:
            raw._was_dead_step(action)
        elif not legal:
            EnvLogger.warn_on_illegal_move()
            raw._cumulative_rewards[agent] = 0
            raw.terminations = dict.fromkeys(raw.agents, True)
            raw.truncations = dict.fromkeys(raw.agents, True)
            raw.rewards = dict.fromkeys(raw.truncations, 0)
            raw.rewards[agent] = float(self._illegal_value)
            raw._accumulate_rewards()
            raw._deads_step_first()
            self._terminated = True
        else:
            raw.step(action)

    def _as_action(self, action: Any) -> Any:
        """The action the bounds check and the env see; a subclass may refuse or convert it."""
        return action

    def _is_legal(self, agent: str, action: int) -> bool:
        """TerminateIllegalWrapper's test: the action mask of the observation last handed
        out for ``agent`` (observed now when there is none)."""
        if self._prev_obs is None:
            self.observe(agent)
        return bool(self._prev_obs["action_mask"][action])

    _cumulative_rewards = property(attrgetter("_raw._cumulative_rewards"))


for _name in _CHECKED_BEFORE_RESET:
    setattr(ClassicWrapper, _name, property(attrgetter(f"_game.{_name}")))
