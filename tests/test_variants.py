"""Variants (RULES.md V1-V7): parsing, refusals, and games of the engine on each preset."""

from __future__ import annotations

import numpy as np
import pytest

from jekyll_hyde_env.engine import (
    apply_action,
    game_record,
    is_terminal,
    legal_actions,
    new_game,
    player_view,
    replay_record,
)
from jekyll_hyde_env.engine.cards import ALL_CARDS, HAND_SIZE, MAX_ROUNDS, TRACK_END, mask_to_ids
from jekyll_hyde_env.engine.information import info_string, sample_world
from jekyll_hyde_env.engine.rules import LEAD, validate_deal
from jekyll_hyde_env.engine.variant import FULL, PRESETS, SMALL, TINY, Variant, parse_variant


def test_the_full_variant_is_the_game_of_the_rules():
    assert FULL.deck == ALL_CARDS and FULL.deck_size == 25
    assert (FULL.hand_size, FULL.rounds, FULL.track_end) == (HAND_SIZE, MAX_ROUNDS, TRACK_END)
    assert FULL.exchange == (1, 2, 3)  # R2.2: r cards in round r
    assert FULL.hyde_leads_from == 5  # R3
    assert parse_variant(None) is FULL and parse_variant("full") is FULL


def test_a_full_game_record_has_no_variant_key():
    state = new_game(np.random.default_rng(3))
    assert "variant" not in game_record(state)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_spelling_reads_back_to_the_same_variant(name):
    variant = PRESETS[name]
    assert variant.name == name
    assert parse_variant(variant.spec()) == variant
    assert parse_variant(variant.to_json()) == variant
    assert hash(parse_variant(variant.spec())) == hash(variant)


def test_keys_left_out_keep_the_full_game_and_the_lead_moves_with_the_track():
    variant = parse_variant("values=3,potions=3+4,hand=3,rounds=2,track=4")
    assert variant.exchange == (1, 2)  # r cards in round r
    assert variant.hyde_leads_from == 2  # half the track, rounded up
    assert variant.potions == (3, 4)
    assert variant.name == variant.spec()  # no preset


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("huge", "unknown variant 'huge': the presets are full, small, tiny"),
        ("values=8", "variant values must be 1-7, got 8"),
        ("values=1,potions=none,hand=2", "needs 4 cards, but the deck has 3"),
        ("hand=2,exchange=3+0+0", "variant exchange count must be 0-2, got 3"),
        ("rounds=2,exchange=1", "one count per round (2)"),
        ("track=3,lead=4", "variant hyde_leads_from must be 0-3, got 4"),
        ("potions=4+3", "distinct and ascending"),
        ("potions=6", "variant potion must be 2-5, got 6"),
        ("colours=2", "key=value pairs with keys"),
        ("hand=two", "variant hand must be an integer, got 'two'"),
        ("hand=2,hand=3", "given twice"),
    ],
)
def test_impossible_variants_are_refused_in_one_line(spec, message):
    with pytest.raises(ValueError) as error:
        parse_variant(spec)
    assert message in str(error.value)
    assert "\n" not in str(error.value)


def _random_game(variant: Variant, seed: int):
    rng = np.random.default_rng(seed)
    state = new_game(rng, variant=variant)
    dealt = state.deals
    while not is_terminal(state):
        legal = legal_actions(state)
        assert set(legal) <= set(mask_to_ids(variant.deck)) | {25, 26, 27}
        view = player_view(state, state.to_act)
        assert view.variant == variant
        world = sample_world(view, rng)  # a world drawn from the view is of the variant
        assert player_view(world, state.to_act) == view
        apply_action(state, int(rng.choice(legal)))
    return state, dealt


TWO_ROUNDS = parse_variant("values=3,hand=4,rounds=2,track=3")


@pytest.mark.parametrize("variant", [TINY, SMALL, TWO_ROUNDS])
def test_games_of_a_variant_deal_and_end_by_its_numbers(variant):
    ends = set()
    for seed in range(40):
        state, deals = _random_game(variant, seed)
        assert len(deals) == variant.rounds
        for jekyll, hyde in deals:
            assert jekyll.bit_count() == hyde.bit_count() == variant.hand_size  # V2
            assert not (jekyll | hyde) & ~variant.deck  # V1
            assert not jekyll & hyde
        assert len(state.round_log) <= variant.rounds  # V3
        if state.winner == 1:
            assert state.marker >= variant.track_end  # V5
        else:
            assert state.marker < variant.track_end and len(state.round_log) == variant.rounds
        for result in state.round_log:
            assert len(result.tricks) == variant.hand_size
        ends.add(state.winner)
        record = game_record(state)
        assert record["variant"]["name"] == variant.name
        assert replay_record(record) == state
    assert ends == {0, 1}  # both players win some games


def test_a_round_without_exchange_opens_at_its_first_trick():
    variant = parse_variant("values=2,potions=3,hand=2,rounds=1,exchange=0,track=2")
    state = new_game(np.random.default_rng(0), variant=variant)
    assert state.phase == LEAD and state.exch_given == [0, 0]


def test_a_deal_of_cards_out_of_play_is_refused():
    with pytest.raises(ValueError, match="card id 6 is not in play in variant tiny"):
        validate_deal({"jekyll": [0, 6], "hyde": [7, 8]}, 1, TINY)


def test_a_record_names_an_impossible_variant():
    state, _ = _random_game(TINY, 1)
    record = game_record(state)
    record["variant"]["hand_size"] = 9
    with pytest.raises(ValueError, match="the record's 'variant': variant hand_size 9 needs 18"):
        replay_record(record)


def test_info_strings_tell_views_apart_exactly_when_they_differ():
    seen: dict[str, object] = {}
    for seed in range(30):
        rng = np.random.default_rng(seed)
        state = new_game(rng, variant=SMALL)
        while not is_terminal(state):
            view = player_view(state, state.to_act)
            key = info_string(view)
            assert seen.setdefault(key, view) == view
            apply_action(state, int(rng.choice(legal_actions(state))))


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_pettingzoo_api_test_passes_on_every_preset(name):
    from pettingzoo.test import api_test

    from jekyll_hyde_env import jekyll_hyde_v0

    env = jekyll_hyde_v0.env(variant=name)
    api_test(env, num_cycles=200)
    env.reset(seed=1)
    assert env.unwrapped.game.variant == PRESETS[name]


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_gymnasium_check_env_passes_on_every_preset(name):
    import gymnasium as gym
    from gymnasium.utils.env_checker import check_env

    import jekyll_hyde_env  # noqa: F401 - registers JekyllHyde-v0

    env = gym.make("JekyllHyde-v0", variant=name)
    check_env(env.unwrapped, skip_render_check=True)
    _, info = env.reset(seed=2)
    assert env.unwrapped.game.variant == PRESETS[name]
    mask = info["action_mask"]
    assert not mask[[c for c in range(25) if not PRESETS[name].deck >> c & 1]].any()


def test_an_env_refuses_an_impossible_variant_in_one_line():
    from jekyll_hyde_env import jekyll_hyde_v0

    with pytest.raises(ValueError, match="variant values must be 1-7, got 9"):
        jekyll_hyde_v0.env(variant="values=9")
