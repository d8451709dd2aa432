"""ISMCTS in C (``_rollout.ismcts``) against its Python reference in ``jekyll_hyde_agents.ismcts``.

The C search draws its worlds with ``_rollout.determinise`` instead of
``sample_world`` and runs the same SO-ISMCTS loop. Its random numbers differ,
so the checks are: what a view fixes is kept in every world, the hidden cards
are drawn with the same frequencies, and the root's visit shares agree over
many searches.
"""

from __future__ import annotations

import numpy as np
import pytest

from jekyll_hyde_agents import ISMCTSAgent, ISMCTSConfig, rollout
from jekyll_hyde_env.engine import apply_action, is_terminal, legal_actions, new_game
from jekyll_hyde_env.engine.cards import COLOUR_MASKS, POTIONS, Phase
from jekyll_hyde_env.engine.information import player_view, sample_world

pytestmark = pytest.mark.skipif(
    not rollout.core_available(), reason="the C core jekyll_hyde_agents._rollout is not compiled"
)

ALL = (1 << 25) - 1
# Core tuple fields (agents/rollout.py, to_core).
HANDS, PICKS, PICKS_LEFT, POTION_RULE, DEALS = 5, 7, 9, 11, 18
# round to leader, lead card, declared colour, ranks, tricks, winner
PUBLIC = (0, 1, 2, 3, 4, 13, 14, 15, 16, 17, 24)


def decision_views(games: int = 8, every: int = 4) -> list:
    """The acting player's view at every ``every``-th decision with a choice, in random games."""
    rng = np.random.default_rng(11)
    views, count = [], 0
    for seed in range(games):
        state = new_game(np.random.default_rng(seed))
        while not is_terminal(state):
            legal = legal_actions(state)
            if len(legal) > 1:
                count += 1
                if count % every == 0:
                    views.append(player_view(state, state.to_act))
            apply_action(state, legal[rng.integers(len(legal))])
    return views


VIEWS = decision_views()


def test_the_views_cover_every_phase_and_the_hidden_constraints():
    assert {view.phase for view in VIEWS} == {int(p) for p in Phase if p != Phase.GAME_OVER}
    assert any(view.opp_void for view in VIEWS)  # T3: colours the opponent cannot hold
    assert any(view.opp_known for view in VIEWS)  # cards given to the opponent
    assert any(view.opp_gave_potion is False for view in VIEWS)  # R2.2: at most one potion dealt
    assert any(view.opp_picks_made for view in VIEWS)  # hidden exchange or swap picks


def test_determinise_keeps_everything_the_view_shows():
    rng = np.random.default_rng(0)
    for view in VIEWS:
        me, opp = view.player, 1 - view.player
        spec = rollout.search_spec(view)
        reference = rollout.to_core(sample_world(view, rng))
        for seed in range(20):
            world = rollout._core.determinise(spec, seed)
            assert [world[i] for i in PUBLIC] == [reference[i] for i in PUBLIC]
            for field in (HANDS, PICKS, PICKS_LEFT, POTION_RULE):
                assert world[field + me] == reference[field + me]
            opp_hand = world[HANDS + opp]
            assert opp_hand.bit_count() == view.opp_hand_size
            assert opp_hand & view.opp_known == view.opp_known
            seen = view.hand | view.played | view.opp_played
            assert opp_hand & seen == 0
            voids = sum(COLOUR_MASKS[c] for c in range(3) if view.opp_void >> c & 1)
            assert opp_hand & voids & ~view.opp_known == 0  # T3
            opp_dealt = world[DEALS + 2 * (view.round - 1) + opp]
            assert world[DEALS + 2 * (view.round - 1) + me] == view.dealt
            if view.opp_gave_potion is False:
                assert (opp_dealt & POTIONS).bit_count() <= 1  # R2.2
            assert world[PICKS + opp] & ~opp_hand == 0
            assert world[PICKS + opp].bit_count() == (
                view.opp_picks_made if view.phase in (Phase.EXCHANGE, Phase.SWAP) else 0
            )
            for later in range(view.round, 3):  # R2.1: later rounds dealt afresh
                jekyll, hyde = world[DEALS + 2 * later], world[DEALS + 2 * later + 1]
                assert jekyll.bit_count() == hyde.bit_count() == 10 and jekyll & hyde == 0


def hidden_card_frequencies(worlds, opp: int, round_number: int) -> np.ndarray:
    """Per card: how often the opponent holds it, picked it, and was dealt it."""
    counts = np.zeros((3, 25))
    for world in worlds:
        for row, mask in enumerate(
            (world[HANDS + opp], world[PICKS + opp], world[DEALS + 2 * (round_number - 1) + opp])
        ):
            counts[row] += [(mask >> card) & 1 for card in range(25)]
    return counts / len(worlds)


def test_determinise_draws_the_hidden_cards_like_sample_world():
    rng = np.random.default_rng(1)
    draws = 1500
    for view in VIEWS[::6]:
        spec = rollout.search_spec(view)
        in_c = [rollout._core.determinise(spec, seed) for seed in range(draws)]
        in_python = [rollout.to_core(sample_world(view, rng)) for _ in range(draws)]
        opp = 1 - view.player
        gap = np.abs(
            hidden_card_frequencies(in_c, opp, view.round)
            - hidden_card_frequencies(in_python, opp, view.round)
        )
        assert gap.max() < 0.06, (view.phase, gap.max())


def root_shares(view, seeds, in_core: bool, simulations: int = 300) -> np.ndarray:
    shares = np.zeros(28)
    for seed in seeds:
        agent = ISMCTSAgent(ISMCTSConfig(num_simulations=simulations), seed=seed)
        root = agent._search_in_core(view) if in_core else agent._search_in_python(view)
        assert agent.last_simulations == simulations
        visits = np.zeros(28)
        for action, child in root.children.items():
            visits[action] = child.visits
            assert child.available >= child.visits >= 1
        assert visits.sum() == simulations
        assert set(root.children) <= set(np.flatnonzero(legal_mask_of(view)))
        shares += visits / simulations
    return shares / len(seeds)


def legal_mask_of(view) -> np.ndarray:
    world = sample_world(view, np.random.default_rng(0))
    mask = np.zeros(28, dtype=bool)
    mask[legal_actions(world)] = True
    return mask


def test_core_search_gives_the_python_search_s_visit_shares():
    views = [view for view in VIEWS if legal_mask_of(view).sum() >= 3][:4]
    for view in views:
        in_c = root_shares(view, range(40), in_core=True)
        in_python = root_shares(view, range(40), in_core=False)
        assert np.abs(in_c - in_python).max() < 0.08, (view.phase, in_c, in_python)


def test_core_search_uses_only_what_the_player_sees():
    rng = np.random.default_rng(3)
    for view in VIEWS[:10]:
        other = player_view(sample_world(view, rng), view.player)
        assert rollout.search_spec(other) == rollout.search_spec(view)


def test_core_search_is_seeded_and_stops_on_its_time_budget():
    view = VIEWS[5]
    first = ISMCTSAgent(ISMCTSConfig(num_simulations=500), seed=4).search(view)
    again = ISMCTSAgent(ISMCTSConfig(num_simulations=500), seed=4).search(view)
    assert {a: c.visits for a, c in first.children.items()} == {
        a: c.visits for a, c in again.children.items()
    }
    agent = ISMCTSAgent(ISMCTSConfig(num_simulations=10**8, time_budget=0.05), seed=0)
    agent.search(view)
    assert 0 < agent.last_simulations < 10**8


def test_core_search_refuses_a_malformed_spec():
    spec = list(rollout.search_spec(VIEWS[5]))
    with pytest.raises(TypeError, match="tuple of 32 ints"):
        rollout._core.ismcts(tuple(spec[:-1]), 10, 0.7, 0, 0.0)
    with pytest.raises(ValueError, match="inconsistent"):
        rollout._core.ismcts((5, *spec[1:]), 10, 0.7, 0, 0.0)  # no player 5
    spec[18] = 30  # more unknown opponent cards than there are cards left
    with pytest.raises(ValueError, match="inconsistent"):
        rollout._core.ismcts(tuple(spec), 10, 0.7, 0, 0.0)
    with pytest.raises(ValueError, match="n >= 1"):
        rollout._core.ismcts(rollout.search_spec(VIEWS[5]), 0, 0.7, 0, 0.0)


def test_a_determinised_world_shows_the_player_the_same_observation():
    """The spec carries the view's public record, so a world drawn from it encodes
    (with the C encoder) to exactly the view's observation."""
    from jekyll_hyde_env.core import _core as batched_core
    from jekyll_hyde_env.observation import encode

    for i, view in enumerate(VIEWS):
        world = rollout._core.determinise(rollout.search_spec(view), i)
        observed = np.frombuffer(batched_core.encode(world, view.player), np.int8)
        np.testing.assert_array_equal(observed, encode(view))
