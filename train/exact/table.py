"""Every information set of a tree as arrays, for policies that play whole batches.

An exact best response asks a fixed policy for its action probabilities at each of
the other seat's information sets: about a million on ``small``. Asking a network
one view at a time costs a Python call per set; ``InfosetTable`` instead keeps, per
information set, who acts, the legal actions and the observation the environments
give (``observation.encode`` of the player's view, packed eight entries to a byte),
so that a network scores them all in a few large batches. ``table_strategy`` turns
such an array of probabilities into the ``Strategy`` a best response reads.

``InfosetTable.build(tree, cache)`` encodes the views once (about a minute on
``small``) and, given a file, keeps the packed rows there for the next run.
"""

from __future__ import annotations

import io
import pathlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from jekyll_hyde_agents.policy_agent import PolicyAgent
from jekyll_hyde_env.engine.cards import AGENTS, NUM_ACTIONS
from jekyll_hyde_env.engine.information import player_view
from jekyll_hyde_env.engine.state import PlayerView
from jekyll_hyde_env.observation import PACKED_BYTES, encode_packed, unpack_rows
from jekyll_hyde_train.common.files import atomic_write_bytes
from jekyll_hyde_train.exact.best_response import Strategy
from jekyll_hyde_train.exact.tree import GameTree, InfoSet

ROWS_PER_BATCH = 65_536
"""Information sets per batch in ``InfosetTable.batches``."""


CACHE_CHECKS = 512
"""Information sets encoded again to check a cached table against the tree."""


@dataclass
class InfosetTable:
    """A tree's information sets as arrays, in the tree's order of ``infosets``.

    Args:
        tree: the tree the sets belong to.
        player: int8 (size,): the player to act, 0 Jekyll or 1 Hyde.
        packed: uint8 (size, ``PACKED_BYTES``): each set's observation and legal
            actions, as ``observation.encode_packed`` writes them.
    """

    tree: GameTree
    player: np.ndarray
    packed: np.ndarray

    @classmethod
    def build(cls, tree: GameTree, cache: pathlib.Path | None = None) -> InfosetTable:
        """Encode every information set of ``tree``, or read them from ``cache``.

        Args:
            tree: the variant's tree.
            cache: an ``.npy`` file that keeps the packed rows between runs (written
                when missing; one of another size, or whose rows at ``CACHE_CHECKS``
                evenly spaced sets differ from those sets encoded now, is refused).

        Returns:
            The table.

        Raises:
            ValueError: ``cache`` holds rows of another tree.
        """
        player = np.fromiter((s.player for s in tree.infosets), np.int8, len(tree.infosets))
        if cache is not None and cache.is_file():
            packed = np.load(cache)
            if packed.shape != (len(tree.infosets), PACKED_BYTES):
                raise ValueError(
                    f"{cache} holds {packed.shape} rows, and the tree of "
                    f"{tree.variant.name} has {len(tree.infosets)} information sets of "
                    f"{PACKED_BYTES} bytes each; delete the file to encode them again"
                )
            sample = np.unique(np.linspace(0, len(tree.infosets) - 1, CACHE_CHECKS, dtype=int))
            if not np.array_equal(packed[sample], _encode_rows(tree, sample)):
                raise ValueError(
                    f"{cache} holds rows that differ from the information sets of the tree "
                    f"of {tree.variant.name} as encoded now (another tree, or another "
                    "encoding); delete the file to encode them again"
                )
            return cls(tree, player, packed)
        packed = _encode_rows(tree, range(len(tree.infosets)))
        if cache is not None:
            cache.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(cache, _npy_bytes(packed))
        return cls(tree, player, packed)

    @property
    def size(self) -> int:
        """The number of information sets."""
        return len(self.player)

    def view(self, k: int) -> PlayerView:
        """The acting player's view at information set ``k``.

        Args:
            k: an information set's index.

        Returns:
            The view, as ``engine.player_view`` gives it.
        """
        return player_view(self.tree.views[k], self.tree.infosets[k].player)

    def batches(self, rows: int = ROWS_PER_BATCH) -> Iterator[tuple[slice, np.ndarray, np.ndarray]]:
        """The observations and legal masks, a batch of rows at a time.

        Args:
            rows: information sets per batch.

        Yields:
            (the rows' slice, int8 observations (n, ``OBS_SIZE``), int8 legal masks
            (n, ``NUM_ACTIONS``)).
        """
        for start in range(0, self.size, rows):
            part = slice(start, min(start + rows, self.size))
            observations, masks = unpack_rows(self.packed[part])
            yield part, observations, masks

    def legal(self) -> np.ndarray:
        """Every set's legal actions as a bool (size, ``NUM_ACTIONS``) array.

        Returns:
            True where the action is legal.
        """
        return np.concatenate([masks.astype(bool) for _, _, masks in self.batches()])


def _mask(actions: list[int]) -> int:
    return sum(1 << a for a in actions)


def _npy_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def table_strategy(probabilities: np.ndarray) -> Strategy:
    """The ``Strategy`` of a table of probabilities over all actions.

    Args:
        probabilities: (size, ``NUM_ACTIONS``): row ``k`` the play at information set
            ``k``, zero on its illegal actions.

    Returns:
        The strategy a best response reads: row ``k`` at the set's legal actions.

    Raises:
        ValueError: the array is not (size, ``NUM_ACTIONS``) (checked when called).
    """
    if probabilities.ndim != 2 or probabilities.shape[1] != NUM_ACTIONS:
        raise ValueError(
            f"a table of probabilities has shape (information sets, {NUM_ACTIONS}), "
            f"got {probabilities.shape}"
        )

    def strategy(k: int, infoset: InfoSet) -> np.ndarray:
        return probabilities[k, infoset.actions]

    return strategy


def softmax_rows(logits: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """The softmax of each row's legal logits, zero elsewhere.

    Args:
        logits: float (n, ``NUM_ACTIONS``).
        legal: bool or 0/1 (n, ``NUM_ACTIONS``), each row with a legal action.

    Returns:
        float64 (n, ``NUM_ACTIONS``) rows summing to 1.
    """
    masked = np.where(legal.astype(bool), logits.astype(np.float64), -np.inf)
    masked -= masked.max(axis=1, keepdims=True)
    weights = np.exp(masked)
    return weights / weights.sum(axis=1, keepdims=True)


def argmax_rows(scores: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """Probability 1 on each row's highest-scoring legal action (the first of ties).

    Args:
        scores: float (n, ``NUM_ACTIONS``).
        legal: bool or 0/1 (n, ``NUM_ACTIONS``), each row with a legal action.

    Returns:
        float64 (n, ``NUM_ACTIONS``) one-hot rows.
    """
    masked = np.where(legal.astype(bool), scores.astype(np.float64), -np.inf)
    out = np.zeros(masked.shape)
    out[np.arange(len(masked)), masked.argmax(axis=1)] = 1.0
    return out


def batched_probabilities(
    table: InfosetTable, play: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]
) -> np.ndarray:
    """Ask ``play`` for every information set's probabilities, a batch at a time.

    Args:
        table: the information sets.
        play: (int8 observations (n, 327), int8 legal masks (n, 28), players (n,))
            -> float probabilities (n, 28), zero on illegal actions.

    Returns:
        float64 (size, ``NUM_ACTIONS``).
    """
    out = np.zeros((table.size, NUM_ACTIONS))
    for part, observations, masks in table.batches():
        out[part] = play(observations, masks, table.player[part])
    return out


def policy_probabilities(
    policy: str | pathlib.Path | PolicyAgent,
    table: InfosetTable,
    deterministic: bool | None = None,
    seats: tuple[int, ...] = (0, 1),
) -> np.ndarray:
    """A saved policy's probabilities at every information set, in batches.

    The same play as ``PolicyAgent.act``: the softmax of the legal logits when it
    samples, probability 1 on the most likely legal action (the lowest id of ties)
    when deterministic. Each row uses the network of the role that acts there.

    Args:
        policy: a saved policy's folder (or ``policy.json``), or a ``PolicyAgent``.
        table: the information sets, of the policy's variant.
        deterministic: play deterministically; None keeps the agent's own setting
            (a path is read as sampling).
        seats: the seats whose rows to fill (0 Jekyll, 1 Hyde); the others stay zero.

    Returns:
        float64 (size, ``NUM_ACTIONS``).

    Raises:
        PolicyFileError: no valid saved policy at ``policy``, or one that does not
            play a role the table needs.
        ValueError: the policy was trained on another variant.
    """
    agent = policy if isinstance(policy, PolicyAgent) else PolicyAgent(policy, deterministic=False)
    agent.check_variant(table.view(0))
    greedy = agent.deterministic if deterministic is None else deterministic
    pick = argmax_rows if greedy else softmax_rows

    def play(observations: np.ndarray, masks: np.ndarray, players: np.ndarray) -> np.ndarray:
        out = np.zeros((len(observations), NUM_ACTIONS))
        for seat in seats:
            rows = np.flatnonzero(players == seat)
            if rows.size:
                logits = agent.batch_logits(observations[rows], AGENTS[seat])
                out[rows] = pick(logits, masks[rows])
        return out

    return batched_probabilities(table, play)


def _encode_rows(tree: GameTree, indices) -> np.ndarray:
    """The packed rows (``encode_packed``) of the information sets at ``indices``."""
    rows = [
        encode_packed(
            player_view(tree.views[k], tree.infosets[k].player), _mask(tree.infosets[k].actions)
        )
        for k in indices
    ]
    return np.frombuffer(b"".join(rows), np.uint8).reshape(len(rows), PACKED_BYTES)
