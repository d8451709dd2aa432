"""BatchedGames, the C games of jekyll_hyde_env.vector, against the engine and the AEC env.

The differential tests play the same deals and actions in the batched games
and in the AEC environment (whose rules are the Python engine) in lockstep and
compare everything at every step: observation bytes, masks, the player to act,
rewards, phase, round, marker, tricks and the full state.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from jekyll_hyde_agents.rollout import to_core
from jekyll_hyde_env import raw_env
from jekyll_hyde_env.core import _core
from jekyll_hyde_env.engine.cards import AGENTS, FIRST_POTION, NUM_CARDS, mask_to_ids
from jekyll_hyde_env.engine.rules import IllegalActionError
from jekyll_hyde_env.observation import LAYOUT
from jekyll_hyde_env.vector import BatchedGames


def random_deal(rng: np.random.Generator, potion_heavy: bool = False) -> dict[str, list[int]]:
    """One round's deal; potion-heavy deals give each hand two potions (R2.2's rule)."""
    if potion_heavy:
        potions = rng.permutation(np.arange(FIRST_POTION, NUM_CARDS)).tolist()
        others = rng.permutation(FIRST_POTION).tolist()
        jekyll = potions[:2] + others[:8]
        hyde = potions[2:] + others[8:16]
    else:
        order = rng.permutation(NUM_CARDS).tolist()
        jekyll, hyde = order[:10], order[10:20]
    return {"jekyll": jekyll, "hyde": hyde}


def game_deals(rng: np.random.Generator, potion_heavy: bool) -> list[dict[str, list[int]]]:
    return [random_deal(rng, potion_heavy) for _ in range(3)]


def play_in_lockstep(num_games: int, seed: int, potion_heavy: bool) -> int:
    """Random games in BatchedGames and in AEC envs side by side; returns decisions compared."""
    rng = np.random.default_rng(seed)
    deals = [game_deals(rng, potion_heavy) for _ in range(num_games)]
    games = BatchedGames(num_games)
    games.reset(seed=seed, options={"deals": deals})
    envs = []
    for game_deal in deals:
        env = raw_env()
        env.reset(options={"deals": game_deal})
        envs.append(env)
    compared = 0
    while True:
        live = [i for i in range(num_games) if not games.terminated[i]]
        for i in range(num_games):
            env = envs[i]
            assert games.state(i) == to_core(env.game), f"game {i} diverged"
            assert games.phase[i] == env.game.phase
            assert games.round[i] == env.game.round
            assert games.marker[i] == env.game.marker
            assert tuple(games.tricks[i]) == tuple(env.game.tricks)
            if games.terminated[i]:
                assert games.current_player[i] == -1
                assert not games.action_mask[i].any()
                continue
            agent = env.agent_selection
            assert games.current_player[i] == AGENTS.index(agent)
            seen = env.observe(agent)
            assert games.observation[i].tobytes() == seen["observation"].tobytes()
            assert games.action_mask[i].tobytes() == seen["action_mask"].tobytes()
        if not live:
            break
        actions = np.zeros(num_games, np.int64)
        for i in live:
            legal = np.flatnonzero(games.action_mask[i])
            actions[i] = legal[rng.integers(len(legal))]
        games.step(actions)
        for i in live:
            env = envs[i]
            mover = env.agent_selection
            env.step(int(actions[i]))
            compared += 1
            if env.game.phase == 5:
                # once over, the row shows the view of the player who moved last
                final = env.observe(mover)["observation"]
                assert games.observation[i].tobytes() == final.tobytes()
                expected = [env.rewards["jekyll"], env.rewards["hyde"]]
                assert games.rewards[i].tolist() == expected
                assert games.terminated[i] and games.winner[i] == env.game.winner
            else:
                assert not games.rewards[i].any()
    return compared


@pytest.mark.parametrize(("seed", "potion_heavy"), [(1, False), (2, True)])
def test_batched_games_match_the_aec_env_step_by_step(seed, potion_heavy):
    compared = play_in_lockstep(num_games=1000, seed=seed, potion_heavy=potion_heavy)
    assert compared > 1000 * 60


def test_the_c_layout_is_the_observation_layout():
    assert _core.layout() == tuple((name, size) for name, size, _ in LAYOUT)


def test_observe_gives_each_seat_its_own_view():
    rng = np.random.default_rng(5)
    deals = [game_deals(rng, False) for _ in range(50)]
    games = BatchedGames(50)
    games.reset(seed=5, options={"deals": deals})
    envs = []
    for deal in deals:
        env = raw_env()
        env.reset(options={"deals": deal})
        envs.append(env)
    for _ in range(40):
        actions = games.sample_actions()
        games.step(actions)
        for i, env in enumerate(envs):
            if env.game.phase != 5:
                env.step(int(actions[i]))
        for seat, agent in enumerate(AGENTS):
            observation, mask = games.observe(agent)
            for i, env in enumerate(envs):
                seen = env.observe(agent)
                assert observation[i].tobytes() == seen["observation"].tobytes()
                assert mask[i].tobytes() == seen["action_mask"].tobytes()
            again, _ = games.observe(seat)
            assert np.array_equal(again, observation)


def test_the_same_seed_gives_the_same_games_whatever_the_batch_size_and_split():
    whole = BatchedGames(8)
    whole.reset(seed=77)
    first, second = BatchedGames(4), BatchedGames(4)
    first.reset(seed=77)
    second.reset(seed=77, options={"first_game": 4})
    assert np.array_equal(whole.deals[:4], first.deals)
    assert np.array_equal(whole.deals[4:], second.deals)
    larger = BatchedGames(20)
    larger.reset(seed=77)
    assert np.array_equal(larger.deals[:8], whole.deals)
    # Random actions come from each game's own stream too: the games stay equal.
    for _ in range(30):
        whole.step(whole.sample_actions())
        first.step(first.sample_actions())
        second.step(second.sample_actions())
    assert np.array_equal(whole.observation[:4], first.observation)
    assert np.array_equal(whole.observation[4:], second.observation)
    other = BatchedGames(8)
    other.reset(seed=78)
    assert not np.array_equal(other.deals, whole.deals)


def test_deals_are_complete_and_disjoint():
    games = BatchedGames(500)
    games.reset(seed=3)
    jekyll, hyde = games.deals[..., 0], games.deals[..., 1]
    assert (jekyll & hyde == 0).all()
    counts = np.vectorize(lambda mask: int(mask).bit_count())
    assert (counts(jekyll) == 10).all() and (counts(hyde) == 10).all()
    # Over many deals every card lands in each hand about 10/25 of the time.
    share = np.mean([[(int(m) >> c) & 1 for c in range(NUM_CARDS)] for m in jekyll.ravel()], 0)
    assert np.abs(share - 0.4).max() < 0.06


def test_autoreset_starts_a_finished_game_on_the_next_step():
    games = BatchedGames(64, autoreset=True)
    games.reset(seed=9)
    ended = np.zeros(64, bool)
    first_deals = games.deals.copy()
    for _ in range(400):
        was_over = games.terminated.copy()
        games.step(games.sample_actions())
        if was_over.any():
            # the step after the end: a fresh game, reward 0, not terminated
            assert not games.terminated[was_over].any()
            assert not games.rewards[was_over].any()
            assert (games.round[was_over] == 1).all() and (games.phase[was_over] == 0).all()
        ended |= games.terminated
    assert ended.all()
    assert not np.array_equal(games.deals, first_deals)


def test_without_autoreset_finished_games_stay_over_and_ignore_actions():
    games = BatchedGames(16)
    games.reset(seed=4)
    while not games.terminated.all():
        games.step(games.sample_actions())
    before = [games.state(i) for i in range(16)]
    games.step(np.zeros(16, np.int64))
    assert [games.state(i) for i in range(16)] == before
    assert not games.rewards.any()
    assert (games.sample_actions() == -1).all()
    assert set(np.unique(games.winner)) <= {0, 1}


def test_an_illegal_action_raises_naming_the_game_and_changes_nothing():
    games = BatchedGames(6)
    games.reset(seed=2)
    actions = games.sample_actions()
    hand = int(games.deals[3, 0, 0])
    actions[3] = next(c for c in range(NUM_CARDS) if not hand >> c & 1)  # not in Jekyll's hand
    legal = np.flatnonzero(games.action_mask[3]).tolist()
    before = [games.state(i) for i in range(6)]
    observation = games.observation.copy()
    with pytest.raises(IllegalActionError, match=r"game 3: illegal action \d+ for jekyll") as info:
        games.step(actions)
    assert f"legal actions are {legal}" in str(info.value)
    assert [games.state(i) for i in range(6)] == before
    assert np.array_equal(games.observation, observation)


def test_illegal_terminate_ends_only_that_game_with_minus_one():
    games = BatchedGames(4, illegal="terminate")
    games.reset(seed=2)
    actions = games.sample_actions()
    actions[1] = 27  # declaring is never legal in the exchange
    games.step(actions)
    assert games.terminated.tolist() == [False, True, False, False]
    assert games.rewards[1].tolist() == [-1.0, 0.0]
    assert games.current_player[1] == -1 and games.winner[1] == -1
    assert not games.action_mask[1].any()


def test_bad_input_is_refused_with_a_clear_error():
    games = BatchedGames(3)
    with pytest.raises(RuntimeError, match="reset"):
        games.step(np.zeros(3, np.int64))
    games.reset(seed=0)
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        games.step(np.zeros(4, np.int64))
    with pytest.raises(ValueError, match="each action must be an integer from 0 to 27: 0-24 name"):
        games.step(np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="unknown reset options"):
        games.reset(options={"deal": []})
    with pytest.raises(ValueError, match="one per game"):
        games.reset(options={"deals": [None]})
    bad = {"jekyll": list(range(10)), "hyde": list(range(9, 19))}
    with pytest.raises(ValueError, match=r"game 1: .*in both hands"):
        games.reset(options={"deals": [None, [bad], None]})
    with pytest.raises(ValueError, match="num_games"):
        BatchedGames(0)
    with pytest.raises(ValueError, match="illegal"):
        BatchedGames(2, illegal="ignore")
    with pytest.raises(ValueError, match="player"):
        games.observe(2)
    with pytest.raises(ValueError, match="read-only"):
        games.observation[0, 0] = 1


def test_fixed_deals_fix_only_their_rounds():
    rng = np.random.default_rng(0)
    deal = random_deal(rng)
    games = BatchedGames(2)
    games.reset(seed=1, options={"deals": [[deal], None]})
    assert mask_to_ids(int(games.deals[0, 0, 0])) == sorted(deal["jekyll"])
    assert mask_to_ids(int(games.deals[0, 0, 1])) == sorted(deal["hyde"])
    # round 2 of game 0 and game 1 are dealt from the seed
    assert int(games.deals[0, 1, 0]).bit_count() == 10
    assert int(games.deals[1, 0, 0]) != int(games.deals[0, 0, 0])


def test_stepping_allocates_nothing():
    games = BatchedGames(256, autoreset=True)
    games.reset(seed=0)
    actions = np.empty(256, np.int64)
    for _ in range(50):
        games.step(games.sample_actions(actions))
    tracemalloc.start()
    try:
        baseline, _ = tracemalloc.get_traced_memory()
        for _ in range(4000):  # about a million decisions
            games.step(games.sample_actions(actions))
        current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert current - baseline < 4096
    assert peak - baseline < 64 * 1024


def test_play_random_moves_only_the_given_seat_until_it_is_not_to_act():
    games = BatchedGames(200)
    games.reset(seed=6)
    seats = np.full(200, 1, np.int8)
    seats[:100] = 5  # no such seat: these games are left alone
    while not games.terminated[100:].all():
        games.play_random(seats)
        assert not (games.current_player[100:] == 1).any()
        before = [games.state(i) for i in range(100)]
        actions = games.sample_actions()
        mover = games.current_player == 0
        games.step(actions, where=mover)
        assert [games.state(i) for i in range(100) if not mover[i]] == [
            state for i, state in enumerate(before) if not mover[i]
        ]
    assert set(games.winner[100:].tolist()) <= {0, 1}


def test_missing_or_read_only_outputs_are_refused_not_written():
    games = BatchedGames(4)
    games.reset(seed=0)
    with pytest.raises(ValueError, match="mask"):
        games.observe(0, out=(np.zeros((4, 327), np.int8), None))
    frozen = np.frombuffer(bytes(32), np.int64)
    with pytest.raises(ValueError, match="writable"):
        games.integers(5, out=frozen)
    with pytest.raises(ValueError, match="writable"):
        games.sample_actions(out=frozen)
    assert frozen.tobytes() == bytes(32)
    with pytest.raises(ValueError, match="actions is required"):
        games._games.step(None, None)


def test_core_states_out_of_range_are_refused():
    games = BatchedGames(1)
    games.reset(seed=0)
    state = list(games.state(0))
    for index, value in [(16, 100000), (9, 7), (14, 5), (3, 2), (33, 10), (5, 1 << 30)]:
        bad = state.copy()
        bad[index] = value
        with pytest.raises(ValueError, match="out of range"):
            _core.encode(tuple(bad), 0)


def test_play_random_and_reset_games_leave_other_games_rewards_alone():
    games = BatchedGames(64)
    games.reset(seed=8)
    while not games.terminated.any():
        games.step(games.sample_actions())
    ended = games.terminated.copy()
    rewards = games.rewards.copy()
    games.play_random(np.where(ended, 5, games.current_player).astype(np.int8))
    assert np.array_equal(games.rewards[ended], rewards[ended])
    games.reset_games(~ended & ~games.terminated)
    assert np.array_equal(games.rewards[ended], rewards[ended])


def test_the_package_loads_the_c_core_only_when_the_batched_games_are_used():
    import subprocess
    import sys

    code = (
        "import sys, jekyll_hyde_env; "
        "assert 'jekyll_hyde_env.core._core' not in sys.modules; "
        "jekyll_hyde_env.BatchedGames; "
        "assert 'jekyll_hyde_env.core._core' in sys.modules"
    )
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_seats_are_range_checked_never_wrapped():
    games = BatchedGames(2)
    games.reset(seed=4)
    before = games.observation.copy()
    allowed = r"0 \(jekyll\) or 1 \(hyde\); any other value from -128 to 127 leaves that game"
    with pytest.raises(ValueError, match=rf"seats\[1\] is 265; each seat must be {allowed}"):
        games.play_random(np.array([2, 265], np.int64))  # 265 wrapped to int8 is seat 9
    with pytest.raises(ValueError, match="integer array of shape"):
        games.play_random(np.array([0.0, 1.0]))
    assert np.array_equal(games.observation, before)  # no game moved
    games.play_random(np.array([0, 2], np.int64))  # an int64 array: 2 leaves game 1 alone
    assert games.current_player[0] != 0 and np.array_equal(games.observation[1], before[1])
    seats = np.array([1, 0], np.int64)
    assert np.array_equal(games.observe(seats)[0], games.observe(seats.astype(np.int8))[0])
    with pytest.raises(ValueError, match=r"seats\[0\] is 2; each seat must be 0 \(jekyll\) or 1"):
        games.observe(np.array([2, 0]))
    # int8 arrays, the envs' own (checked with one reduce), are refused alike
    for bad, value in (([0, -1], -1), ([0, 2], 2), ([0, -128], -128)):
        with pytest.raises(ValueError, match=rf"seats\[1\] is {value}; each seat must be 0"):
            games.observe(np.array(bad, np.int8))
    strided = np.array([1, 9, 0, 9], np.int8)[::2]  # not contiguous: copied, then read
    assert np.array_equal(games.observe(strided)[0], games.observe(seats)[0])
    with pytest.raises(ValueError, match="player must be 0, 1"):
        games.observe(np.True_)


def test_seeds_from_2_to_the_64_are_refused_not_reduced_onto_smaller_ones():
    """The splitmix streams are keyed by a 64-bit seed: 2**64 would deal seed 0's games.

    (The Gym vector env deals numpy's streams, as gymnasium's sync vector env does, and
    takes seeds of any size: tests/test_gym_vector_sync.py.)"""

    def first(seed):
        games = BatchedGames(4)
        games.reset(seed=seed)
        return games.observation.tobytes()

    assert first(2**64 - 1) == first(np.uint64(2**64 - 1)) != first(0)
    for bad in (2**64, 2**64 + 5, 2**100):
        with pytest.raises(
            ValueError,
            match=r"seed must be None or an integer >= 0 and < 2\*\*64 \(a Python or numpy int\), "
            rf"got {bad}$",
        ):
            first(bad)


def test_first_game_numbers_stay_below_2_to_the_64():
    """Game numbers ``first_game + i`` would wrap past 2**64 onto games 0, 1, ..."""
    games = BatchedGames(4)
    games.reset(seed=3, options={"first_game": 2**64 - 4})  # games 2**64-4 .. 2**64-1
    last = games.deals.copy()
    games.reset(seed=3)
    assert not np.array_equal(last, games.deals)
    allowed = r"options\['first_game'\] must be an integer from 0 to 2\*\*64 - 4"
    for bad in (2**64 - 3, 2**64, -1, True, 1.0):
        with pytest.raises(ValueError, match=allowed):
            games.reset(seed=3, options={"first_game": bad})
