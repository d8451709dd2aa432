"""``jekyll-hyde serve`` in a real browser: Debian's chromium, driven through Playwright.

The app is served by uvicorn in a thread of this process. The browser plays a whole game
by clicking, checks what the page shows against the server's game, opens its replay,
watches two agents and opens the rules, at phone and desktop sizes.
"""

from __future__ import annotations

import shutil

import pytest

pytest.importorskip("fastapi", reason="the web extra (fastapi) is not installed")
pytest.importorskip("httpx2", reason="the web extra (httpx2, the test client) is not installed")

from jekyll_hyde_app.web.app import create_app  # noqa: E402
from jekyll_hyde_app.web.sessions import Game  # noqa: E402
from jekyll_hyde_env.engine import apply_action, legal_actions, player_view  # noqa: E402
from jekyll_hyde_env.engine.cards import (  # noqa: E402
    AGENTS,
    DECLARE_BASE,
    POTIONS,
    Phase,
    mask_to_ids,
)
from jekyll_hyde_env.engine.rules import start_from_masks  # noqa: E402

from .web_helpers import (  # noqa: E402
    BROWSER_ARGS,
    DESKTOP,
    PHONE,
    chromium,
    potion_rule_seed,
    served,
)


@pytest.fixture()
def server():
    """The app served by uvicorn on a free loopback port, in a thread of this process."""
    app = create_app()
    with served(app) as url:
        yield app, url


# Every drawn element whose box sticks out of the viewport at the left or the right, and the
# page's own width when it scrolls sideways.
OVERFLOW_JS = """() => {
  const width = window.innerWidth;
  const out = [];
  for (const node of document.body.querySelectorAll('*')) {
    const box = node.getBoundingClientRect();
    if (box.width === 0 && box.height === 0) continue;
    if (getComputedStyle(node).visibility === 'hidden') continue;
    if (box.right > width + 1 || box.left < -1) {
      out.push(`${node.tagName}#${node.id}.${node.className} ${box.left}..${box.right}`);
    }
  }
  const page = document.documentElement.scrollWidth;
  if (page > width + 1) out.push(`the page is ${page} px wide`);
  return out;
}"""


# The prompt's contrast ratio (WCAG: text on its own background), the alpha of that
# background, and whether the prompt lies inside the table's panel.
PROMPT_JS = """() => {
  const prompt = document.querySelector('#status .prompt');
  const style = getComputedStyle(prompt);
  const rgba = (colour) => colour.match(/[\\d.]+/g).map(Number);
  const luminance = ([r, g, b]) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const back = rgba(style.backgroundColor);
  const [a, b] = [luminance(rgba(style.color)), luminance(back)];
  const box = prompt.getBoundingClientRect();
  const panel = document.querySelector('#table').getBoundingClientRect();
  return {
    ratio: (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05),
    alpha: back.length > 3 ? back[3] : 1,
    inside: box.left >= panel.left && box.right <= panel.right && box.width > 0,
  };
}"""


def _look(page, name: str, folder) -> None:
    """Screenshots of the page at phone and desktop width, into ``folder``; nothing may
    stick out of the viewport at either width. The page is left at phone width."""
    for size in (DESKTOP, PHONE):
        page.set_viewport_size(size)
        page.wait_for_timeout(50)
        shot = folder / f"{name}-{size['width']}x{size['height']}.png"
        page.screenshot(path=str(shot), full_page=True)
        assert shot.stat().st_size > 0
        assert page.evaluate(OVERFLOW_JS) == [], (name, size)


def _state_after(game: Game, applied: int):
    """The server game's state after its first ``applied`` actions, replayed."""
    state = start_from_masks(game.state.deals)
    for action in game.state.history[:applied]:
        apply_action(state, action)
    return state


def _check_seen_by(page, game: Game, seat: str) -> None:
    """The replay seen by ``seat``: its own hand face up; of the other hand exactly the
    cards ``player_view`` says it knows (RULES.md "What each player knows"), the rest
    face down."""
    page.select_option("#seat", seat)
    player = AGENTS.index(seat)
    other = AGENTS[1 - player]
    state = _state_after(game, page.evaluate("replay.frames[position].actions_applied"))
    known = mask_to_ids(player_view(state, player).opp_known)
    assert page.text_content("#top-title").startswith(f"{other}'s hand")  # the seat's below
    shown = [int(node.get_attribute("data-id")) for node in page.locator("#top-hand .known").all()]
    assert sorted(shown) == known
    backs = page.locator("#top-hand .card.back").count()
    assert backs == state.hands[1 - player].bit_count() - len(known)
    own = {int(node.get_attribute("data-id")) for node in page.locator("#bottom-hand .card").all()}
    assert own == set(mask_to_ids(state.hands[player]))


@pytest.mark.slow
def test_a_browser_plays_a_whole_game_by_clicking_and_opens_its_replay(server, tmp_path):
    """A phone-sized page (390x844) plays a whole game, with desktop-sized (1280x800) looks
    on the way: nothing sticks out of the viewport, the prompt is readable on the table,
    the exchange under the potion rule (R2.2) lights only cards that complete a legal give,
    and the replay seen by one player shows what that player knows."""
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="the web extra (playwright) is not installed"
    )
    app, url = server
    seed = potion_rule_seed("heuristic")  # Jekyll must give a potion in round 2
    errors: list[str] = []
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium(), args=BROWSER_ARGS)
        page = browser.new_page(viewport=PHONE)
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(url + "/")
        assert page.evaluate(OVERFLOW_JS) == []
        page.select_option("#role", "jekyll")
        page.select_option("#opponent", "heuristic")
        page.fill("#seed", str(seed))
        page.click("#new-game")
        page.wait_for_selector("#table:not(.hidden)")
        game_id = page.evaluate("game.game_id")
        game = app.state.games[game_id]
        _look(page, "play-start", tmp_path)
        prompt = page.evaluate(PROMPT_JS)
        assert prompt["ratio"] >= 4.5 and prompt["alpha"] == 1 and prompt["inside"], prompt
        checked_trick = checked_potion_rule = False
        clicks = 0
        while not page.is_visible("#result"):
            assert clicks < 80, "the game did not end"
            clicks += 1
            state = game.state
            with page.expect_response(lambda r: r.url.endswith("/play")):
                if page.is_visible("#give"):
                    choose = page.evaluate("game.table.choose")
                    first = 0
                    if state.phase == Phase.EXCHANGE and state.potion_rule[0] and choose > 1:
                        # R2.2: with a colour card chosen, only potions can complete the give.
                        page.click("#hand .card.legal:not(.potion) >> nth=0")
                        lit = {
                            int(node.get_attribute("data-id"))
                            for node in page.locator("#hand .card.legal:not(.selected)").all()
                        }
                        held = set(mask_to_ids(state.hands[0]))
                        if choose == 2:
                            assert lit == held & set(mask_to_ids(POTIONS))
                        assert lit < held and page.is_disabled("#give")
                        assert "R2.2" in page.inner_text("#choose-note")
                        checked_potion_rule = True
                        first = 1
                    for _ in range(first, choose):  # the highest cards: potions, for R2.2
                        page.click("#hand .card.legal:not(.selected) >> nth=-1")
                    assert page.is_enabled("#give")
                    page.click("#give")
                elif page.is_visible("#declare"):
                    page.click("#declare button >> nth=0")
                else:
                    page.click("#hand .card.legal >> nth=0")
            page.wait_for_function("!document.body.classList.contains('waiting')")
            assert page.inner_text("#error") == ""
            assert page.evaluate(OVERFLOW_JS) == []
            state = game.state
            # The page shows the server's table: marker, trick counts, the hand.
            marker = page.get_attribute("#track .track", "data-marker")
            assert marker == str(state.marker)
            if state.to_act == 0:
                assert page.inner_text("#tricks-you") == str(state.tricks[0])
                assert page.locator("#hand .card").count() == state.hands[0].bit_count()
                legal = {a for a in legal_actions(state) if a < DECLARE_BASE}
                shown = {
                    int(node.get_attribute("data-id"))
                    for node in page.locator("#hand .card.legal").all()
                }
                assert shown == legal
            if state.trick_log and not checked_trick:  # the last trick: who played what, why
                trick = state.trick_log[-1]
                for player, card in (
                    (trick.leader, trick.lead_card),
                    (1 - trick.leader, trick.follow_card),
                ):
                    slot = page.locator(f"#last-trick .slot[data-player={AGENTS[player]}]")
                    assert slot.locator(".card").get_attribute("data-id") == str(card)
                winner = page.locator("#last-trick .slot.winner").get_attribute("data-player")
                assert winner == AGENTS[trick.winner]
                assert "wins the trick" in page.inner_text("#last-explain")
                _look(page, "play", tmp_path)
                checked_trick = True
        assert checked_trick and checked_potion_rule
        assert state.phase == Phase.GAME_OVER
        banner = page.inner_text("#result")
        assert f"{AGENTS[state.winner]} wins" in banner and "replay" in banner.lower()
        assert f"marker is on {state.marker}" in banner or "reached space 10" in banner
        assert page.get_attribute("#track .track", "data-marker") == str(state.marker)
        last_round = len(state.round_log)
        assert page.inner_text("#round-note").startswith(f"Round {last_round} over: jekyll ")
        _look(page, "play-over", tmp_path)

        page.click("#replay-link")
        page.wait_for_selector("#table:not(.hidden)")
        assert page.inner_text("#frame-title") == "Round 1: the deal"
        assert page.locator("#bottom-hand .card:not(.back)").count() == 10
        page.click("#next")
        assert page.inner_text("#frame-title") == "Round 1: exchange"
        for seat in AGENTS:  # each knows the card it gave (RULES.md "What each player knows")
            _check_seen_by(page, game, seat)
            assert page.locator("#top-hand .card.known").count() == 1
        page.select_option("#seat", "both")
        for _ in range(2):  # trick 1, trick 2
            page.click("#next")
        assert page.inner_text("#frame-title") == "Round 1, trick 2"
        first_round = game.state.round_log[0].tricks
        lead = page.locator(f"#trick .slot[data-player={AGENTS[first_round[1].leader]}] .card")
        assert lead.get_attribute("data-id") == str(first_round[1].lead_card)
        page.click("#prev")
        assert page.inner_text("#frame-title") == "Round 1, trick 1"
        for seat in AGENTS:
            _check_seen_by(page, game, seat)
        _look(page, "replay", tmp_path)
        page.click("#last")
        assert "Game over" in page.inner_text("#result")

        page.goto(url + "/watch")
        page.fill("#seed", "3")
        page.fill("#speed", "0")
        page.click("#start")
        page.wait_for_function("document.querySelectorAll('#log li').length >= 6")
        page.click("#pause")
        _look(page, "watch", tmp_path)

        page.goto(url + "/rules")
        assert page.locator("main.rules h2").count() >= 3
        _look(page, "rules", tmp_path)
        browser.close()
    assert errors == []


def test_the_browser_test_is_skipped_with_advice_when_chromium_is_missing(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(pytest.skip.Exception, match=r"make browser.*apt-get install chromium"):
        chromium()
