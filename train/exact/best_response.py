"""Exact best responses and exact exploitability on a small variant's whole tree.

A fixed strategy for one seat (an agent's action probabilities at each of its views)
leaves the other seat a one-player problem. Its best response picks, at each of its
information sets, the action with the highest value summed over the histories of
that set, each weighted by the probability that chance and the fixed strategy reach
it (the responder's own choices aside); the values below come first. This is the
textbook computation (OpenSpiel's ``best_response`` does the same), exact up to
floating point, with nothing trained or sampled.

The *exact score* is the counterpart of ``jekyll-hyde exploit``'s ABR score: the mean
over the two seats of the best response's probability of winning. It is 0.5 at an
equilibrium and above it otherwise, and ``score = (nash_conv + 2) / 4`` where
``nash_conv`` is OpenSpiel's sum of both seats' gains in reward (R4, +1/-1).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from jekyll_hyde_env.engine.cards import AGENTS
from jekyll_hyde_train.exact.tree import TERMINAL, GameTree, InfoSet

Strategy = Callable[[int, InfoSet], np.ndarray]
"""A fixed seat's play: (information set index, the set) -> the probabilities of the
set's actions, in their order."""


@dataclass
class SeatResponse:
    """The best response in one seat against the other seat's fixed strategy.

    Args:
        seat: the responder's seat, 0 Jekyll or 1 Hyde.
        win_probability: the responder's probability of winning.
        policy: the responder's action at each of its information sets that the fixed
            strategy and chance reach (information set index -> action id).
    """

    seat: int
    win_probability: float
    policy: dict[int, int]


@dataclass
class ExactScore:
    """Exact exploitability of a strategy profile (``exact_score``).

    Args:
        responses: the best response in each seat, Jekyll's first.
    """

    responses: tuple[SeatResponse, SeatResponse]

    @property
    def score(self) -> float:
        """The mean over the two seats of the best response's win probability."""
        return (self.responses[0].win_probability + self.responses[1].win_probability) / 2

    @property
    def nash_conv(self) -> float:
        """OpenSpiel's ``nash_conv`` of the same profile, ``4 * score - 2``."""
        return 4.0 * self.score - 2.0

    def to_json(self) -> dict[str, object]:
        """The score as JSON values.

        Returns:
            ``{"score": ..., "nash_conv": ..., "seats": {"jekyll": p, "hyde": p}}``, each
            ``p`` the best response's win probability in that seat.
        """
        return {
            "score": float(self.score),
            "nash_conv": float(self.nash_conv),
            "seats": {AGENTS[r.seat]: float(r.win_probability) for r in self.responses},
        }


def best_response(tree: GameTree, seat: int, strategy: Strategy) -> SeatResponse:
    """The exact best response of ``seat`` to the other seat's ``strategy``.

    Args:
        tree: the variant's tree (built without ``canonical_picks``, so that the fixed
            seat may pick in any order).
        seat: the responder, 0 Jekyll or 1 Hyde.
        strategy: the other seat's probabilities; asked only at information sets that
            chance and the strategy itself reach.

    Returns:
        The responder's win probability and its actions.

    Raises:
        ValueError: ``strategy`` gives a wrong number of probabilities, a negative one,
            or ones that do not sum to 1 (within 1e-6).
    """
    sign = 1.0 if seat == 0 else -1.0
    fixed = 1 - seat
    count = tree.size
    reach = np.zeros(count)
    probabilities: dict[int, np.ndarray] = {}

    def fixed_probabilities(k: int) -> np.ndarray:
        found = probabilities.get(k)
        if found is None:
            infoset = tree.infosets[k]
            found = np.asarray(strategy(k, infoset), dtype=np.float64)
            _check(found, infoset)
            probabilities[k] = found
        return found

    chance = 1.0 / tree.deals
    stack = [(root, chance) for root in tree.deal_roots]
    while stack:  # the reach of chance and the fixed seat, top down
        node, weight = stack.pop()
        reach[node] = weight
        player = tree.player[node]
        if player == TERMINAL or weight == 0.0:
            continue
        kids = tree.children[node]
        if player == fixed:
            for child, p in zip(kids, fixed_probabilities(tree.infoset[node]), strict=True):
                stack.append((child, weight * p))
        else:
            stack.extend((child, weight) for child in kids)

    values: dict[int, float] = {}
    choice: dict[int, int] = {}

    def value(node: int) -> float:
        found = values.get(node)
        if found is not None:
            return found
        player = tree.player[node]
        if player == TERMINAL:
            result = sign * tree.utility[node]
        elif reach[node] == 0.0:
            result = 0.0  # never reached: its value weighs nothing above it
        elif player == fixed:
            probs = fixed_probabilities(tree.infoset[node])
            result = sum(
                p * value(child)
                for child, p in zip(tree.children[node], probs, strict=True)
                if p > 0.0
            )
        else:
            k = tree.infoset[node]
            result = value(tree.children[node][best(k)])
        values[node] = result
        return result

    def best(k: int) -> int:
        found = choice.get(k)
        if found is not None:
            return found
        infoset = tree.infosets[k]
        totals = np.zeros(len(infoset.actions))
        for node in infoset.nodes:
            if reach[node] > 0.0:
                for i, child in enumerate(tree.children[node]):
                    totals[i] += reach[node] * value(child)
        found = choice[k] = int(np.argmax(totals))
        return found

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20_000))
    try:
        total = sum(chance * value(root) for root in tree.deal_roots)
    finally:
        sys.setrecursionlimit(limit)
    policy = {k: tree.infosets[k].actions[i] for k, i in choice.items()}
    return SeatResponse(seat, (total + 1.0) / 2.0, policy)


def _check(probabilities: np.ndarray, infoset: InfoSet) -> None:
    where = f"{AGENTS[infoset.player]}'s view {infoset.key!r}"
    if probabilities.shape != (len(infoset.actions),):
        raise ValueError(
            f"a strategy gave {probabilities.shape} probabilities at {where}, "
            f"which has {len(infoset.actions)} actions {infoset.actions}"
        )
    if (probabilities < 0).any() or abs(probabilities.sum() - 1.0) > 1e-6:
        raise ValueError(
            f"a strategy's probabilities at {where} must be >= 0 and sum to 1, "
            f"got {probabilities.tolist()}"
        )


def exact_score(tree: GameTree, jekyll: Strategy, hyde: Strategy) -> ExactScore:
    """The exact exploitability of a profile: a best response in each seat.

    Args:
        tree: the variant's tree (without ``canonical_picks``).
        jekyll: Jekyll's strategy, which Hyde's best response faces.
        hyde: Hyde's strategy, which Jekyll's best response faces.

    Returns:
        Both responses and their mean win probability (``ExactScore.score``).
    """
    return ExactScore((best_response(tree, 0, hyde), best_response(tree, 1, jekyll)))
