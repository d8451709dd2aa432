"""What ``BatchedGames`` checks of its callers' inputs, and the C core's games it drives.

``CoreGames`` states the methods of ``jekyll_hyde_env.core._core.Games`` that
``BatchedGames`` calls (the C extension has no stub). The functions check what a
caller hands over, before C reads it: a player, an output array's shape, dtype and
writability, the ``deals`` option (one entry per game, each a list of round deals,
R2), and per-game flags; each refusal names the argument and what is allowed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from jekyll_hyde_env.engine.cards import (
    AGENTS,
    MAX_ROUNDS,
)
from jekyll_hyde_env.engine.rules import (
    validate_deal,
)
from jekyll_hyde_env.engine.variant import FULL, Variant


class CoreGames(Protocol):
    """The C core's ``_core.Games`` (``core/_core.c``), as this module calls it."""

    def reset(
        self, seed: int, first_game: int, fixed: np.ndarray | None, rounds: np.ndarray | None, /
    ) -> None: ...
    def reset_where(self, where: np.ndarray | None, /) -> None: ...
    def seed_numpy(self, words: Any, k: int, counts: Any, where: Any, /) -> None: ...
    def new_episodes(
        self, where: Any, flags: Any, fixed: Any, rounds: Any, seats: Any, /
    ) -> None: ...
    def history(self, game: int, /) -> bytes | None: ...
    def step(self, actions: np.ndarray, where: np.ndarray | None, /) -> int: ...
    def sample(self, out: np.ndarray, /) -> None: ...
    def play_random(self, seats: np.ndarray, /) -> None: ...
    def observe(
        self,
        seats: np.ndarray,
        observation: np.ndarray,
        mask: np.ndarray,
        where: np.ndarray | None,
        /,
    ) -> None: ...
    def draw(self, bound: int, where: np.ndarray | None, out: np.ndarray, /) -> None: ...
    def state(self, game: int, /) -> tuple[int, ...]: ...
    def legal_mask(self, game: int, /) -> int: ...


def player_index(player: object) -> int:
    if isinstance(player, str) and player in AGENTS:
        return AGENTS.index(player)
    if isinstance(player, (int, np.integer)) and not isinstance(player, bool) and player in (0, 1):
        return int(player)
    raise ValueError(f"player must be 0, 1, 'jekyll' or 'hyde', got {player!r}")


def check_out(array: Any, shape: tuple[int, ...], dtype: Any, name: str) -> None:
    """Refuse an output array the C code could not safely write."""
    if (
        not isinstance(array, np.ndarray)
        or array.shape != shape
        or array.dtype != dtype
        or not array.flags.writeable
        or not array.flags.c_contiguous
    ):
        raise ValueError(
            f"{name} must be a writable, contiguous {np.dtype(dtype).name} array of shape {shape}"
        )


def read_only(array: np.ndarray) -> np.ndarray:
    view = array.view()
    view.flags.writeable = False
    return view


def fixed_deals(
    deals: Any, num_games: int, variant: Variant = FULL
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The ``deals`` option as (N, 3, 2) masks and the count fixed per game, each deal
    checked against the variant's hand size and cards (R2, V1, V2)."""
    if deals is None:
        return None, None
    if isinstance(deals, (str, bytes)) or not isinstance(deals, Sequence):
        raise ValueError(
            f"options['deals'] must be a list with one entry per game, got {type(deals).__name__}"
        )
    if len(deals) != num_games:
        raise ValueError(
            f"options['deals'] has {len(deals)} entries; it needs one per game "
            f"({num_games}), each None or a list of round deals"
        )
    fixed = np.zeros((num_games, MAX_ROUNDS, 2), np.uint32)
    rounds = np.zeros(num_games, np.int8)
    for i, game_deals in enumerate(deals):
        if game_deals is None:
            continue
        if isinstance(game_deals, (str, bytes, dict)) or not isinstance(game_deals, Sequence):
            raise ValueError(
                f"game {i}: deals must be None or a list of round deals, got {game_deals!r}"
            )
        if len(game_deals) > variant.rounds:
            raise ValueError(
                f"game {i}: at most {variant.rounds} deals can be fixed, got {len(game_deals)}"
            )
        for r, deal in enumerate(game_deals):
            try:
                fixed[i, r] = validate_deal(deal, r + 1, variant)
            except ValueError as error:
                raise ValueError(f"game {i}: {error}") from None
        rounds[i] = len(game_deals)
    return fixed, rounds


def game_flags(value: bool | np.ndarray, name: str, num_games: int) -> np.ndarray:
    """A bool, or one bool per game, as a uint8 array of 0 and 1."""
    if isinstance(value, np.ndarray) and value.dtype == np.bool_ and value.shape == (num_games,):
        return value.astype(np.uint8)
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be a bool or {num_games} bools, got {value!r}")
    return np.full(num_games, value, np.uint8)


def where_rows(num_games: int, where: np.ndarray | None) -> np.ndarray | None:
    """``where`` checked as a boolean array of shape (N,), contiguous, or None.

    Raises:
        ValueError: another shape or dtype, naming both.
    """
    if where is None:
        return None
    array = np.asarray(where)
    if array.shape != (num_games,) or array.dtype != np.bool_:
        raise ValueError(
            f"where must be a boolean array of shape ({num_games},); "
            f"got {array.dtype} {array.shape}"
        )
    return np.ascontiguousarray(array)


def seed_words(seeds: Sequence[int | None]) -> tuple[np.ndarray, np.ndarray]:
    """Each game's seed as numpy's ``SeedSequence`` reads an integer: 32-bit words, least
    significant first (a seed of None counts as 0).

    Returns:
        A (N, most words) uint32 table of the words, and each seed's count of words
        (int64, at least 1).
    """
    counts = np.array([max(1, -(-(s or 0).bit_length() // 32)) for s in seeds])
    table = np.zeros((len(seeds), counts.max()), np.uint32)
    for i, (seed, count) in enumerate(zip(seeds, counts.tolist(), strict=True)):
        table[i, :count] = [(seed or 0) >> (32 * j) & 0xFFFFFFFF for j in range(count)]
    return table, counts.astype(np.int64)
