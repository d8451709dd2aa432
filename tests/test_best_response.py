"""Best-response search (br:N, ISMCTS-BR), its C heuristic, and the exploit sanity checks."""

from __future__ import annotations

import json

import numpy as np
import pytest

from jekyll_hyde_agents import BestResponseAgent, HeuristicAgent, make_agent, rollout
from jekyll_hyde_app import cli
from jekyll_hyde_arena import evaluate
from jekyll_hyde_env.engine import apply_action, is_terminal, legal_actions, new_game
from jekyll_hyde_env.engine.information import player_view, sample_world

from .test_agents import play_checked
from .test_az import game_views, value_policy

pytestmark = pytest.mark.skipif(
    not rollout.core_available(), reason="the C core jekyll_hyde_agents._rollout is not compiled"
)


def test_the_c_heuristic_chooses_as_the_python_heuristic_at_every_decision():
    from jekyll_hyde_agents import _rollout

    heuristic, rng = HeuristicAgent(), np.random.default_rng(0)
    decisions = 0
    for _ in range(300):
        state = new_game(rng)
        while not is_terminal(state):
            legal = legal_actions(state)
            expected = heuristic.act(player_view(state, state.to_act), legal)
            assert _rollout.heuristic_action(rollout.to_core(state)) == expected
            decisions += 1
            # half heuristic, half random moves: the heuristic's own lines and odd ones
            move = expected if rng.random() < 0.5 else legal[rng.integers(len(legal))]
            apply_action(state, move)
    assert decisions > 15_000


@pytest.mark.parametrize("target", ["random", "lowest", "heuristic"])
def test_br_plays_only_legal_moves_in_both_roles(target):
    agent = make_agent(f"br:60,target={target}", seed=0)
    other = make_agent(target, seed=1)
    for seed in range(2):
        assert play_checked(agent, other, seed) in (0, 1)
        assert play_checked(other, agent, seed) in (0, 1)


def test_the_decision_depends_only_on_what_the_player_sees():
    rng = np.random.default_rng(4)
    for view in game_views(2, seed=4)[::13]:
        other = player_view(sample_world(view, rng), view.player)
        first, done = BestResponseAgent("heuristic", simulations=150, seed=9).search(view)
        second, _ = BestResponseAgent("heuristic", simulations=150, seed=9).search(other)
        assert np.array_equal(first, second) and done == 150


def test_knowing_the_target_beats_searching_it():
    # The same simulations: the search that plays the heuristic's moves for it
    # exploits the heuristic far more than plain ISMCTS, which searches them.
    br = evaluate("br:150,target=heuristic", "heuristic", 40, seed=31, workers=1)
    plain = evaluate("ismcts:150", "heuristic", 40, seed=31, workers=1)
    assert br.score >= 0.95 and br.score > plain.score + 0.05


def test_br_models_a_saved_policy_and_exploits_it(tmp_path):
    value_policy(tmp_path, hidden=(16,))
    report = evaluate(f"br:100,target={tmp_path}", str(tmp_path), 20, seed=5, workers=1)
    assert report.score >= 0.9
    agent = make_agent(f"br:100,playouts=heuristic,target={tmp_path}")
    assert agent.name == f"br:100,playouts=heuristic,target={tmp_path}"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("br:100", "name the target last"),
        ("br:100,heuristic", "name the target last"),
        ("br:0,target=random", "positive integer"),
        ("br:100,target=ismcts:50", "cannot model the target"),
        ("br:100,target=nobody", "unknown agent name"),
        ("br:100,playouts=wild,target=random", "playouts='wild'"),
    ],
)
def test_bad_br_names_are_refused(spec, message):
    with pytest.raises(ValueError, match=message):
        make_agent(spec)


SANITY = [
    "--set", "responder.steps=2048", "--set", "responder.curve_every=2048",
    "--set", "responder.n_envs=16", "--set", "responder.n_steps=64",
    "--set", "responder.batch_size=256", "--set", "evaluation.games=64",
    "--set", "search.simulations=300", "--set", "search.games=200", "--set", "search.workers=2",
    "--set", "responder.init=null",  # from the champion the RL responder would pass unlearned
]  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize(("target", "floor"), [("random", 0.95), ("lowest", 0.90)])
def test_the_exploit_responder_crushes_random_and_lowest_in_each_seat(tmp_path, target, floor):
    out = tmp_path / "results.json"
    run = ["exploit", target, "--run-dir", str(tmp_path / "run"), "--out", str(out)]
    assert cli.main([*run, *SANITY]) == 0
    results = json.loads(out.read_text())
    for seat in ("jekyll", "hyde"):
        assert results["seats"][seat]["win_rate"] >= floor, (seat, results["seats"][seat])
        assert results["seats"][seat]["games"] >= 64
    assert results["abr_score"] >= floor
