"""Exact answers on the tiny variant: the sequence-form LP, exact best responses, the
tabular strategy file and the commands ``solve`` and ``exploit --exact``."""

from __future__ import annotations

import json

import numpy as np
import pytest

from jekyll_hyde_agents.random_agent import RandomAgent
from jekyll_hyde_agents.sources import load_agent
from jekyll_hyde_agents.tabular import TabularAgent
from jekyll_hyde_app.cli import main
from jekyll_hyde_env.engine import apply_action, is_terminal, legal_actions, new_game, player_view
from jekyll_hyde_env.engine.variant import TINY
from jekyll_hyde_train.exact.best_response import best_response, exact_score
from jekyll_hyde_train.exact.lp import solve
from jekyll_hyde_train.exact.solve import solve_variant
from jekyll_hyde_train.exact.strategies import agent_strategy
from jekyll_hyde_train.exact.table import InfosetTable
from jekyll_hyde_train.exact.tree import (
    TERMINAL,
    TreeTooLarge,
    build_tree,
    check_size,
    count_deals,
)


@pytest.fixture(scope="module")
def tree():
    return build_tree(TINY)


@pytest.fixture(scope="module")
def solved(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tiny")
    return folder, solve_variant(TINY, folder)


def uniform(k, infoset):
    return np.full(len(infoset.actions), 1.0 / len(infoset.actions))


def expected_value(tree, jekyll, hyde) -> float:
    """Jekyll's expected reward when both strategies play: the plain tree expectation."""
    strategies = (jekyll, hyde)

    def value(node):
        player = tree.player[node]
        if player == TERMINAL:
            return tree.utility[node]
        k = tree.infoset[node]
        probs = strategies[player](k, tree.infosets[k])
        return sum(p * value(c) for c, p in zip(tree.children[node], probs, strict=True))

    return sum(value(root) for root in tree.deal_roots) / tree.deals


def test_the_tree_holds_every_deal(tree):
    assert tree.deals == count_deals(TINY) == 21 * 10
    assert len(tree.deal_roots) == tree.deals
    assert set(tree.utility[n] for n in range(tree.size) if tree.player[n] == TERMINAL) == {
        -1.0,
        1.0,
    }


def test_both_programs_find_the_same_game_value_and_it_is_not_trivial():
    solution = solve(build_tree(TINY, canonical_picks=True))
    assert abs(solution.value - solution.value_hyde) < 1e-9
    assert 0.05 < solution.jekyll_win_probability < 0.95  # neither side always wins


def test_the_equilibrium_is_unexploitable_and_its_value_is_the_lp_value(tree, solved):
    folder, result = solved
    agent = TabularAgent(folder)
    score = exact_score(tree, agent_strategy(agent, tree, 0), agent_strategy(agent, tree, 1))
    assert 0.5 - 1e-9 <= score.score <= 0.5 + 1e-6
    # Each seat's best response earns the game value: the LP and the tree agree.
    assert score.responses[0].win_probability == pytest.approx(
        result["jekyll_win_probability"], abs=1e-9
    )
    assert result["exploitability"] <= 1e-6
    assert json.loads((folder / "solve.json").read_text())["game_value"] == result["game_value"]


def test_the_equilibrium_covers_exactly_the_views_it_has_probabilities_for(tree, solved):
    agent = TabularAgent(solved[0])
    table = InfosetTable.build(tree)
    legal = table.legal()
    covered = 0
    for k in range(table.size):
        view = table.view(k)
        actions = [int(a) for a in np.flatnonzero(legal[k])]
        if agent.covers(view):
            covered += 1
            assert agent.action_probabilities(view, actions).sum() == pytest.approx(1.0)
        else:
            with pytest.raises(ValueError, match="no entry for this view"):
                agent.action_probabilities(view, actions)
    assert covered > table.size // 2
    full_game = player_view(new_game(np.random.default_rng(0)), 0)
    assert not agent.covers(full_game)  # a view of another variant


def test_a_best_response_does_at_least_as_well_as_any_strategy(tree):
    value = expected_value(tree, uniform, uniform)
    jekyll = best_response(tree, 0, uniform)
    hyde = best_response(tree, 1, uniform)
    assert jekyll.win_probability >= (value + 1) / 2 + 0.05
    assert hyde.win_probability >= (1 - value) / 2 + 0.05
    # Playing the best response's actions against the same strategy earns exactly its value.
    policy = jekyll.policy

    def play(k, infoset):
        out = np.zeros(len(infoset.actions))
        out[infoset.actions.index(policy.get(k, infoset.actions[0]))] = 1.0
        return out

    assert (expected_value(tree, play, uniform) + 1) / 2 == pytest.approx(
        jekyll.win_probability, abs=1e-12
    )


def test_random_is_enumerated_as_uniform(tree):
    a = exact_score(tree, uniform, uniform)
    b = exact_score(
        tree, agent_strategy(RandomAgent(), tree, 0), agent_strategy(RandomAgent(), tree, 1)
    )
    assert a.score == b.score and a.score > 0.6
    assert a.nash_conv == pytest.approx(4 * a.score - 2)


def test_the_tabular_agent_plays_its_variant_and_refuses_another(solved):
    folder, _ = solved
    agent = load_agent(str(folder))
    assert isinstance(agent, TabularAgent) and agent.variant == TINY
    rng = np.random.default_rng(0)
    state = new_game(rng, variant=TINY)
    while not is_terminal(state):
        legal = legal_actions(state)
        apply_action(state, agent.act(player_view(state, state.to_act), legal))
    full = new_game(rng)
    with pytest.raises(ValueError, match="plays variant tiny, not full"):
        agent.act(player_view(full, full.to_act), legal_actions(full))


def test_too_big_a_variant_is_refused_before_any_work():
    with pytest.raises(TreeTooLarge, match="variant full is too big .* the limit is 30,000,000"):
        check_size(TINY.__class__())


def test_solve_and_exploit_exact_from_the_command_line(tmp_path, capsys):
    out = tmp_path / "eq"
    assert main(["solve", "tiny", "--out", str(out)]) == 0
    assert "Jekyll wins 0.52976" in capsys.readouterr().out
    result = tmp_path / "exact.json"
    args = ["exploit", str(out), "--variant", "tiny", "--exact", "--out", str(result)]
    assert main(args) == 0
    data = json.loads(result.read_text())
    assert abs(data["score"] - 0.5) <= 1e-6 and data["variant"]["name"] == "tiny"
    assert main(["exploit", "random", "--variant", "tiny", "--exact"]) == 0
    assert "0.716666667" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["exploit", "ismcts:50", "--variant", "tiny", "--exact"], "cannot be enumerated"),
        (["exploit", "random", "--variant", "full", "--exact"], "too big for an exact"),
        (["exploit", "champion", "--variant", "tiny", "--exact"], "trained on variant full"),
        (["exploit", "random", "--exact"], "--exact needs --variant"),
    ],
)
def test_bad_exact_requests_end_in_one_line_and_exit_2(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_an_unknown_variant_is_refused_by_the_parser(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["solve", "huge", "--out", "unused"])
    assert stop.value.code == 2
    assert "unknown variant 'huge'" in capsys.readouterr().err


def test_the_command_line_limit_is_the_trees(tmp_path, capsys):
    from jekyll_hyde_app.cli import build_parser
    from jekyll_hyde_train.exact.tree import MAX_NODES

    assert build_parser().parse_args(["solve", "tiny", "--out", "x"]).max_nodes == MAX_NODES
    out = tmp_path / "eq"
    assert main(["solve", "tiny", "--out", str(out), "--max-nodes", "1000"]) == 2
    assert "the limit is 1,000" in capsys.readouterr().err
    assert not out.exists()  # refused before anything is written
    with pytest.raises(SystemExit):
        main(["solve", "tiny", "--out", str(out), "--max-nodes", "0"])
    assert "must be 1 to 200,000,000, got 0" in capsys.readouterr().err


def test_canonical_picks_keep_every_set_of_cards_once():
    """Two-card Greed swaps and the potion rule's forced potion (three potions in a deck of
    six): every set of picks is one ascending sequence, never a dead end."""
    from jekyll_hyde_env.engine.variant import parse_variant

    variant = parse_variant("values=1,potions=2+3+4,hand=3,rounds=1,exchange=1,track=2")
    canonical = build_tree(variant, canonical_picks=True)
    assert all(infoset.actions for infoset in canonical.infosets)
    full = build_tree(variant)
    assert canonical.size < full.size  # the orders of the same picks are gone
    solution = solve(canonical)
    assert abs(solution.value - solution.value_hyde) < 1e-9
    # The value does not depend on the order the picks are made in.
    pairs = zip(canonical.infosets, solution.strategies, strict=True)
    table = {i.key: (i.actions, p) for i, p in pairs}

    def strategy(k, infoset):
        actions, probabilities = table[infoset.key]
        out = np.zeros(len(infoset.actions))
        for action, p in zip(actions, probabilities, strict=True):
            out[infoset.actions.index(action)] = p
        return out

    score = exact_score(full, strategy, strategy)
    assert 0.5 - 1e-9 <= score.score <= 0.5 + 1e-6
    assert score.responses[0].win_probability == pytest.approx(
        solution.jekyll_win_probability, abs=1e-9
    )


def test_an_interrupted_solve_keeps_its_programs_and_resume_continues_it(tmp_path, monkeypatch):
    import jekyll_hyde_train.exact.lp as lp

    out = tmp_path / "eq"
    real = lp._solve_player
    calls = []

    def interrupted_second(*args):
        calls.append(1)
        if len(calls) == 2:  # Hyde's program: Ctrl-C
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(lp, "_solve_player", interrupted_second)
    with pytest.raises(KeyboardInterrupt):
        solve_variant(TINY, out)
    assert (out / "plan-jekyll.npz").is_file() and not (out / "plan-hyde.npz").exists()
    monkeypatch.setattr(lp, "_solve_player", real)
    with pytest.raises(ValueError, match="holds an interrupted solve .* add --resume"):
        solve_variant(TINY, out)
    calls.clear()
    monkeypatch.setattr(lp, "_solve_player", lambda *args: calls.append(1) or real(*args))
    result = solve_variant(TINY, out, resume=True)
    assert len(calls) == 1  # only Hyde's program was solved again
    assert abs(result["exploitability"]) <= 1e-6
    assert not (out / "plan-jekyll.npz").exists()  # the equilibrium is saved whole
