"""CFR+ on the tiny variant: it converges to the LP's equilibrium, it computes what the
textbook recursion computes, and a saved state resumes bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from jekyll_hyde_env.engine.variant import TINY, parse_variant
from jekyll_hyde_train.exact.best_response import exact_score
from jekyll_hyde_train.exact.cfr import CFRPlus, run_cfr, strategy_by_key
from jekyll_hyde_train.exact.lp import solve
from jekyll_hyde_train.exact.tree import TERMINAL, GameTree, build_tree


@pytest.fixture(scope="module")
def canonical():
    return build_tree(TINY, canonical_picks=True)


@pytest.fixture(scope="module")
def full():
    return build_tree(TINY)


def score_of(canonical, full, strategies):
    """The exact score on the tree without canonical picks, matched by information state."""
    strategy = strategy_by_key(canonical, strategies)
    return exact_score(full, strategy, strategy)


def test_the_average_strategy_converges_to_the_lp_equilibrium(canonical, full):
    solution = solve(canonical)
    solver = CFRPlus(canonical)

    def measure(solver):
        return solver.iterations, score_of(canonical, full, solver.average_strategies())

    (_, early), (last, late) = run_cfr(solver, 200, measure, at_iterations=[10])
    assert last == solver.iterations == 200
    assert early.score > 0.505  # after 10 iterations: still exploitable
    assert 0.5 - 1e-9 <= late.score <= 0.5 + 5e-4  # measured: 0.50012
    assert late.score < early.score - 0.005  # something was learned
    value = solver.value()
    assert value == pytest.approx(solver.value(solver.average_strategies()), abs=1e-15)
    assert value == pytest.approx(solution.value, abs=1e-4)  # measured: 2e-5
    # Each seat's best response brackets the game value.
    jekyll, hyde = late.responses
    assert 1 - hyde.win_probability - 1e-9 <= solution.jekyll_win_probability
    assert solution.jekyll_win_probability <= jekyll.win_probability + 1e-9


def expected_value(tree: GameTree, strategies) -> float:
    def value(node):
        if tree.player[node] == TERMINAL:
            return tree.utility[node]
        probabilities = strategies[tree.infoset[node]]
        return sum(p * value(c) for c, p in zip(tree.children[node], probabilities, strict=True))

    return sum(value(root) for root in tree.deal_roots) / tree.deals


def walk(tree: GameTree, node, reach, sigma, i, own, gains) -> float:
    """Jekyll's expected reward from ``node``; ``i``'s own reach and regrets on the way."""
    if tree.player[node] == TERMINAL:
        return tree.utility[node]
    k, player = tree.infoset[node], tree.player[node]
    values = []
    for child, p in zip(tree.children[node], sigma[k], strict=True):
        after = list(reach)
        after[player] *= p
        values.append(walk(tree, child, after, sigma, i, own, gains))
    values = np.array(values)
    v = float(sigma[k] @ values)
    if player == i:
        own.setdefault(k, reach[i])
        gains[k] = gains.get(k, 0.0) + reach[1 - i] / tree.deals * (values - v)
    return v


def reference_cfr_plus(tree: GameTree, iterations: int, delay: int):
    """Alternating CFR+ by the textbook recursion, one history at a time."""
    regrets = [np.zeros(len(i.actions)) for i in tree.infosets]
    average = [np.zeros(len(i.actions)) for i in tree.infosets]

    def matched(r):
        total = r.sum()
        return r / total if total > 0 else np.full(len(r), 1.0 / len(r))

    for t in range(1, iterations + 1):
        for i in (0, 1):
            sigma = [matched(r) for r in regrets]
            own: dict[int, float] = {}
            gains: dict[int, np.ndarray] = {}
            for root in tree.deal_roots:
                walk(tree, root, [1.0, 1.0], sigma, i, own, gains)
            sign = 1.0 if i == 0 else -1.0
            for k, gain in gains.items():
                average[k] += max(t - delay, 0) * own[k] * sigma[k]
                regrets[k] = np.maximum(regrets[k] + sign * gain, 0.0)
    return regrets, average


def test_the_vectorized_passes_compute_the_textbook_recursion(canonical):
    solver = CFRPlus(canonical, delay=1)
    solver.iterate(3)
    regrets, average = reference_cfr_plus(canonical, 3, delay=1)
    for k, start in enumerate(solver.offset.tolist()):
        size = len(canonical.infosets[k].actions)
        assert np.allclose(solver.regrets[start : start + size], regrets[k], rtol=1e-9, atol=1e-15)
        assert np.allclose(solver.average[start : start + size], average[k], rtol=1e-9, atol=1e-15)
    strategies = solver.current_strategies()
    assert solver.value(strategies) == pytest.approx(
        expected_value(canonical, strategies), abs=1e-12
    )


def test_a_saved_state_resumes_bit_for_bit(canonical, tmp_path):
    whole = CFRPlus(canonical, delay=2)
    whole.iterate(30)
    first = CFRPlus(canonical, delay=2)
    first.iterate(13)
    path = tmp_path / "cfr.npz"
    first.save(path)
    assert [p.name for p in tmp_path.iterdir()] == ["cfr.npz"]  # no temporary file left
    resumed = CFRPlus.load(canonical, path)
    assert resumed.iterations == 13 and resumed.delay == 2 and resumed.seconds == first.seconds
    resumed.iterate(17)
    assert resumed.iterations == whole.iterations == 30
    assert np.array_equal(resumed.regrets, whole.regrets)
    assert np.array_equal(resumed.average, whole.average)
    for a, b in zip(resumed.average_strategies(), whole.average_strategies(), strict=True):
        assert np.array_equal(a, b)


def test_a_state_loads_only_onto_its_tree(canonical, tmp_path):
    other = build_tree(parse_variant("values=1,potions=3,hand=2,rounds=1,exchange=1,track=2"))
    path = tmp_path / "cfr.npz"
    CFRPlus(other).save(path)
    with pytest.raises(ValueError, match="a CFR\\+ state of another tree"):
        CFRPlus.load(canonical, path)
    path.write_bytes(b"not an npz")
    with pytest.raises(ValueError, match="not a saved CFR\\+ state"):
        CFRPlus.load(canonical, path)


def test_run_cfr_calls_back_at_the_chosen_iterations_and_counts_on_after_a_resume():
    tree = build_tree(parse_variant("values=1,potions=3,hand=2,rounds=1,exchange=1,track=2"))
    solver = CFRPlus(tree)
    seen = run_cfr(solver, 7, lambda s: s.iterations, at_iterations=[5, 2, 2, 0])
    assert seen == [2, 5, 7]  # and once at the end
    assert run_cfr(solver, 9, lambda s: s.iterations, at_iterations=[3, 9]) == [9]
    before = solver.seconds
    clock = run_cfr(solver, 12, lambda s: s.seconds, at_seconds=[before / 2, before + 1e-9])
    assert len(clock) == 2 and before < clock[0] <= clock[1] == solver.seconds
    assert run_cfr(solver, 12, lambda s: s.iterations) == []  # nothing left to do
    with pytest.raises(ValueError, match="0 or more"):
        CFRPlus(tree, delay=-1)
