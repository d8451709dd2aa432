"""The RLCard environment "jekyll-hyde".

RLCard's own env-test habits (run with random agents, step and step_back, payoffs,
determinism, perfect information), the same games as the AEC env, and the errors;
the arena adapter and RLCard's trainers are tests/test_rlcard_agents.py.
"""

from __future__ import annotations

import doctest
import pathlib
from collections import OrderedDict

import numpy as np
import pytest

rlcard = pytest.importorskip("rlcard")

import torch  # noqa: E402  (RLCard's learning agents are torch modules)
from rlcard.agents import RandomAgent  # noqa: E402
from rlcard.envs.registration import registry  # noqa: E402
from rlcard.utils import tournament  # noqa: E402

from jekyll_hyde_agents.rlcard_agent import RLCardAgent  # noqa: E402
from jekyll_hyde_arena import play_pair  # noqa: E402
from jekyll_hyde_env import jekyll_hyde_v0  # noqa: E402
from jekyll_hyde_env.engine import IllegalActionError, legal_actions, player_view  # noqa: E402
from jekyll_hyde_env.engine.cards import (  # noqa: E402
    AGENTS,
    ALL_CARDS,
    DECLARE_BASE,
    FIRST_POTION,
    HYDE,
    JEKYLL,
    NUM_ACTIONS,
    TRACK_END,
    ids_to_mask,
)
from jekyll_hyde_env.integrations import rlcard as rc  # noqa: E402
from jekyll_hyde_env.observation import OBS_SIZE, encode  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
DMC_SCRIPT = ROOT / "benchmarks" / "rlcard_dmc.py"


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    """RLCard's networks are small: one thread is quickest on a shared machine."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def make(seed=0, **config):
    return rlcard.make(rc.ENV_ID, config={"seed": seed, **config})


def play_random(env, rng, record=None):
    """Play the current game to its end with legal actions drawn from ``rng``."""
    while not env.is_over():
        player = env.get_player_id()
        state = env.get_state(player)
        action = int(rng.choice(list(state["legal_actions"])))
        if record is not None:
            record.append(action)
        env.step(action)


# --- registration and the state dict ------------------------------------------------


def test_registered_with_rlcard_and_registering_again_does_nothing():
    assert rc.ENV_ID == "jekyll-hyde"
    assert rc.ENV_ID in registry.env_specs
    spec = registry.env_specs[rc.ENV_ID]
    rc.register()  # what each import of the module does: no error, nothing replaced
    rc.register()
    assert registry.env_specs[rc.ENV_ID] is spec
    env = rlcard.make("jekyll-hyde", config={"seed": 0})
    assert type(env).__name__ == "JekyllHydeRLCardEnv"
    assert (env.num_players, env.num_actions) == (2, NUM_ACTIONS)
    assert env.state_shape == [[OBS_SIZE], [OBS_SIZE]]
    assert env.action_shape == [None, None]
    assert env.allow_step_back is False


def test_module_docstring_example_runs():
    failed, attempted = doctest.testmod(rc, verbose=False)
    assert attempted >= 4 and failed == 0


def test_state_dict_is_what_rlcard_agents_read():
    env = make(3)
    state, player = env.reset()
    assert player == env.get_player_id() == JEKYLL  # R2.2: Jekyll picks first
    assert set(state) == {"obs", "legal_actions", "raw_obs", "raw_legal_actions", "action_record"}
    game = env.game.state
    assert state["obs"].dtype == np.int8 and state["obs"].shape == (OBS_SIZE,)
    assert np.array_equal(state["obs"], encode(player_view(game, JEKYLL)))
    assert isinstance(state["legal_actions"], OrderedDict)
    assert list(state["legal_actions"]) == legal_actions(game)  # ascending, as RLCard envs
    assert all(value is None for value in state["legal_actions"].values())
    assert state["raw_legal_actions"] == [rc.RAW_ACTIONS[a] for a in legal_actions(game)]
    raw = state["raw_obs"]
    assert raw["role"] == "jekyll" and raw["phase"] == "exchange" and raw["round"] == 1
    assert ids_to_mask(raw["hand"]) == game.hands[JEKYLL]
    assert raw["view"] == player_view(game, JEKYLL)
    assert state["action_record"] == []
    other = env.get_state(HYDE)  # not to act: no legal actions, as the AEC env's zero mask
    assert other["legal_actions"] == OrderedDict() and other["raw_legal_actions"] == []
    assert np.array_equal(other["obs"], encode(player_view(game, HYDE)))


def test_run_with_random_agents_gives_trajectories_and_zero_sum_payoffs():
    env = make(1)
    env.set_agents([RandomAgent(env.num_actions) for _ in range(env.num_players)])
    for _ in range(5):
        trajectories, payoffs = env.run(is_training=False)
        assert len(trajectories) == 2
        for player, trajectory in enumerate(trajectories):
            # state, action, state, action, ..., final state
            assert len(trajectory) % 2 == 1
            assert all(isinstance(item, dict) for item in trajectory[0::2])
            actions = trajectory[1::2]
            own = [action for actor, action in env.action_recorder if actor == player]
            assert [int(a) for a in actions] == own
        assert sum(len(t) // 2 for t in trajectories) == len(env.action_recorder)
        # R4: +1 to the winner, -1 to the loser; Hyde wins when the marker reaches 10.
        assert sorted(payoffs.tolist()) == [-1.0, 1.0] and payoffs.sum() == 0
        hyde_won = env.get_perfect_information()["marker"] == TRACK_END
        assert payoffs[HYDE] == (1.0 if hyde_won else -1.0)


def test_payoffs_are_zero_before_the_end():
    env = make(0)
    env.reset()
    assert env.get_payoffs().tolist() == [0.0, 0.0]


def test_tournament_of_random_agents():
    env = make(2)
    env.set_agents([RandomAgent(env.num_actions), RandomAgent(env.num_actions)])
    payoffs = tournament(env, 6)
    assert len(payoffs) == 2 and payoffs[0] == pytest.approx(-payoffs[1])
    assert all(-1 <= p <= 1 for p in payoffs)


def test_the_same_player_acts_several_times_in_a_row():
    """Exchange picks (R2.2), a potion led and its colour (T1, T2): get_player_id says who."""
    env = make(4)
    state, player = env.reset()
    runs = {"declare": 0, "exchange": 0}
    while not env.is_over():
        raw = state["raw_obs"]
        legal = list(state["legal_actions"])
        potions = [a for a in legal if FIRST_POTION <= a < DECLARE_BASE]
        action = potions[0] if raw["phase"] == "lead" and potions else legal[0]
        state, next_player = env.step(action)
        if env.is_over():
            break
        assert next_player == env.get_player_id() == state["raw_obs"]["player"]
        if raw["phase"] == "lead" and action >= FIRST_POTION:
            assert next_player == player and state["raw_obs"]["phase"] == "declare"
            assert list(state["legal_actions"]) == list(range(DECLARE_BASE, NUM_ACTIONS))
            runs["declare"] += 1
        if raw["phase"] == "exchange" and state["raw_obs"]["phase"] == "exchange":
            if next_player == player:
                runs["exchange"] += 1
        player = next_player
    assert runs["declare"] >= 1 and runs["exchange"] >= 1, runs


def test_run_files_consecutive_decisions_under_their_player():
    env = make(5)
    env.set_agents([RandomAgent(env.num_actions), RandomAgent(env.num_actions)])
    trajectories, _ = env.run()
    actors = [actor for actor, _ in env.action_recorder]
    assert any(a == b for a, b in zip(actors, actors[1:], strict=False))  # round 2's exchange
    for player in range(2):
        for state in trajectories[player][0:-1:2]:
            assert state["raw_obs"]["player"] == state["raw_obs"]["current_player"] == player
            assert state["legal_actions"]


def test_the_first_pick_is_hidden_from_the_opponent_at_once():
    env = make(6)
    state, _ = env.reset()
    pick = next(iter(state["legal_actions"]))
    hyde_state, player = env.step(pick)  # round 1: Jekyll picks 1 card, then Hyde
    assert player == HYDE
    assert hyde_state["action_record"] == [(JEKYLL, None)]  # hidden from Hyde (R2.2)
    assert env.get_state(JEKYLL)["action_record"] == [(JEKYLL, pick)]


@pytest.mark.parametrize("seed", range(6))
def test_action_record_hides_exactly_the_opponents_exchange_and_swap_picks(seed):
    env = make(seed)
    env.reset()
    phases = []  # each decision's phase, read from the acting player's state before it
    rng = np.random.default_rng(seed)
    while not env.is_over():
        state = env.get_state(env.get_player_id())
        phases.append(state["raw_obs"]["phase"])
        env.step(int(rng.choice(list(state["legal_actions"]))))
    full = env.action_recorder
    assert len(full) == len(phases) and "exchange" in phases
    for player in (JEKYLL, HYDE):
        record = env.get_state(player)["action_record"]
        for (actor, action), (seen_actor, seen), phase in zip(full, record, phases, strict=True):
            assert seen_actor == actor
            if actor != player and phase in ("exchange", "swap"):  # R2.2, T6b
                assert seen is None, (phase, actor, player)
            else:
                assert seen == action, (phase, actor, player)


def test_the_games_checked_for_hidden_picks_include_greeds_swap():
    swaps = 0
    for seed in range(6):
        env = make(seed)
        env.reset()
        rng = np.random.default_rng(seed)
        while not env.is_over():
            state = env.get_state(env.get_player_id())
            swaps += state["raw_obs"]["phase"] == "swap"
            env.step(int(rng.choice(list(state["legal_actions"]))))
    assert swaps > 0  # T6b's picks are among those the test above checks


def test_one_adapter_playing_both_seats_never_shows_a_seat_the_others_picks():
    seen: dict[int, list] = {JEKYLL: [], HYDE: []}

    class Recording:
        use_raw = False

        def eval_step(self, state):
            player = state["raw_obs"]["player"]
            seen[player].append(list(state["action_record"]))
            return next(iter(state["legal_actions"])), {}

    agent = RLCardAgent([Recording(), Recording()])
    play_pair(agent, agent, 0, 3)
    for player, records in seen.items():
        assert records and all(actor == player for record in records for actor, _ in record)
        assert all(action is not None for record in records for _, action in record)


# --- seeds, step_back, perfect information ------------------------------------------------


def observations(seed, actions):
    """Every state's obs and payoffs of one game, played from an action-index list."""
    env = make(seed)
    state, _ = env.reset()
    seen = [state["obs"].tobytes()]
    for index in actions:
        if env.is_over():
            break
        legal = list(state["legal_actions"])
        state, _ = env.step(legal[index % len(legal)])
        seen.append(state["obs"].tobytes())
    return seen, env.get_payoffs().tolist()


def test_same_seed_same_game_and_different_seeds_differ():
    actions = np.random.default_rng(7).integers(0, 1000, size=200).tolist()
    assert observations(11, actions) == observations(11, actions)
    assert observations(11, actions)[0] != observations(12, actions)[0]
    env = make(None)
    assert env.seed(11) == 11
    env.reset()
    assert env.get_state(0)["obs"].tobytes() == observations(11, actions)[0][0]


def test_step_and_step_back_round_trip():
    env = make(8, allow_step_back=True)
    state, player = env.reset()
    assert env.step_back() is False  # at the start, as RLCard's own envs
    rng = np.random.default_rng(8)
    path, actions = [], []
    while not env.is_over():
        path.append((player, state["obs"].copy(), env.get_perfect_information()))
        actions.append(int(rng.choice(list(state["legal_actions"]))))
        state, player = env.step(actions[-1])
    final = env.get_payoffs()
    assert sorted(final.tolist()) == [-1.0, 1.0]
    for player, obs, info in reversed(path):
        back_state, back_player = env.step_back()
        assert back_player == player == env.get_player_id()
        assert np.array_equal(back_state["obs"], obs)
        assert env.get_perfect_information() == info
        assert len(env.action_recorder) == len(info["history"])
    assert env.step_back() is False
    for action in actions:  # replayed from the start, the same actions end the same way
        env.step(action)
    assert env.is_over() and np.array_equal(env.get_payoffs(), final)


def test_step_back_is_refused_when_off():
    env = make(0)
    env.reset()
    with pytest.raises(ValueError, match="allow_step_back"):
        env.step_back()


def test_perfect_information():
    env = make(9)
    _, player = env.reset()
    info = env.get_perfect_information()
    assert info["current_player"] == player
    assert info["phase"] == "exchange" and info["legal_actions"] == legal_actions(env.game.state)
    hands = [ids_to_mask(h) for h in info["hand_cards"]]
    assert hands[0] | hands[1] | ids_to_mask(info["set_aside"]) == ALL_CARDS  # R2.1
    assert [ids_to_mask(h) for h in info["deals"][0]] == hands
    play_random(env, np.random.default_rng(9))
    info = env.get_perfect_information()
    assert info["phase"] == "game_over" and info["legal_actions"] == []
    assert info["winner"] == (HYDE if info["marker"] == TRACK_END else JEKYLL)
    assert env.get_payoffs()[info["winner"]] == 1.0


# --- the same games as the AEC env ---------------------------------------------------------


@pytest.mark.parametrize(
    ("variant", "games", "min_steps"), [("full", 2, 41), ("small", 3, 6), ("tiny", 3, 4)]
)
def test_same_deals_and_steps_as_the_aec_env(variant, games, min_steps):
    """Seeded alike, both envs deal the same games, of every variant; the same actions give
    the same observations, legal actions, players and rewards at every step (games in a
    row)."""
    seed = 21
    env = make(seed, variant=variant)
    aec = jekyll_hyde_v0.raw_env(variant=variant)
    rng = np.random.default_rng(seed)
    for game in range(games):
        state, player = env.reset()
        aec.reset(seed=seed if game == 0 else None)  # then the AEC env's generator goes on
        steps = 0
        while True:
            if not env.is_over():
                assert AGENTS[env.get_player_id()] == aec.agent_selection
            for seat, agent in enumerate(AGENTS):
                expected = aec.observe(agent)
                mine = env.get_state(seat)
                assert np.array_equal(mine["obs"], expected["observation"])
                mask = np.flatnonzero(expected["action_mask"]).tolist()
                assert list(mine["legal_actions"]) == mask
            if env.is_over():
                break
            action = int(rng.choice(list(state["legal_actions"])))
            state, player = env.step(action)
            aec.step(action)
            steps += 1
            if not env.is_over():
                assert env.get_payoffs().tolist() == [0.0, 0.0]
                assert aec.rewards == {"jekyll": 0, "hyde": 0}
        assert all(aec.terminations.values())
        assert env.get_payoffs().tolist() == [aec.rewards["jekyll"], aec.rewards["hyde"]]
        assert steps >= min_steps


# --- bad input -------------------------------------------------------------------------------


@pytest.mark.parametrize("action", [28, -1, 99])
def test_unknown_action_ids_are_refused(action):
    env = make(0)
    env.reset()
    with pytest.raises(ValueError, match=r"unknown action id .*from 0 to 27"):
        env.step(action)
    assert env.action_recorder == [] and env.timestep == 0  # nothing applied


@pytest.mark.parametrize("action", ["3", 2.0, True, None, [1]])
def test_actions_that_are_not_integers_are_refused(action):
    env = make(0)
    env.reset()
    with pytest.raises(ValueError, match="an integer from 0 to 27"):
        env.step(action)


def test_illegal_action_names_the_legal_ids():
    env = make(0)
    state, _ = env.reset()
    legal = list(state["legal_actions"])
    illegal = next(a for a in range(NUM_ACTIONS) if a not in legal)
    with pytest.raises(IllegalActionError, match=r"not legal for player 0 \(jekyll\)") as error:
        env.step(illegal)
    assert f"legal action ids: {legal}" in str(error.value)
    assert isinstance(error.value, ValueError)
    assert list(env.get_state(0)["legal_actions"]) == legal  # the game did not move


def test_step_after_the_end_is_refused():
    env = make(0)
    env.reset()
    play_random(env, np.random.default_rng(0))
    with pytest.raises(IllegalActionError, match="game is over.*reset"):
        env.step(0)


def test_raw_actions_by_name():
    env = make(0)
    state, _ = env.reset()
    name = state["raw_legal_actions"][0]
    _, player = env.step(name, raw_action=True)
    assert env.action_recorder == [(JEKYLL, next(iter(state["legal_actions"])))]
    with pytest.raises(ValueError, match="unknown raw action 'joker'.*'declare greed'"):
        env.step("joker", raw_action=True)


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"game_num_players": 3}, r"config keys \['game_num_players'\] are not used"),
        ({"seed": -1}, "seed must be None or an integer"),
        ({"seed": 1.5}, "seed must be None or an integer"),
        ({"allow_step_back": "yes"}, "allow_step_back must be True or False"),
    ],
)
def test_bad_configs_are_refused(config, message):
    with pytest.raises(ValueError, match=message):
        rlcard.make(rc.ENV_ID, config=config)


def test_calls_out_of_order_and_bad_players_are_refused():
    env = make(0)
    with pytest.raises(ValueError, match=r"call reset\(\)"):
        env.step(0)
    with pytest.raises(ValueError, match=r"call set_agents"):
        env.run()
    with pytest.raises(ValueError, match="needs 2 agents"):
        env.set_agents([RandomAgent(NUM_ACTIONS)])
    with pytest.raises(ValueError, match="not an RLCard agent"):
        env.set_agents([RandomAgent(NUM_ACTIONS), object()])
    env.reset()
    with pytest.raises(ValueError, match=r"player_id must be 0 \(jekyll\) or 1 \(hyde\)"):
        env.get_state(2)
    with pytest.raises(ValueError, match="seed must be"):
        env.seed("7")
