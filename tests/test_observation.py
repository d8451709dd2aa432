"""The observation encoding: the documented index table, the pieces, and no leaks."""

from __future__ import annotations

import re

import numpy as np

from jekyll_hyde_env import jekyll_hyde
from jekyll_hyde_env.engine import is_terminal, legal_actions, player_view, rules, sample_world
from jekyll_hyde_env.engine.cards import HYDE, JEKYLL, mask_to_ids
from jekyll_hyde_env.observation import LAYOUT, OBS_SIZE, OFFSETS, action_mask, decode, encode

from .engine.helpers import hand, play, trick_state


def test_docstring_index_table_matches_layout():
    rows = re.findall(
        r"^\| (\d+)(?:-(\d+))?\s*\| (\w+)\s*\| (.+?)\s*\|$", jekyll_hyde.__doc__, re.M
    )
    assert [name for _, _, name, _ in rows] == [name for name, _, _ in LAYOUT]
    for (start, stop, name, text), (_, size, meaning) in zip(rows, LAYOUT, strict=True):
        stop = stop or start
        assert OFFSETS[name] == slice(int(start), int(stop) + 1), name
        assert int(stop) - int(start) + 1 == size and text == meaning
    assert f"Observation shape  | ({OBS_SIZE},)" in jekyll_hyde.__doc__


def test_pieces_hold_what_the_view_says():
    state = trick_state(["W4", "P1", "G1"], ["P2", "G5", "3+"], ranks=(1, 0, 2), tricks=(2, 3))
    play(state, "W4", "P2")  # Hyde lacks Wrath; Pride outranks Wrath, so Hyde wins (T5a)
    obs = decode(encode(player_view(state, JEKYLL)))
    assert mask_to_ids(hand("P1", "G1")) == np.flatnonzero(obs["hand"]).tolist()
    assert obs["played_by_opponent"].sum() == 1 and obs["opponent_void"].tolist() == [0, 1, 0]
    assert obs["my_role"].tolist() == [1, 0]
    assert obs["my_tricks"].argmax() == 2 and obs["opponent_tricks"].argmax() == 4
    assert obs["colour_ranks"].reshape(3, 3).argmax(axis=1).tolist() == [1, 0, 2]
    assert obs["phase"].argmax() == 1 and obs["my_turn"][0] == 0  # Hyde leads next
    assert obs["tricks_played"].argmax() == 1


def test_observation_is_identical_for_states_that_differ_only_in_hidden_cards():
    rng = np.random.default_rng(0)
    compared = 0
    for seed in range(25):
        game_rng = np.random.default_rng(seed)
        state = rules.new_game(game_rng)
        while not is_terminal(state):
            for player in (JEKYLL, HYDE):
                view = player_view(state, player)
                other = sample_world(view, rng)  # hidden cards and picks re-dealt
                assert np.array_equal(encode(player_view(other, player)), encode(view))
                assert np.array_equal(action_mask(other, player), action_mask(state, player))
                compared += 1
            moves = legal_actions(state)
            rules.apply_action(state, moves[game_rng.integers(len(moves))])
    assert compared > 3000


def test_observation_changes_with_what_the_player_sees():
    a = trick_state(["W4", "P1"], ["P2", "G5"])
    b = trick_state(["W4", "P3"], ["P2", "G5"])
    assert not np.array_equal(encode(player_view(a, JEKYLL)), encode(player_view(b, JEKYLL)))
    assert np.array_equal(encode(player_view(a, HYDE)), encode(player_view(b, HYDE)))


def test_mask_is_zero_for_the_player_not_to_act():
    state = trick_state(["W4", "P1"], ["P2", "G5"])
    assert action_mask(state, HYDE).sum() == 0
    assert np.flatnonzero(action_mask(state, JEKYLL)).tolist() == legal_actions(state)
