"""Game records: JSON-serialisable, and a replay reproduces the final state exactly."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from jekyll_hyde_env.engine import (
    game_record,
    is_terminal,
    legal_actions,
    player_view,
    replay_record,
    rules,
    sample_world,
)


def play_random(seed: int, max_steps: int = 1000):
    rng = np.random.default_rng(seed)
    state = rules.new_game(rng)
    steps = 0
    while not is_terminal(state) and steps < max_steps:
        moves = legal_actions(state)
        rules.apply_action(state, moves[rng.integers(len(moves))])
        steps += 1
    return state


@pytest.mark.parametrize("seed", range(30))
def test_replay_of_a_json_record_reproduces_the_final_state(seed):
    state = play_random(seed, max_steps=1000 if seed % 3 else 40)
    record = json.loads(json.dumps(game_record(state)))
    assert replay_record(record) == state


def test_record_lists_deals_tricks_effects_and_result():
    state = play_random(1)
    record = game_record(state)
    assert record["result"]["winner"] in ("jekyll", "hyde")
    assert record["result"]["rounds_played"] == len(record["rounds"]) == len(state.round_log)
    first = record["rounds"][0]
    assert len(first["deal"]["jekyll"]) == 10 and len(first["deal"]["set_aside"]) == 5
    assert len(first["exchange"]["jekyll"]) == 1 and len(first["exchange"]["hyde"]) == 1
    assert len(first["tricks"]) == 10
    assert sum(first["tricks_won"].values()) == 10
    for trick in first["tricks"]:
        assert trick["effect"] in ("none", "pride", "wrath", "greed")
        assert (trick["swap"] is not None) == (
            trick["effect"] == "greed" and trick is not first["tricks"][-1]
        )
    assert len(record["actions"]) == len(state.history)


def test_tampered_records_are_refused():
    record = game_record(play_random(2))
    bad = copy.deepcopy(record)
    bad["result"]["winner"] = "jekyll" if record["result"]["winner"] == "hyde" else "hyde"
    with pytest.raises(ValueError, match="replay ends with"):
        replay_record(bad)
    bad = copy.deepcopy(record)
    bad["actions"][0]["agent"] = "hyde"
    with pytest.raises(ValueError, match="jekyll is to act"):
        replay_record(bad)
    bad = copy.deepcopy(record)
    bad["version"] = 99
    with pytest.raises(ValueError, match="unsupported record version"):
        replay_record(bad)
    with pytest.raises(ValueError, match="not a game record"):
        replay_record({"rounds": []})


def test_a_sampled_world_has_no_record():
    state = play_random(3, max_steps=30)
    world = sample_world(player_view(state, 0), np.random.default_rng(0))
    with pytest.raises(ValueError, match="no record"):
        game_record(world)
