"""The C core plays every variant (RULES.md V1-V7) by exactly the engine's rules.

The same differential checks as for the full game (tests/test_rollout_core.py,
tests/test_batched.py): step by step over random games of each preset and of a
two-round variant, the C state equals the engine's; a world the C search draws from a
view keeps what the view shows and deals later rounds from the variant's deck; the
batched games deal the variant's games, the same as the engine's from the same seeds.
"""

from __future__ import annotations

import numpy as np
import pytest

from jekyll_hyde_agents import rollout
from jekyll_hyde_env.engine import (
    apply_action,
    is_terminal,
    legal_action_mask,
    legal_actions,
    new_game,
    player_view,
    rules,
)
from jekyll_hyde_env.engine.variant import FULL, PRESETS, parse_variant
from jekyll_hyde_env.vector import BatchedGames

pytestmark = pytest.mark.skipif(
    not rollout.core_available(), reason="the C core jekyll_hyde_agents._rollout is not compiled"
)

VARIANTS = [
    *(PRESETS[name] for name in ("small", "tiny")),
    parse_variant("values=3,potions=2+5,hand=4,rounds=2,exchange=0+2,track=3,lead=1"),
    parse_variant("values=4,hand=5,rounds=3,exchange=1+1+1,track=4"),
]
IDS = ["small", "tiny", "two-rounds-no-first-exchange", "three-rounds"]
DEALS, HANDS = 18, 5


@pytest.mark.parametrize("variant", VARIANTS, ids=IDS)
def test_core_matches_engine_step_by_step(variant):
    core = rollout._core
    rng = np.random.default_rng(7)
    winners = set()
    for _ in range(300):
        state = new_game(rng, variant=variant)
        packed = rollout.to_core(state)
        assert packed[-8:] == variant.core_fields()
        while not is_terminal(state):
            assert core.legal_mask(packed) == legal_action_mask(state)
            moves = legal_actions(state)
            action = moves[rng.integers(len(moves))]
            apply_action(state, action)
            packed = core.apply(packed, action)
            assert packed == rollout.to_core(state), f"diverged after {state.history}"
        winners.add(state.winner)
    assert winners == {0, 1}


def test_the_full_game_tuple_has_no_variant_fields():
    state = new_game(np.random.default_rng(0))
    assert len(rollout.to_core(state)) == 34
    assert len(rollout.search_spec(player_view(state, 0))) == 32


@pytest.mark.parametrize("variant", VARIANTS, ids=IDS)
def test_a_determinised_world_keeps_the_view_and_deals_from_the_variant(variant):
    rng = np.random.default_rng(3)
    checked = 0
    for _ in range(40):
        state = new_game(rng, variant=variant)
        while not is_terminal(state):
            view = player_view(state, state.to_act)
            spec = rollout.search_spec(view)
            for seed in range(3):
                world = rollout._core.determinise(spec, seed)
                assert world[-8:] == variant.core_fields()
                opp_hand = world[HANDS + 1 - view.player]
                assert opp_hand & ~variant.deck == 0
                assert opp_hand.bit_count() == view.opp_hand_size
                for later in range(view.round, variant.rounds):
                    jekyll, hyde = world[DEALS + 2 * later], world[DEALS + 2 * later + 1]
                    assert jekyll.bit_count() == hyde.bit_count() == variant.hand_size
                    assert (jekyll | hyde) & ~variant.deck == 0 and not jekyll & hyde
                checked += 1
            apply_action(state, rng.choice(legal_actions(state)))
    assert checked > 100


@pytest.mark.parametrize("variant", VARIANTS, ids=IDS)
def test_the_core_search_plays_only_legal_moves_of_the_variant(variant):
    rng = np.random.default_rng(1)
    state = new_game(rng, variant=variant)
    while not is_terminal(state):
        view = player_view(state, state.to_act)
        visits, _, _, simulations = rollout._core.ismcts(rollout.search_spec(view), 50, 0.7, 5, 0)
        legal = legal_actions(state)
        assert simulations == 50 and sum(visits) > 0
        assert {a for a in range(28) if visits[a]} <= set(legal)
        apply_action(state, legal[int(np.argmax([visits[a] for a in legal]))])


@pytest.mark.parametrize("variant", VARIANTS, ids=IDS)
def test_batched_games_deal_and_play_the_variant_like_the_engine(variant):
    seeds = list(range(10, 16))
    games = BatchedGames(6, seeding="numpy", variant=variant)
    games.seed_games(seeds)
    games.new_episodes()
    states = [new_game(np.random.default_rng(seed), variant=variant) for seed in seeds]
    rng = np.random.default_rng(0)
    while not all(is_terminal(state) for state in states):
        actions = np.zeros(6, np.int64)
        for i, state in enumerate(states):
            assert games.state(i) == rollout.to_core(state)
            assert games.engine_state(i) == state  # replayed from its deals and actions
            if not is_terminal(state):
                legal = legal_actions(state)
                actions[i] = legal[rng.integers(len(legal))]
                assert games.action_mask[i].nonzero()[0].tolist() == legal
                apply_action(state, int(actions[i]))
        live = np.array([not games.terminated[i] for i in range(6)])
        games.step(actions, where=live)
    for i, state in enumerate(states):
        assert games.winner[i] == state.winner
        assert games.engine_state(i).round_log == state.round_log


def test_batched_games_refuse_an_impossible_variant_in_one_line():
    with pytest.raises(ValueError, match="variant values must be 1-7, got 0"):
        BatchedGames(2, variant="values=0")


def test_the_full_game_is_the_default_everywhere():
    games = BatchedGames(2)
    assert games.variant == FULL
    assert rules.new_game(np.random.default_rng(0)).variant == FULL


def test_ismcts_plays_a_variant_in_the_arena():
    from jekyll_hyde_arena import evaluate

    report = evaluate("ismcts:40", "random", 4, seed=3, variant=PRESETS["small"])
    assert report.pairs == 4 and 0.0 <= report.score <= 1.0


@pytest.mark.parametrize(
    ("spec", "why"),
    [
        ("pimc:5", "pimc plays the full game only: its round values"),
        ("az:5", "was trained on variant full and does not play variant tiny"),
    ],
)
def test_full_game_searches_refuse_a_variant_naming_why(spec, why):
    from jekyll_hyde_agents import make_agent

    state = new_game(np.random.default_rng(0), variant=PRESETS["tiny"])
    view = player_view(state, state.to_act)
    with pytest.raises(ValueError, match=why):
        make_agent(spec).act(view, legal_actions(state))
