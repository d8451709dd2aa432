"""Stable-Baselines3 ``VecEnv`` over the batched C games, for MaskablePPO without subprocesses.

``JekyllHydeSB3VecEnv`` wraps ``JekyllHydeVectorEnv`` (one learner seat in each
of N games stepped together in C, opponents inside ``step``) behind SB3's
``VecEnv`` interface: ``reset()`` returns the observations, ``step`` returns
``(obs, rewards, dones, infos)`` with SB3's same-step reset (a finished game's
last observation is in ``infos[i]["terminal_observation"]``), and
``env_method("action_masks")`` gives each game's mask, which is how
sb3-contrib's MaskablePPO reads masks from a ``VecEnv``. One process steps all
the games; there is no ``SubprocVecEnv``. Wrap it in SB3's ``VecMonitor`` for
episode statistics.

Needs stable-baselines3 (the ``train`` extra)::

    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import VecMonitor
    from jekyll_hyde_env.integrations.sb3_vec_env import JekyllHydeSB3VecEnv

    venv = VecMonitor(JekyllHydeSB3VecEnv(num_envs=64, role="jekyll", opponent="heuristic"))
    model = MaskablePPO("MlpPolicy", venv, n_steps=64).learn(10_000)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.vec_env import VecEnv

from jekyll_hyde_env.engine.variant import Variant
from jekyll_hyde_env.gym_vector import JekyllHydeVectorEnv


class JekyllHydeSB3VecEnv(VecEnv):
    """N batched games with one learner seat each, as an SB3 ``VecEnv``.

    Args:
        num_envs: games played together.
        role: the learner's seat, ``"jekyll"``, ``"hyde"`` or ``"random"``.
        opponent: as for ``JekyllHydeVectorEnv`` (a name, path, agent,
            callable, weighted list or pool).
        illegal: ``"terminate"`` or ``"raise"``, as for ``JekyllHydeVectorEnv``.
        variant: the version of the game (RULES.md V1-V7), as for ``JekyllHydeVectorEnv``.
    """

    render_mode = None  # the batched games draw nothing; SB3 asks every env for this

    def __init__(
        self,
        num_envs: int = 8,
        role: str = "random",
        opponent: Any = "random",
        illegal: str = "terminate",
        variant: str | Variant = "full",
    ):
        # SB3's infos are built here, from final_obs alone: no game facts (game_info).
        self.env = JekyllHydeVectorEnv(
            num_envs,
            role,
            opponent,
            illegal,
            AutoresetMode.SAME_STEP,
            game_info=False,
            variant=variant,
        )
        super().__init__(
            self.env.num_envs, self.env.single_observation_space, self.env.single_action_space
        )
        self._actions: np.ndarray | None = None

    def reset(self) -> np.ndarray:
        """Start a new game in every game slot.

        The seed given to ``seed(s)`` before, if any, applies (game ``i`` is
        seeded with ``s + i``) and is then forgotten; options set with
        ``set_options`` are not used.

        Returns:
            int8 (N, 327): each game's learner's observation.
        """
        seed = self._seeds[0] if self._seeds else None
        observation, _ = self.env.reset(seed=seed)
        self._reset_seeds()
        self._reset_options()
        return observation

    def step_async(self, actions: np.ndarray) -> None:
        """Keep the actions for ``step_wait``, which plays them.

        Args:
            actions: one action id (0-27) per game, shape (N,).
        """
        self._actions = actions

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """Play the actions of ``step_async``, then each game's opponent, as one step.

        A game that ends starts anew in the same step (SB3's convention).

        Returns:
            observations: int8 (N, 327), each game's learner's observation (the new
                game's first one where a game ended).
            rewards: float64 (N,): +1 or -1 on the step that ends a game, 0
                otherwise; an illegal action under ``illegal="terminate"`` ends
                its game with -1.
            dones: bool (N,): the games that ended on this step.
            infos: one dict per game; for an ended game, ``terminal_observation``
                (its last observation) and ``TimeLimit.truncated`` (False), empty
                otherwise.

        Raises:
            RuntimeError: no ``step_async`` since the last step, or no ``reset`` yet.
            ValueError: actions of the wrong shape or dtype.
            IllegalActionError: an illegal action under ``illegal="raise"``, or an
                illegal action of an opponent.
        """
        if self._actions is None:
            raise RuntimeError("step_wait() called without step_async()")
        observation, rewards, terminated, truncated, infos = self.env.step(self._actions)
        self._actions = None
        dones = terminated | truncated
        out: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if dones.any():
            final = infos["final_obs"]
            for i in np.flatnonzero(dones).tolist():
                out[i]["terminal_observation"] = final[i]
                out[i]["TimeLimit.truncated"] = False
        return observation, rewards, dones, out

    def action_masks(self) -> np.ndarray:
        """(N, 28) bool: the learner's legal actions in each game.

        Returns:
            A bool (N, 28) copy, one row per game (MaskablePPO reads it).
        """
        return self.env.action_masks()

    def set_opponent(self, opponent: Any) -> None:
        """Replace the opponent; each game takes it at the start of its next episode.

        Args:
            opponent: anything the ``opponent`` argument takes.

        Raises:
            ValueError: a name that names no agent, or bad pool weights.
            TypeError: an opponent of no accepted kind.
        """
        self.env.set_opponent(opponent)

    def close(self) -> None:
        """Close the wrapped ``JekyllHydeVectorEnv``."""
        self.env.close()

    # --- VecEnv's per-environment access: one object serves every game -------------

    def _indices(self, indices: Any) -> Sequence[int]:
        if indices is None:
            return range(self.num_envs)
        if isinstance(indices, int):
            return [indices]
        return list(indices)

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        """An attribute of this object, once per game asked about.

        Args:
            attr_name: the attribute's name, e.g. ``"render_mode"``.
            indices: the games asked about: None for all, one index, or a sequence
                of indices.

        Returns:
            The attribute's value, repeated once per index.
        """
        value = getattr(self, attr_name)
        return [value for _ in self._indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        """Refused: one object runs every game, so there is nothing per game to set.

        Args:
            attr_name: the attribute's name.
            value: the value that would be set.
            indices: the games asked about: None for all, one index, or a sequence
                of indices.

        Raises:
            AttributeError: always; set the attribute on this object instead.
        """
        raise AttributeError(
            f"{type(self).__name__} runs every game in one object; set {attr_name!r} on it "
            "directly instead of per environment"
        )

    def env_method(
        self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any
    ) -> list[Any]:
        """Call a method of this object for the games asked about.

        ``"action_masks"`` gives each game its own row of ``action_masks()``; any
        other method is called once and its result repeated per game.

        Args:
            method_name: the method's name, e.g. ``"action_masks"``.
            *method_args: positional arguments of the call.
            indices: the games asked about: None for all, one index, or a sequence
                of indices.
            **method_kwargs: keyword arguments of the call.

        Returns:
            One result per index: for ``"action_masks"``, the bool (28,) mask of
            that game.
        """
        rows = self._indices(indices)
        if method_name == "action_masks":
            masks = self.action_masks()
            return [masks[i] for i in rows]
        result = getattr(self, method_name)(*method_args, **method_kwargs)
        return [result for _ in rows]

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        """Whether the games are wrapped in ``wrapper_class``: never, as no game is a
        Gymnasium env of its own.

        Args:
            wrapper_class: a Gymnasium wrapper class.
            indices: the games asked about: None for all, one index, or a sequence
                of indices.

        Returns:
            False, once per index.
        """
        return [False for _ in self._indices(indices)]
