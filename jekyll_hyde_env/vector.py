"""# BatchedGames: many games of Jekyll vs Hyde stepped in one call, in C

`BatchedGames(num_games)` plays `num_games` two-player games at once on the C
rules core (`jekyll_hyde_env/core/jh_rules.h`). One `step(actions)` call moves
every game by one decision of its player to act, and the C code writes the
results straight into numpy arrays allocated once, at construction: no copy
and no allocation per step. Each game is the AEC environment's game
(`jekyll_hyde_v0`), decision for decision; the observation is byte-identical to
the AEC environment's for the same state (tests/test_batched.py plays them in
lockstep).

### Arrays

Attributes, read-only numpy views over the buffers the C code writes after
every `reset` and `step`; row `i` is game `i`.

| attribute | shape | dtype | meaning |
|---|---|---|---|
| `observation` | `(N, 327)` | int8 | the information state of the player to act (the AEC env's `observation`); once a game is over, that of the player who made its last move |
| `action_mask` | `(N, 28)` | int8 | legal actions of the player to act; all zeros once the game is over |
| `current_player` | `(N,)` | int8 | 0 Jekyll, 1 Hyde, -1 game over |
| `rewards` | `(N, 2)` | float32 | this step's (Jekyll, Hyde) rewards: +1 / -1 on the step that ends the game (R4), 0 otherwise |
| `terminated` | `(N,)` | bool | the game is over |
| `phase` | `(N,)` | int8 | 0 exchange, 1 lead, 2 declare, 3 follow, 4 swap, 5 game over |
| `round` | `(N,)` | int8 | round 1-3 |
| `marker` | `(N,)` | int8 | marker space 0-10 |
| `tricks` | `(N, 2)` | int8 | tricks Jekyll and Hyde hold this round |
| `winner` | `(N,)` | int8 | 0 Jekyll, 1 Hyde, -1 while the game goes on (and for a game ended by an illegal action) |
| `deals` | `(N, 3, 2)` | uint32 | each round's dealt (Jekyll, Hyde) hands as 25-bit card masks |
| `ranks` | `(N, 3)` | int8 | the colours ranked this round, weakest first (T4), then -1 for each place not ranked yet |

`observe(player)` gives every game's observation and action mask for one
seat (0 or `"jekyll"`, 1 or `"hyde"`), for centralised critics and search.

### Methods

- `reset(seed=None, options=None)`: new games. `options={"deals": [...]}` takes
  one entry per game, each `None` or a list of 1-3 round deals in the AEC
  env's format (`{"jekyll": [10 card ids], "hyde": [10 card ids]}`), checked as
  the AEC env checks them; `options={"first_game": k}` numbers the games
  `k .. k+N-1`, all below 2**64 (see Seeding).
- `reset_games(where)`: start the games in the boolean array `where` anew,
  with the next deals of their streams (the others, rewards included, are
  untouched).
- `step(actions, where=None)`: `actions` is an integer array of shape `(N,)`,
  one action per game for its player to act; the actions of finished games
  are ignored. With a boolean `where` of shape `(N,)`, only those games move
  (the others keep their state and get rewards 0): for example when the two
  seats are played by different policies.
- `sample_actions(out=None)`: a uniformly random legal action per game (-1
  where the game is over), drawn in C.
- `play_random(seats)`: in every game whose player to act is `seats[i]` (an
  integer array; any other value from -128 to 127 skips the game), that
  player plays uniformly random legal actions, in C, for as long as it is to
  act: a random opponent at no Python cost. Only the games it moves get this
  call's rewards.
- `observe(player, out=None, where=None)`: `(observation, action_mask)` of
  every game (or the games in `where`) for `player`: a seat for all games, or
  an integer array of seats, one per game; written into `out` when given.
- `integers(bound, where=None, out=None)`: a uniform integer in `[0, bound)` per
  game from the game's own stream, for choices that must follow the games'
  seeding (the Gym vector env draws opponents from a pool with it).
- `history(game)`, `engine_state(game)`: a game's actions so far, and the game
  replayed on the Python engine as a `GameState` (for rendering).

### Autoreset

With `autoreset=True`, a game that ended on one step starts anew on the next
`step` call (its action there is ignored, its rewards are 0 and its row
shows the new game), as Gymnasium's vector environments do by default
(`AutoresetMode.NEXT_STEP`). With `autoreset=False` (the default) a finished
game stays finished until `reset`.

### Seeding

`BatchedGames(N, seeding="splitmix")`, the default: game `i` draws its deals
(and the random actions of `sample_actions` and `play_random`) from its own
splitmix64 streams, keyed by the seed and its number `first_game + i`. The same
seed therefore gives the same games whatever the batch size, and a batch can
be split: games 0-7 of one batch are games 0-3 of a batch with
`first_game=0` and games 0-3 of one with `first_game=4`.

`seeding="numpy"` deals the single-agent Gym env's games: game `i` deals from
numpy's `default_rng(seed + first_game + i)` (PCG64, reproduced bit for bit in
C), the `np_random` of `JekyllHydeGymEnv.reset(seed=seed + first_game + i)`,
three `rng.permutation(25)` per game as `engine.rules.new_game`, later games
continuing the stream; `play_random` plays as `RandomAgent`, from a generator
of its own per game; `sample_actions` and `integers` keep splitmix64 streams.
Seeds may be any integer >= 0; the split above still holds. Two methods serve
the Gym vector env, which deals the games of `make_vec(..., "sync")`:

- `seed_games(seeds, where=None)`: one seed per game; game `i` (of those in
  `where`) gets `default_rng(seeds[i])`, or keeps its stream for `None` (a
  random seed if it has none). Nothing is dealt; `seeds` lists the seeds.
- `new_episodes(where=None, draw_seat=False, seed_player=False, deals=None,
  seats=None)`: new games in `where`, started as `JekyllHydeGymEnv.reset`
  starts one from its `np_random`: where `draw_seat` (a bool or one per game)
  the seat `rng.integers(2)` into `seats` (int8, returned); the deals of the
  rounds `deals` (as in `reset`) leaves open; where `seed_player`, the
  opponent's seed `rng.integers(2**31)`, reseeding the random player as
  `RandomAgent.reset(seed)` does.

### Errors

- An action outside the mask raises `IllegalActionError` naming the game
  index, the action and the legal actions, and changes no game; with
  `illegal="terminate"` that game ends instead, with reward -1 for its player
  and 0 for the other (as PettingZoo's `TerminateIllegalWrapper`).
- Actions of another shape or of a non-integer dtype, seats out of range (a
  seat is never wrapped into another), seeds that are not integers from 0 (to
  2**64 - 1 with splitmix seeding: a bool is not one; numpy integers are; a larger
  seed is refused, not reduced onto another seed's games), malformed deals and unknown options
  raise `ValueError` naming the problem and the values allowed
  (`jekyll_hyde_env.arguments`). An example: [a thousand games at once](#a-thousand-games-at-once).
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from typing import Any

import numpy as np

try:
    # mypy reads no compiled module and the C core ships no stub, so _core is untyped
    # here; CoreGames below types the Games object it makes.
    from jekyll_hyde_env.core import _core  # type: ignore[attr-defined]
except ImportError as error:  # pragma: no cover - only where the build was skipped
    raise ImportError(
        "the C core jekyll_hyde_env.core._core is not built; reinstall the package with a "
        "C compiler available (pip install -e . or make test)"
    ) from error
from jekyll_hyde_env.arguments import as_actions, as_seat_array, as_seed
from jekyll_hyde_env.engine.cards import (
    AGENTS,
    MAX_ROUNDS,
    NUM_ACTIONS,
    NUM_COLOURS,
    PHASE_NAMES,
    mask_to_ids,
)
from jekyll_hyde_env.engine.rules import (
    IllegalActionError,
)
from jekyll_hyde_env.engine.variant import FULL, Variant, parse_variant
from jekyll_hyde_env.observation import OBS_SIZE
from jekyll_hyde_env.vector_inputs import (
    CoreGames,
    check_out,
    fixed_deals,
    game_flags,
    player_index,
    read_only,
    seed_words,
    where_rows,
)
from jekyll_hyde_env.vector_inspect import GameReadback

ILLEGAL_MODES = ("raise", "terminate")
RESET_OPTIONS = ("deals", "first_game")
SEEDINGS = ("splitmix", "numpy")
SEED_BOUND = 2**64  # a splitmix game's stream is keyed by a 64-bit seed and its number


class BatchedGames(GameReadback):
    """``num_games`` games of Jekyll vs Hyde, stepped together in C (see the module doc).

    Args:
        num_games: how many games the batch holds (at least 1).
        autoreset: start a finished game anew on the next ``step``.
        illegal: ``"raise"`` (an illegal action raises ``IllegalActionError``)
            or ``"terminate"`` (it ends that game with -1 for its player).
        seeding: ``"splitmix"`` or ``"numpy"`` (the module doc's Seeding).
        variant: the version of the game every game plays (RULES.md V1-V7): ``"full"``
            (the default), ``"small"``, ``"tiny"``, ``key=value`` pairs or a ``Variant``.

    Raises:
        ValueError: ``num_games`` not an integer >= 1, an unknown ``illegal`` or
            ``seeding``, or an unknown or impossible variant.
    """

    # Read-only views of the buffers the C code writes, set by __init__ (the module doc's table).
    observation: np.ndarray
    action_mask: np.ndarray
    current_player: np.ndarray
    rewards: np.ndarray
    terminated: np.ndarray
    phase: np.ndarray
    round: np.ndarray
    marker: np.ndarray
    tricks: np.ndarray
    winner: np.ndarray
    deals: np.ndarray
    ranks: np.ndarray

    def __init__(
        self,
        num_games: int,
        autoreset: bool = False,
        illegal: str = "raise",
        seeding: str = "splitmix",
        variant: str | Variant = "full",
    ):
        if isinstance(num_games, bool) or not isinstance(num_games, (int, np.integer)):
            raise ValueError(f"num_games must be an integer >= 1, got {num_games!r}")
        if num_games < 1:
            raise ValueError(f"num_games must be >= 1, got {num_games}")
        if illegal not in ILLEGAL_MODES:
            raise ValueError(f"illegal {illegal!r} is not one of {list(ILLEGAL_MODES)}")
        if seeding not in SEEDINGS:
            raise ValueError(f"seeding {seeding!r} is not one of {list(SEEDINGS)}")
        n = int(num_games)
        self.variant = parse_variant(variant)
        self.num_games = n
        self.autoreset = bool(autoreset)
        self.illegal = illegal
        self.seeding = seeding
        self.seeds: list[int | None] = [None] * n  # each game's last seed (numpy seeding)
        self._buffers: dict[str, np.ndarray] = {
            "observation": np.zeros((n, OBS_SIZE), np.int8),
            "action_mask": np.zeros((n, NUM_ACTIONS), np.int8),
            "current_player": np.zeros(n, np.int8),
            "rewards": np.zeros((n, 2), np.float32),
            "terminated": np.zeros(n, np.bool_),
            "phase": np.zeros(n, np.int8),
            "round": np.zeros(n, np.int8),
            "marker": np.zeros(n, np.int8),
            "tricks": np.zeros((n, 2), np.int8),
            "winner": np.zeros(n, np.int8),
            "deals": np.zeros((n, MAX_ROUNDS, 2), np.uint32),
            "ranks": np.zeros((n, NUM_COLOURS), np.int8),
        }
        core_variant = None if self.variant == FULL else self.variant.core_fields()
        self._games: CoreGames = _core.Games(
            n,
            self.autoreset,
            illegal == "terminate",
            seeding == "numpy",
            *self._buffers.values(),
            core_variant,
        )
        for name, array in self._buffers.items():
            setattr(self, name, read_only(array))
        self._is_reset = False
        self._has_streams = False
        self._seats = {p: np.full(n, p, np.int8) for p in (0, 1)}

    # --- starting games ------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start every game anew (see the module doc for ``options``).

        Args:
            seed: the seed of the games' streams (an integer >= 0, below 2**64 with
                splitmix seeding), or None for a random one.
            options: ``deals`` (one entry per game, None or a list of 1-3 round
                deals) and ``first_game`` (the number of game 0).

        Raises:
            ValueError: an unknown option, a seed that is not an integer >= 0 (or
                too large), a ``first_game`` out of range or malformed deals.
        """
        options = dict(options or {})
        unknown = sorted(map(str, set(options) - set(RESET_OPTIONS)))
        if unknown:
            raise ValueError(f"unknown reset options {unknown}; allowed: {list(RESET_OPTIONS)}")
        numpy = self.seeding == "numpy"
        seed = as_seed(seed, None if numpy else SEED_BOUND)
        if seed is None:
            seed = secrets.randbits(63)
        first_game = options.get("first_game", 0)
        last = SEED_BOUND - self.num_games  # game numbers first_game + i stay below 2**64
        if (
            isinstance(first_game, bool)
            or not isinstance(first_game, (int, np.integer))
            or not 0 <= int(first_game) <= last
        ):
            raise ValueError(
                f"options['first_game'] must be an integer from 0 to 2**64 - {self.num_games} "
                f"(the games are numbered first_game + i, below 2**64), got {first_game!r}"
            )
        fixed, rounds = fixed_deals(options.get("deals"), self.num_games, self.variant)
        if numpy:
            first = seed + int(first_game)
            self.seed_games(range(first, first + self.num_games))
            self._games.new_episodes(None, None, fixed, rounds, None)
        else:
            self._games.reset(seed, int(first_game), fixed, rounds)
        self._is_reset = self._has_streams = True

    def seed_games(self, seeds: Sequence[Any], where: np.ndarray | None = None) -> None:
        """(``seeding="numpy"``) Seed each game in ``where`` with ``seeds[i]``: its
        deals come from ``default_rng(seeds[i])``; ``None`` keeps the game's stream
        (or seeds it at random if it has none). Nothing is dealt (``new_episodes``).

        Args:
            seeds: one entry per game, None or an integer >= 0 of any size; the
                entries of games outside ``where`` are not read.
            where: optional boolean array of shape (N,): only these games are seeded.

        Raises:
            ValueError: not ``seeding="numpy"``, ``seeds`` of another length, a seed
                that is not an integer >= 0, or a ``where`` of the wrong shape or dtype.
        """
        self._need_numpy("seed_games")
        if isinstance(seeds, (str, bytes)) or len(seeds) != self.num_games:
            raise ValueError(
                f"seeds must have one entry per game ({self.num_games}), each None or an "
                f"integer >= 0; got {seeds!r}"
            )
        rows = where_rows(self.num_games, where)
        chosen = range(self.num_games) if rows is None else np.flatnonzero(rows).tolist()
        reseed = np.zeros(self.num_games, bool)
        for i in chosen:
            seed = as_seed(seeds[i])
            if seed is None and self.seeds[i] is None:
                seed = secrets.randbits(128)
            if seed is not None:
                self.seeds[i] = seed
                reseed[i] = True
        if reseed.any():
            table, counts = seed_words(self.seeds)
            self._games.seed_numpy(table, table.shape[1], counts, reseed)
        self._has_streams = True

    def new_episodes(
        self,
        where: np.ndarray | None = None,
        draw_seat: bool | np.ndarray = False,
        seed_player: bool | np.ndarray = False,
        deals: Any = None,
        seats: np.ndarray | None = None,
    ) -> np.ndarray:
        """(``seeding="numpy"``) New games in ``where`` with the draws of the Gym
        env's ``reset`` (the module doc's Seeding); returns ``seats``.

        Args:
            where: optional boolean array of shape (N,): the games to start (None:
                all of them).
            draw_seat: a bool, or one per game: draw the learner's seat
                ``rng.integers(2)`` from the game's stream into ``seats``.
            seed_player: a bool, or one per game: draw the opponent's seed
                ``rng.integers(2**31)`` and reseed the game's random player with it.
            deals: rounds' deals to fix, one entry per game, as ``reset``'s
                ``deals`` option.
            seats: an int8 array of shape (N,) to write the drawn seats into (a new
                one when None); the games that draw no seat keep their entries.

        Returns:
            ``seats``.

        Raises:
            ValueError: not ``seeding="numpy"``, flags that are neither a bool nor one
                bool per game, malformed deals, or a ``seats`` or ``where`` of the
                wrong shape or dtype.
            RuntimeError: no stream yet (call ``reset`` or ``seed_games`` first), or a
                first start that leaves games out.
        """
        self._need_numpy("new_episodes")
        if not self._has_streams:
            raise RuntimeError("call reset() or seed_games() before new_episodes()")
        rows = where_rows(self.num_games, where)
        if rows is not None and not self._is_reset and not rows.all():
            raise RuntimeError("the first new_episodes() (or reset()) must start every game")
        flags = game_flags(draw_seat, "draw_seat", self.num_games)
        flags |= (
            game_flags(seed_player, "seed_player", self.num_games) << 1
        )  # core/_core.c: 1 seat, 2 seed
        if seats is None:
            seats = np.zeros(self.num_games, np.int8)
        check_out(seats, (self.num_games,), np.int8, "seats")
        fixed, rounds = fixed_deals(deals, self.num_games, self.variant)
        self._games.new_episodes(rows, flags, fixed, rounds, seats)
        self._is_reset = True
        return seats

    def _need_numpy(self, method: str) -> None:
        if self.seeding != "numpy":
            raise ValueError(f"{method}() needs BatchedGames(..., seeding='numpy')")

    def reset_games(self, where: np.ndarray) -> None:
        """Start the games in ``where`` (boolean, shape (N,)) anew, with their next deals.

        Args:
            where: boolean array of shape (N,): the games to restart; the others,
                their rewards included, are left alone.

        Raises:
            ValueError: ``where`` missing, or of the wrong shape or dtype.
            RuntimeError: before the first ``reset``.
        """
        self._check_reset()
        rows = where_rows(self.num_games, where)
        if rows is None:
            raise ValueError("reset_games needs a boolean array 'where' of the games to restart")
        self._games.reset_where(rows)

    # --- playing ---------------------------------------------------------------

    def step(self, actions: Any, where: np.ndarray | None = None) -> None:
        """Apply one action per game, for its player to act (finished games ignore theirs).

        Args:
            actions: integer array of shape (N,).
            where: optional boolean array of shape (N,): only these games move.

        Raises:
            IllegalActionError: with ``illegal="raise"``, an action outside a
                game's mask; no game has moved.
            ValueError: ``actions`` or ``where`` of the wrong shape or dtype.
            RuntimeError: before the first ``reset``.
        """
        self._check_reset()
        actions = self._as_actions(actions)
        bad = self._games.step(actions, where_rows(self.num_games, where))
        if bad >= 0:
            raise self._illegal(bad, int(actions[bad]))

    def _as_actions(self, actions: Any) -> np.ndarray:
        return as_actions(actions, self.num_games)

    def _illegal(self, game: int, action: int) -> IllegalActionError:
        legal = mask_to_ids(self._games.legal_mask(game))
        player = AGENTS[int(self.current_player[game])]
        phase = PHASE_NAMES[int(self.phase[game])]
        return IllegalActionError(
            f"game {game}: illegal action {action} for {player} in phase '{phase}'; "
            f"legal actions are {legal}"
        )

    def sample_actions(self, out: np.ndarray | None = None) -> np.ndarray:
        """A uniformly random legal action per game (-1 where over), drawn in C.

        Args:
            out: an int64 array of shape (N,) to write into (a new one when None).

        Returns:
            The (N,) actions: ``out`` when given.

        Raises:
            ValueError: an ``out`` that is not a writable, contiguous int64 (N,) array.
            RuntimeError: before the first ``reset``.
        """
        self._check_reset()
        if out is None:
            out = np.empty(self.num_games, np.int64)
        check_out(out, (self.num_games,), np.int64, "out")
        self._games.sample(out)
        return out

    def play_random(self, seats: np.ndarray) -> None:
        """In each game, ``seats[i]`` plays random legal actions for as long as it is to act.

        Args:
            seats: integer array of shape (N,): the seat that plays at random
                in each game (0 or 1; any other value from -128 to 127 leaves
                the game alone).

        Raises:
            ValueError: another shape, a non-integer dtype, or a value outside
                -128 to 127 (never wrapped into another seat).
            RuntimeError: before the first ``reset``.
        """
        self._check_reset()
        seats = as_seat_array(
            seats, self.num_games, "any other value from -128 to 127 leaves that game alone"
        )
        self._games.play_random(seats)

    def observe(
        self,
        player: int | str | np.ndarray,
        out: tuple[np.ndarray, np.ndarray] | None = None,
        where: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Every game's (observation, action_mask) for ``player``.

        Args:
            player: a seat for every game (0 or "jekyll", 1 or "hyde"), or an
                integer array of shape (N,) with one seat (0 or 1) per game.
            out: two int8 arrays of shapes (N, 327) and (N, 28) to write into.
            where: optional boolean array of shape (N,): only these rows are written.

        The mask is all zeros in games where the seat is not to act.

        Returns:
            observation: int8 (N, 327), each game's observation for ``player``.
            action_mask: int8 (N, 28), its legal actions there.

        Raises:
            ValueError: a seat out of range, or an ``out`` or ``where`` of the wrong
                shape or dtype.
            RuntimeError: before the first ``reset``.
        """
        self._check_reset()
        if isinstance(player, np.ndarray) and player.ndim > 0:
            seats = as_seat_array(player, self.num_games)
        else:
            seats = self._seats[player_index(player)]
        if out is None:
            out = (
                np.zeros((self.num_games, OBS_SIZE), np.int8),
                np.zeros((self.num_games, NUM_ACTIONS), np.int8),
            )
        observation, mask = out
        for array, width, name in (
            (observation, OBS_SIZE, "observation"),
            (mask, NUM_ACTIONS, "mask"),
        ):
            check_out(array, (self.num_games, width), np.int8, f"out's {name}")
        self._games.observe(seats, observation, mask, where_rows(self.num_games, where))
        return observation, mask

    def integers(
        self, bound: int, where: np.ndarray | None = None, out: np.ndarray | None = None
    ) -> np.ndarray:
        """A uniform integer in [0, bound) per game (or per game in ``where``),
        each from its game's own stream, so that it follows the games' seeding.

        Args:
            bound: the draws' upper end (excluded), at least 1.
            where: optional boolean array of shape (N,): only these games draw (the
                others' entries are left as they are).
            out: an int64 array of shape (N,) to write into (a new one, of zeros,
                when None).

        Returns:
            The (N,) draws: ``out`` when given.

        Raises:
            ValueError: a ``bound`` below 1, or an ``out`` or ``where`` of the wrong
                shape or dtype.
            RuntimeError: before the games have streams (``reset``, ``seed_games``).
        """
        if not self._has_streams:
            self._check_reset()
        if out is None:
            out = np.zeros(self.num_games, np.int64)
        check_out(out, (self.num_games,), np.int64, "out")
        self._games.draw(int(bound), where_rows(self.num_games, where), out)
        return out

    def _check_reset(self) -> None:
        if not self._is_reset:
            raise RuntimeError("call reset() before stepping or observing the games")

    def __len__(self) -> int:
        return self.num_games

    def __repr__(self) -> str:
        return (
            f"BatchedGames(num_games={self.num_games}, autoreset={self.autoreset}, "
            f"illegal={self.illegal!r}, seeding={self.seeding!r}, variant={self.variant.name!r})"
        )
