"""CFR+ on the whole tree, the reference of the exploitability curves.

Not a learning peer: CFR+ (``jekyll_hyde_train.exact.cfr``) holds a regret for every
(information set, action) pair of the tree, which only a small variant allows. It
shows how fast an exact method closes in on equilibrium for the same CPU.

Its cost starts with building the tree (``build_tree(variant,
canonical_picks=True)``, a few CPU-minutes on ``small``); a request that comes
before the tree is built is answered at once with uniform play, which is what CFR+
plays before its first iteration. Afterwards each request saves the solver's state
(``CFRPlus.save``) between two iterations, and the checkpoint plays the average
strategy, matched to the scoring tree by information state.
"""

from __future__ import annotations

import functools
import pathlib

import numpy as np
from protocol import Requests

from jekyll_hyde_env.engine.variant import Variant
from jekyll_hyde_train.exact.cfr import CFRPlus
from jekyll_hyde_train.exact.table import InfosetTable
from jekyll_hyde_train.exact.tree import GameTree, build_tree

NAME = "cfr-plus"
LABEL = (
    "CFR+ (this project's, numpy, alternating updates, linear averaging) on the whole "
    "tree with canonical picks; checkpoint: the average strategy"
)
STATE = "cfr.npz"
UNIFORM = "uniform"
"""The file a checkpoint holds before the first iteration: it plays uniformly."""


def train(out: pathlib.Path, variant: Variant, seed: int, requests: Requests) -> None:
    """Build the tree, then iterate CFR+ until stopped, answering requests.

    Args:
        out: the trainer's folder.
        variant: the version of the game.
        seed: unused: CFR+ draws nothing at random.
        requests: the checkpoint requests.
    """

    def uniform(folder: pathlib.Path) -> None:
        (folder / UNIFORM).write_text("CFR+ has not finished an iteration yet\n")

    building = requests.serve(uniform, every=0.05)
    try:
        tree = build_tree(variant, canonical_picks=True)
    finally:
        building.stop()
    solver = CFRPlus(tree)
    while True:
        name = requests.pending()
        if name is not None:
            requests.save(
                name, uniform if not solver.iterations else functools.partial(_save, solver)
            )
        solver.iterate(1)


def _save(solver: CFRPlus, folder: pathlib.Path) -> None:
    solver.save(folder / STATE)


@functools.lru_cache(maxsize=1)
def _canonical_tree(variant: Variant) -> GameTree:
    return build_tree(variant, canonical_picks=True)


def probabilities(checkpoint: pathlib.Path, table: InfosetTable) -> np.ndarray:
    """The checkpoint's average strategy at every information set of ``table``.

    Args:
        checkpoint: a checkpoint folder written by ``train``.
        table: the information sets (of the tree without canonical picks).

    Returns:
        float64 (size, 28); uniform over the legal actions before the first
        iteration, and at a set that canonical picks never reach (picks out of
        ascending order, which the strategy itself never makes).
    """
    legal = table.legal()
    out = legal / legal.sum(axis=1, keepdims=True)
    if (checkpoint / UNIFORM).is_file():
        return out
    tree = _canonical_tree(table.tree.variant)
    solver = CFRPlus.load(tree, checkpoint / STATE)
    strategies = solver.average_strategies()
    rows = {s.key: (s.actions, p) for s, p in zip(tree.infosets, strategies, strict=True)}
    for k, infoset in enumerate(table.tree.infosets):
        found = rows.get(infoset.key)
        if found is not None:
            out[k] = 0.0
            out[k, found[0]] = found[1]
    return out
