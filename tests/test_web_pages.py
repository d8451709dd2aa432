"""``jekyll-hyde serve``: the pages, and what they are sent.

The pages and their files are served, with nothing fetched from elsewhere, and fit a
phone; the rules page is the players' rules as HTML; at every exchange and Greed swap the
play page is sent exactly the gives the engine accepts; a replay's frames tell what each
player knows of the other's hand.
"""

from __future__ import annotations

import itertools
import re
from html import escape

import pytest

pytest.importorskip("fastapi", reason="the web extra (fastapi) is not installed")
pytest.importorskip("httpx2", reason="the web extra (httpx2, the test client) is not installed")

from jekyll_hyde_app.web.pages import markdown_html  # noqa: E402
from jekyll_hyde_env.engine import (  # noqa: E402
    IllegalActionError,
    apply_action,
    new_game,
    player_view,
)
from jekyll_hyde_env.engine.cards import AGENTS, POTIONS, mask_to_ids  # noqa: E402
from jekyll_hyde_env.rulebook import rules_text  # noqa: E402

from .web_helpers import play_out, potion_rule_seed, top_cards_move  # noqa: E402


def test_pages_and_rules_are_served(client):
    for path, text in (("/", "New game"), ("/replay", "record-file"), ("/watch", "Speed")):
        response = client.get(path)
        assert response.status_code == 200 and text in response.text
    rules = client.get("/rules")
    assert rules.status_code == 200 and "T3" in rules.text
    for name in ("common.js", "play.js", "replay.js", "watch.js", "style.css"):
        assert client.get(f"/static/{name}").status_code == 200
    agents = client.get("/api/agents").json()
    assert agents["default"] == "heuristic" and "champion" in agents["suggested"]
    # Nothing is fetched from elsewhere at run time.
    for path in ("/", "/replay", "/watch", "/static/common.js", "/static/style.css"):
        assert "http://" not in client.get(path).text and "https://" not in client.get(path).text


def _engine_gives(state) -> set[frozenset[int]]:
    """Every set of ``picks_left`` cards of the hand that the engine accepts, in some order,
    as the rest of the exchange or Greed swap (R2.2, T6b)."""
    player = state.to_act
    free = mask_to_ids(state.hands[player] & ~state.picks[player])
    accepted = set()
    for cards in itertools.combinations(free, state.picks_left[player]):
        for order in itertools.permutations(cards):
            trial = state.clone()
            try:
                for card in order:
                    apply_action(trial, card)
            except IllegalActionError:
                continue
            accepted.add(frozenset(cards))
            break
    return accepted


def test_the_page_is_sent_every_legal_give_and_the_potion_rule_leaves_out_the_rest(client, app):
    """At every exchange and Greed swap of a whole game, ``legal_gives`` holds exactly the
    gives the engine accepts, each in an order it accepts. In a round-2 exchange under the
    potion rule (R2.2) a colour card completes a give only with a potion, and a give of two
    colour cards is refused."""
    seed = potion_rule_seed("lowest")
    view = client.post("/api/games", json={"role": "jekyll", "opponent": "lowest", "seed": seed})
    view = view.json()
    game = app.state.games[view["game_id"]]
    play = f"/api/games/{view['game_id']}/play"
    checked = {"exchange": 0, "swap": 0}
    potion_rule_checked = False
    while not view["game_over"]:
        table = view["table"]
        state = game.state
        if not table["choose"]:
            assert table["legal_gives"] == []
            view = client.post(play, json=top_cards_move(view)).json()
            continue
        gives = table["legal_gives"]
        assert {frozenset(give) for give in gives} == _engine_gives(state)
        assert all(len(give) == table["choose"] for give in gives)
        for give in gives:  # each in an order the engine accepts
            trial = state.clone()
            for card in give:
                apply_action(trial, card)
        checked[table["phase"]] += 1
        if table["phase"] == "exchange" and table["round"] == 2:
            assert state.potion_rule[0] and table["choose"] == 2
            potions = set(mask_to_ids(state.hands[0] & POTIONS))
            colours = [card["id"] for card in table["hand"] if not card["potion"]]
            assert all(set(give) & potions for give in gives)
            for colour in colours:  # a colour card: completed by a potion and nothing else
                partners = {c for give in gives if colour in give for c in give} - {colour}
                assert partners == potions
            response = client.post(play, json={"actions": colours[:2]})
            assert response.status_code == 400 and "R2.2" in response.json()["error"]
            potion_rule_checked = True
        response = client.post(play, json={"actions": gives[0]})
        assert response.status_code == 200, response.json()
        view = response.json()
    assert potion_rule_checked
    assert checked["exchange"] == len(game.state.round_log)


def test_the_rules_page_renders_its_markdown_as_html(client):
    html = client.get("/rules").text
    assert "<h1>Jekyll vs Hyde: the rules, for players</h1>" in html
    headings = re.findall(r"^## (.+)$", rules_text(), flags=re.MULTILINE)
    assert len(headings) >= 3
    for heading in headings:
        assert f"<h2>{escape(heading, quote=False)}</h2>" in html
    for tag in ("<ol>", "<ul>", "<li>", "<strong>Pride</strong>", "<em>Potion rule"):
        assert tag in html
    assert "##" not in html and "**" not in html and "<pre" not in html
    assert "name='viewport'" in html

    sample = (
        "## Cards <b>bold</b>\n\n| card | id |\n|---|---|\n| `potion 2+` | 21 |\n\n"
        "Text with *emphasis*.\n\n```\nplay 3 <4>\n```\n\n<script>alert(1)</script>\n\n"
        "[a link](javascript:alert(1))\n"
    )
    out = markdown_html(sample)
    assert "<h2>Cards &lt;b&gt;bold&lt;/b&gt;</h2>" in out
    assert "<table>" in out and "<th>card</th>" in out and "<td><code>potion 2+</code></td>" in out
    assert "<em>emphasis</em>" in out and "<pre><code>play 3 &lt;4&gt;" in out
    assert "<script>" not in out and "&lt;script&gt;alert(1)&lt;/script&gt;" in out
    assert "javascript:" not in out.replace("[a link](javascript:alert(1))", "")


def test_every_page_fits_a_phone(client):
    for path in ("/", "/replay", "/watch", "/rules"):
        text = client.get(path).text.replace("'", '"')
        assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in text


def test_replay_frames_tell_what_each_player_knows_of_the_other_hand(client, app):
    """``known`` in each replay frame is ``player_view``'s ``opp_known`` after the frame's
    actions: the cards each player gave the other that the other still holds."""
    view = client.post("/api/games", json={"role": "hyde", "opponent": "heuristic", "seed": 8})
    final = play_out(client, app, view.json())
    game = app.state.games[final["game_id"]]
    record = client.get(f"/api/games/{final['game_id']}/record").json()
    frames = client.post("/api/replay", json=record).json()["frames"]
    assert client.get(f"/api/games/{final['game_id']}/replay").json()["frames"] == frames
    state = new_game(None, [dict(deal) for deal in record["deals"]])
    applied = 0
    seen_known = 0
    for frame in frames:
        assert frame["actions_applied"] >= applied
        for item in record["actions"][applied : frame["actions_applied"]]:
            apply_action(state, item["action"])
        applied = frame["actions_applied"]
        for player, agent in enumerate(AGENTS):
            known = frame["known"][agent]
            assert known == mask_to_ids(player_view(state, player).opp_known), frame["title"]
            other = {card["id"] for card in frame["hands"][AGENTS[1 - player]]}
            assert set(known) <= other
            seen_known += len(known)
    assert applied == len(record["actions"]) == len(game.state.history)
    exchanges = [frame for frame in frames if frame["title"].endswith("exchange")]
    for frame in exchanges:  # each player gave r cards and the other holds them all (R2.2)
        assert all(len(frame["known"][agent]) == frame["round"] for agent in AGENTS)
    assert seen_known > 0
