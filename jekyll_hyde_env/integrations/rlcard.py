"""Jekyll vs Hyde as an RLCard environment: ``rlcard.make("jekyll-hyde")``.

Importing this module registers the environment id ``"jekyll-hyde"`` with RLCard
(``pip install 'jekyll-hyde-env[rlcard]'``; the ``bench`` extra installs RLCard
too). RLCard is imported at the top of this module, which only users of that
extra import. The rules are the project's engine (``jekyll_hyde_env.engine``);
the game class below only gives them the shape RLCard's ``Env`` expects.

| fact | value |
|---|---|
| env id | ``"jekyll-hyde"`` (``ENV_ID``) |
| players | 2: player 0 is Jekyll, player 1 is Hyde (the engine's seats) |
| ``num_actions`` | 28: 0-24 a card id (play, give or swap it), 25-27 declare Pride, Wrath or Greed (T2) |
| ``state_shape`` | ``[[327], [327]]``: the AEC env's observation (``observation.encode``) |
| ``action_shape`` | ``[None, None]``: no action features (DMC one-hot encodes the ids) |
| payoffs | ``get_payoffs()``: +1 to the winner, -1 to the loser at the end (R4), so they sum to zero; ``[0, 0]`` before the end |
| ``allow_step_back`` | supported: each step keeps a copy of the engine state (``GameState.clone``) |
| config keys | ``seed`` and ``allow_step_back`` (RLCard's own, ``rlcard.make`` fills both) and ``variant`` (default ``"full"``) |

**Variants.** ``config={"variant": "tiny"}`` plays a smaller version of the game
(RULES.md V1-V7, ``engine.variant``): a preset, ``"full"`` (the default),
``"small"`` or ``"tiny"``, ``key=value`` pairs such as
``"values=2,potions=3,hand=2,rounds=1,exchange=1,track=2"``, a mapping of
``Variant``'s fields or a ``Variant``; ``env.variant`` is the one read
(``parse_variant``). Every game the env deals is of that variant: only its cards
are dealt, seen or legal, a round has ``hand_size`` tricks, the game
``rounds`` rounds, and Hyde wins once the marker reaches ``track_end``. The ids,
``num_actions``, ``state_shape`` and the keys of the state and of
``get_perfect_information`` are the same for every variant (a card out of play
is never set in ``obs``); ``raw_obs["view"].variant`` names the variant.

**Players and turns.** The player ids are the engine's seats: 0 plays Jekyll, 1
plays Hyde, in every game. Jekyll acts first (round 1's exchange), except in a
variant whose round 1 exchanges no card, where the first trick's leader does
(R3, V4, V6). A player often acts several times in a row: the exchange picks of
a round (``r`` in round ``r`` of the full game, R2.2, V4), a potion led and its
declared colour (T1, T2), and the Greed swap picks (T6b). RLCard handles that as
it handles any turn order: ``step`` returns the next player's id, which may be
the same, and ``env.run`` files each state under the player who acts on it. Once
the game is over, ``get_player_id()`` is the player who made the last decision
(no one acts; ``is_over()`` is true).

**Deals and seeds.** All randomness is the env's ``np_random``, seeded by
``config["seed"]`` or ``env.seed(seed)`` with Gymnasium's ``seeding.np_random``,
as the AEC env's ``reset(seed=...)`` seeds. Each ``reset()`` deals a game (every
round's deals, as ``engine.new_game``) from that generator, so with the same
seed and variant the RLCard env and the AEC env (``jekyll_hyde_v0.env()``, reset
once with the seed and then without one) deal the same games, and the same
actions give the same observations and rewards.

**The state** that ``reset``, ``step`` and ``get_state(player_id)`` return is a
dict, as RLCard's agents expect:

| key | value |
|---|---|
| ``obs`` | int8 array of 327 entries: ``encode(player_view(game, player))``, the AEC env's observation (its index table is in ``jekyll_hyde_env.jekyll_hyde``) |
| ``legal_actions`` | ``OrderedDict`` of the legal action ids (ascending) to ``None``; empty for the player not to act and after the end |
| ``raw_obs`` | the player's view in plain values: ``player``, ``role``, ``current_player``, ``phase``, ``round`` (1 to the variant's ``rounds``), ``marker``, ``hand`` (card ids), ``tricks`` (mine, the opponent's), ``colour_ranks`` (weakest first), ``lead_card``, ``declared`` (-1 when none), ``legal_actions`` (ids) and ``view`` (the engine's ``PlayerView``, with its ``variant``) |
| ``raw_legal_actions`` | the names of the legal actions (``RAW_ACTIONS``), ``"wrath 5"``, ``"potion 3+"``, ``"declare greed"`` |
| ``action_record`` | ``(player_id, action_id)`` of every decision so far in the game; the opponent's exchange and swap picks show as ``(player_id, None)``, hidden as RULES.md requires (the cards received show in ``obs`` once both have chosen) |

An agent with ``use_raw = True`` steps with the action's name
(``env.step("declare greed", raw_action=True)``).

**Errors.** ``step`` with an action that is not an integer, or an id outside
0-27, raises ``ValueError`` naming the values allowed; an action the rules do
not allow here, or a step after the end, raises ``IllegalActionError`` (a
``ValueError``) naming the legal action ids. A config key other than ``seed``,
``allow_step_back`` and ``variant``, a bad seed, a non-bool ``allow_step_back``
or an unknown or impossible variant is refused with a ``ValueError`` in one line
(for the variant, ``parse_variant``'s message, naming it); ``step_back()`` with
step-back off raises ``ValueError`` naming the config key that turns it on, and
returns ``False`` at the start of a game, as RLCard's own environments do.

```python
>>> import rlcard
>>> import jekyll_hyde_env.integrations.rlcard  # registers "jekyll-hyde"
>>> env = rlcard.make("jekyll-hyde", config={"seed": 0})
>>> state, player_id = env.reset()
>>> player_id, state["obs"].shape, state["raw_obs"]["phase"]
(0, (327,), 'exchange')
>>> tiny = rlcard.make("jekyll-hyde", config={"seed": 0, "variant": "tiny"})
>>> state, player_id = tiny.reset()
>>> tiny.variant.name, len(state["raw_obs"]["hand"]), state["obs"].shape
('tiny', 2, (327,))

```
"""

# ruff: noqa: E501 - the module docstring is the environment's doc page; its tables are wide

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium.utils import seeding

try:
    from rlcard.envs import Env
    from rlcard.envs import registration as rlcard_registration
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError(
        "jekyll_hyde_env.integrations.rlcard needs RLCard: install the 'rlcard' extra, "
        "pip install 'jekyll-hyde-env[rlcard]'"
    ) from error

from jekyll_hyde_env.arguments import as_seed
from jekyll_hyde_env.engine.cards import (
    AGENTS,
    JEKYLL,
    NUM_ACTIONS,
    PHASE_NAMES,
    Phase,
    mask_to_ids,
)
from jekyll_hyde_env.engine.information import player_view
from jekyll_hyde_env.engine.rules import (
    IllegalActionError,
    apply_action,
    legal_action_mask,
    new_game,
    returns,
)
from jekyll_hyde_env.engine.state import GameState
from jekyll_hyde_env.engine.variant import FULL, Variant, parse_variant
from jekyll_hyde_env.integrations.rlcard_state_dict import (
    RAW_ACTIONS,
    _state_from_raw,
    action_from_raw,
    checked_action_id,
    raw_observation,
)
from jekyll_hyde_env.observation import OBS_SIZE

ENV_ID = "jekyll-hyde"
ENTRY_POINT = "jekyll_hyde_env.integrations.rlcard:JekyllHydeRLCardEnv"
NUM_PLAYERS = len(AGENTS)
CONFIG_KEYS = ("seed", "allow_step_back", "variant")
DEFAULT_GAME_CONFIG: dict[str, Any] = {"variant": "full"}  # RLCard's DEFAULT_CONFIG has the rest
_GAME_OVER = int(Phase.GAME_OVER)
_HIDDEN_PICK_PHASES = (int(Phase.EXCHANGE), int(Phase.SWAP))  # R2.2, T6b


def register() -> None:
    """Register ``ENV_ID`` with RLCard; registering again does nothing."""
    if ENV_ID not in rlcard_registration.registry.env_specs:
        rlcard_registration.register(env_id=ENV_ID, entry_point=ENTRY_POINT)


# --- the game ---------------------------------------------------------------------------


class JekyllHydeRLCardGame:
    """The engine's game in the shape of an RLCard ``Game``.

    ``init_game`` deals a new game of ``variant`` (``engine.new_game``) from
    ``np_random``, which the env sets when it is seeded; ``step`` applies one
    action with ``engine.apply_action``. With ``allow_step_back`` every step first
    keeps a copy of the engine state, and ``step_back`` restores the last one.
    Before the first ``init_game``, the methods that read the game raise
    ``ValueError``.

    Args:
        allow_step_back: keep a copy of the engine state before every step, for
            ``step_back``; RLCard's ``Env`` sets it from its config.
        variant: the version of the game every ``init_game`` deals (RULES.md V1-V7),
            as ``parse_variant`` reads it; the full game by default.

    Raises:
        ValueError: an unknown or impossible variant (``parse_variant``'s message).
    """

    def __init__(self, allow_step_back: bool = False, variant: str | Variant = FULL):
        self.allow_step_back = allow_step_back
        self.variant = parse_variant(variant)
        self.np_random = np.random.default_rng()
        self.state: GameState | None = None
        self.history: list[GameState] = []
        self._last_player = JEKYLL

    def _current(self) -> GameState:
        if self.state is None:
            raise ValueError("no game yet: call reset() (or init_game()) first")
        return self.state

    def init_game(self) -> tuple[dict[str, Any], int]:
        """Deal a new game of ``variant``; return the first player's raw state and id.

        Returns:
            state: the first player's raw state (``get_state(player_id)``).
            player_id: 0, Jekyll, who acts first (round 1's exchange); in a variant
                whose round 1 exchanges no card, the first trick's leader (R3).
        """
        self.state = new_game(self.np_random, variant=self.variant)
        self.history = []
        player = self.state.to_act
        self._last_player = player
        return self.get_state(player), player

    def step(self, action: Any) -> tuple[dict[str, Any], int]:
        """Apply ``action`` (an action id) for the player to act.

        Args:
            action: an action id 0-27, a Python or numpy integer.

        Returns:
            The raw state and id of the next player to act (the same player in
            consecutive decisions; the last mover once the game is over).

        Raises:
            ValueError: an action that is not an id 0-27.
            IllegalActionError: an action the rules do not allow here, or any
                action once the game is over; the message names the legal ids.
        """
        state = self._current()
        action = checked_action_id(action)
        if state.phase == _GAME_OVER:
            raise IllegalActionError(
                f"action {action} was given but the game is over ({AGENTS[state.winner]} won); "
                "no action is legal: call reset() to deal a new game"
            )
        if not legal_action_mask(state) >> action & 1:
            player = state.to_act
            legal = self.get_legal_actions()
            raise IllegalActionError(
                f"action {action} ({RAW_ACTIONS[action]}) is not legal for player {player} "
                f"({AGENTS[player]}) in phase '{PHASE_NAMES[state.phase]}'; legal action ids: "
                f"{legal} ({', '.join(RAW_ACTIONS[a] for a in legal)})"
            )
        if self.allow_step_back:
            self.history.append(state.clone())
        self._last_player = state.to_act
        apply_action(state, action)
        player = self.get_player_id()
        return self.get_state(player), player

    def step_back(self) -> bool:
        """Restore the state before the last step; False when there is none.

        Returns:
            True when a state was restored; False at the start of a game or when
            ``allow_step_back`` is off (no copies were kept).
        """
        if not self.history:
            return False
        self.state = self.history.pop()
        return True

    def get_num_players(self) -> int:
        """The number of players.

        Returns:
            2: player 0 is Jekyll, player 1 is Hyde.
        """
        return NUM_PLAYERS

    @staticmethod
    def get_num_actions() -> int:
        """The number of action ids.

        Returns:
            28: card ids 0-24, then 25-27 declare Pride, Wrath or Greed.
        """
        return NUM_ACTIONS

    def get_player_id(self) -> int:
        """The player to act (0 Jekyll, 1 Hyde); the last mover once the game is over.

        Returns:
            The player id, 0 or 1.
        """
        state = self._current()
        return self._last_player if state.phase == _GAME_OVER else state.to_act

    def is_over(self) -> bool:
        """Whether the game is over (R2.4).

        Returns:
            True once a player has won.
        """
        return self._current().phase == _GAME_OVER

    def get_legal_actions(self) -> list[int]:
        """The legal action ids of the player to act, ascending; empty once over.

        Returns:
            A new list of action ids 0-27.
        """
        return mask_to_ids(legal_action_mask(self._current()))

    def get_state(self, player_id: int) -> dict[str, Any]:
        """The raw state (``raw_obs``) of ``player_id``: the player's view and legal ids.

        Args:
            player_id: 0 Jekyll, 1 Hyde.

        Returns:
            ``raw_observation`` of the player's view, with the legal action ids when
            ``player_id`` is to act and none otherwise.

        Raises:
            ValueError: ``player_id`` is not 0 or 1, or no game was dealt yet.
        """
        state = self._current()
        player = _checked_player(player_id)
        legal = self.get_legal_actions() if state.to_act == player else []
        return raw_observation(player_view(state, player), legal)

    def get_payoffs(self) -> np.ndarray:
        """R4: +1 to the winner, -1 to the loser, per player id; zeros before the end.

        Returns:
            float64 array ``[Jekyll's, Hyde's]``.
        """
        return np.array(returns(self._current()), dtype=np.float64)


def _checked_player(player_id: Any) -> int:
    if (
        isinstance(player_id, (int, np.integer))
        and not isinstance(player_id, bool)
        and 0 <= player_id < NUM_PLAYERS
    ):
        return int(player_id)
    allowed = " or ".join(f"{seat} ({agent})" for seat, agent in enumerate(AGENTS))
    raise ValueError(f"player_id must be {allowed}, got {player_id!r}")


def _checked_config(config: Any) -> dict[str, Any]:
    """The config RLCard's ``Env`` reads, from a user's config with only known keys."""
    if config is None:
        config = {}
    if not isinstance(config, Mapping):
        raise ValueError(
            f"config must be a dict with keys among {list(CONFIG_KEYS)}, got {config!r}"
        )
    unknown = sorted(map(str, set(config) - set(CONFIG_KEYS)))
    if unknown:
        raise ValueError(
            f"config keys {unknown} are not used by {ENV_ID!r}; known keys: {list(CONFIG_KEYS)}"
        )
    allow_step_back = config.get("allow_step_back", False)
    if not isinstance(allow_step_back, (bool, np.bool_)):
        raise ValueError(f"allow_step_back must be True or False, got {allow_step_back!r}")
    return {
        "seed": as_seed(config.get("seed")),
        "allow_step_back": bool(allow_step_back),
        "variant": parse_variant(config.get("variant", DEFAULT_GAME_CONFIG["variant"])),
    }


# --- the environment ----------------------------------------------------------------------


class JekyllHydeRLCardEnv(Env):
    """Jekyll vs Hyde as an RLCard environment (see the module docstring).

    Args:
        config: ``{"seed": None or an integer >= 0, "allow_step_back": bool,
            "variant": ...}``; ``rlcard.make`` fills the first two. ``variant`` is
            the version of the game (RULES.md V1-V7): ``"full"`` (the default,
            ``DEFAULT_GAME_CONFIG``), ``"small"``, ``"tiny"``, ``key=value`` pairs,
            a mapping of ``Variant``'s fields or a ``Variant``; ``env.variant`` is
            the one read. Other keys are refused.

    Raises:
        ValueError: an unknown config key, a bad seed or ``allow_step_back``, or an
            unknown or impossible variant (``parse_variant``'s message, one line).
    """

    action_recorder: list[tuple[int, int]]  # (player, action id) per step; set by rlcard's Env
    default_game_config = DEFAULT_GAME_CONFIG  # RLCard's name for an env's game settings

    def __init__(self, config: Mapping[str, Any] | None = None):
        config = _checked_config(config)
        self.name = ENV_ID
        self.variant: Variant = config["variant"]
        self.game = JekyllHydeRLCardGame(variant=self.variant)
        self._hidden_picks: list[bool] = []
        super().__init__(config)
        self.state_shape = [[OBS_SIZE] for _ in range(self.num_players)]
        self.action_shape = [None for _ in range(self.num_players)]

    def seed(self, seed: Any = None) -> int:
        """Seed the deals with Gymnasium's ``seeding.np_random``, as the AEC env's ``reset``.

        Args:
            seed: None or an integer >= 0 (a Python or numpy integer).

        Returns:
            The seed used (drawn from the operating system when ``seed`` is None).

        Raises:
            ValueError: a seed that is not None or an integer >= 0.
        """
        self.np_random, used = seeding.np_random(as_seed(seed))
        self.game.np_random = self.np_random
        return used

    def reset(self) -> tuple[dict[str, Any], int]:
        """Deal a new game of ``variant``; return the first state and player id.

        Returns:
            state: the first player's state dict (``obs``, ``legal_actions``,
                ``raw_obs``, ``raw_legal_actions``, ``action_record``; see the module doc).
            player_id: 0, Jekyll, who acts first (round 1's exchange); in a variant
                whose round 1 exchanges no card, the first trick's leader (R3).
        """
        state, player_id = self.game.init_game()
        self.action_recorder = []
        self._hidden_picks = []
        return self._extract_state(state), player_id

    def step(self, action: Any, raw_action: bool = False) -> tuple[dict[str, Any], int]:
        """Apply the current player's action; return the next state and player id.

        Args:
            action: an action id 0-27, or with ``raw_action`` its name (``RAW_ACTIONS``).
            raw_action: True when ``action`` is an action name (RLCard passes the
                agent's ``use_raw``).

        Returns:
            state: the next player's state dict (see the module doc).
            player_id: the next player to act, 0 or 1 (the same player in
                consecutive decisions; the last mover once the game is over).

        Raises:
            ValueError: an action that is not an id 0-27 or, with ``raw_action``,
                not an action name.
            IllegalActionError: (a ``ValueError``) an action the rules do not allow
                here, or any action after the end; the message names the legal ids.
        """
        action_id = action_from_raw(action) if raw_action else self._decode_action(action)
        game = self.game
        player = game.get_player_id()
        hidden = game._current().phase in _HIDDEN_PICK_PHASES
        next_state, next_player = game.step(action_id)
        self.timestep += 1
        self.action_recorder.append((player, action_id))
        self._hidden_picks.append(hidden)
        return self._extract_state(next_state), next_player

    def step_back(self) -> tuple[dict[str, Any], int] | bool:
        """Undo the last step; return the state and id of the player to act again.

        Returns:
            ``(state, player_id)``, or False at the start of a game.

        Raises:
            ValueError: step-back is off (``config={"allow_step_back": True}`` turns it on).
        """
        if not self.allow_step_back:
            raise ValueError(
                f"step_back is off: make the env with config={{'allow_step_back': True}}, "
                f"as rlcard.make({ENV_ID!r}, config={{'allow_step_back': True}})"
            )
        if not self.game.step_back():
            return False
        self.action_recorder.pop()
        self._hidden_picks.pop()
        player = self.get_player_id()
        return self.get_state(player), player

    def set_agents(self, agents: Sequence[Any]) -> None:
        """The agents of players 0 (Jekyll) and 1 (Hyde), for ``run``.

        Args:
            agents: two RLCard agents, for player 0 and player 1 in that order.

        Raises:
            ValueError: not one agent per player, or an agent without RLCard's
                ``use_raw`` and ``step``/``eval_step``.
        """
        agents = list(agents)
        if len(agents) != self.num_players:
            raise ValueError(
                f"set_agents needs {self.num_players} agents, one per player "
                f"(0 {AGENTS[0]}, 1 {AGENTS[1]}); got {len(agents)}"
            )
        for player, agent in enumerate(agents):
            acts = any(callable(getattr(agent, name, None)) for name in ("eval_step", "step"))
            if not hasattr(agent, "use_raw") or not acts:
                raise ValueError(
                    f"agent {player} ({type(agent).__name__}) is not an RLCard agent: it needs "
                    "use_raw and step(state) or eval_step(state)"
                )
        self.agents = agents

    def run(self, is_training: bool = False) -> tuple[list[list[Any]], np.ndarray]:
        """Play one game with the agents of ``set_agents`` (RLCard's ``Env.run``).

        Args:
            is_training: True to choose with each agent's ``step`` (the training
                choice), False with its ``eval_step``.

        Returns:
            trajectories: per player id, the player's states and the actions it
                took (as its agent gave them), alternating, ending with its state
                at the end of the game.
            payoffs: float64 ``[Jekyll's, Hyde's]``, +1 and -1 (R4).

        Raises:
            ValueError: ``set_agents`` was not called.
        """
        if getattr(self, "agents", None) is None:
            raise ValueError("call set_agents([agent_0, agent_1]) before run()")
        return super().run(is_training)

    def get_payoffs(self) -> np.ndarray:
        """+1 to the winner and -1 to the loser, per player id (R4); zeros before the end.

        Returns:
            float64 array ``[Jekyll's, Hyde's]``.
        """
        return self.game.get_payoffs()

    def get_perfect_information(self) -> dict[str, Any]:
        """Everything about the game, hidden cards included, in plain values.

        Keys: ``variant`` (its name, ``Variant.name``), ``current_player`` (as
        ``get_player_id``), ``phase``, ``round``, ``marker``, ``hand_cards`` (per
        player id), ``picks`` (pending exchange or swap picks per player id),
        ``set_aside`` (R2.1), ``deals`` (each of the variant's rounds' hands per
        player id), ``tricks``, ``colour_ranks``, ``lead_card``, ``declared``,
        ``legal_actions``, ``winner`` (-1 before the end) and ``history`` (every
        action id applied).

        Returns:
            A new dict with those keys; card sets are lists of card ids.
        """
        state = self.game._current()
        return {
            "variant": state.variant.name,
            "current_player": self.get_player_id(),
            "phase": PHASE_NAMES[state.phase],
            "round": state.round,
            "marker": state.marker,
            "hand_cards": [mask_to_ids(hand) for hand in state.hands],
            "picks": [mask_to_ids(picks) for picks in state.picks],
            "set_aside": mask_to_ids(state.set_aside),
            "deals": [[mask_to_ids(hand) for hand in deal] for deal in state.deals],
            "tricks": list(state.tricks),
            "colour_ranks": list(state.ranks),
            "lead_card": state.lead_card,
            "declared": state.declared,
            "legal_actions": self.game.get_legal_actions(),
            "winner": state.winner,
            "history": list(state.history),
        }

    def _extract_state(self, state: dict[str, Any]) -> dict[str, Any]:
        player = state["player"]
        record = [
            (actor, None if hidden and actor != player else action)
            for (actor, action), hidden in zip(
                self.action_recorder, self._hidden_picks, strict=True
            )
        ]
        return _state_from_raw(state, record)

    def _decode_action(self, action_id: Any) -> int:
        return checked_action_id(action_id)

    def _get_legal_actions(self) -> list[int]:
        return self.game.get_legal_actions()


register()
