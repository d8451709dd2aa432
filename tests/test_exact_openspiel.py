"""The exact score agrees with OpenSpiel's ``nash_conv`` on the tiny variant, to 1e-9.

``score = (nash_conv + 2) / 4``: OpenSpiel sums both seats' gains in reward (+1/-1),
the exact score averages both seats' win probabilities. The policies: uniform random,
and two trained by OpenSpiel's own solvers (a few iterations of CFR+ and of CFR, so
that neither is an equilibrium), played here through the ``OpenSpielAgent`` adapter.
"""

from __future__ import annotations

import importlib.util
import pathlib

import pytest

pyspiel = pytest.importorskip(
    "pyspiel", reason="OpenSpiel is in the openspiel extra: pip install -e '.[openspiel]'"
)

from open_spiel.python import policy as os_policy  # noqa: E402
from open_spiel.python.algorithms import cfr, exploitability  # noqa: E402

from jekyll_hyde_agents.external.openspiel_policy import OpenSpielAgent  # noqa: E402
from jekyll_hyde_agents.openspiel_bots import load_game  # noqa: E402
from jekyll_hyde_agents.tabular import TabularAgent  # noqa: E402
from jekyll_hyde_env.engine.variant import TINY  # noqa: E402
from jekyll_hyde_train.exact.best_response import exact_score  # noqa: E402
from jekyll_hyde_train.exact.solve import solve_variant  # noqa: E402
from jekyll_hyde_train.exact.strategies import agent_strategy  # noqa: E402
from jekyll_hyde_train.exact.tree import build_tree  # noqa: E402


@pytest.fixture(scope="module")
def game():
    return load_game(TINY)


@pytest.fixture(scope="module")
def tree():
    return build_tree(TINY)


def trained(game, solver_class, iterations):
    solver = solver_class(game)
    for _ in range(iterations):
        solver.evaluate_and_update_policy()
    return solver.average_policy()


def test_the_game_takes_the_variant_parameter(game):
    assert str(game) == "python_jekyll_hyde(variant=tiny)"
    assert game.max_chance_nodes_in_history() == 4
    state = game.new_initial_state()
    assert [card for card, _ in state.chance_outcomes()] == [0, 1, 7, 8, 14, 15]
    with pytest.raises(pyspiel.SpielError, match="unknown variant 'huge'"):
        pyspiel.load_game("python_jekyll_hyde", {"variant": "huge"})


@pytest.mark.parametrize(
    "make_policy",
    [
        pytest.param(lambda game: os_policy.UniformRandomPolicy(game), id="uniform"),
        pytest.param(lambda game: trained(game, cfr.CFRPlusSolver, 2), id="cfr+ 2 iterations"),
        pytest.param(lambda game: trained(game, cfr.CFRSolver, 1), id="cfr 1 iteration"),
    ],
)
def test_the_exact_score_is_openspiels_nash_conv(game, tree, make_policy):
    policy = make_policy(game)
    nash_conv = exploitability.nash_conv(game, policy)
    agent = OpenSpielAgent(policy, deterministic=False)
    score = exact_score(tree, agent_strategy(agent, tree, 0), agent_strategy(agent, tree, 1))
    assert score.score > 0.5 + 1e-3  # none of these is an equilibrium
    assert abs(score.score - (nash_conv + 2) / 4) < 1e-9


def test_openspiel_finds_no_gain_against_the_solvers_equilibrium(game, tmp_path, monkeypatch):
    """OpenSpiel's own best response (``nash_conv``) gains nothing against the equilibrium
    that ``solve`` found, played through benchmarks/openspiel_nash_conv.py's adapter."""
    benchmarks = pathlib.Path(__file__).resolve().parents[1] / "benchmarks"
    monkeypatch.syspath_prepend(str(benchmarks))
    spec = importlib.util.spec_from_file_location(
        "openspiel_nash_conv", benchmarks / "openspiel_nash_conv.py"
    )
    check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check)
    solve_variant(TINY, tmp_path / "tiny")
    equilibrium = check.TabularPolicy(game, TabularAgent(tmp_path / "tiny" / "tabular.npz"))
    assert abs(exploitability.nash_conv(game, equilibrium)) < 1e-9
