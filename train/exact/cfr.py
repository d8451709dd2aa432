"""CFR+ on a small variant's whole tree, vectorized with numpy.

Counterfactual regret minimization plus (Tammelin 2014; Tammelin, Burch, Johanson and
Bowling 2015) approaches an equilibrium by self-play on the tree of ``tree``: each
iteration, each player in turn (Jekyll, then Hyde, against the other's newest
strategy: alternating updates) adds to each of its (information set, action) pairs
the counterfactual regret of not having played that action, floors the sum at 0
(regret-matching+), and plays next in proportion to the positive regrets (uniformly
where none is positive). The *average strategy*, each iteration's strategy weighted by
the player's own probability of reaching the information set and by
``max(t - delay, 0)`` at iteration ``t`` (linear averaging), is what converges: its
exact score (``best_response.exact_score``) falls toward 0.5, and its value toward the
game value the LP finds (``lp.solve``). Unlike the LP, CFR+ gives an answer at every
iteration, in memory linear in the tree.

The guarantee needs a player who recalls every choice: run it on a tree built with
``canonical_picks=True``, as the LP is (``tree``'s docstring). An average strategy is
then played on any tree of the same variant through its information states
(``strategy_by_key``), for instance the tree without canonical picks on which
``exact_score`` lets the strategy's picks come in any order.

How it is vectorized: the nodes are renumbered level by level (the deals first, then
their children, and so on), so that each level is one range of indices and the
children of a decision node are consecutive, in the order of its information set's
actions. Every (information set, action) pair is one *slot* of a flat array, Jekyll's
information sets first. An iteration then makes, per player, one top-down pass for
the reach probabilities (a gather per level), one bottom-up pass for the expected
values (``np.add.reduceat`` of the children weighted by the strategy of the player
who acts), one ``np.bincount`` of the regrets into the slots, and the regret-matching+
and averaging steps on the slots. Chance acts only at the deal (R2.1): every deal has
probability ``1 / deals``.
"""

from __future__ import annotations

import io
import itertools
import json
import os
import pathlib
import time
from collections.abc import Callable, Iterable
from typing import TypeVar

import numpy as np

from jekyll_hyde_train.common.files import atomic_write_bytes
from jekyll_hyde_train.exact.best_response import Strategy
from jekyll_hyde_train.exact.tree import TERMINAL, GameTree, InfoSet

T = TypeVar("T")

STATE_FORMAT = 1
"""The version of the files ``CFRPlus.save`` writes."""


class CFRPlus:
    """CFR+ on one game tree: regrets, average-strategy weights and the iteration count.

    Args:
        tree: the variant's tree, best built with ``canonical_picks=True`` (a player who
            recalls every choice, which CFR+'s guarantee needs; see the module's
            docstring).
        delay: the average strategy weighs iteration ``t`` by ``max(t - delay, 0)``.

    Raises:
        ValueError: ``delay`` is negative, or the tree has no information set.
    """

    def __init__(self, tree: GameTree, delay: int = 0) -> None:
        if delay < 0:
            raise ValueError(f"delay must be 0 or more, got {delay}")
        if not tree.infosets:
            raise ValueError("the tree has no information set: there is nothing to solve")
        self.tree = tree
        self.delay = delay
        self.iterations = 0
        """Iterations done (each updates both players)."""
        self.seconds = 0.0
        """CPU seconds spent in ``iterate``, over every run that this state continues."""
        self._index_slots(tree)
        self._index_levels(tree)
        self.regrets = np.zeros(self.slots)
        """Per slot, the regret-matching+ sum (never negative)."""
        self.average = np.zeros(self.slots)
        """Per slot, the weighted sum of the strategies played (not normalized)."""
        self._reach: list[np.ndarray | None] = [None, None]
        self._sigma: np.ndarray | None = None

    def _index_slots(self, tree: GameTree) -> None:
        """The slots: per information set its first slot, Jekyll's sets before Hyde's."""
        counts = np.array([len(i.actions) for i in tree.infosets], dtype=np.int64)
        players = np.array([i.player for i in tree.infosets], dtype=np.int64)
        order = np.argsort(players, kind="stable")
        starts = np.zeros(len(order), dtype=np.int64)
        starts[1:] = np.cumsum(counts[order])[:-1]
        self.offset = np.empty(len(order), dtype=np.int64)
        """Per information set of ``tree.infosets``, its first slot."""
        self.offset[order] = starts
        self.slots = int(counts.sum())
        jekyll_slots = int(counts[players == 0].sum())
        self._bounds = ((0, jekyll_slots), (jekyll_slots, self.slots))
        # Per player, its information sets' first slots (relative to its range) and sizes.
        self._set_starts = []
        self._set_sizes = []
        self._uniform = []
        for p, (low, _) in enumerate(self._bounds):
            mine = order[players[order] == p]
            self._set_starts.append(self.offset[mine] - low)
            self._set_sizes.append(counts[mine])
            self._uniform.append(np.repeat(1.0 / counts[mine], counts[mine]))
        # Per slot, one node of its information set: the own reach of the set.
        first = np.array([i.nodes[0] for i in tree.infosets], dtype=np.int64)
        self._slot_node = np.repeat(first[order], counts[order])

    def _index_levels(self, tree: GameTree) -> None:
        """Renumber the nodes level by level; the arrays of the passes."""
        size = tree.size
        kids_count = np.fromiter(map(len, tree.children), dtype=np.int64, count=size)
        first_kid = np.zeros(size + 1, dtype=np.int64)
        np.cumsum(kids_count, out=first_kid[1:])
        flat_kids = np.fromiter(
            itertools.chain.from_iterable(tree.children), dtype=np.int64, count=int(first_kid[-1])
        )
        infoset = np.asarray(tree.infoset, dtype=np.int64)
        player = np.asarray(tree.player, dtype=np.int64)
        levels = [np.asarray(tree.deal_roots, dtype=np.int64)]
        parents = [np.full(len(levels[0]), -1, dtype=np.int64)]
        slot = [np.full(len(levels[0]), self.slots, dtype=np.int64)]
        new_start = 0
        while True:
            frontier = levels[-1]
            counts = kids_count[frontier]
            total = int(counts.sum())
            if total == 0:
                break
            begin = np.cumsum(counts) - counts
            within = np.arange(total, dtype=np.int64) - np.repeat(begin, counts)
            levels.append(flat_kids[np.repeat(first_kid[frontier], counts) + within])
            parents.append(np.repeat(new_start + np.arange(len(frontier)), counts))
            slot.append(np.repeat(self.offset[np.maximum(infoset[frontier], 0)], counts) + within)
            new_start += len(frontier)
        order = np.concatenate(levels)
        if len(order) != size:
            raise ValueError(f"{size - len(order)} tree nodes cannot be reached from a deal")
        renumber = np.empty(size, dtype=np.int64)
        renumber[order] = np.arange(size)
        self._ranges = list(itertools.pairwise(np.cumsum([0] + [len(x) for x in levels])))
        self._parent = np.concatenate(parents)
        self._slot = np.concatenate(slot)  # per node, the slot that leads to it
        self._utility = np.asarray(tree.utility, dtype=np.float64)[order]
        self._player = player[order]
        self._slot_node = renumber[self._slot_node]
        # Per level, its decision nodes and where their children start in the next level.
        self._deciding = []
        for low, high in self._ranges[:-1]:
            nodes = low + np.flatnonzero(self._player[low:high] != TERMINAL)
            counts = kids_count[order[nodes]]
            self._deciding.append((nodes, np.cumsum(counts) - counts))
        # Per player, the slot of each node that player's action leads to (else the
        # sentinel slot, whose probability is 1), and the nodes after the player's actions.
        after = self._parent >= 0
        acted = np.where(after, self._player[np.maximum(self._parent, 0)], TERMINAL)
        self._own_slot = [np.where(acted == p, self._slot, self.slots) for p in (0, 1)]
        self._after = [np.flatnonzero(acted == p) for p in (0, 1)]

    def _strategy(self, weights: np.ndarray, player: int) -> np.ndarray:
        """Normalize ``weights`` (the player's slots) per information set; uniform where
        they sum to 0."""
        sums = np.add.reduceat(weights, self._set_starts[player]) if len(weights) else weights
        totals = np.repeat(sums, self._set_sizes[player])
        positive = totals > 0.0
        return np.where(positive, weights / np.where(positive, totals, 1.0), self._uniform[player])

    def current(self) -> np.ndarray:
        """The strategies that the regrets play now, per slot, with the sentinel's 1 last.

        Returns:
            float64 (slots + 1,) array (the solver's own: not to be changed).
        """
        if self._sigma is None:
            bounds = enumerate(self._bounds)
            parts = [self._strategy(self.regrets[low:high], p) for p, (low, high) in bounds]
            self._sigma = np.concatenate([*parts, [1.0]])
        return self._sigma

    def _reach_of(self, player: int, sigma: np.ndarray) -> np.ndarray:
        """Per node, the probability that ``player``'s own actions lead there."""
        found = self._reach[player]
        if found is not None:
            return found
        step = sigma[self._own_slot[player]]
        reach = np.empty(len(step))
        low, high = self._ranges[0]
        reach[low:high] = 1.0
        for low, high in self._ranges[1:]:
            reach[low:high] = reach[self._parent[low:high]] * step[low:high]
        self._reach[player] = reach
        return reach

    def _values(self, sigma: np.ndarray) -> np.ndarray:
        """Per node, Jekyll's expected reward from there when both play ``sigma``."""
        values = self._utility.copy()
        step = sigma[self._slot]
        for (nodes, starts), (low, high) in zip(
            reversed(self._deciding), reversed(self._ranges[1:]), strict=True
        ):
            values[nodes] = np.add.reduceat(step[low:high] * values[low:high], starts)
        return values

    def _update(self, player: int, weight: float) -> None:
        """One CFR+ update of ``player``: average its strategy, then add its regrets."""
        sigma = self.current()
        low, high = self._bounds[player]
        own = self._reach_of(player, sigma)
        if weight > 0.0:
            self.average[low:high] += weight * own[self._slot_node[low:high]] * sigma[low:high]
        other = self._reach_of(1 - player, sigma)
        values = self._values(sigma)
        nodes = self._after[player]
        parents = self._parent[nodes]
        gains = other[parents] * (values[nodes] - values[parents])
        sign = (1.0 if player == 0 else -1.0) / self.tree.deals
        regret = np.bincount(self._slot[nodes] - low, weights=gains, minlength=high - low)
        mine = self.regrets[low:high]
        np.maximum(mine + sign * regret, 0.0, out=mine)
        sigma[low:high] = self._strategy(mine, player)
        self._reach[player] = None  # its strategy changed

    def iterate(self, n: int = 1) -> None:
        """Run ``n`` iterations, each updating Jekyll then Hyde.

        Args:
            n: how many iterations.

        Raises:
            ValueError: ``n`` is negative.
        """
        if n < 0:
            raise ValueError(f"the number of iterations must be 0 or more, got {n}")
        start = time.process_time()
        for _ in range(n):
            weight = float(max(self.iterations + 1 - self.delay, 0))
            for player in (0, 1):
                self._update(player, weight)
            self.iterations += 1
        self.seconds += time.process_time() - start

    def _split(self, flat: np.ndarray) -> list[np.ndarray]:
        """Per information set of ``tree.infosets``, its slots of ``flat``."""
        return [
            flat[start : start + len(infoset.actions)]
            for start, infoset in zip(self.offset.tolist(), self.tree.infosets, strict=True)
        ]

    def average_strategies(self) -> list[np.ndarray]:
        """The average strategy, the one that converges to an equilibrium.

        Returns:
            Per information set of ``tree.infosets``, the probabilities of its actions
            (in the order of ``InfoSet.actions``; uniform where the player never
            reached it), as ``lp.Solution.strategies``.
        """
        return self._split(self._average_flat())

    def _average_flat(self) -> np.ndarray:
        """The average strategy per slot."""
        bounds = enumerate(self._bounds)
        return np.concatenate(
            [self._strategy(self.average[low:high], p) for p, (low, high) in bounds]
        )

    def current_strategies(self) -> list[np.ndarray]:
        """The strategy that the next iteration plays, in the form of ``average_strategies``.

        Returns:
            Per information set, the probabilities of its actions.
        """
        return self._split(self.current()[:-1])

    def value(self, strategies: list[np.ndarray] | None = None) -> float:
        """Jekyll's expected reward (R4) when both players play ``strategies``.

        Args:
            strategies: per information set of ``tree.infosets``, the probabilities of
                its actions; the average strategy if not given.

        Returns:
            The expectation over every deal.

        Raises:
            ValueError: ``strategies`` does not hold one probability per action.
        """
        sigma = np.ones(self.slots + 1)
        if strategies is None:
            sigma[:-1] = self._average_flat()
        elif len(strategies) != len(self.tree.infosets):
            raise ValueError(f"{len(strategies)} strategies for {len(self.tree.infosets)} sets")
        else:
            for start, infoset, probabilities in zip(
                self.offset.tolist(), self.tree.infosets, strategies, strict=True
            ):
                if len(probabilities) != len(infoset.actions):
                    raise ValueError(f"{len(probabilities)} probabilities at {infoset.key!r}")
                sigma[start : start + len(infoset.actions)] = probabilities
        low, high = self._ranges[0]
        return float(self._values(sigma)[low:high].mean())

    def _fingerprint(self) -> str:
        """What a saved state must match: the variant and the tree's sizes."""
        tree = self.tree
        return json.dumps(
            {"variant": tree.variant.to_json(), "nodes": tree.size, "slots": self.slots},
            sort_keys=True,
        )

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the state (regrets, average weights, iterations, CPU seconds) to an .npz.

        The file is written whole to a temporary file, then renamed over ``path``: an
        interrupted save leaves the previous state.

        Args:
            path: the file.

        Raises:
            OSError: the file cannot be written (``common.files.WriteError``).
        """
        buffer = io.BytesIO()
        np.savez(
            buffer,
            format=np.array(STATE_FORMAT),
            tree=np.array(self._fingerprint()),
            regrets=self.regrets,
            average=self.average,
            iterations=np.array(self.iterations),
            delay=np.array(self.delay),
            seconds=np.array(self.seconds),
        )
        atomic_write_bytes(pathlib.Path(path), buffer.getvalue())

    @classmethod
    def load(cls, tree: GameTree, path: str | os.PathLike[str]) -> CFRPlus:
        """A solver that continues the state ``save`` wrote for the same tree.

        Args:
            tree: the tree the state was computed on (the same variant and picks).
            path: the file.

        Returns:
            The solver, which iterates on exactly as the saved one would have.

        Raises:
            ValueError: the file is not a saved state, or is one of another tree.
        """
        try:
            with np.load(path, allow_pickle=False) as data:
                version = int(data["format"])
                fingerprint = str(data["tree"])
                regrets = np.asarray(data["regrets"], dtype=np.float64)
                average = np.asarray(data["average"], dtype=np.float64)
                iterations, delay = int(data["iterations"]), int(data["delay"])
                seconds = float(data["seconds"])
        except (OSError, KeyError, ValueError, TypeError) as error:
            raise ValueError(f"{path}: not a saved CFR+ state ({error})") from None
        if version != STATE_FORMAT:
            raise ValueError(f"{path}: a CFR+ state of format {version}, not {STATE_FORMAT}")
        solver = cls(tree, delay=delay)
        if fingerprint != solver._fingerprint():
            raise ValueError(f"{path}: a CFR+ state of another tree ({fingerprint})")
        if regrets.shape != (solver.slots,) or average.shape != (solver.slots,):
            raise ValueError(f"{path}: arrays of the wrong size for {solver.slots} slots")
        solver.regrets, solver.average = regrets, average
        solver._sigma = None
        solver.iterations, solver.seconds = iterations, seconds
        return solver


def run_cfr(
    solver: CFRPlus,
    iterations: int,
    callback: Callable[[CFRPlus], T] | None = None,
    at_iterations: Iterable[int] = (),
    at_seconds: Iterable[float] = (),
) -> list[T]:
    """Iterate until ``solver.iterations`` reaches ``iterations``, calling back on the way.

    The callback (an exact score of the average strategy, a save) runs outside the CPU
    clock of ``solver.seconds``, after the iteration that reaches each of
    ``at_iterations`` and after the first iteration that brings ``solver.seconds`` to
    or past each of ``at_seconds``; once per iteration at most, and again at the end
    if it has not just run.

    Args:
        solver: the solver, new or loaded (``CFRPlus.load``): a resumed run counts on.
        iterations: the total number of iterations to reach.
        callback: called with the solver; nothing is called if not given.
        at_iterations: iteration counts to call back at.
        at_seconds: CPU seconds of iterating to call back at.

    Returns:
        What each call of the callback returned, in order.
    """
    counts = sorted(i for i in set(at_iterations) if i > solver.iterations)
    times = sorted(s for s in set(at_seconds) if s > solver.seconds)
    results: list[T] = []
    called = solver.iterations
    while solver.iterations < iterations:
        solver.iterate(1)
        due = False
        while counts and counts[0] <= solver.iterations:
            counts.pop(0)
            due = True
        while times and times[0] <= solver.seconds:
            times.pop(0)
            due = True
        if due and callback is not None:
            results.append(callback(solver))
            called = solver.iterations
    if callback is not None and called != solver.iterations:
        results.append(callback(solver))
    return results


def strategy_by_key(tree: GameTree, strategies: list[np.ndarray]) -> Strategy:
    """Strategies of ``tree``'s information sets, to be played on another tree of the
    same variant (the one without canonical picks, say), matched by information state.

    Args:
        tree: the tree the strategies are per information set of.
        strategies: per information set of ``tree.infosets``, the probabilities of its
            actions (``CFRPlus.average_strategies``, ``lp.Solution.strategies``).

    Returns:
        A ``best_response.Strategy`` for either seat: at an information set, the
        probabilities of ``tree``'s set with the same key, placed by action (0 for an
        action that ``tree``'s set lacks, a pick out of ascending order).

    Raises:
        KeyError: (when the strategy is asked) an information state that ``tree`` lacks.
    """
    table = {
        infoset.key: dict(zip(infoset.actions, probabilities.tolist(), strict=True))
        for infoset, probabilities in zip(tree.infosets, strategies, strict=True)
    }

    def strategy(k: int, infoset: InfoSet) -> np.ndarray:
        known = table[infoset.key]
        return np.array([known.get(action, 0.0) for action in infoset.actions])

    return strategy
