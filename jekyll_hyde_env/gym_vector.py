"""# JekyllHyde-v0, vectorised: one learner seat in each of N batched C games

`JekyllHydeVectorEnv` is a Gymnasium `VectorEnv` of `num_envs` games played
together in C (`jekyll_hyde_env.vector.BatchedGames`). In each game the
learner holds one seat; the opponent plays inside `step()`, as in the
single-agent `JekyllHydeGymEnv`. It is a drop-in replacement for
`vectorization_mode="sync"` (or `"async"`) over that env: for the same seed and
actions it returns the same observations, rewards, terminations, truncations
and infos, keys, dtypes and `_key` masks included, episode after episode
(tests/test_gym_vector_sync.py plays all three side by side). `gymnasium.make_vec`
builds it from the registered id:

```python
gymnasium.make_vec("JekyllHyde-v0", num_envs=256, vectorization_mode="vector_entry_point",
                   role="random", opponent="random")
```

### Spaces

| | |
|---|---|
| `single_action_space` | `Discrete(28)`: card ids 0-24, declare colour 25-27 |
| `single_observation_space` | `Box(0, 1, (327,), int8)`, the AEC environment's `observation` |
| `action_space`, `observation_space` | the same, batched: `MultiDiscrete` of N x 28, `Box` of (N, 327) |
| `action_masks()` | `(N, 28)` bool: the learner's legal actions in each game |

Rewards are float64 and truncations all False, as under `sync`.

### Arguments

| Argument | Default | Meaning |
|---|---|---|
| `num_envs` | `8` | games played together |
| `role` | `"random"` | the learner's seat: `"jekyll"`, `"hyde"`, or `"random"` (drawn per game and episode) |
| `opponent` | `"random"` | a name (`"random"`, `"heuristic"`, `"ismcts:200"`, ...), a saved policy's path, an agent, a callable, a list of `(spec, weight)` drawn per game and episode, or a pool object with `members` and `agent_for(spec)` |
| `illegal` | `"terminate"` | an action outside the mask: `"terminate"` ends that game with reward -1 and `info["illegal_action"]`; `"raise"` raises `IllegalActionError` naming the game (before any game moves) |
| `autoreset_mode` | `NEXT_STEP` | `gymnasium.vector.AutoresetMode` `NEXT_STEP`, `SAME_STEP` or `DISABLED` (see below) |
| `render_mode` | `None` | `"ansi"` or `"rgb_array"` (needs the `render` extra): `render()` returns one frame per game; `"human"` is refused |
| `game_info` | `True` | add `phase`, `round`, `marker`, `tricks` and `colour_ranks` to the infos, as the single env does |

How the opponent plays: `"random"` inside the C games; a saved policy as one
batched matrix product for all the games where it is to act; any other agent
per game, from a Python engine game kept in lockstep (see
`jekyll_hyde_env.batched_opponents`).

### Infos

As under `sync`, where Gymnasium batches each game's info dict: every key of
the single env's info (`action_mask` int8 `(N, 28)`, `illegal_action` bool,
`role` str, and with `game_info` `phase` str, `round` and `marker` int64,
`tricks` a dict of `jekyll` and `hyde` int64 arrays, `colour_ranks` a list of 3
ints per game; `winner` str once a game is over) with its `_key` mask, True for
the games that gave the key: `infos["winner"][infos["_winner"]]` are the
winners of the games that just ended. Strings and lists are numpy object
arrays (None where a game gave no value), numbers are zeros there.

### Autoreset

`NEXT_STEP` (Gymnasium's default): the step that ends a game returns its last
observation, reward +1 or -1, `terminated=True` and `winner`; its mask is then
all zeros, as no action is legal. On the next `step` that game starts anew, its
action is ignored, and it returns the new game's first observation, reward 0
and the new episode's info. `SAME_STEP`: the step that ends a game already
returns the new game's first observation and info; the ended game's
observation is in `infos["final_obs"]` and its info in `infos["final_info"]`
(rows where `_final_obs` and `_final_info` are true). `DISABLED`: an ended game
stays ended; `reset(options={"reset_mask": ...})` starts it anew, and stepping
it before raises. `action_masks()` is never all zeros for a game in progress.

### Seeding

As under `sync`: `reset(seed=s)` seeds game `i` with `s + i`, `reset(seed=[s0,
s1, ...])` with one seed (or None) per game, and a game without a seed keeps
its stream (a new one if it never had one). Game `i` then deals, draws the
learner's seat under `role="random"` and the opponent's seed exactly as
`JekyllHydeGymEnv.reset` does from its `np_random`, `default_rng(seed)`, and
later episodes continue that stream; the `"random"` opponent plays as
`RandomAgent` reseeded each episode. Seeds are integers >= 0 of any size. The
same seed therefore gives the games of `sync`, whatever `num_envs` is. Under
`sync` the other opponents are reseeded per game and episode too; here one
agent serves every game, so the deterministic ones (`heuristic`, saved
policies, most callables) give `sync`'s games, while those with randomness of
their own (`ismcts:N`, sampling policies) are reseeded from the seed at each
seeded reset and play other, equally reproducible, games. A member of a pool
is drawn from a stream of the game's own.

`options`: `reset_mask` (a bool array of shape `(N,)`, at least one True: only
those games start anew, as in Gymnasium 1.x; the others and their infos are
left alone), `deals` (one entry per game, as in `BatchedGames.reset`, where
`sync` hands one game's deals to every env), `role` (the seat of the episodes
this reset starts) and `first_game` (an integer seed seeds game `i` with
`seed + first_game + i`). A list of seeds is a list or a tuple.

### Per-game attributes

`call(name, *args)`, `get_attr(name)` and `set_attr(name, values)` work as
under `sync`, with one value per game: `get_attr` and `call` read `role`
(the argument), `learner` (the seat, 0 or 1), `opponent` (the agent playing
each game), `illegal`, `game_info`, `render_mode`, `np_random_seed`,
`observation_space`, `action_space` and `game` (an engine `GameState`
replayed from the C game), and `call` runs `action_masks`, `render` and
`set_opponent(opponent)`. `set_attr` sets `role` and `game_info` per game and
`opponent` (one for all games); a role or an opponent applies from each
game's next episode.

### Version history

* v0: initial version; follows `jekyll_hyde_v0`.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from jekyll_hyde_env.arguments import as_seed, is_seed_list
from jekyll_hyde_env.batched_opponents import OpponentSeats
from jekyll_hyde_env.engine.cards import AGENTS, NUM_ACTIONS
from jekyll_hyde_env.engine.render import render_state
from jekyll_hyde_env.engine.variant import Variant
from jekyll_hyde_env.gym_vector_attributes import PerGameAttributes
from jekyll_hyde_env.gym_vector_infos import batched_infos
from jekyll_hyde_env.observation import OBS_SIZE
from jekyll_hyde_env.render_modes import check_render_mode, render_modes
from jekyll_hyde_env.single_agent import ILLEGAL_MODES, ROLES
from jekyll_hyde_env.vector import BatchedGames
from jekyll_hyde_env.vector_inputs import fixed_deals

AUTORESET_MODES = (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, AutoresetMode.DISABLED)
RESET_OPTIONS = ("reset_mask", "deals", "role", "first_game")


class JekyllHydeVectorEnv(PerGameAttributes, VectorEnv):
    """N games with one learner seat each, stepped together in C (see the module doc).

    Args:
        num_envs: the games played together (at least 1).
        role: the learner's seat: ``"jekyll"``, ``"hyde"``, or ``"random"`` (drawn
            per game and episode).
        opponent: who plays the other seats: a name, a saved policy's path, an
            agent, a callable, a list of ``(spec, weight)`` drawn per game and
            episode, or a pool object with ``members``.
        illegal: ``"terminate"`` (an illegal action ends that game with reward -1)
            or ``"raise"`` (it raises ``IllegalActionError`` before any game moves).
        autoreset_mode: ``NEXT_STEP``, ``SAME_STEP`` or ``DISABLED`` (an
            ``AutoresetMode`` or its value).
        render_mode: None, ``"ansi"`` or ``"rgb_array"`` (Pillow); ``render()``
            returns one frame per game.
        game_info: add ``phase``, ``round``, ``marker``, ``tricks`` and
            ``colour_ranks`` to the infos.
        variant: the version of the game (RULES.md V1-V7): ``"full"`` (the default),
            ``"small"``, ``"tiny"``, ``key=value`` pairs or a ``Variant``.

    Raises:
        ValueError: a bad ``num_envs``, an unknown role, ``illegal``, autoreset
            mode or render mode (``"human"`` included), pool weights that are
            negative or sum to 0, an opponent name that names no agent, or an
            unknown or impossible variant.
        TypeError: an opponent of no accepted kind.
    """

    metadata = {
        "autoreset_mode": AutoresetMode.NEXT_STEP,
        "render_modes": [mode for mode in render_modes() if mode != "human"],
        "render_fps": 1,
    }

    def __init__(
        self,
        num_envs: int = 8,
        role: str = "random",
        opponent: Any = "random",
        illegal: str = "terminate",
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        render_mode: str | None = None,
        game_info: bool = True,
        variant: str | Variant = "full",
    ):
        if role not in ROLES:
            raise ValueError(f"role {role!r} is not one of {list(ROLES)}")
        if illegal not in ILLEGAL_MODES:
            raise ValueError(f"illegal {illegal!r} is not one of {list(ILLEGAL_MODES)}")
        mode: AutoresetMode | None
        try:
            mode = AutoresetMode(autoreset_mode)
        except ValueError:
            mode = None
        if mode is None or mode not in AUTORESET_MODES:
            raise ValueError(f"autoreset_mode must be one of {[m.value for m in AUTORESET_MODES]}")
        if render_mode == "human":
            raise ValueError(
                "render_mode 'human' is not supported: render() returns one frame per game; "
                f"use None or one of {self.metadata['render_modes']}"
            )
        check_render_mode(render_mode, self.metadata["render_modes"])
        self.games = BatchedGames(num_envs, illegal=illegal, seeding="numpy", variant=variant)
        self.variant = self.games.variant
        n = self.num_envs = self.games.num_games
        self.illegal = illegal
        self.autoreset_mode = mode
        self.render_mode = render_mode
        self.metadata = {**self.metadata, "autoreset_mode": mode}
        self.single_observation_space = spaces.Box(0, 1, (OBS_SIZE,), np.int8)
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, n)
        self.action_space = batch_space(self.single_action_space, n)
        self.opponents = OpponentSeats(self.games, opponent)
        self.roles = [role] * n
        self._draw_seat = np.full(n, role == "random")
        self._fixed_seat = np.full(n, AGENTS.index(role) if role in AGENTS else 0, np.int8)
        self.game_info = np.full(n, bool(game_info))
        self._describe_all = bool(game_info)
        self._everyone = np.ones(n, bool)
        self.learner = np.zeros(n, np.int8)
        self._opponent_seat = np.ones(n, np.int8)
        self._ended = np.zeros(n, bool)
        self._observation = np.zeros((n, OBS_SIZE), np.int8)
        self._mask = np.zeros((n, NUM_ACTIONS), np.int8)
        self._no = np.zeros(n, bool)
        self._is_reset = False

    @property
    def role(self) -> str:
        """The ``role`` argument (``get_attr("role")`` has each game's)."""
        return self.roles[0] if len(set(self.roles)) == 1 else "mixed"

    def set_opponent(self, opponent: Any) -> None:
        """Replace the opponent; each game takes it at the start of its next episode.

        Args:
            opponent: anything the ``opponent`` argument takes.

        Raises:
            ValueError: a name that names no agent, or bad pool weights.
            TypeError: an opponent of no accepted kind.
        """
        self.opponents.set_opponent(opponent)

    def action_masks(self) -> np.ndarray:
        """(N, 28) bool: the learner's legal actions in each game (MaskablePPO reads it).

        Returns:
            A bool (N, 28) copy; a row is all False once its game has ended.
        """
        return self._mask.astype(bool)

    # --- episodes ----------------------------------------------------------------

    def reset(
        self,
        *,
        seed: int | list[int | None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start new episodes in every game (or in those of ``options["reset_mask"]``).

        Args:
            seed: an integer ``s`` (game ``i`` gets ``s + i``), a list or tuple of
                one seed (or None) per game, or None: each game keeps its stream.
            options: ``reset_mask``, ``deals``, ``role`` and ``first_game`` (see the
                module doc's Seeding).

        Returns:
            observations: int8 (N, 327), each game's learner's observation.
            infos: the batched infos with their ``_key`` masks (only the reset
                games' under ``reset_mask``).

        Raises:
            ValueError: an unknown option, a bad seed, list of seeds, ``reset_mask``,
                ``first_game``, role or deals.
            RuntimeError: a first reset that leaves games out.
            IllegalActionError: an opponent chose an illegal action.
        """
        options = dict(options or {})
        unknown = sorted(map(str, set(options) - set(RESET_OPTIONS)))
        if unknown:
            raise ValueError(f"unknown reset options {unknown}; allowed: {list(RESET_OPTIONS)}")
        where = self._reset_mask(options.get("reset_mask"))
        seeds = self._seeds(seed, options.get("first_game"))
        role = options.get("role")
        if role is not None and role not in ROLES:
            raise ValueError(f"options['role'] {role!r} is not one of {list(ROLES)}")
        fixed_deals(options.get("deals"), self.num_envs)  # refused before any game changes
        self.games.seed_games(seeds, where)
        given = [s for s, w in zip(seeds, where.tolist(), strict=True) if w and s is not None]
        if given:  # the opponents' own randomness follows the seed
            if not is_seed_list(seed):
                self.opponents.reseed(int(as_seed(seed) or 0))
            else:
                self.opponents.reseed(int(np.random.SeedSequence(given).generate_state(1)[0]))
        self._start_episodes(where, options.get("deals"), role)
        self._ended[where] = False
        self._is_reset = True
        self._observe()
        infos = self._infos(None if where.all() else where, self._no)
        return self._observation.copy(), infos

    def _reset_mask(self, mask: Any) -> np.ndarray:
        if mask is None:
            return np.ones(self.num_envs, bool)
        if (
            not isinstance(mask, np.ndarray)
            or mask.dtype != np.bool_
            or mask.shape != (self.num_envs,)
            or not mask.any()
        ):
            raise ValueError(
                f"options['reset_mask'] must be a bool numpy array of shape ({self.num_envs},) "
                f"with at least one True (the games to reset); got {mask!r}"
            )
        if not self._is_reset and not mask.all():
            raise RuntimeError("the first reset() must reset every game (no partial reset_mask)")
        return mask.copy()

    def _seeds(self, seed: Any, first_game: Any) -> list[int | None]:
        """One seed (or None) per game, as SyncVectorEnv.reset spreads them."""
        n = self.num_envs
        if first_game is not None:
            if isinstance(first_game, bool) or not isinstance(first_game, (int, np.integer)):
                raise ValueError(f"options['first_game'] must be an integer, got {first_game!r}")
            if first_game < 0 or seed is None or is_seed_list(seed):
                raise ValueError(
                    "options['first_game'] (>= 0) numbers the games of an integer seed: game i "
                    "gets seed + first_game + i"
                )
        if seed is None:
            return [None] * n
        if is_seed_list(seed):
            if len(seed) != n:
                raise ValueError(
                    f"a list of seeds needs one per game ({n}), each None or an integer >= 0; "
                    f"got {len(seed)}"
                )
            return [as_seed(s) for s in seed]
        first = as_seed(seed)
        assert first is not None
        first += int(first_game or 0)
        return list(range(first, first + n))

    def _start_episodes(
        self, where: np.ndarray, deals: Any = None, role: str | None = None
    ) -> None:
        """New episodes for the games in ``where``: seat, deals and opponent seed drawn
        as the single env's reset draws them, then the opponents' first moves."""
        if role is None:
            draw, fixed = self._draw_seat, self._fixed_seat
        else:
            draw, fixed = np.full(self.num_envs, role == "random"), self._fixed_seat.copy()
            fixed[:] = AGENTS.index(role) if role in AGENTS else 0
        self.games.new_episodes(where, draw, self.opponents.reseeded, deals, self.learner)
        keep = where & ~draw
        self.learner[keep] = fixed[keep]
        np.subtract(1, self.learner, out=self._opponent_seat)
        self.opponents.assign(where)
        self.opponents.play(self._opponent_seat)

    def step(
        self, actions: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Play each game's learner action, then its opponent's until the learner is to act.

        Args:
            actions: one action id per game, shape (N,); the action of a game that
                starts anew on this step (``NEXT_STEP``) is ignored.

        Returns:
            observations: int8 (N, 327), each game's learner's observation.
            rewards: float64 (N,): +1 or -1 on the step that ends a game, 0 otherwise.
            terminations: bool (N,): the games that ended on this step.
            truncations: bool (N,), all False.
            infos: the batched infos with their ``_key`` masks.

        Raises:
            ValueError: ``actions`` of the wrong shape or dtype.
            IllegalActionError: an illegal action under ``illegal="raise"`` (no game
                has moved), or an illegal action of an opponent.
            RuntimeError: before ``reset``, or a step into ended games under
                ``DISABLED``.
        """
        if not self._is_reset:
            raise RuntimeError("call reset() before step()")
        restart = self._ended
        if restart.any() and self.autoreset_mode == AutoresetMode.DISABLED:
            raise RuntimeError(
                f"games {np.flatnonzero(restart).tolist()} have ended; with autoreset_mode "
                "DISABLED, reset them first: reset(options={'reset_mask': ...})"
            )
        actions = np.asarray(actions)
        moving = ~restart
        self.games.step(actions, where=moving)  # raises before any game moves
        illegal = moving & self.games.terminated & (self.games.winner < 0)
        self.opponents.note_actions(actions, moving)
        if restart.any():  # NEXT_STEP: the games that ended last step start anew
            self._start_episodes(restart)
        self.opponents.play(self._opponent_seat)
        terminated = self.games.terminated.copy()
        won = self.games.winner == self.learner
        rewards = np.where(terminated, np.where(won, 1.0, -1.0), 0.0)
        self._observe()
        if self.autoreset_mode == AutoresetMode.SAME_STEP and terminated.any():
            final_obs = np.full(self.num_envs, None, dtype=object)
            ended = np.flatnonzero(terminated)
            for i, observation in zip(ended.tolist(), self._observation[ended], strict=True):
                final_obs[i] = observation  # rows of a copy: the buffer is written again below
            final = {
                "final_obs": final_obs,
                "_final_obs": terminated.copy(),
                "final_info": self._infos(terminated, illegal),
                "_final_info": terminated.copy(),
            }
            self._start_episodes(terminated)
            self._observe()
            infos = self._infos(None, self._no)
            infos = {**final, **infos} if terminated[0] else {**infos, **final}
            self._ended[:] = False
        else:
            infos = self._infos(None, illegal)
            self._ended = terminated.copy()
        truncated = np.zeros(self.num_envs, bool)
        return self._observation.copy(), rewards, terminated, truncated, infos

    def _observe(self) -> None:
        self.games.observe(self.learner, out=(self._observation, self._mask))

    def _infos(self, rows: np.ndarray | None, illegal: np.ndarray) -> dict[str, Any]:
        """The batched infos of the games in ``rows`` (None: every game)."""
        return batched_infos(
            self.games,
            self._mask,
            self.learner,
            self.game_info,
            rows,
            illegal,
            self._everyone,
            self._describe_all,
        )

    # --- rendering -------------------------------------------------------------------

    def render(self) -> tuple[Any, ...] | None:
        """One frame per game, the learner's side, as the single env renders it.

        Returns:
            A tuple of N frames: texts (``"ansi"``) or uint8 (height, width, 3)
                pictures (``"rgb_array"``); N Nones without a render mode (a warning).

        Raises:
            RuntimeError: before ``reset``.
        """
        if self.render_mode is None:
            gym.logger.warn("render() was called without a render_mode; pass render_mode='ansi'")
            return (None,) * self.num_envs
        if not self._is_reset:
            raise RuntimeError("call reset() before render()")
        frames: list[Any] = []
        for i in range(self.num_envs):
            game, learner = self.games.engine_state(i), int(self.learner[i])
            if self.render_mode == "rgb_array":
                # lazy: rgb_array only (the render extra); `import jekyll_hyde_env` skips it
                from jekyll_hyde_env.picture import draw_table

                frames.append(draw_table(game, learner))
            else:
                frames.append(f"learner: {AGENTS[learner]}\n" + render_state(game, learner))
        return tuple(frames)

    def close_extras(self, **kwargs: Any) -> None:
        """Forget the engine games kept in lockstep for the per-game opponents.

        Gymnasium's ``close`` calls this.

        Args:
            **kwargs: ``close``'s keyword arguments, not used.
        """
        opponents = getattr(self, "opponents", None)  # absent if __init__ refused its arguments
        if opponents is not None:
            opponents.mirrors.clear()
