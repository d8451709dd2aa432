"""The whole game tree of a small variant, with each player's information sets.

``build_tree(variant)`` plays every deal and every legal action with the rules engine
and keeps the tree as flat arrays: for each node its kind (a player's decision or
the end of the game), its information set, its children and, at the end, Jekyll's
reward (R4). The root is the deal (R2.1): every deal of every round has the same
probability, so the deals are the root's children, each with probability
``1 / deals``.

A player's information set is the player's view (``engine.player_view``) written as
``engine.info_string``: what the rules let the player know (RULES.md "What each
player knows"). Two histories that the player cannot tell apart share it, which is
what an exact best response, the sequence-form LP and OpenSpiel's
``python_jekyll_hyde`` all take an information state to be.

The picks of one exchange or Greed swap (R2.2, T6b) give the same cards in any
order. ``canonical_picks=True`` lets a player pick them only in ascending card order
(the potion rule's forced potion is always the highest id still allowed): each set
of cards is then one sequence of decisions, which the sequence form needs (a player
recalls every choice), and no strategy is lost, since the order changes nothing.
A best response to an agent is computed on the tree without that restriction, where
the agent may pick in any order.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np

from jekyll_hyde_env.engine.cards import JEKYLL, POTIONS, Phase, is_potion, mask_to_ids
from jekyll_hyde_env.engine.information import info_string, player_view
from jekyll_hyde_env.engine.rules import (
    apply_action,
    deal_from_rng,
    is_terminal,
    legal_action_mask,
    returns,
    start_from_masks,
)
from jekyll_hyde_env.engine.state import GameState
from jekyll_hyde_env.engine.variant import Variant

EXCHANGE = int(Phase.EXCHANGE)
SWAP = int(Phase.SWAP)

TERMINAL = -1
"""``GameTree.player`` of a finished game."""

MAX_NODES = 30_000_000
"""The largest tree ``build_tree`` makes: a bigger variant is refused before it is
built (``count_deals`` and a sample of deals estimate its size)."""


class TreeTooLarge(ValueError):
    """A variant whose tree is beyond what an exact computation here can hold."""


@dataclass
class InfoSet:
    """One information set of one player.

    Args:
        player: 0 Jekyll or 1 Hyde.
        key: the view as ``info_string`` writes it.
        actions: the legal actions, ascending.
        parent: the player's sequence before it: the index of the player's previous
            (information set, action) pair in ``GameTree.sequences[player]``, 0 for
            the empty sequence.
        nodes: the tree nodes in it.
    """

    player: int
    key: str
    actions: list[int]
    parent: int
    nodes: list[int] = field(default_factory=list)


@dataclass
class GameTree:
    """A variant's whole tree as flat lists (``build_tree``).

    Args:
        variant: the version of the game.
        deals: the number of deals; each has probability ``1 / deals``.
        player: per node, the player to act, or ``TERMINAL``.
        infoset: per node, its information set (an index of ``infosets``), or -1.
        children: per node, its children in the order of its information set's
            actions.
        utility: per node, Jekyll's reward at the end of the game (R4), else 0.
        deal_roots: the node that opens each deal.
        infosets: every information set of both players.
        sequences: per player, the (information set, action) pairs; index 0 is the
            empty sequence, ``(-1, -1)``.
        views: per information set, one state in it (to ask an agent what it plays).
        payoffs: per end of the game, (Jekyll's sequence, Hyde's sequence, Jekyll's
            reward): the sequence form's payoff entries, before the chance weight.
    """

    variant: Variant
    deals: int
    player: list[int] = field(default_factory=list)
    infoset: list[int] = field(default_factory=list)
    children: list[list[int]] = field(default_factory=list)
    utility: list[float] = field(default_factory=list)
    deal_roots: list[int] = field(default_factory=list)
    infosets: list[InfoSet] = field(default_factory=list)
    sequences: tuple[list[tuple[int, int]], list[tuple[int, int]]] = field(
        default_factory=lambda: ([(-1, -1)], [(-1, -1)])
    )
    views: list[GameState] = field(default_factory=list)
    payoffs: list[tuple[int, int, float]] = field(default_factory=list)

    @property
    def size(self) -> int:
        """The number of nodes, the deals' root excluded."""
        return len(self.player)


def all_deals(variant: Variant) -> list[list[tuple[int, int]]]:
    """Every deal of every round, each a list of (Jekyll, Hyde) hand masks per round.

    Args:
        variant: the version of the game.

    Returns:
        The deals in a fixed order: by round-1 hands, Jekyll's first, in
        ``itertools.combinations`` order of the deck's card ids.
    """
    deck = mask_to_ids(variant.deck)
    size = variant.hand_size
    one_round = []
    for jekyll in itertools.combinations(deck, size):
        rest = [c for c in deck if c not in jekyll]
        jekyll_mask = sum(1 << c for c in jekyll)
        for hyde in itertools.combinations(rest, size):
            one_round.append((jekyll_mask, sum(1 << c for c in hyde)))
    return [list(rounds) for rounds in itertools.product(one_round, repeat=variant.rounds)]


def count_deals(variant: Variant) -> int:
    """How many deals ``all_deals`` lists, without listing them.

    Args:
        variant: the version of the game.

    Returns:
        ``(C(n, h) * C(n - h, h)) ** rounds`` for a deck of ``n`` cards and hands of ``h``.
    """
    n, h = variant.deck_size, variant.hand_size
    return (math.comb(n, h) * math.comb(n - h, h)) ** variant.rounds


def estimate_nodes(variant: Variant, samples: int = 8, seed: int = 0) -> int:
    """About how many nodes ``build_tree`` would make, from the trees of a few deals.

    Args:
        variant: the version of the game.
        samples: how many deals to play out.
        seed: chooses the deals.

    Returns:
        The sampled deals' mean tree size times the number of deals (a variant with
        more deals than ``MAX_NODES`` is not sampled: each deal is a node at least).
    """
    deals = count_deals(variant)
    if deals > MAX_NODES:
        return deals
    rng = np.random.default_rng(seed)
    total = 0
    for _ in range(samples):
        rounds = [deal_from_rng(rng, variant) for _ in range(variant.rounds)]
        total += _count(start_from_masks(rounds, variant=variant), MAX_NODES // 4)
    return total * deals // samples


def _count(state: GameState, cap: int) -> int:
    """The nodes under ``state``, stopping once past ``cap``."""
    count = 0
    stack = [state]
    while stack and count <= cap:
        node = stack.pop()
        count += 1
        if is_terminal(node):
            continue
        for action in mask_to_ids(legal_action_mask(node)):
            child = node.clone()
            apply_action(child, action)
            stack.append(child)
    return count


def check_size(variant: Variant, max_nodes: int = MAX_NODES) -> int:
    """Refuse a variant too big for an exact computation, before building anything.

    Args:
        variant: the version of the game.
        max_nodes: the most nodes allowed.

    Returns:
        The estimated number of nodes.

    Raises:
        TreeTooLarge: naming the estimate and the limit.
    """
    estimate = estimate_nodes(variant)
    if estimate > max_nodes:
        raise TreeTooLarge(
            f"variant {variant.name} is too big for an exact computation: about "
            f"{estimate:.2g} tree nodes ({count_deals(variant):.3g} deals), and the limit "
            f"is {max_nodes:,}; exact answers are for small variants such as tiny and small"
        )
    return estimate


def _legal(state: GameState, canonical_picks: bool) -> list[int]:
    """The legal actions, or with ``canonical_picks`` those of them that pick in ascending
    order and still leave a way to finish the picks (enough cards above, and a potion
    where the potion rule asks for one, R2.2)."""
    mask = legal_action_mask(state)
    phase = state.phase
    if not canonical_picks or phase not in (EXCHANGE, SWAP):
        return mask_to_ids(mask)
    player = state.to_act
    picks = state.picks[player]
    left = state.picks_left[player]
    rest = state.hands[player] & ~picks
    if picks:
        mask &= ~((1 << picks.bit_length()) - 1)  # only cards above those picked
    need_potion = phase == EXCHANGE and state.potion_rule[player] and not picks & POTIONS
    keep = []
    for card in mask_to_ids(mask):
        above = rest & ~((1 << (card + 1)) - 1)
        if above.bit_count() < left - 1:
            continue
        if need_potion and left >= 2 and not is_potion(card) and not above & POTIONS:
            continue
        keep.append(card)
    return keep


def build_tree(
    variant: Variant, canonical_picks: bool = False, max_nodes: int = MAX_NODES
) -> GameTree:
    """Play out every deal and every legal action of ``variant``.

    Args:
        variant: the version of the game.
        canonical_picks: let each exchange's and swap's picks come only in ascending
            card order (see the module's docstring).
        max_nodes: refuse a tree with more nodes.

    Returns:
        The tree.

    Raises:
        TreeTooLarge: the tree would hold more than ``max_nodes`` nodes, naming its
            size and the limit.
        ValueError: with ``canonical_picks``, a player's information set is reached
            after two different sequences of that player's own choices (a player who
            forgets), which the sequence form cannot hold. Without it, the orders of one
            set of picks reach the same view, and ``InfoSet.parent`` is the first seen.
    """
    deals = all_deals(variant)
    tree = GameTree(variant=variant, deals=len(deals))
    index: dict[str, int] = {}
    sequence_index: tuple[dict[tuple[int, int], int], dict[tuple[int, int], int]] = ({}, {})

    def new_node(player: int, utility: float = 0.0) -> int:
        if len(tree.player) >= max_nodes:
            raise TreeTooLarge(
                f"variant {variant.name} has more than {max_nodes:,} tree nodes "
                f"({len(deals):,} deals); exact computations here stop at {max_nodes:,}"
            )
        tree.player.append(player)
        tree.infoset.append(-1)
        tree.children.append([])
        tree.utility.append(utility)
        return len(tree.player) - 1

    def sequence(player: int, infoset: int, action: int) -> int:
        table = sequence_index[player]
        pair = (infoset, action)
        found = table.get(pair)
        if found is None:
            found = table[pair] = len(tree.sequences[player])
            tree.sequences[player].append(pair)
        return found

    def visit(state: GameState, sequences: tuple[int, int]) -> int:
        if is_terminal(state):
            utility = float(returns(state)[JEKYLL])
            tree.payoffs.append((sequences[0], sequences[1], utility))
            return new_node(TERMINAL, utility)
        player = state.to_act
        node = new_node(player)
        key = info_string(player_view(state, player))
        number = index.get(key)
        if number is None:
            number = index[key] = len(tree.infosets)
            actions = _legal(state, canonical_picks)
            tree.infosets.append(InfoSet(player, key, actions, sequences[player]))
            tree.views.append(state.clone())
        infoset = tree.infosets[number]
        if canonical_picks and infoset.parent != sequences[player]:
            raise ValueError(
                f"variant {variant.name}: {'Jekyll' if player == 0 else 'Hyde'} reaches one "
                "view after two different sequences of own choices; the sequence form "
                "needs a player who recalls every choice"
            )
        infoset.nodes.append(node)
        tree.infoset[node] = number
        kids = []
        for action in infoset.actions:
            child = state.clone()
            apply_action(child, action)
            after = list(sequences)
            after[player] = sequence(player, number, action)
            kids.append(visit(child, (after[0], after[1])))
        tree.children[node] = kids
        return node

    for rounds in deals:
        tree.deal_roots.append(visit(start_from_masks(rounds, variant=variant), (0, 0)))
    return tree


def chance_weights(tree: GameTree) -> np.ndarray:
    """Each deal's probability, ``1 / deals`` for all.

    Args:
        tree: the game tree.

    Returns:
        float64 (deals,) array.
    """
    return np.full(len(tree.deal_roots), 1.0 / tree.deals)
