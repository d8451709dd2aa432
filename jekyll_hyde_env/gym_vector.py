"""# JekyllHyde-v0, vectorised: one learner seat in each of N batched C games

`JekyllHydeVectorEnv` is a Gymnasium `VectorEnv` of `num_envs` games played
together in C (`jekyll_hyde_env.vector.BatchedGames`). In each game the
learner holds one seat; the opponent plays inside `step()`, as in the
single-agent `JekyllHydeGymEnv`, whose observations, masks and rewards it
reproduces game for game (tests/test_gym_vector.py). `gymnasium.make_vec`
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

### Arguments

| Argument | Default | Meaning |
|---|---|---|
| `num_envs` | `8` | games played together |
| `role` | `"random"` | the learner's seat: `"jekyll"`, `"hyde"`, or `"random"` (drawn per game and episode; the role is in the observation) |
| `opponent` | `"random"` | a name (`"random"`, `"heuristic"`, `"ismcts:200"`, ...), a saved policy's path, an agent, a callable, a list of `(spec, weight)` drawn per game and episode, or a pool object with `members` and `agent_for(spec)` |
| `illegal` | `"terminate"` | an action outside the mask: `"terminate"` ends that game with reward -1 and `info["illegal_action"]`; `"raise"` raises `IllegalActionError` naming the game |
| `autoreset_mode` | `NEXT_STEP` | `gymnasium.vector.AutoresetMode.NEXT_STEP` or `SAME_STEP` (see below) |

How the opponent plays: `"random"` inside the C games; a saved policy as one
batched matrix product for all the games where it is to act; any other agent
per game, from a Python engine game kept in lockstep (see
`jekyll_hyde_env.batched_opponents`).

### Autoreset

`NEXT_STEP` (Gymnasium's default): the step that ends a game returns its last
observation, reward +1 or -1 and `terminated=True`; its mask is then all
zeros, as no action is legal. On the next `step` that game starts anew, its
action is ignored, and it returns the new game's first observation with reward
0. `SAME_STEP`: the step that ends a game already returns the new game's first
observation and mask; the final observation is in `infos["final_obs"]` (rows
where `infos["_final_obs"]` is true) and the ended game's role in
`infos["final_role"]`. `action_masks()` is never all zeros for a
game in progress.

`infos` holds `role` (the learner's seat per game: 0 Jekyll, 1 Hyde),
`illegal_action` (bool) and `winner` (0, 1, or -1 while the game goes on).

### Seeding

`reset(seed=...)` (None, or a Python or numpy integer from 0 to 2**64 - 1, the
range of `BatchedGames`) fixes every game:
deals, the learner's seat under `role="random"` and the opponent drawn from a
pool come from each game's own stream, so game `i` is the same whatever
`num_envs` is; opponents with randomness of their own (sampling policies,
searches) are reseeded from the seed too. `options` takes `deals` (one entry
per game, as in `BatchedGames.reset`) and `first_game`.

### Version history

* v0: initial version; follows `jekyll_hyde_v0`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from jekyll_hyde_env.arguments import as_seed
from jekyll_hyde_env.batched_opponents import OpponentSeats
from jekyll_hyde_env.engine.cards import AGENTS, NUM_ACTIONS
from jekyll_hyde_env.observation import OBS_SIZE
from jekyll_hyde_env.single_agent import ILLEGAL_MODES, ROLES
from jekyll_hyde_env.vector import SEED_BOUND, BatchedGames

AUTORESET_MODES = (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP)


class JekyllHydeVectorEnv(VectorEnv):
    """N games with one learner seat each, stepped together in C (see the module doc)."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(
        self,
        num_envs: int = 8,
        role: str = "random",
        opponent: Any = "random",
        illegal: str = "terminate",
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
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
        self.games = BatchedGames(num_envs, illegal=illegal)
        n = self.num_envs = self.games.num_games
        self.role = role
        self.illegal = illegal
        self.autoreset_mode = mode
        self.metadata = {**self.metadata, "autoreset_mode": mode}
        self.single_observation_space = spaces.Box(0, 1, (OBS_SIZE,), np.int8)
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, n)
        self.action_space = batch_space(self.single_action_space, n)
        self.opponents = OpponentSeats(self.games, opponent)
        self.learner = np.zeros(n, np.int8)
        self._opponent_seat = np.ones(n, np.int8)
        self._ended = np.zeros(n, bool)
        self._observation = np.zeros((n, OBS_SIZE), np.int8)
        self._mask = np.zeros((n, NUM_ACTIONS), np.int8)
        self._draws = np.zeros(n, np.int64)
        self._is_reset = False

    def set_opponent(self, opponent: Any) -> None:
        """Replace the opponent; each game takes it at the start of its next episode."""
        self.opponents.set_opponent(opponent)

    def action_masks(self) -> np.ndarray:
        """(N, 28) bool: the learner's legal actions in each game (MaskablePPO reads it)."""
        return self._mask.astype(bool)

    # --- episodes ----------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        seed = as_seed(seed, SEED_BOUND)
        if seed is None:
            seed = int(np.random.SeedSequence().generate_state(1)[0])
        self.games.reset(seed=seed, options=options)
        self.opponents.reseed(seed)
        everyone = np.ones(self.num_envs, bool)
        self._start_episodes(everyone)
        self._ended[:] = False
        self._is_reset = True
        self._observe()
        return self._observation.copy(), self._infos(np.zeros(self.num_envs, bool))

    def _start_episodes(self, where: np.ndarray) -> None:
        """Seats and opponents for games that just started, then the opponent's first moves."""
        if self.role == "random":
            self.games.integers(2, where, self._draws)
            self.learner[where] = self._draws[where]
        else:
            self.learner[where] = AGENTS.index(self.role)
        self._opponent_seat[:] = 1 - self.learner
        self.opponents.assign(where)
        self.opponents.play(self._opponent_seat)

    def step(
        self, actions: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        if not self._is_reset:
            raise RuntimeError("call reset() before step()")
        actions = np.asarray(actions)
        moving = ~self._ended
        self.games.step(actions, where=moving)  # raises before any game moves
        illegal = moving & self.games.terminated & (self.games.winner < 0)
        self.opponents.note_actions(actions, moving)
        if self._ended.any():  # NEXT_STEP: the games that ended last step start anew
            self.games.reset_games(self._ended)
            self._start_episodes(self._ended)
        self.opponents.play(self._opponent_seat)
        terminated = self.games.terminated.copy()
        rewards = np.where(
            terminated, np.where(self.games.winner == self.learner, 1.0, -1.0), 0.0
        ).astype(np.float32)
        self._observe()
        infos = self._infos(illegal)
        if self.autoreset_mode == AutoresetMode.SAME_STEP and terminated.any():
            infos["final_obs"] = np.where(terminated[:, None], self._observation, 0)
            infos["_final_obs"] = terminated.copy()
            infos["final_role"] = infos["role"]  # the ended games' roles
            self.games.reset_games(terminated)
            self._start_episodes(terminated)
            self._observe()
            infos["role"] = self.learner.copy()  # the returned observations' roles
            self._ended[:] = False
        else:
            self._ended = terminated.copy()
        truncated = np.zeros(self.num_envs, bool)
        return self._observation.copy(), rewards, terminated, truncated, infos

    def _observe(self) -> None:
        self.games.observe(self.learner, out=(self._observation, self._mask))

    def _infos(self, illegal: np.ndarray) -> dict[str, Any]:
        return {
            "role": self.learner.copy(),
            "illegal_action": illegal,
            "winner": self.games.winner.copy(),
        }

    def close_extras(self, **kwargs: Any) -> None:
        opponents = getattr(self, "opponents", None)  # absent if __init__ refused its arguments
        if opponents is not None:
            opponents.mirrors.clear()
