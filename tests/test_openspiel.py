"""The OpenSpiel game python_jekyll_hyde: OpenSpiel's checks, the engine, hidden cards, bots."""

from __future__ import annotations

import subprocess
import sys
from math import comb, prod

import numpy as np
import pytest

pyspiel = pytest.importorskip(
    "pyspiel", reason="OpenSpiel is not installed (pip install 'jekyll-hyde-env[openspiel]')"
)

from jekyll_hyde_agents import agent_names, make_agent  # noqa: E402
from jekyll_hyde_agents.openspiel_bots import OpenSpielBotAgent  # noqa: E402
from jekyll_hyde_arena import play_pair  # noqa: E402
from jekyll_hyde_env.engine import (  # noqa: E402
    apply_action,
    info_key,
    is_terminal,
    legal_actions,
    new_game,
    player_view,
    returns,
    sample_world,
)
from jekyll_hyde_env.engine.cards import HAND_SIZE, NUM_CARDS, mask_to_ids  # noqa: E402
from jekyll_hyde_env.integrations import openspiel  # noqa: E402
from jekyll_hyde_env.observation import LAYOUT, OBS_SIZE, encode  # noqa: E402


@pytest.fixture(scope="module")
def game():
    return pyspiel.load_game("python_jekyll_hyde")


def deal_actions(engine_state, round_number):
    """The chance actions that deal ``round_number`` as the engine dealt it (ascending ids)."""
    jekyll, hyde = engine_state.deals[round_number - 1]
    return mask_to_ids(jekyll) + mask_to_ids(hyde)


def random_state(game, rng, decisions):
    """A state after a random deal and up to ``decisions`` random decisions."""
    state = game.new_initial_state()
    made = 0
    while not state.is_terminal() and (state.is_chance_node() or made < decisions):
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(int(rng.choice(actions, p=probs)))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
            made += 1
    return state


def test_game_facts(game):
    kind = game.get_type()
    assert kind.short_name == "python_jekyll_hyde"
    assert kind.dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL
    assert kind.chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    assert kind.information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
    assert kind.utility == pyspiel.GameType.Utility.ZERO_SUM
    assert kind.reward_model == pyspiel.GameType.RewardModel.TERMINAL
    assert kind.provides_information_state_tensor and kind.provides_observation_tensor
    assert kind.provides_information_state_string and kind.provides_observation_string
    assert game.num_players() == 2
    assert game.num_distinct_actions() == 28
    assert game.max_chance_outcomes() == NUM_CARDS
    assert (game.min_utility(), game.max_utility(), game.utility_sum()) == (-1.0, 1.0, 0.0)
    # 44 + 2r decisions in round r (module docstring), 20 chance deals per round.
    assert game.max_game_length() == 132
    assert game.max_chance_nodes_in_history() == 60
    assert game.max_move_number() == 192
    assert game.information_state_tensor_shape() == [OBS_SIZE]
    assert game.observation_tensor_shape() == [OBS_SIZE]


def test_observer_pieces_are_the_layout(game):
    observer = game.make_py_observer()
    assert list(observer.dict) == [name for name, _, _ in LAYOUT]
    state = random_state(game, np.random.default_rng(3), 12)
    observer.set_from(state, 1)
    assert np.array_equal(observer.tensor, encode(player_view(state.engine_state, 1)))
    with pytest.raises(ValueError, match="private_info=SINGLE_PLAYER"):
        game.make_py_observer(
            pyspiel.IIGObservationType(
                public_info=True, perfect_recall=False, private_info=pyspiel.PrivateInfoType.NONE
            )
        )
    with pytest.raises(ValueError, match="take no parameters"):
        game.make_py_observer(None, {"x": 1})


def test_openspiel_random_simulation_with_serialization(game):
    pyspiel.random_sim_test(game, num_sims=12, serialize=True, verbose=False)


def test_every_state_survives_serialize_and_deserialize(game):
    rng = np.random.default_rng(7)
    for _ in range(3):
        state = game.new_initial_state()
        while True:
            copy = game.deserialize_state(state.serialize())
            assert str(copy) == str(state)
            assert copy.history() == state.history()
            assert copy.legal_actions() == state.legal_actions()
            assert copy.returns() == state.returns()
            for player in (0, 1):
                assert copy.information_state_string(player) == state.information_state_string(
                    player
                )
                assert copy.information_state_tensor(player) == state.information_state_tensor(
                    player
                )
            if state.is_terminal():
                break
            if state.is_chance_node():
                actions, probs = zip(*state.chance_outcomes(), strict=True)
                action = int(rng.choice(actions, p=probs))
            else:
                action = int(rng.choice(state.legal_actions()))
            state.apply_action(action)
            copy.apply_action(action)
            assert str(copy) == str(state)


def test_chance_deals_every_hand_uniformly(game):
    """R2.1: a deal's chance probabilities multiply to 1 / (C(25,10) C(15,10))."""
    engine_state = new_game(np.random.default_rng(11))
    state = game.new_initial_state()
    probabilities = []
    for card in deal_actions(engine_state, 1):
        outcomes = dict(state.chance_outcomes())
        assert abs(sum(outcomes.values()) - 1.0) < 1e-12
        assert len(outcomes) <= NUM_CARDS
        probabilities.append(outcomes[card])
        state.apply_action(card)
    assert not state.is_chance_node()
    expected = 1 / (comb(NUM_CARDS, HAND_SIZE) * comb(NUM_CARDS - HAND_SIZE, HAND_SIZE))
    assert prod(probabilities) == pytest.approx(expected, rel=1e-9)


def test_same_deals_play_the_same_game_as_the_engine(game):
    """Legal actions, both players' tensors and strings' views, and returns match the engine."""
    decisions = 0
    rounds = []
    for seed in range(30):
        engine_state = new_game(np.random.default_rng(seed))
        state = game.new_initial_state()
        rng = np.random.default_rng(100 + seed)
        while not is_terminal(engine_state):
            if state.is_chance_node():
                for card in deal_actions(engine_state, engine_state.round):
                    assert state.is_chance_node()
                    state.apply_action(card)
            assert state.current_player() == engine_state.to_act
            legal = legal_actions(engine_state)
            assert state.legal_actions() == legal
            for player in (0, 1):
                expected = encode(player_view(engine_state, player))
                assert np.array_equal(state.information_state_tensor(player), expected)
                assert np.array_equal(state.observation_tensor(player), expected)
                assert state.information_state_string(player) == openspiel.view_string(
                    player_view(engine_state, player)
                )
            action = int(rng.choice(legal))
            apply_action(engine_state, action)
            state.apply_action(action)
            decisions += 1
        rounds.append(engine_state.round)
        assert state.is_terminal()
        assert state.returns() == [float(r) for r in returns(engine_state)]
        assert len(state.history()) <= game.max_move_number()
    assert decisions > 30 * 40
    assert {2, 3} <= set(rounds)  # rounds 2 and 3 are dealt by chance nodes too


def test_no_leak_of_the_opponents_hidden_cards(game):
    """A player's information state is the same whatever the opponent's hidden cards."""
    # Round 1 dealt twice: Hyde's hand differs by a card swapped with the set-aside ones.
    engine_state = new_game(np.random.default_rng(5))
    jekyll, hyde = engine_state.deals[0]
    set_aside = ((1 << NUM_CARDS) - 1) ^ jekyll ^ hyde
    other_hyde = hyde ^ (hyde & -hyde) | (set_aside & -set_aside)
    states = []
    for hyde_hand in (hyde, other_hyde):
        state = game.new_initial_state()
        for card in mask_to_ids(jekyll) + mask_to_ids(hyde_hand):
            state.apply_action(card)
        state.apply_action(state.legal_actions()[0])  # Jekyll's exchange pick
        states.append(state)
    a, b = states
    assert a.information_state_tensor(0) == b.information_state_tensor(0)
    assert a.information_state_string(0) == b.information_state_string(0)
    assert a.observation_tensor(0) == b.observation_tensor(0)
    assert a.information_state_tensor(1) != b.information_state_tensor(1)

    # Deep in games: a world re-dealt from a player's view differs only in hidden cards.
    rng = np.random.default_rng(9)
    differing = 0
    for decisions in range(5, 120, 6):
        state = random_state(game, rng, decisions)
        if state.is_terminal() or state.is_chance_node():
            continue
        for player in (0, 1):
            world = sample_world(player_view(state.engine_state, player), rng)
            other = game.state_from_world(world)
            assert other.information_state_tensor(player) == state.information_state_tensor(player)
            assert other.information_state_string(player) == state.information_state_string(player)
            if world.hands[1 - player] != state.engine_state.hands[1 - player]:
                differing += 1
                assert other.information_state_tensor(1 - player) != state.information_state_tensor(
                    1 - player
                )
    assert differing > 5


def test_information_state_strings_name_exactly_the_views(game):
    """Equal strings iff equal views (``info_key``): ISMCTS keys its nodes by the string."""
    key_of_string = {}
    string_of_key = {}
    rng = np.random.default_rng(12)
    for _ in range(4):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                actions, probs = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(int(rng.choice(actions, p=probs)))
                continue
            for player in (0, 1):
                key = info_key(player_view(state.engine_state, player))
                text = state.information_state_string(player)
                assert key_of_string.setdefault(text, key) == key
                assert string_of_key.setdefault(key, text) == text
            state.apply_action(int(rng.choice(state.legal_actions())))
    assert len(key_of_string) > 500


def test_illegal_actions_raise_naming_the_action_and_the_legal_ones(game):
    state = game.new_initial_state()
    with pytest.raises(pyspiel.SpielError, match=r"illegal chance outcome 20 .*legal outcomes"):
        state.apply_action(20)  # Jekyll's smallest card cannot be above 15
    state = random_state(game, np.random.default_rng(2), 4)
    legal = state.legal_actions()
    illegal = next(a for a in range(28) if a not in legal)
    history = state.history()
    with pytest.raises(pyspiel.SpielError) as error:
        state.apply_action(illegal)
    assert f"illegal action {illegal}" in str(error.value)
    assert str(legal) in str(error.value)
    assert state.history() == history and state.legal_actions() == legal


def test_resample_from_infostate_keeps_the_information_state(game):
    rng = np.random.default_rng(4)
    state = random_state(game, rng, 30)
    player = state.current_player()
    key = state.information_state_string(player)
    seen = set()
    for _ in range(20):
        sample = state.resample_from_infostate(player, rng.random)
        assert sample.information_state_string(player) == key
        assert sample.legal_actions() == state.legal_actions()
        seen.add(sample.engine_state.hands[1 - player])
    assert len(seen) > 1  # the opponent's hand is re-dealt
    # The default sampler of OpenSpiel's ISMCTS works too.
    sample = state.resample_from_infostate(player, pyspiel.UniformProbabilitySampler(0.0, 1.0))
    assert sample.information_state_string(player) == key
    with pytest.raises(pyspiel.SpielError, match="not while cards are dealt"):
        game.new_initial_state().resample_from_infostate(0, rng.random)


def test_openspiel_ismcts_bot_plays_the_game(game):
    from open_spiel.python.algorithms import ismcts, mcts

    random_state_ = np.random.RandomState(0)
    bot = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, random_state_), 2.0, 20)
    state = random_state(game, np.random.default_rng(8), 6)
    for _ in range(3):
        if state.is_chance_node() or state.is_terminal():
            break
        action = bot.step(state)  # resamples through state.resample_from_infostate
        assert action in state.legal_actions()
        state.apply_action(int(action))


def test_arena_openspiel_ismcts_against_heuristic_is_reproducible():
    first = play_pair(
        make_agent("openspiel-ismcts:8"), make_agent("heuristic"), 0, 0, keep_records=True
    )
    again = play_pair(
        make_agent("openspiel-ismcts:8"), make_agent("heuristic"), 0, 0, keep_records=True
    )
    for role in ("a_as_jekyll", "a_as_hyde"):
        assert getattr(first, role).winner in (0, 1)
        assert getattr(first, role).record == getattr(again, role).record


def test_arena_openspiel_mcts_plays_legal_moves():
    result = play_pair(make_agent("openspiel-mcts:8"), make_agent("random"), 1, 0)
    assert result.a_as_jekyll.winner in (0, 1) and result.a_as_hyde.winner in (0, 1)


def test_agent_names_and_bad_arguments():
    assert {"openspiel-ismcts", "openspiel-mcts"} <= set(agent_names())
    agent = make_agent("openspiel-ismcts")
    assert isinstance(agent, OpenSpielBotAgent) and agent.simulations == 100
    with pytest.raises(ValueError, match="positive integer"):
        make_agent("openspiel-mcts:0")
    with pytest.raises(ValueError, match="not a time"):
        make_agent("openspiel-ismcts:0.5s")


def test_agents_import_without_openspiel_and_name_the_extra():
    code = (
        "import sys; sys.modules['pyspiel'] = None\n"
        "import jekyll_hyde_agents\n"
        "try:\n"
        "    jekyll_hyde_agents.make_agent('openspiel-ismcts:5')\n"
        "except ValueError as error:\n"
        "    print(type(error).__name__, error)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.startswith("OpenSpielMissingError")
    assert "pip install 'jekyll-hyde-env[openspiel]'" in out
