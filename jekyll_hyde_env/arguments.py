"""The values a user hands the environments, checked alike by all of them.

Seeds, actions and seats come from users' code, often as numpy scalars out of
a policy or a seed table. Every environment (the AEC env, the Gym env, the
batched games and the Gym vector env) takes them through these functions, so
that a numpy integer works wherever a Python one does, a bool is never taken
for 0 or 1, and a wrong value is refused with a ``ValueError`` that names the
values allowed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from jekyll_hyde_env.engine.cards import AGENTS, COLOUR_NAMES, DECLARE_BASE, NUM_ACTIONS

ACTIONS_TEXT = (
    f"an integer from 0 to {NUM_ACTIONS - 1}: 0-{DECLARE_BASE - 1} name a card (to play, "
    f"give or swap), {DECLARE_BASE}-{NUM_ACTIONS - 1} declare "
    f"{', '.join(COLOUR_NAMES[:-1])} or {COLOUR_NAMES[-1]} (after a potion lead, T2)"
)
SEATS_TEXT = " or ".join(f"{seat} ({agent})" for seat, agent in enumerate(AGENTS))
_INT8 = np.dtype(np.int8)
_max = np.maximum.reduce  # without np.max's Python-level dispatch


def _is_integer(value: Any) -> bool:
    """A Python or numpy integer, or a 0-d integer array; never a bool."""
    if isinstance(value, np.ndarray):
        return value.ndim == 0 and value.dtype.kind in "iu"
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def as_seed(seed: Any, bound: int | None = None) -> int | None:
    """``seed`` as a Python int (or None), from a Python or numpy integer >= 0.

    Args:
        bound: when given, a seed must be below it (``2**64`` for the C games,
            whose streams are keyed by a 64-bit seed, so that a larger seed would
            deal another seed's games); without it an integer of any size is one.

    Raises:
        ValueError: a bool, a float, a string, a negative number, a number not
            below ``bound``, an array; the message names the seeds allowed.
    """
    if seed is None:
        return None
    if _is_integer(seed):
        value = int(seed)
        if value >= 0 and (bound is None or value < bound):
            return value
    if bound is None:
        allowed = "an integer >= 0 of any size"
    else:
        allowed = f"an integer >= 0 and < {_number_text(bound)}"
    raise ValueError(f"seed must be None or {allowed} (a Python or numpy int), got {_short(seed)}")


def _number_text(number: int) -> str:
    """``2**64`` for a large power of two, the digits otherwise."""
    if number > 2**16 and number & (number - 1) == 0:
        return f"2**{number.bit_length() - 1}"
    return str(number)


def as_action(action: Any) -> int:
    """``action`` as a Python int, from a Python or numpy integer (or a 0-d integer array).

    Whether the action is legal is the rules' question, not this one's: an
    integer outside 0-27 passes here and is refused as illegal by the env.

    Raises:
        ValueError: a bool, a float, a string, None, an array of one or more
            entries; the message names the allowed values.
    """
    if type(action) is int:  # the common case, checked first (a bool's type is bool)
        return action
    if not _is_integer(action):
        raise ValueError(
            f"an action must be {ACTIONS_TEXT}; got {_short(action)} ({type(action).__name__})"
        )
    return int(action)


def as_actions(actions: Any, num_games: int) -> np.ndarray:
    """One action per game as a contiguous int64 array of shape ``(num_games,)``.

    Raises:
        ValueError: another shape, or entries that are not integers (bools,
            floats, strings); the message names the allowed values.
    """
    array = np.asarray(actions)
    if array.shape != (num_games,):
        raise ValueError(f"actions must have shape ({num_games},), one per game; got {array.shape}")
    if array.dtype.kind not in "iu":
        raise ValueError(f"each action must be {ACTIONS_TEXT}; got dtype {array.dtype}")
    return np.ascontiguousarray(array, dtype=np.int64)


def as_seat_array(seats: Any, num_games: int, others: str = "") -> np.ndarray:
    """Seats, one per game, as a contiguous int8 array of shape ``(num_games,)``.

    Args:
        others: what values other than the seats mean, when they are allowed
            (``"any other value from -128 to 127 leaves that game alone"``);
            without it only the seats are.

    Raises:
        ValueError: another shape, entries that are not integers, or values
            out of range (none is wrapped into int8); the message names the
            allowed values.
    """
    # A contiguous int8 array of the right shape (what the envs hand themselves
    # every step) is returned as it is after one reduce at most: with ``others``
    # every int8 is allowed; without, seats 0 and 1 are the only int8 values
    # below 2 when read as uint8 (negative ones read as 128-255).
    if (
        type(seats) is np.ndarray
        and seats.dtype == _INT8
        and seats.shape == (num_games,)
        and seats.flags.c_contiguous
        and (others or _max(seats.view(np.uint8)) < len(AGENTS))
    ):
        return seats
    allowed = SEATS_TEXT + (f"; {others}" if others else "")
    array = np.asarray(seats)
    if array.shape != (num_games,) or array.dtype.kind not in "iu":
        raise ValueError(
            f"seats must be an integer array of shape ({num_games},), each {allowed}; got "
            f"{array.dtype} {array.shape}"
        )
    if others:
        info = np.iinfo(np.int8)
        bad = np.flatnonzero((array < info.min) | (array > info.max))
    else:
        bad = np.flatnonzero((array < 0) | (array >= len(AGENTS)))
    if bad.size:
        game = int(bad[0])
        raise ValueError(f"seats[{game}] is {int(array[game])}; each seat must be {allowed}")
    return np.ascontiguousarray(array, dtype=np.int8)


def is_seed_list(seed: Any) -> bool:
    """Whether ``seed`` is a list (or tuple) of seeds, one per game of a vector env; an
    array is refused, as it is for one seed."""
    return isinstance(seed, (list, tuple))


def same_value(a: Any, b: Any) -> bool:
    """Whether two attribute values are equal, for values whose ``==`` may fail or not
    give a bool (an array, an agent): the same object, or equal by ``==``."""
    if a is b:
        return True
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - values without a truthful ==
        return False
