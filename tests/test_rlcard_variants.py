"""The RLCard environment "jekyll-hyde" with the game's variants (RULES.md V1-V7).

``config={"variant": ...}`` picks the version of the game: every preset plays to the
end with only its cards, its hand size of tricks per round and ±1 payoffs; an unknown
or impossible variant is refused in one line; the full game is the default and is
unchanged (tests/test_rlcard.py holds it).
"""

from __future__ import annotations

import numpy as np
import pytest

rlcard = pytest.importorskip("rlcard")

from rlcard.agents import RandomAgent  # noqa: E402

from jekyll_hyde_env.engine.cards import (  # noqa: E402
    HYDE,
    JEKYLL,
    NUM_ACTIONS,
    NUM_CARDS,
    ids_to_mask,
)
from jekyll_hyde_env.engine.variant import FULL, PRESETS, TINY, parse_variant  # noqa: E402
from jekyll_hyde_env.integrations import rlcard as rc  # noqa: E402
from jekyll_hyde_env.observation import OBS_SIZE  # noqa: E402

GAMES = {"full": 3, "small": 30, "tiny": 30}  # random games per preset


def make(seed=0, **config):
    return rlcard.make(rc.ENV_ID, config={"seed": seed, **config})


def play_random(env, rng):
    """Play the current game to its end with random legal actions, checking that every
    card seen or legal is in the variant's deck; return the follows (the plays that
    close a trick) counted per round."""
    deck = env.variant.deck
    follows: dict[int, int] = {}
    while True:
        for seat in range(env.num_players):
            state = env.get_state(seat)
            assert state["obs"].shape == (OBS_SIZE,)
            assert ids_to_mask(state["raw_obs"]["hand"]) & ~deck == 0
            cards = [a for a in state["legal_actions"] if a < NUM_CARDS]
            assert ids_to_mask(cards) & ~deck == 0
        if env.is_over():
            return follows
        raw = env.get_state(env.get_player_id())["raw_obs"]
        if raw["phase"] == "follow":
            follows[raw["round"]] = follows.get(raw["round"], 0) + 1
        env.step(int(rng.choice(raw["legal_actions"])))


@pytest.mark.parametrize("name", list(PRESETS))
def test_each_preset_plays_random_games_to_the_end(name):
    variant = PRESETS[name]
    env = make(5, variant=name)
    assert env.variant is variant and env.game.variant is variant
    assert env.state_shape == [[OBS_SIZE], [OBS_SIZE]] and env.num_actions == NUM_ACTIONS
    rng = np.random.default_rng(5)
    winners = set()
    for _ in range(GAMES[name]):
        _, player = env.reset()
        assert player == JEKYLL  # every preset exchanges in round 1 (R2.2)
        info = env.get_perfect_information()
        assert info["variant"] == name
        assert len(info["deals"]) == variant.rounds  # V3: one deal per round
        for deal in info["deals"]:
            hands = [ids_to_mask(hand) for hand in deal]
            assert [len(hand) for hand in deal] == [variant.hand_size] * 2  # V2
            assert hands[0] & hands[1] == 0
            assert (hands[0] | hands[1]) & ~variant.deck == 0  # V1: only its cards
        dealt = [ids_to_mask(hand) for hand in info["hand_cards"]]
        assert dealt[0] | dealt[1] | ids_to_mask(info["set_aside"]) == variant.deck  # R2.1
        follows = play_random(env, rng)
        info = env.get_perfect_information()
        played = len(env.game.state.round_log)
        # V2: a round has hand_size tricks, each closed by one follow.
        assert follows == dict.fromkeys(range(1, played + 1), variant.hand_size)
        assert all(len(r.tricks) == variant.hand_size for r in env.game.state.round_log)
        payoffs = env.get_payoffs()
        assert sorted(payoffs.tolist()) == [-1.0, 1.0]  # R4
        hyde_won = info["marker"] == variant.track_end  # V5
        assert info["winner"] == (HYDE if hyde_won else JEKYLL)
        assert payoffs[HYDE] == (1.0 if hyde_won else -1.0)
        assert hyde_won or played == variant.rounds  # V3: Jekyll wins after the last round
        winners.add(info["winner"])
    if name != "full":
        assert winners == {JEKYLL, HYDE}


@pytest.mark.parametrize("name", ["small", "tiny"])
def test_rlcard_run_plays_the_variant(name):
    env = make(2, variant=name)
    env.set_agents([RandomAgent(env.num_actions) for _ in range(env.num_players)])
    for _ in range(5):
        trajectories, payoffs = env.run(is_training=True)
        assert sorted(payoffs.tolist()) == [-1.0, 1.0]
        for trajectory in trajectories:
            for state in trajectory[0::2]:
                assert ids_to_mask(state["raw_obs"]["hand"]) & ~PRESETS[name].deck == 0


def test_the_variant_in_every_form():
    spec = "values=2,potions=3,hand=2,rounds=1,exchange=1,track=2"
    assert make(0, variant=spec).variant == TINY
    assert make(0, variant=TINY.to_json()).variant == TINY
    assert make(0, variant=TINY).variant is TINY
    env = rc.JekyllHydeRLCardEnv({"seed": 0, "allow_step_back": False, "variant": "small"})
    assert env.variant is PRESETS["small"]
    assert rc.JekyllHydeRLCardGame(variant="tiny").variant is TINY


def test_without_an_exchange_the_first_trick_leader_acts_first():
    """V4, V6: no card exchanged in round 1 and Hyde leading from space 0."""
    env = make(0, variant="values=2,potions=3,hand=2,rounds=1,exchange=0,track=2,lead=0")
    state, player = env.reset()
    assert player == HYDE == state["raw_obs"]["player"]
    assert state["raw_obs"]["phase"] == "lead" and state["legal_actions"]
    play_random(env, np.random.default_rng(0))
    assert sorted(env.get_payoffs().tolist()) == [-1.0, 1.0]


@pytest.mark.parametrize(
    ("variant", "message"),
    [
        ("huge", r"unknown variant 'huge': the presets are full, small, tiny"),
        ("hand=9,values=2", r"variant hand_size 9 needs 18 cards, but the deck has"),
        ("values=2,colour=3", r"unknown variant 'values=2,colour=3'"),
        ({"hand": 2}, r"unknown variant keys \['hand'\]"),
        (7, "a variant is a preset name"),
    ],
)
def test_unknown_or_impossible_variants_are_refused_in_one_line(variant, message):
    with pytest.raises(ValueError, match=message) as error:
        rlcard.make(rc.ENV_ID, config={"variant": variant})
    assert "\n" not in str(error.value)
    assert str(error.value) == str(pytest.raises(ValueError, parse_variant, variant).value)
    with pytest.raises(ValueError, match=message):
        rc.JekyllHydeRLCardGame(variant=variant)


def test_unknown_config_keys_still_name_the_variant_key():
    with pytest.raises(ValueError, match=r"\['game_variant'\] are not used.*'variant'\]"):
        rlcard.make(rc.ENV_ID, config={"game_variant": "tiny"})


def test_the_full_game_is_the_default_and_unchanged():
    assert rc.DEFAULT_GAME_CONFIG == {"variant": "full"}
    default, full = make(11), make(11, variant="full")
    assert default.variant is FULL and full.variant is FULL
    rng = np.random.default_rng(11)
    for env in (default, full):
        env.reset()
    assert default.get_perfect_information() == full.get_perfect_information()
    assert default.get_perfect_information()["variant"] == "full"
    while not default.is_over():
        state = default.get_state(default.get_player_id())
        assert np.array_equal(state["obs"], full.get_state(full.get_player_id())["obs"])
        action = int(rng.choice(list(state["legal_actions"])))
        default.step(action)
        full.step(action)
    assert default.get_payoffs().tolist() == full.get_payoffs().tolist()


def test_step_back_in_a_variant():
    env = make(4, variant="tiny", allow_step_back=True)
    state, _ = env.reset()
    before = env.get_perfect_information()
    env.step(next(iter(state["legal_actions"])))
    _, player = env.step_back()
    assert player == JEKYLL and env.get_perfect_information() == before
