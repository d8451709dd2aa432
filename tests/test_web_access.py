"""The play page for everyone: by keyboard, with a screen reader, on a phone, again and again.

A whole game is played with the keyboard alone (Tab, the arrow keys, Enter and Space),
and a polite live region announces what the opponent did, each trick and each round; a
card that may not be played stays focusable and says why. "New game" ends the game it
replaces on the server, ten times in a row and with the same seed, and leaving the page
ends its game too. At 390x844 the prompt, the hand and the action button are on the
first screen, and the last trick's two cards sit side by side. axe-core finds nothing
serious or critical on the pages. Debian's chromium is driven through Playwright, as in
tests/test_web_browser.py.
"""

from __future__ import annotations

import time

import pytest

pytest.importorskip("fastapi", reason="the web extra (fastapi) is not installed")
pytest.importorskip("httpx2", reason="the web extra (httpx2, the test client) is not installed")
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="the web extra (playwright) is not installed"
)

from jekyll_hyde_app.web.app import create_app  # noqa: E402
from jekyll_hyde_env.engine.cards import AGENTS, Phase, card_name  # noqa: E402

from .web_helpers import BROWSER_ARGS, DESKTOP, FAST, PHONE, chromium, served  # noqa: E402

# What has the focus: its id, the card it is (data-id), its parent's id, aria attributes.
ACTIVE_JS = """() => {
  const a = document.activeElement;
  return {
    id: a.id, card: a.dataset.id ?? null, parent: a.parentElement ? a.parentElement.id : null,
    disabled: a.getAttribute('aria-disabled'), pressed: a.getAttribute('aria-pressed'),
  };
}"""

# Collect every sentence the live region says, in window.said.
LISTEN_JS = """() => {
  window.said = [];
  const region = document.getElementById('announce');
  new MutationObserver(() => {
    for (const line of region.querySelectorAll('p')) window.said.push(line.textContent);
  }).observe(region, { childList: true, subtree: true, characterData: true });
}"""

# No move and no new game under way.
SETTLED = (
    "!document.body.classList.contains('waiting') && !document.getElementById('new-game').disabled"
)


@pytest.fixture()
def browser():
    with sync_api.sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=chromium(), args=BROWSER_ARGS)
        yield instance
        instance.close()


def _open(browser, url: str, viewport: dict):
    """The play page, its agents loaded; page errors are collected in ``page.errors``."""
    page = browser.new_page(viewport=viewport)
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    page.goto(url + "/")
    page.wait_for_function("document.querySelectorAll('#opponent option').length > 0")
    return page


def _active(page) -> dict:
    return page.evaluate(ACTIVE_JS)


def _tab_to(page, element_id: str) -> None:
    for _ in range(20):
        if _active(page)["id"] == element_id:
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"Tab never reached #{element_id}")


def _arrow_to(page, card: int) -> dict:
    """Move the focus within the hand with the arrow keys to ``card``; what has it then."""
    for _ in range(24):
        active = _active(page)
        assert active["parent"] == "hand", f"the focus left the hand: {active}"
        if active["card"] == str(card):
            return active
        page.keyboard.press("ArrowRight" if int(active["card"]) < card else "ArrowLeft")
    raise AssertionError(f"the arrow keys never reached card {card}")


def _play_out(page, game) -> None:
    """Play the page's game to its end through the page's own ``send`` (quicker than
    clicks, where the clicks are not what a test checks)."""
    while game.state.phase != Phase.GAME_OVER:
        table = page.evaluate("game.table")
        if table["choose"]:
            body = {"actions": table["legal_gives"][0]}
        elif table["declare"]:
            body = {"action": table["declare"][0]["action"]}
        else:
            body = {"action": table["legal_cards"][0]}
        page.evaluate("(body) => send(body)", body)
        page.wait_for_function(SETTLED)


def _press_and_wait(page, key: str) -> None:
    with page.expect_response(lambda r: r.url.endswith("/play")):
        page.keyboard.press(key)
    page.wait_for_function(SETTLED)


@pytest.mark.slow
def test_a_whole_game_is_played_by_keyboard_alone_and_announced(browser):
    """Tab, arrows, Enter and Space alone set up and play a whole game as Hyde against
    ``random`` (seed 11): the focus is always where the next move is made (a card of the
    hand, the colours to declare, the result), a card that may not be played is
    aria-disabled, stays focusable and says why with its rule's tag, and the live region
    announces each of the opponent's leads, each trick with its winner and each round."""
    app = create_app("heuristic", allow=FAST)
    with served(app) as url:
        page = _open(browser, url, DESKTOP)
        assert page.get_attribute("#announce", "aria-live") == "polite"
        page.evaluate(LISTEN_JS)
        # The opponents are the server's: a select of /api/agents, nothing else.
        offered = page.eval_on_selector_all("#opponent option", "os => os.map(o => o.value)")
        assert offered == list(app.state.opponents.allowed)
        _tab_to(page, "role")
        page.keyboard.press("ArrowDown")  # Jekyll -> Hyde
        page.keyboard.press("Tab")
        assert _active(page)["id"] == "opponent"
        page.keyboard.type("r")  # the first agent whose name starts with r: random
        page.keyboard.press("Tab")
        assert _active(page)["id"] == "seed"
        page.keyboard.type("11")
        page.keyboard.press("Enter")
        page.wait_for_selector("#table:not(.hidden)")
        page.wait_for_function(SETTLED)
        assert page.evaluate("[game.you, game.opponent_agent]") == ["hyde", "random"]
        game = app.state.games[page.evaluate("game.game_id")]
        assert page.is_hidden("#setup-fields")  # folded while the game runs
        assert _active(page)["parent"] == "hand"  # the new game's first move is at hand

        refused = declared = 0
        for _ in range(150):
            if game.state.phase == Phase.GAME_OVER:
                break
            table = page.evaluate("game.table")
            hand = [card["id"] for card in table["hand"]]
            if table["declare"]:
                assert _active(page)["parent"] == "declare"  # the colours, at once
                _press_and_wait(page, "Enter")
                declared += 1
            elif table["choose"]:
                for card in table["legal_gives"][0]:
                    _arrow_to(page, card)
                    page.keyboard.press("Space")
                    assert _active(page)["pressed"] == "true"
                page.keyboard.press("Tab")
                assert _active(page)["id"] == "give"
                _press_and_wait(page, "Enter")
            else:
                barred = [card for card in hand if card not in table["legal_cards"]]
                if barred and table["phase"] == "follow" and refused < 2:
                    moves = len(game.state.history)
                    active = _arrow_to(page, barred[0])
                    assert active["disabled"] == "true"
                    page.keyboard.press("Enter" if refused == 0 else "Space")
                    error = page.inner_text("#error")
                    assert "T3a" in error or "T3b" in error, error
                    assert len(game.state.history) == moves  # nothing was sent
                    refused += 1
                legal = table["legal_cards"]
                potions = [c["id"] for c in table["hand"] if c["potion"] and c["id"] in legal]
                card = potions[0] if table["phase"] == "lead" and potions else legal[0]
                assert _arrow_to(page, card)["disabled"] == "false"
                _press_and_wait(page, "Enter")
                assert page.inner_text("#error") == ""  # cleared by the move that worked
        assert game.state.phase == Phase.GAME_OVER, "the game did not end"
        assert refused == 2 and declared >= 1
        assert _active(page)["id"] == "result"
        page.keyboard.press("Tab")
        assert _active(page)["id"] == "replay-link"

        said = page.evaluate("window.said")
        text = " | ".join(said)
        for event in game.log:
            if event["kind"] in ("trick", "round", "game"):
                assert event["text"] in said, event["text"]
        tricks = [trick for result in game.state.round_log for trick in result.tricks]
        opponent = AGENTS[1 - game.human]
        led = [trick for trick in tricks if AGENTS[trick.leader] == opponent]
        assert led
        for trick in led:
            assert f"{opponent} leads {card_name(trick.lead_card)}" in text
        assert page.errors == []


@pytest.mark.slow
def test_ten_new_games_in_a_row_end_the_ones_they_replace_and_leaving_ends_the_last(browser):
    """Ten "New game" clicks with the same seed all start a game: each ends the one it
    replaces (the per-client cap is 8, and a seed in play would be refused), so the
    server holds one game at the end; the settings unfold and fold again; leaving the
    page ends the last game. A finished game is not ended: its replay still opens."""
    app = create_app("random", allow=FAST)
    with served(app) as url:
        page = _open(browser, url, PHONE)
        page.fill("#seed", "42")
        ids = []
        for _ in range(10):
            page.click("#new-game")
            page.wait_for_function(f"game && !{ids!r}.includes(game.game_id)")
            page.wait_for_function(SETTLED)
            assert page.inner_text("#error") == ""
            ids.append(page.evaluate("game.game_id"))
        assert list(app.state.games) == [ids[-1]]
        assert app.state.games[ids[-1]].seed == 42
        assert page.is_hidden("#setup-fields")
        assert page.get_attribute("#show-setup", "aria-expanded") == "false"
        page.click("#show-setup")
        assert page.is_visible("#seed") and page.input_value("#seed") == "42"
        assert page.get_attribute("#show-setup", "aria-expanded") == "true"
        page.click("#new-game")
        page.wait_for_function(f"!{ids!r}.includes(game.game_id)")
        page.wait_for_function(SETTLED)
        assert page.is_hidden("#setup-fields") and len(app.state.games) == 1

        page.goto(url + "/watch")  # pagehide: the game is ended, with a request kept alive
        deadline = time.monotonic() + 5
        while len(app.state.games) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(app.state.games) == 0

        # A finished game stays: the page leaves it for its replay and record links.
        page.goto(url + "/")
        page.wait_for_function("document.querySelectorAll('#opponent option').length > 0")
        page.click("#new-game")
        page.wait_for_function(SETTLED + " && game !== null")
        game_id = page.evaluate("game.game_id")
        _play_out(page, app.state.games[game_id])
        page.click("#replay-link")
        page.wait_for_selector("#table:not(.hidden)")
        assert game_id in app.state.games and page.inner_text("#error") == ""
        assert page.errors == []


def _box(page, selector: str) -> dict:
    box = page.locator(selector).bounding_box()
    assert box is not None, selector
    return box


@pytest.mark.slow
def test_on_a_phone_the_prompt_hand_and_action_button_are_on_the_first_screen(browser):
    """At 390x844, right after "New game" (as either player), the prompt, the hand and
    the give button lie within the first screen with nothing scrolled, the settings
    folded away; later the last trick's two cards sit side by side, inside the screen's
    width."""
    app = create_app("heuristic", allow=FAST)
    with served(app) as url:
        page = _open(browser, url, PHONE)
        for role in AGENTS:
            if page.is_visible("#show-setup"):
                page.click("#show-setup")
            page.select_option("#role", role)
            page.click("#new-game")
            page.wait_for_function(f"game && game.you === '{role}'")
            page.wait_for_function(SETTLED)
            assert page.evaluate("window.scrollY") == 0
            assert page.is_hidden("#setup-fields") and page.is_visible("#show-setup")
            for selector in ("#prompt", "#hand", "#give"):
                box = _box(page, selector)
                assert box["y"] >= 0 and box["y"] + box["height"] <= PHONE["height"], selector
                assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], selector
            assert page.inner_text("#give") == "Give 1 card (exchange)"  # round 1: one card
        for _ in range(4):  # the exchange and three tricks
            with page.expect_response(lambda r: r.url.endswith("/play")):
                if page.is_visible("#give"):
                    page.click("#hand .card.legal:not(.selected) >> nth=0")
                    page.click("#give")
                elif page.is_visible("#declare"):
                    page.click("#declare button >> nth=0")
                else:
                    page.click("#hand .card.legal >> nth=0")
            page.wait_for_function(SETTLED)
        slots = page.locator("#last-trick .slot .card")
        assert slots.count() == 2
        first, second = slots.nth(0).bounding_box(), slots.nth(1).bounding_box()
        assert abs(first["y"] - second["y"]) <= 1  # side by side, tops level
        assert first["x"] + first["width"] <= second["x"]  # one after the other
        assert second["x"] + second["width"] <= PHONE["width"]
        assert page.errors == []


def _serious(page) -> list:
    """axe-core's serious and critical violations on the page as it is now."""
    axe = pytest.importorskip(
        "axe_playwright_python.sync_playwright",
        reason="the web extra (axe-playwright-python) is not installed",
    )
    results = axe.Axe().run(page)
    return [
        (violation["id"], violation["impact"], [node["target"] for node in violation["nodes"]])
        for violation in results.response["violations"]
        if violation["impact"] in ("serious", "critical")
    ]


@pytest.mark.slow
def test_axe_finds_nothing_serious_on_the_pages(browser):
    """axe-core (vendored by axe-playwright-python) on the play page at each stage of a
    game, at phone and desktop sizes (the settings, a game with a refusal in the message
    area and the settings unfolded, a game over), and on the replay, watch and rules
    pages: no serious or critical violation."""
    app = create_app("heuristic", allow=FAST)
    with served(app) as url:
        page = _open(browser, url, DESKTOP)
        assert _serious(page) == [], "settings"
        page.fill("#seed", "5")  # Jekyll is dealt potions: the potion rule bars some cards
        page.click("#new-game")
        page.wait_for_function(SETTLED + " && game !== null")
        page.click("#hand .card.illegal >> nth=0", force=True)
        assert "R2.2" in page.inner_text("#error")
        for size in (DESKTOP, PHONE):
            page.set_viewport_size(size)
            assert _serious(page) == [], ("a game", size)
        page.click("#show-setup")
        assert _serious(page) == [], "a game, settings shown"
        _play_out(page, app.state.games[page.evaluate("game.game_id")])
        for size in (PHONE, DESKTOP):
            page.set_viewport_size(size)
            assert _serious(page) == [], ("game over", size)
        page.click("#replay-link")
        page.wait_for_selector("#table:not(.hidden)")
        page.click("#next")
        assert _serious(page) == [], "replay"
        page.goto(url + "/watch")
        page.wait_for_function("document.querySelectorAll('#hyde option').length > 0")
        page.fill("#speed", "0")
        page.click("#start")
        page.wait_for_function("document.querySelectorAll('#log li').length >= 6")
        page.click("#pause")
        assert _serious(page) == [], "watch"
        page.goto(url + "/rules")
        assert _serious(page) == [], "rules"
        assert page.errors == []
