"""``jekyll-hyde serve`` against hostile clients: batches of actions tell nothing hidden.

docs/web/threat-model.md, 1 (batches): a play request may carry several actions, and a
batch that ran on past the person's turn would tell, by the action it is refused at,
what the opponent is about to hand over or what the next deal holds. Each test sends
such batches, at a handover, at a round's end, and at random over whole games, and
checks that the refusals are the same whatever is hidden.
"""

from __future__ import annotations

import copy
import re

import numpy as np
import pytest

pytest.importorskip("fastapi", reason="the web extra (fastapi) is not installed")
pytest.importorskip("httpx2", reason="the web extra (httpx2, the test client) is not installed")

from jekyll_hyde_app.web.app import create_app  # noqa: E402
from jekyll_hyde_app.web.views import legal_gives  # noqa: E402
from jekyll_hyde_env.engine import (  # noqa: E402
    apply_action,
    legal_actions,
    new_game,
    player_view,
    sample_world,
)
from jekyll_hyde_env.engine.cards import (  # noqa: E402
    AGENTS,
    DECLARE_BASE,
    FIRST_POTION,
    HYDE,
    JEKYLL,
    NUM_ACTIONS,
    NUM_CARDS,
    Phase,
    card_name,
    mask_to_ids,
)
from jekyll_hyde_env.engine.rules import start_from_masks  # noqa: E402

from .web_helpers import FAST, TOKEN, first_give_move, game_at, raw_client  # noqa: E402


def _reached(condition):
    """The first state of seeded random games for which ``condition`` holds."""
    for seed in range(2000):
        rng = np.random.default_rng(seed)
        state = new_game(rng)
        while state.phase != Phase.GAME_OVER:
            if condition(state):
                return state
            apply_action(state, int(rng.choice(legal_actions(state))))
    raise AssertionError("no random game reached the state asked for")


def _refusals(client, path, headers, game, batches) -> set[str]:
    """Send each batch: each is refused (400) with nothing applied; the messages given."""
    history = list(game.state.history)
    messages = set()
    for batch in batches:
        response = client.post(path, json={"actions": batch}, headers=headers)
        assert response.status_code == 400, (batch, response.text)
        assert game.state.history == history, batch
        messages.add(response.json()["error"])
    return messages


def _names_a_card(message: str, cards) -> list[int]:
    return [
        card for card in cards if re.search(rf"\b{re.escape(card_name(card))}(?![\d+])", message)
    ]


@pytest.mark.parametrize("handover", ["exchange", "swap"])
def test_a_batch_running_past_the_handover_tells_nothing_of_the_opponents_pending_picks(
    handover,
):
    """Hyde leads once the exchange (marker on space 5, R3) or the Greed swap (Hyde won the
    trick, T6b, T7) is done. A batch of Hyde's picks followed by a lead of X would play X
    if Jekyll's pending picks hold it: every such batch is refused, before anything is
    applied, in the same words whatever X is (RULES.md "What each player knows")."""
    if handover == "exchange":
        deals = new_game(np.random.default_rng(5)).deals
        state = start_from_masks(deals, round_number=2, marker=5)
        while state.to_act == JEKYLL:  # Jekyll's two picks, hidden from Hyde
            apply_action(state, legal_actions(state)[-1])
    else:
        state = _reached(
            lambda s: s.phase == Phase.SWAP and s.to_act == HYDE and s.trick_log[-1].winner == HYDE
        )
    assert state.to_act == HYDE and state.picks[JEKYLL]
    unknown = [card for card in range(NUM_CARDS) if not state.hands[HYDE] >> card & 1]
    assert set(mask_to_ids(state.picks[JEKYLL])) < set(unknown)
    give = legal_gives(state)[0]
    app = create_app(allow=FAST)
    with raw_client(app) as client:
        path, headers, game = game_at(client, app, "hyde", state)
        for tail in (
            lambda x: [x],
            lambda x: [x, x],
            lambda x: [x, DECLARE_BASE],
            lambda x: [x, NUM_ACTIONS + 5],
        ):
            messages = _refusals(client, path, headers, game, [give + tail(x) for x in unknown])
            assert len(messages) == 1, sorted(messages)  # the same words for every X
            assert not _names_a_card(messages.pop(), unknown)
        played = client.post(path, json={"actions": give}, headers=headers)  # the game goes on
        assert played.status_code == 200, played.text
        assert game.state.phase == Phase.LEAD and game.state.to_act == HYDE


def test_a_batch_running_past_a_rounds_end_tells_nothing_of_the_next_deal():
    """Jekyll follows the tenth trick with the one card left, then would give the next
    round's first exchange card (R2.2): a batch that runs on past the trick is refused,
    before anything is applied, in the same words whatever card it names next."""
    state = _reached(
        lambda s: (
            s.phase == Phase.FOLLOW
            and s.to_act == JEKYLL
            and s.hands[JEKYLL].bit_count() == 1
            and s.round < 3
        )
    )
    last = legal_actions(state)[0]
    app = create_app(allow=FAST)
    with raw_client(app) as client:
        path, headers, game = game_at(client, app, "jekyll", state)
        for tail in (lambda x: [x], lambda x: [x, x], lambda x: [x, 99]):
            batches = [[last, *tail(x)] for x in range(NUM_CARDS)]
            messages = _refusals(client, path, headers, game, batches)
            assert len(messages) == 1, sorted(messages)
            assert not _names_a_card(messages.pop(), set(range(NUM_CARDS)) - {last})
        played = client.post(path, json={"actions": [last]}, headers=headers)
        assert played.status_code == 200, played.text
        assert game.state.round == state.round + 1 or game.state.phase == Phase.GAME_OVER


def test_a_batch_is_one_exchanges_or_swaps_picks_or_a_potion_led_with_its_colour():
    """What a batch may be: up to ``picks_left`` cards of the exchange or Greed swap under
    way, each legal after the ones before it (R2.2's potion rule included), or a potion
    led and its colour (T1, T2). Anything else is refused whole, naming what is allowed."""
    state = start_from_masks(new_game(np.random.default_rng(8)).deals, round_number=3)
    app = create_app(allow=FAST)
    with raw_client(app) as client:
        path, headers, game = game_at(client, app, "jekyll", state)
        give = legal_gives(state)[0]
        spare = next(c for c in mask_to_ids(state.hands[JEKYLL]) if c not in give)
        too_many = client.post(path, json={"actions": [*give, spare]}, headers=headers)
        assert too_many.status_code == 400
        error = too_many.json()["error"]
        assert "4 actions" in error and "at most 3" in error and "exchange" in error, error
        assert game.state.history == []
        assert client.post(path, json={"actions": give[:1]}, headers=headers).status_code == 200
        rest = client.post(path, json={"actions": give[1:]}, headers=headers)
        assert rest.status_code == 200, rest.text
        assert game.state.history[:3] == give

        leads = _reached(
            lambda s: (
                s.phase == Phase.LEAD
                and s.to_act == JEKYLL
                and s.hands[JEKYLL] >> FIRST_POTION
                and s.hands[JEKYLL] & ((1 << FIRST_POTION) - 1)
            )
        )
        path, headers, game = game_at(client, app, "jekyll", leads)
        potion = mask_to_ids(leads.hands[JEKYLL] >> FIRST_POTION << FIRST_POTION)[0]
        colour = mask_to_ids(leads.hands[JEKYLL] & ((1 << FIRST_POTION) - 1))[0]
        for batch in (
            [colour, DECLARE_BASE],
            [potion, colour],
            [potion, DECLARE_BASE, DECLARE_BASE + 1],
            [DECLARE_BASE, potion],
        ):
            response = client.post(path, json={"actions": batch}, headers=headers)
            assert response.status_code == 400, batch
            error = response.json()["error"]
            assert "exchange or Greed swap" in error and "potion" in error, error
        assert game.state.history == leads.history
        response = client.post(path, json={"actions": [potion, DECLARE_BASE + 2]}, headers=headers)
        assert response.status_code == 200, response.text
        assert game.state.history[len(leads.history) : len(leads.history) + 2] == [
            potion,
            DECLARE_BASE + 2,
        ]


def _random_batch(state, rng) -> list[int]:
    """A batch to try at the person's decision: ids drawn at random, or a legal start
    (picks, a card, a potion and its colour) with random ids after it."""
    if rng.random() < 0.25:
        return [int(a) for a in rng.integers(-1, NUM_ACTIONS + 2, size=rng.integers(1, 5))]
    legal = legal_actions(state)
    potions = [a for a in legal if FIRST_POTION <= a < DECLARE_BASE]
    if state.phase in (Phase.EXCHANGE, Phase.SWAP):
        gives = legal_gives(state)
        give = gives[rng.integers(len(gives))]
        start = give[: rng.integers(1, len(give) + 1)]
    elif state.phase == Phase.LEAD and potions and rng.random() < 0.5:
        start = [int(rng.choice(potions)), DECLARE_BASE + int(rng.integers(3))]
    else:
        start = [int(rng.choice(legal))]
    return start + [int(a) for a in rng.integers(0, NUM_ACTIONS, size=rng.integers(0, 3))]


def _outcome(game, state, batch) -> str:
    """What ``Game.play(batch)`` says on a copy of ``game`` set to ``state``."""
    trial = copy.copy(game)
    trial.state, trial.log = state.clone(), []
    try:
        trial.play(batch)
    except ValueError as error:
        return str(error)
    return "accepted"


def test_no_refused_batch_tells_anything_hidden_over_whole_games():
    """Whole games with random batches at every decision of the person: a batch's answer
    is the same in worlds re-dealt from what the person knows (``sample_world`` re-deals
    the opponent's unknown cards, its pending picks, the set-aside cards and the later
    deals), so it depends on nothing hidden; and no refusal names a card the person
    neither holds, nor sent, nor has seen."""
    app = create_app(allow=FAST)
    rng = np.random.default_rng(2024)
    answers = {"accepted": 0, "refused": 0}
    with raw_client(app) as client:
        for seed in range(8):
            body = {"role": AGENTS[seed % 2], "opponent": "random", "seed": seed}
            view = client.post("/api/games", json=body).json()
            game = app.state.games[view["game_id"]]
            path, headers = f"/api/games/{view['game_id']}/play", {TOKEN: view["token"]}
            while not view["game_over"]:
                state, human = game.state.clone(), game.human
                seen = player_view(state, human)
                known = seen.hand | seen.picks | seen.opp_known | seen.played | seen.opp_played
                worlds = [sample_world(seen, rng) for _ in range(3)]
                batches = [_random_batch(state, rng) for _ in range(4)]
                for batch in batches:
                    outcome = _outcome(game, state, batch)
                    assert {_outcome(game, world, batch) for world in worlds} == {outcome}, batch
                    if outcome != "accepted":
                        named = _names_a_card(outcome, set(range(NUM_CARDS)) - set(batch))
                        assert not [card for card in named if not known >> card & 1], outcome
                outcome = _outcome(game, state, batches[0])
                response = client.post(path, json={"actions": batches[0]}, headers=headers)
                if outcome == "accepted":
                    assert response.status_code == 200, response.text
                    answers["accepted"] += 1
                else:
                    assert response.status_code == 400 and response.json()["error"] == outcome
                    assert game.state.history == state.history
                    answers["refused"] += 1
                    response = client.post(path, json=first_give_move(view), headers=headers)
                view = response.json()
    assert answers["accepted"] > 50 and answers["refused"] > 50, answers
