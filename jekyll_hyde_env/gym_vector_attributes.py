"""The per-game attributes of ``JekyllHydeVectorEnv``, as Gymnasium's ``SyncVectorEnv`` has them.

``PerGameAttributes`` is a part of ``JekyllHydeVectorEnv`` (its base class):
``call``, ``get_attr`` and ``set_attr`` read and set each game's ``role``,
``opponent``, ``game_info`` and the other attributes the module doc of
``jekyll_hyde_env.gym_vector`` lists, so that the vector env is a drop-in for
``gym.make_vec(..., vectorization_mode="sync")``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from jekyll_hyde_env.arguments import same_value
from jekyll_hyde_env.engine.cards import AGENTS
from jekyll_hyde_env.single_agent import ROLES

GET_ATTRIBUTES = (
    "role", "learner", "opponent", "illegal", "game_info", "render_mode", "np_random_seed",
    "observation_space", "action_space", "game",
)  # fmt: skip
CALL_METHODS = ("action_masks", "render", "set_opponent")
SET_ATTRIBUTES = ("role", "game_info", "opponent")


class PerGameAttributes:
    """``call``, ``get_attr`` and ``set_attr`` over the games (``JekyllHydeVectorEnv``'s)."""

    num_envs: int
    roles: list[str]
    learner: np.ndarray
    illegal: str
    game_info: np.ndarray
    render_mode: str | None
    games: Any
    opponents: Any
    single_observation_space: Any
    single_action_space: Any
    _is_reset: bool
    _draw_seat: np.ndarray
    _fixed_seat: np.ndarray
    _describe_all: bool

    def action_masks(self) -> np.ndarray:
        raise NotImplementedError  # JekyllHydeVectorEnv's

    def render(self) -> tuple[Any, ...] | None:
        raise NotImplementedError  # JekyllHydeVectorEnv's

    def set_opponent(self, opponent: Any) -> None:
        raise NotImplementedError  # JekyllHydeVectorEnv's

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Each game's attribute ``name``, or the result of calling it (as SyncVectorEnv).

        Args:
            name: a per-game attribute (the module doc's Per-game attributes) or
                ``action_masks``, ``render`` or ``set_opponent``.
            *args: passed to the method, or to each callable attribute.
            **kwargs: passed the same way.

        Returns:
            One value per game (``set_opponent``: None each).

        Raises:
            AttributeError: a name that is no per-game attribute or method.
        """
        n = self.num_envs
        if name == "action_masks":
            masks = self.action_masks()
            return tuple(masks[i] for i in range(n))
        if name == "render":
            return self.render() or (None,) * n
        if name == "set_opponent":
            self.set_opponent(*args, **kwargs)
            return (None,) * n
        values = self._attribute(name)
        return tuple(v(*args, **kwargs) if callable(v) else v for v in values)

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """Each game's attribute ``name`` (as SyncVectorEnv, ``call(name)``).

        Args:
            name: a per-game attribute (the module doc's Per-game attributes).

        Returns:
            One value per game.

        Raises:
            AttributeError: a name that is no per-game attribute.
        """
        return self.call(name)

    def _attribute(self, name: str) -> list[Any]:
        n = self.num_envs
        getters: dict[str, Callable[[int], Any]] = {
            "role": lambda i: self.roles[i],
            "learner": lambda i: int(self.learner[i]),
            "opponent": lambda i: self._member(i).agent,
            "illegal": lambda i: self.illegal,
            "game_info": lambda i: bool(self.game_info[i]),
            "render_mode": lambda i: self.render_mode,
            "np_random_seed": lambda i: self.games.seeds[i],
            "observation_space": lambda i: self.single_observation_space,
            "action_space": lambda i: self.single_action_space,
            "game": lambda i: self._game(i),
        }
        if name not in getters:
            raise AttributeError(
                f"{type(self).__name__} has no per-game attribute {name!r}; get_attr and call "
                f"read {list(GET_ATTRIBUTES)}, call runs {list(CALL_METHODS)}"
            )
        return [getters[name](i) for i in range(n)]

    def _member(self, game: int) -> Any:
        member = self.opponents.slots[int(self.opponents.slot[game])]
        assert member is not None  # a slot a game plays is never dropped
        return member

    def _game(self, game: int) -> Any:
        if not self._is_reset:
            raise RuntimeError("call reset() before reading the games")
        return self.games.engine_state(game)

    def set_attr(self, name: str, values: list[Any] | tuple[Any, ...] | Any) -> None:
        """Set ``name`` in each game: ``values`` one per game, or one for all (as sync).

        Args:
            name: ``role``, ``game_info`` or ``opponent``; a role or an opponent
                applies from each game's next episode.
            values: a list or tuple of one value per game, or one value for all
                (``opponent``: the same one for every game).

        Raises:
            ValueError: a list of another length, an unknown role, or different
                opponents for different games.
            AttributeError: a name that cannot be set per game.
        """
        n = self.num_envs
        if not isinstance(values, (list, tuple)):
            values = [values for _ in range(n)]
        if len(values) != n:
            raise ValueError(
                "Values must be a list or tuple with length equal to the number of environments. "
                f"Got `{len(values)}` values for {n} environments."
            )
        if name == "role":
            bad = [v for v in values if v not in ROLES]
            if bad:
                raise ValueError(f"role {bad[0]!r} is not one of {list(ROLES)}")
            self.roles = list(values)
            self._draw_seat = np.array([v == "random" for v in values])
            self._fixed_seat = np.array([AGENTS.index(v) if v in AGENTS else 0 for v in values])
            self._fixed_seat = self._fixed_seat.astype(np.int8)
        elif name == "game_info":
            self.game_info = np.array([bool(v) for v in values])
            self._describe_all = bool(self.game_info.all())
        elif name == "opponent":
            if not all(same_value(v, values[0]) for v in values):
                raise ValueError(
                    "set_attr('opponent', ...) takes one opponent for every game (the games "
                    "share their agents); for a mix, pass a pool: [(spec, weight), ...]"
                )
            self.set_opponent(values[0])
        else:
            raise AttributeError(
                f"{type(self).__name__} cannot set {name!r} per game; set_attr sets "
                f"{list(SET_ATTRIBUTES)}"
            )
