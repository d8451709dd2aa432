"""# JekyllHyde-v0: Jekyll vs Hyde as a single-agent Gymnasium environment

One learner plays one seat; the opponent's decisions are played inside `step()`
until the learner must act again or the game ends. Observations and rewards
are always the learner's own: the observation is the learner's information
state (the same encoding as the AEC environment, see `jekyll_hyde_v0`) and the
reward is the learner's +1 / -1 at the end of the game, 0 before.

### Spaces

| | |
|---|---|
| Action space | `Discrete(28)`: card ids 0-24, declare colour 25-27 |
| Observation space | `Box(0, 1, (327,), int8)`, the AEC environment's `observation` |
| Action mask | `info["action_mask"]` (int8, read-only, on every reset and step) and `action_masks()` (bool, a copy) |

`action_masks()` is the method sb3-contrib's MaskablePPO looks up (it works
through `gymnasium.make` wrappers and inside `SubprocVecEnv`). While the
episode runs the mask is never all zeros; once it has ended the mask is all
zeros, as no action is legal. `info["action_mask"]` is read-only and the env
keeps a copy of its own: nothing done to a mask handed out changes
`action_masks()` or which actions are legal (copy it to edit it).

An action is a Python or numpy integer (or a 0-d integer array); a bool, a
float, a string or an array of actions raises `ValueError` naming the values
allowed, whatever `illegal` says. An integer that is not legal now is an
illegal action (see `illegal`).

### Arguments

| Argument | Default | Meaning |
|---|---|---|
| `role` | `"random"` | the learner's seat: `"jekyll"`, `"hyde"`, or `"random"` (drawn each episode; the role is in the observation) |
| `opponent` | `"random"` | an object with `act(view, legal_actions) -> int`, a callable `f(view, legal_actions) -> int`, or a registered name (`"random"`, `"heuristic"`, `"ismcts:200"`, ...) |
| `illegal` | `"terminate"` | an action outside the mask: `"terminate"` ends the episode with reward -1 and `info["illegal_action"] = True`; `"raise"` raises `IllegalActionError` |
| `render_mode` | `None` | `"ansi"` returns the table as text, `"human"` prints it, `"rgb_array"` returns a picture (needs the `render` extra) |
| `game_info` | `True` | add `phase`, `round`, `marker`, `tricks` and `colour_ranks` to `info` (vectorised training copies every info dict, so trainers may turn this off); `colour_ranks` always has 3 entries, as in the AEC env: the ranked colours, weakest first (T4), then -1 for each place not ranked yet |

`info` always holds `action_mask`, `illegal_action` and `role`, and `winner` once
the game is over.

`reset(seed=..., options=...)`: the seed (None, or a Python or numpy integer
>= 0 of any size) fixes the deals of all three rounds,
the learner's seat under `role="random"` and the opponent's own randomness
(opponents with a `reset(seed)` method are reseeded each episode).
`options={"deals": [...]}` fixes deals as in the AEC environment and
`options={"role": "jekyll"}` fixes the seat for one episode. `set_opponent(...)`
replaces the opponent from the next episode on, so self-play can change
opponents inside vectorised environments without rebuilding them.

### Episode end

The game's end (R2.4): Hyde reaches space 10, or round 3 ends. A learner makes
at most 66 decisions per episode (half of the game's 132).

```python
>>> import gymnasium as gym
>>> import jekyll_hyde_env
>>> env = gym.make("JekyllHyde-v0", role="hyde", opponent="random")
>>> obs, info = env.reset(seed=0)
>>> obs.shape, info["role"]
((327,), 'hyde')
>>> done = False
>>> while not done:
...     legal = info["action_mask"].nonzero()[0]
...     obs, reward, terminated, truncated, info = env.step(int(legal[0]))
...     done = terminated or truncated
>>> reward in (-1.0, 1.0)
True

```

### Version history

* v0: initial version; follows `jekyll_hyde_v0`.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from jekyll_hyde_env.arguments import as_action, as_seed
from jekyll_hyde_env.engine.cards import AGENTS, NUM_ACTIONS, NUM_COLOURS, PHASE_NAMES, Phase
from jekyll_hyde_env.engine.information import player_view
from jekyll_hyde_env.engine.render import render_state
from jekyll_hyde_env.engine.rules import (
    IllegalActionError,
    apply_action,
    legal_action_mask,
    legal_actions,
    new_game,
    returns,
)
from jekyll_hyde_env.engine.state import GameState
from jekyll_hyde_env.engine.variant import Variant, parse_variant
from jekyll_hyde_env.jekyll_hyde import RANK_FILL
from jekyll_hyde_env.observation import OBS_SIZE, encode_with_mask
from jekyll_hyde_env.opponents import resolve_opponent
from jekyll_hyde_env.render_modes import check_render_mode, render_modes

ROLES = ("jekyll", "hyde", "random")
ILLEGAL_MODES = ("terminate", "raise")
RESET_OPTIONS = ("deals", "role")
_GAME_OVER = int(Phase.GAME_OVER)
_SEED_BOUND = 2**31


class JekyllHydeGymEnv(gym.Env):
    """Jekyll vs Hyde with one learner seat (see the module docstring).

    Args:
        role: the learner's seat: ``"jekyll"``, ``"hyde"``, or ``"random"`` (drawn
            each episode).
        opponent: who plays the other seat: an agent, a callable, a registered name
            or a saved policy's path (anything ``resolve_opponent`` takes).
        illegal: ``"terminate"`` (an illegal action ends the episode with reward
            -1) or ``"raise"`` (it raises ``IllegalActionError``).
        render_mode: None, ``"ansi"``, ``"human"`` or ``"rgb_array"`` (Pillow).
        game_info: add ``phase``, ``round``, ``marker``, ``tricks`` and
            ``colour_ranks`` to ``info``.
        variant: the version of the game (RULES.md V1-V7): ``"full"`` (the default),
            ``"small"``, ``"tiny"``, ``key=value`` pairs or a ``Variant``; the spaces
            are the same for every variant.

    Raises:
        ValueError: an unknown role, ``illegal`` or render mode, or an opponent
            name that names no agent.
        TypeError: an opponent of no accepted kind.
    """

    metadata = {"render_modes": render_modes(), "render_fps": 1}

    def __init__(
        self,
        role: str = "random",
        opponent: Any = "random",
        illegal: str = "terminate",
        render_mode: str | None = None,
        game_info: bool = True,
        variant: str | Variant = "full",
    ):
        if role not in ROLES:
            raise ValueError(f"role {role!r} is not one of {list(ROLES)}")
        if illegal not in ILLEGAL_MODES:
            raise ValueError(f"illegal {illegal!r} is not one of {list(ILLEGAL_MODES)}")
        check_render_mode(render_mode, self.metadata["render_modes"])
        self.role = role
        self.illegal = illegal
        self.game_info = game_info
        self.render_mode = render_mode
        self.variant = parse_variant(variant)
        self.observation_space = spaces.Box(0, 1, (OBS_SIZE,), np.int8)
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self.opponent = resolve_opponent(opponent)
        self.game: GameState | None = None
        self.learner = 0
        self._ended_by_illegal_action = False
        self._mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        self._shown_mask = np.zeros(NUM_ACTIONS, dtype=np.int8)

    def set_opponent(self, opponent: Any) -> None:
        """Replace the opponent; it plays from the next ``reset`` on.

        Args:
            opponent: anything the ``opponent`` argument takes.

        Raises:
            ValueError: a name that names no agent.
            TypeError: an opponent of no accepted kind.
        """
        self.opponent = resolve_opponent(opponent)

    def action_masks(self) -> np.ndarray:
        """Boolean mask of the learner's legal actions (sb3-contrib's MaskablePPO reads it).

        Returns:
            A bool (28,) copy; all False once the episode has ended.
        """
        return self._mask.astype(bool)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start an episode; the opponent plays until the learner is to act.

        Args:
            seed: None, or an integer >= 0 of any size: fixes the deals of all three
                rounds, the learner's seat under ``role="random"`` and the
                opponent's seed (an opponent with ``reset(seed)`` is reseeded).
            options: ``deals`` (fixed deals, as in the AEC environment) and ``role``
                (the learner's seat for this episode).

        Returns:
            observation: the learner's int8 (327,) observation.
            info: ``action_mask``, ``illegal_action``, ``role`` and, with
                ``game_info``, the game's facts.

        Raises:
            ValueError: a seed that is not an integer >= 0, an unknown option or
                role, or malformed deals.
            IllegalActionError: the opponent chose an illegal action.
        """
        super().reset(seed=as_seed(seed))
        options = dict(options or {})
        unknown = sorted(map(str, set(options) - set(RESET_OPTIONS)))
        if unknown:
            raise ValueError(f"unknown reset options {unknown}; allowed: {list(RESET_OPTIONS)}")
        role = options.get("role", self.role)
        if role not in ROLES:
            raise ValueError(f"role {role!r} is not one of {list(ROLES)}")
        rng = self.np_random
        self.learner = int(rng.integers(2)) if role == "random" else AGENTS.index(role)
        game = new_game(rng, options.get("deals"), self.variant)
        self.game = game
        self._ended_by_illegal_action = False
        if hasattr(self.opponent, "reset"):
            self.opponent.reset(int(rng.integers(_SEED_BOUND)))
        self._play_opponent(game)
        observation = self._observe(game)
        if self.render_mode == "human":
            self.render()
        return observation, self._info(game, illegal=False)

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Play the learner's action, then the opponent's until the learner is to act.

        Args:
            action: the learner's action id (a Python or numpy integer).

        Returns:
            observation: the learner's int8 (327,) observation.
            reward: +1 or -1 on the step that ends the game (-1 for an illegal
                action under ``illegal="terminate"``), 0 before.
            terminated: whether the episode has ended.
            truncated: always False (a game ends by its rules).
            info: as ``reset``'s, with ``winner`` once the game is over.

        Raises:
            ValueError: an action that is not an integer.
            IllegalActionError: an illegal action under ``illegal="raise"``, or an
                illegal action of the opponent.
            RuntimeError: before ``reset``, or after the episode has ended.
        """
        game = self.game
        if game is None:
            raise RuntimeError("call reset() before step()")
        if game.phase == _GAME_OVER or self._ended_by_illegal_action:
            raise RuntimeError("the episode has ended; call reset() before step()")
        action = as_action(action)
        try:
            apply_action(game, action)
        except IllegalActionError:
            if self.illegal == "raise":
                raise
            # The episode ends here; the game itself is left as it was.
            self._ended_by_illegal_action = True
            observation = self._encode(game, 0)
            return observation, -1.0, True, False, self._info(game, illegal=True)
        self._play_opponent(game)
        observation = self._observe(game)
        terminated = game.phase == _GAME_OVER
        reward = float(returns(game)[self.learner]) if terminated else 0.0
        if self.render_mode == "human":
            self.render()
        return observation, reward, terminated, False, self._info(game, illegal=False)

    def _play_opponent(self, game: GameState) -> None:
        """Let the opponent act until the learner must act or the game is over."""
        opponent_seat = 1 - self.learner
        while game.to_act == opponent_seat:
            legal = legal_actions(game)
            action = self.opponent.act(player_view(game, opponent_seat), legal)
            try:
                apply_action(game, action)
            except (IllegalActionError, TypeError) as error:
                raise IllegalActionError(
                    f"the opponent {type(self.opponent).__name__} chose an illegal action: {error}"
                ) from error

    def _observe(self, game: GameState) -> np.ndarray:
        return self._encode(game, legal_action_mask(game) if game.to_act == self.learner else 0)

    def _encode(self, game: GameState, legal: int) -> np.ndarray:
        """The learner's observation; its mask goes read-only to ``self._shown_mask``,
        which ``info["action_mask"]`` hands out, and a copy to ``self._mask``, which
        ``action_masks()`` reads. The copy shares no buffer with anything handed out:
        a caller may make a mask writeable again (its buffer is), never the env's own."""
        observation, mask = encode_with_mask(player_view(game, self.learner), legal)
        self._mask = mask.copy()
        mask.setflags(write=False)  # quicker than .flags.writeable = False
        self._shown_mask = mask
        return observation

    def _info(self, game: GameState, illegal: bool) -> dict[str, Any]:
        info = {
            "action_mask": self._shown_mask,
            "illegal_action": illegal,
            "role": AGENTS[self.learner],
        }
        if self.game_info:
            info["phase"] = PHASE_NAMES[game.phase]
            info["round"] = game.round
            info["marker"] = game.marker
            info["tricks"] = {"jekyll": game.tricks[0], "hyde": game.tricks[1]}
            info["colour_ranks"] = game.ranks + [RANK_FILL] * (NUM_COLOURS - len(game.ranks))
        if illegal:
            info["winner"] = AGENTS[1 - self.learner]
        elif game.phase == _GAME_OVER:
            info["winner"] = AGENTS[game.winner]
        return info

    # gymnasium 1.2 returns a free TypeVar (RenderFrame) from Env.render, which no
    # override can match (fixed upstream: Farama-Foundation/Gymnasium#1560).
    def render(self) -> str | np.ndarray | None:  # type: ignore[override]
        """The table from the learner's side: track, ranks, tricks, trick, learner's hand.

        ``"ansi"`` returns text, ``"human"`` prints it, ``"rgb_array"`` returns a
        picture (needs Pillow, the ``render`` extra).

        Returns:
            The text (``"ansi"``), a uint8 (height, width, 3) picture
                (``"rgb_array"``), or None (``"human"``, or no render mode: a warning).

        Raises:
            RuntimeError: before ``reset``.
        """
        if self.render_mode is None:
            gym.logger.warn("render() was called without a render_mode; pass render_mode='ansi'")
            return None
        if self.game is None:
            raise RuntimeError("call reset() before render()")
        if self.render_mode == "rgb_array":
            # lazy: rgb_array only (the render extra); `import jekyll_hyde_env` skips picture.py
            from jekyll_hyde_env.picture import draw_table

            return draw_table(self.game, self.learner)
        text = f"learner: {AGENTS[self.learner]}\n" + render_state(self.game, self.learner)
        if self.render_mode == "ansi":
            return text
        print(text + "\n")
        return None
