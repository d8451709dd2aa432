"""# Jekyll vs Hyde

| Import             | `from jekyll_hyde_env import jekyll_hyde_v0`   |
|--------------------|------------------------------------------------|
| Actions            | Discrete                                       |
| Parallel API       | No                                             |
| Manual control     | No                                             |
| Agents             | `agents= ['jekyll', 'hyde']`                   |
| Agents             | 2                                              |
| Action shape       | Discrete(28)                                   |
| Action values      | Discrete(28)                                   |
| Observation shape  | (327,)                                         |
| Observation values | [0, 1]                                         |

A two-player trick-taking card game with asymmetric goals. Over at most three
rounds of ten tricks, every trick-count difference moves the identity marker
towards Hyde; Hyde wins when it reaches space 10, Jekyll when it has not after
round 3. Potions played against a colour card trigger Pride (steal a trick),
Greed (swap cards) or Wrath (clear colour ranks). The canonical rules are
RULES.md; its tags (R2, T3b, ...) are cited throughout the code.

### Decision points

| phase      | who acts                           | action                                  | how many              |
|------------|------------------------------------|-----------------------------------------|-----------------------|
| `exchange` | Jekyll, then Hyde                  | a card id of the hand, not yet chosen   | `r` each (round r)    |
| `lead`     | the leader (R3, T7)                | a card id of the hand                   | 1                     |
| `declare`  | the leader, after leading a potion | 25 + colour id (25, 26, 27)             | 1                     |
| `follow`   | the other player                   | a card id allowed by T3                 | 1                     |
| `swap`     | Jekyll, then Hyde, after Greed     | a card id of the hand, not yet chosen   | min(2, hand size) each |

Choices in `exchange` and `swap` stay hidden from the opponent until both
players have chosen.

### Observation Space

`observe(agent)` returns a dict: `observation`, a flat int8 vector of the
agent's information state (nothing the agent cannot see), and `action_mask`.
Card pieces have 25 entries indexed by card id (0-6 Pride 1-7, 7-13 Wrath 1-7,
14-20 Greed 1-7, 21-24 Potions 2+ to 5+); colour pieces index colour ids
(0 Pride, 1 Wrath, 2 Greed).

| Index   | Piece              | Description                                                |
|---------|--------------------|------------------------------------------------------------|
| 0-24    | hand               | cards in my hand                                           |
| 25-49   | my_picks           | cards I chose so far in this exchange or swap              |
| 50-74   | played_by_me       | cards I played this round                                  |
| 75-99   | played_by_opponent | cards the opponent played this round                       |
| 100-124 | exchange_given     | cards I gave in this round's exchange                      |
| 125-149 | exchange_received  | cards I received in this round's exchange                  |
| 150-174 | swap_given         | cards I gave in this round's Greed swaps                   |
| 175-199 | swap_received      | cards I received in this round's Greed swaps               |
| 200-224 | opponent_known     | cards I gave that the opponent still holds                 |
| 225-249 | trick_lead         | the card led in the current trick                          |
| 250-252 | declared_colour    | colour declared after a potion lead (T2)                   |
| 253-255 | opponent_void      | colours the opponent failed to follow this round (T3)      |
| 256-258 | my_void            | colours I failed to follow this round (public)             |
| 259-267 | colour_ranks       | rank of each colour: index 3*colour + rank, rank 0 weakest |
| 268-278 | my_tricks          | tricks I hold this round, one-hot 0-10                     |
| 279-289 | opponent_tricks    | tricks the opponent holds this round, one-hot 0-10         |
| 290-300 | marker             | marker space, one-hot 0-10                                 |
| 301-303 | round              | round number, one-hot 1-3                                  |
| 304-305 | my_role            | my role: jekyll, hyde                                      |
| 306-310 | phase              | phase: exchange, lead, declare, follow, swap               |
| 311     | my_turn            | 1 when I am to act                                         |
| 312     | i_led              | 1 when I led the current trick                             |
| 313-316 | picks_left         | cards I still have to choose, one-hot 0-3                  |
| 317-326 | tricks_played      | tricks finished this round, one-hot 0-9                    |

#### Legal Actions Mask

`action_mask` (int8, 28 entries) marks the legal actions of the agent to act;
the mask of the agent not to act is all zeros. It comes from the rules engine
alone, and is read-only: what a caller does with an observation cannot change
which actions are legal (copy the mask to edit it).

### Action Space

| Action ID | Meaning                                            |
|-----------|----------------------------------------------------|
| 0-24      | play, give or swap the card with this id            |
| 25-27     | declare Pride, Wrath or Greed after a potion lead   |

### Rewards

| Winner | Loser |
| :----: | :---: |
| +1     | -1    |

Rewards are given at the end of the game only (R4); there are no draws.

### Starting State

Round 1's exchange, Jekyll to act. All three rounds' deals are drawn from the
`reset` seed (or fixed with `options={"deals": [...]}`), so a seed fixes the
shuffles of the whole game.

### Episode End

The game ends when the marker reaches space 10 (Hyde wins) or after round 3
(Jekyll wins); both agents are then terminated. An episode lasts at most 132
steps: per round `r`, `2r` exchange picks, 20 card plays, at most 4 declares
and at most 16 swap picks (4 potions, so at most 4 Greed swaps of 2 cards each).

### Arguments

| Argument      | Default | Meaning                                    |
|---------------|---------|--------------------------------------------|
| `render_mode` | `None`  | `None`, `"ansi"` (returns text), `"human"` (prints it) or `"rgb_array"` (a picture; needs the `render` extra) |

`reset(seed=None, options=None)`: the seed is None or a Python or numpy integer
>= 0 of any size (a bool is refused); `options={"deals": [...]}` fixes the deals of
rounds 1..k (k <= 3), each `{"jekyll": [10 card ids], "hyde": [10 card ids]}`;
the other rounds are dealt from the seed. A malformed deal raises `ValueError`;
an unknown option key raises a warning naming it.

`infos[agent]`, for both agents after `reset` and every step, holds the same
keys with the same types and shapes at every step of every game, as libraries
that store infos in fixed-size buffers (Tianshou) need:

| Key            | Type                        | Meaning                                              |
|----------------|-----------------------------|------------------------------------------------------|
| `phase`        | `str`                       | `exchange`, `lead`, `declare`, `follow`, `swap` or `game_over` |
| `round`        | `int`                       | the round, 1-3                                       |
| `marker`       | `int`                       | the marker's space, 0-10                             |
| `tricks`       | `dict` of 2 `int`           | `{"jekyll": n, "hyde": n}`, tricks held this round   |
| `colour_ranks` | `list` of 3 `int`           | colour ids ranked so far, weakest first (T4), then `RANK_FILL` (-1) for each place not ranked yet: `[-1, -1, -1]` at a round's start and after Wrath (T6c), `[1, -1, -1]` once Wrath is the weakest colour |

Tianshou's `PettingZooEnv` takes `env()` as it is; RLlib's `PettingZooEnv`
takes `jekyll_hyde_env.integrations.clients.rllib_env()`, the observations as
the float dict `{"observations", "action_mask"}` that RLlib's action-masking
modules read.

An action is a Python or numpy integer (or a 0-d integer array); a bool, a
float, a string or an array of actions raises `ValueError` naming the values
allowed. `raw_env` raises `IllegalActionError` (a `ValueError`) on an illegal
action; `env()` adds PettingZoo's wrappers, so an illegal action ends the game
with reward -1 for the agent who made it.

```python
>>> from jekyll_hyde_env import jekyll_hyde_v0
>>> env = jekyll_hyde_v0.env()
>>> env.reset(seed=42)
>>> final_rewards = {}
>>> for agent in env.agent_iter():
...     observation, reward, termination, truncation, info = env.last()
...     if termination or truncation:
...         final_rewards[agent] = reward
...         action = None
...     else:
...         action = env.action_space(agent).sample(observation["action_mask"])
...     env.step(action)
>>> sorted(final_rewards.values())
[-1, 1]

```

### Version History

* v0: Initial version.
* v0, infos: `colour_ranks` always has 3 entries, the places not ranked yet
  filled with -1 (`RANK_FILL`); it listed only the ranked colours, 0 to 3 entries.
"""

from __future__ import annotations

import warnings
from typing import Any, cast

import numpy as np
from gymnasium import logger, spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv

from jekyll_hyde_env import fast_wrappers
from jekyll_hyde_env.arguments import as_action, as_seed
from jekyll_hyde_env.engine.cards import AGENTS, NUM_ACTIONS, NUM_COLOURS, PHASE_NAMES, Phase
from jekyll_hyde_env.engine.information import player_view
from jekyll_hyde_env.engine.render import render_state
from jekyll_hyde_env.engine.rules import apply_action, legal_action_mask, new_game, returns
from jekyll_hyde_env.engine.state import GameState
from jekyll_hyde_env.engine.variant import Variant, parse_variant
from jekyll_hyde_env.observation import OBS_SIZE, encode_with_mask
from jekyll_hyde_env.render_modes import check_render_mode, render_modes

MAX_STEPS = 132
_AGENT_INDEX = {agent: i for i, agent in enumerate(AGENTS)}
_GAME_OVER = int(Phase.GAME_OVER)
_RESET_OPTIONS = ("deals",)
RANK_FILL = -1  # fills the places of `colour_ranks` in the infos not ranked yet (T4)


def env(**kwargs: Any) -> AECEnv:
    """The environment with PettingZoo's standard wrappers for classic games.

    An illegal action terminates the game with reward -1 for its author,
    out-of-range actions are caught, and the call order is enforced: PettingZoo's
    ``TerminateIllegalWrapper(illegal_reward=-1)``, ``AssertOutOfBoundsWrapper``
    and ``OrderEnforcingWrapper``, run in that nesting by one object (see
    ``fast_wrappers.ClassicWrapper``). Before them, an action that is not an
    integer is refused with a ``ValueError`` naming the values allowed.

    Args:
        **kwargs: ``raw_env``'s arguments (``render_mode``, ``variant``).

    Returns:
        The wrapped AEC environment; call ``reset`` before playing.

    Raises:
        ValueError: a render mode the environment does not offer, or an unknown or
            impossible variant.
    """
    return _CheckedWrapper(raw_env(**kwargs), illegal_reward=-1)


class _CheckedWrapper(fast_wrappers.ClassicWrapper):
    """``ClassicWrapper`` that refuses an action that is not an integer (``as_action``,
    before the bounds check) and asks the rules whether an action is legal.

    PettingZoo's illegal-move check reads the mask of the last observation it
    handed out, an array its caller holds (and can make writeable again). Here the
    rules answer instead (the same answer: the mask is ``legal_action_mask`` of the
    agent to act), so nothing a caller does to an observation changes what is legal.
    """

    def _is_legal(self, agent: str, action: int) -> bool:
        return bool(legal_action_mask(self._raw.game) >> action & 1)

    def _as_action(self, action: Any) -> int:
        return as_action(action)


class raw_env(AECEnv):  # noqa: N801 - PettingZoo's naming convention for environments
    """Jekyll vs Hyde as a PettingZoo AEC environment (see the module docstring).

    Args:
        render_mode: None, ``"ansi"`` (text), ``"human"`` (printed) or
            ``"rgb_array"`` (a picture; needs Pillow, the ``render`` extra).
        variant: the version of the game (RULES.md V1-V7): ``"full"`` (the default),
            ``"small"``, ``"tiny"``, ``key=value`` pairs or a ``Variant``. The spaces
            are the same for every variant; cards out of play are never set.

    Raises:
        ValueError: a render mode the environment does not offer, or an unknown or
            impossible variant.
    """

    metadata: dict[str, Any] = {
        "render_modes": render_modes(),
        "name": "jekyll_hyde_v0",
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(self, render_mode: str | None = None, variant: str | Variant = "full"):
        super().__init__()
        check_render_mode(render_mode, self.metadata["render_modes"])
        self.render_mode = render_mode
        self.variant = parse_variant(variant)
        self.possible_agents = list(AGENTS)
        self.agents = self.possible_agents[:]
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(0, 1, (OBS_SIZE,), np.int8),
                "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), np.int8),
            }
        )
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {
            a: fast_wrappers.FastDiscrete(NUM_ACTIONS) for a in self.possible_agents
        }
        self._np_random, _ = seeding.np_random(None)
        self.game: GameState | None = None

    def observation_space(self, agent: str) -> spaces.Space:
        """The observation space of ``agent``, the same for both.

        Args:
            agent: ``"jekyll"`` or ``"hyde"``.

        Returns:
            ``Dict`` of ``observation`` (int8 (327,)) and ``action_mask`` (int8 (28,)).
        """
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        """The action space of ``agent``, the same for both.

        Args:
            agent: ``"jekyll"`` or ``"hyde"``.

        Returns:
            ``Discrete(28)``: card ids 0-24, declared colours 25-27.
        """
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deal a new game; ``agent_selection`` is the agent to act first.

        Args:
            seed: None, or an integer >= 0 of any size: reseeds the deals of this game
                and the next ones (None continues the stream).
            options: ``deals``, the deals to fix (see the module docstring); an
                unknown option is warned about, not refused.

        Raises:
            ValueError: a seed that is not an integer >= 0, or malformed deals.
        """
        seed = as_seed(seed)
        if seed is not None:
            self._np_random, _ = seeding.np_random(seed)
        deals = None
        if options:
            unknown = sorted(map(str, set(options) - set(_RESET_OPTIONS)))
            if unknown:
                # A warning, not an error: PettingZoo's api_test resets with an
                # unknown option and expects the reset to succeed.
                warnings.warn(
                    f"reset options {unknown} are not used by {self.metadata['name']}; "
                    f"known options: {list(_RESET_OPTIONS)}",
                    stacklevel=2,
                )
            deals = options.get("deals")
        game = new_game(self._np_random, deals, self.variant)
        self.game = game
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self._update_infos(game)
        self.agent_selection = AGENTS[game.to_act]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """What ``agent`` sees now: its observation and its legal actions.

        Args:
            agent: ``"jekyll"`` or ``"hyde"``.

        Returns:
            ``observation``, int8 (327,), and ``action_mask``, int8 (28,) and
                read-only: all zeros when ``agent`` is not to act.

        Raises:
            ValueError: ``agent`` is neither ``"jekyll"`` nor ``"hyde"``.
        """
        try:
            player = _AGENT_INDEX[agent]
        except (KeyError, TypeError):  # TypeError: an unhashable agent
            raise ValueError(f"agent must be one of {list(AGENTS)}, got {agent!r}") from None
        # None only before reset(): observe is then a misuse, which fails on None's
        # attributes below (an AttributeError) as it always did; no check is added.
        game = cast(GameState, self.game)
        legal = legal_action_mask(game) if game.to_act == player else 0
        observation, mask = encode_with_mask(player_view(game, player), legal)
        mask.setflags(write=False)  # the rules' answer (setflags: quicker than .flags)
        return {"observation": observation, "action_mask": mask}

    def step(self, action: int) -> None:
        """Play ``action`` for ``agent_selection``; rewards come when the game ends.

        Args:
            action: the action id of the agent to act (None once it is done, as
                PettingZoo steps a finished agent).

        Raises:
            ValueError: an action that is not an integer.
            IllegalActionError: an illegal action (``env()``'s wrapper ends the
                game with -1 for its author instead).
        """
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        game = self.game
        assert game is not None  # the terminations read above exist only once reset() has run
        apply_action(game, as_action(action))
        if game.phase == _GAME_OVER:
            jekyll, hyde = returns(game)
            self.rewards = {"jekyll": jekyll, "hyde": hyde}
            self.terminations = dict.fromkeys(self.agents, True)
            self.agent_selection = AGENTS[1 - _AGENT_INDEX[agent]]
            self._cumulative_rewards[agent] = 0
            self._accumulate_rewards()
        else:
            # R4: rewards stay 0 (as set by reset) until the game ends, so the
            # cumulative rewards need no update here.
            self.agent_selection = AGENTS[game.to_act]
        self._update_infos(game)
        if self.render_mode == "human":
            self.render()

    def _update_infos(self, game: GameState) -> None:
        """The same facts for both agents, each in its own dict."""
        info = {
            "phase": PHASE_NAMES[game.phase],
            "round": game.round,
            "marker": game.marker,
            "tricks": {"jekyll": game.tricks[0], "hyde": game.tricks[1]},
            # Always 3 entries (T4: at most 3 colours ranked), so the infos have
            # the same shape at every step.
            "colour_ranks": game.ranks + [RANK_FILL] * (NUM_COLOURS - len(game.ranks)),
        }
        self.infos = {"jekyll": info, "hyde": info.copy()}

    def render(self) -> str | np.ndarray | None:
        """The table: track, colour ranks, trick counts, the current trick and the hand
        of the agent to act. ``"ansi"`` returns it as text, ``"human"`` prints it,
        ``"rgb_array"`` returns a picture (needs Pillow, the ``render`` extra).

        Returns:
            The text (``"ansi"``), a uint8 (height, width, 3) picture
                (``"rgb_array"``), or None (``"human"``, or no render mode: a warning).

        Raises:
            RuntimeError: before ``reset``.
        """
        if self.render_mode is None:
            logger.warn("render() was called without a render_mode; pass render_mode='ansi'")
            return None
        if self.game is None:
            raise RuntimeError("call reset() before render()")
        if self.render_mode == "rgb_array":
            # lazy: rgb_array only (the render extra); `import jekyll_hyde_env` skips picture.py
            from jekyll_hyde_env.picture import draw_table

            return draw_table(self.game)
        text = render_state(self.game)
        if self.render_mode == "ansi":
            return text
        print(text + "\n")
        return None

    def close(self) -> None:
        pass
