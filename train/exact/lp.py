"""An equilibrium of a small variant by the sequence-form linear program, solved by HiGHS.

Why a linear program: in a two-player zero-sum game of perfect recall, the sequence
form (Koller, Megiddo and von Stengel) turns the equilibrium into one LP per player
whose size is the number of sequences, not of strategies. HiGHS, which scipy ships
(``scipy.optimize.linprog(method="highs")``), is a maintained solver that returns an
optimum to its tolerances in one call, with no iteration count to choose, and its
value is the game value. The answer is then checked, not trusted: the exact best
response to it (``best_response``) says how far it is from equilibrium.

Jekyll's program, with ``x`` Jekyll's realization plan, ``E x = e`` its sequence
constraints (the empty sequence has weight 1; an information set's actions share the
weight of the sequence before it), ``A`` the payoff of each pair of sequences weighted
by chance, and ``q`` one free variable per Hyde information set (and one for the root)::

    maximise  q_root   subject to   F^T q <= A^T x,   E x = e,   x >= 0

Hyde's program is the same with the roles swapped (Hyde minimises Jekyll's payoff).
Each plan gives a behaviour strategy: at an information set, each action's weight
divided by the weight of the sequence before it (uniform where that weight is 0, a
set the strategy never reaches).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.optimize import linprog

from jekyll_hyde_train.exact.tree import GameTree


@dataclass
class Solution:
    """An equilibrium of a variant (``solve``).

    Args:
        strategies: per information set of ``tree.infosets``, the probabilities of
            its actions (in the order of ``InfoSet.actions``).
        value: the game value in Jekyll's reward (R4), from Jekyll's program.
        value_hyde: the same value from Hyde's program; the two differ by the
            solver's tolerance only.
        seconds: the time both programs took.
    """

    strategies: list[np.ndarray]
    value: float
    value_hyde: float
    seconds: float

    @property
    def jekyll_win_probability(self) -> float:
        """The probability that Jekyll wins under equilibrium play, ``(value + 1) / 2``."""
        return (self.value + 1.0) / 2.0


def _constraints(tree: GameTree, player: int) -> sparse.csr_matrix:
    """The sequence constraints of ``player``: one row for the root, one per information
    set, one column per sequence."""
    sets = [k for k, infoset in enumerate(tree.infosets) if infoset.player == player]
    row_of = {k: i + 1 for i, k in enumerate(sets)}
    rows, cols, vals = [0], [0], [1.0]
    for seq, (infoset, _) in enumerate(tree.sequences[player]):
        if seq == 0:
            continue
        rows.append(row_of[infoset])
        cols.append(seq)
        vals.append(1.0)
    for k in sets:
        rows.append(row_of[k])
        cols.append(tree.infosets[k].parent)
        vals.append(-1.0)
    shape = (len(sets) + 1, len(tree.sequences[player]))
    return sparse.csr_matrix((vals, (rows, cols)), shape=shape)


def payoff_matrix(tree: GameTree) -> sparse.csr_matrix:
    """Jekyll's expected reward for each pair of sequences, chance included.

    Args:
        tree: the game tree.

    Returns:
        A sparse (Jekyll's sequences x Hyde's sequences) matrix.
    """
    chance = 1.0 / tree.deals
    rows = [s1 for s1, _, _ in tree.payoffs]
    cols = [s2 for _, s2, _ in tree.payoffs]
    vals = [u * chance for _, _, u in tree.payoffs]
    shape = (len(tree.sequences[0]), len(tree.sequences[1]))
    return sparse.csr_matrix((vals, (rows, cols)), shape=shape)


def _solve_player(
    payoff: sparse.csr_matrix, own: sparse.csr_matrix, other: sparse.csr_matrix
) -> tuple[np.ndarray, float]:
    """The maximiser's plan and value of ``max q_root s.t. other^T q <= payoff^T x,
    own x = e, x >= 0`` (``payoff`` rows are the maximiser's sequences)."""
    n_own = own.shape[1]
    n_q = other.shape[0]
    cost = np.zeros(n_own + n_q)
    cost[n_own] = -1.0  # maximise q_root
    upper = sparse.hstack([-payoff.T, other.T], format="csr")
    equal = sparse.hstack([own, sparse.csr_matrix((own.shape[0], n_q))], format="csr")
    rhs = np.zeros(own.shape[0])
    rhs[0] = 1.0
    bounds = [(0, None)] * n_own + [(None, None)] * n_q
    result = linprog(
        cost,
        A_ub=upper,
        b_ub=np.zeros(upper.shape[0]),
        A_eq=equal,
        b_eq=rhs,
        bounds=bounds,
        method="highs",
    )
    if result.status != 0:
        raise RuntimeError(f"HiGHS did not solve the sequence-form program: {result.message}")
    return np.asarray(result.x[:n_own]), float(-result.fun)


def behaviour(tree: GameTree, player: int, plan: np.ndarray) -> dict[int, np.ndarray]:
    """The behaviour strategy of a realization plan, per information set of ``player``.

    Args:
        tree: the game tree.
        player: 0 Jekyll or 1 Hyde.
        plan: the weight of each of the player's sequences.

    Returns:
        Information set index -> probabilities of its actions (uniform where the
        sequence before it has weight 0).
    """
    plan = np.maximum(plan, 0.0)
    index = {pair: seq for seq, pair in enumerate(tree.sequences[player])}
    strategies = {}
    for k, infoset in enumerate(tree.infosets):
        if infoset.player != player:
            continue
        weights = np.array([plan[index[(k, a)]] for a in infoset.actions])
        total = weights.sum()
        if total > 1e-15:
            strategies[k] = weights / total
        else:
            strategies[k] = np.full(len(weights), 1.0 / len(weights))
    return strategies


Plan = tuple[np.ndarray, float]
"""A player's realization plan and its program's value (in Jekyll's reward)."""


def solve(
    tree: GameTree,
    saved: dict[int, Plan] | None = None,
    on_plan: Callable[[int, Plan], None] | None = None,
) -> Solution:
    """An equilibrium of the tree's variant: both players' sequence-form programs.

    Args:
        tree: the variant's tree, built with ``canonical_picks=True`` (each set of
            picks one sequence, so that every player recalls every choice).
        saved: plans already found, by player (0 Jekyll, 1 Hyde), from an
            interrupted solve of the same tree; their programs are not solved again.
        on_plan: called with each player and plan as soon as its program is solved
            (``solve_variant`` saves it, so that an interrupted solve keeps it).

    Returns:
        Both players' behaviour strategies and the game value.

    Raises:
        RuntimeError: HiGHS reports no optimum (it names why).
    """
    start = time.perf_counter()
    plans = dict(saved or {})
    payoff = payoff_matrix(tree)
    jekyll_rows = _constraints(tree, 0)
    hyde_rows = _constraints(tree, 1)
    for player in (0, 1):
        if player in plans:
            continue
        if player == 0:
            x, value = _solve_player(payoff, jekyll_rows, hyde_rows)
        else:
            x, minus = _solve_player(-payoff.T.tocsr(), hyde_rows, jekyll_rows)
            value = -minus
        plans[player] = (x, value)
        if on_plan is not None:
            on_plan(player, plans[player])
    strategies_by_set = {**behaviour(tree, 0, plans[0][0]), **behaviour(tree, 1, plans[1][0])}
    strategies = [strategies_by_set[k] for k in range(len(tree.infosets))]
    return Solution(strategies, plans[0][1], plans[1][1], time.perf_counter() - start)
