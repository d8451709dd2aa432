"""Pictures of the table: rgb_array in both environments, video, and a clear missing-extra error.

The picture's content is checked on ``picture.layout``, the list of named items
(texts with their font sizes, boxes, cards) that ``draw_table`` paints.
"""

from __future__ import annotations

import sys

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.error import DependencyNotInstalled

import jekyll_hyde_env  # noqa: F401
from jekyll_hyde_env import jekyll_hyde_v0, picture
from jekyll_hyde_env.engine import apply_action, legal_action_mask, legal_actions, new_game
from jekyll_hyde_env.engine.cards import DECLARE_BASE, GREED, WRATH, Phase
from jekyll_hyde_env.engine.render import game_end_reason, marker_move, trick_reason
from jekyll_hyde_env.picture import (
    CARD_COLOURS,
    CHOSEN_BORDER,
    HEIGHT,
    LEGAL_BORDER,
    WIDTH,
    WON_BORDER,
    draw_table,
    layout,
)

# Jekyll holds the 5+ potion and Pride; Hyde holds Wrath and Greed (ids as in RULES.md).
DEAL = {"jekyll": [0, 1, 2, 3, 4, 5, 6, 14, 15, 24], "hyde": [7, 8, 9, 10, 11, 12, 13, 16, 17, 18]}


def _game(*actions: int):
    """Round 1 dealt as DEAL, later rounds from a fixed seed, then ``actions`` applied."""
    state = new_game(np.random.default_rng(0), deals=[DEAL])
    for action in actions:
        apply_action(state, action)
    return state


# Jekyll gives pride 1, Hyde gives wrath 1 (R2.2); Jekyll leads (R3) the 5+ potion (T1).
EXCHANGED = (0, 7)
POTION_LED = (*EXCHANGED, 24)


def _texts(items, prefix: str) -> str:
    return " ".join(i.text for i in items if i.kind == "text" and i.name.startswith(prefix))


def _one(items, name: str):
    found = [i for i in items if i.name == name]
    assert len(found) == 1, f"{name}: {found}"
    return found[0]


def _random_states(games: int):
    """Every state of a few seeded random games."""
    rng = np.random.default_rng(7)
    for game in range(games):
        state = new_game(np.random.default_rng(100 + game))
        yield state.clone()
        while state.to_act >= 0:
            moves = legal_actions(state)
            apply_action(state, moves[rng.integers(len(moves))])
            yield state.clone()


def _inside(box, outer) -> bool:
    return outer[0] <= box[0] and outer[1] <= box[1] and box[2] <= outer[2] and box[3] <= outer[3]


def test_aec_rgb_array_is_a_picture_that_follows_the_game():
    env = jekyll_hyde_v0.env(render_mode="rgb_array")
    env.reset(seed=0)
    first = env.render()
    assert first.dtype == np.uint8 and first.shape == (HEIGHT, WIDTH, 3)
    for _ in range(6):
        mask = env.observe(env.agent_selection)["action_mask"]
        env.step(int(np.flatnonzero(mask)[0]))
    assert not np.array_equal(env.render(), first)


def test_gym_rgb_array_shows_the_learner_hand():
    env = gym.make("JekyllHyde-v0", role="hyde", render_mode="rgb_array")
    env.reset(seed=0)
    picture_ = env.render()
    assert picture_.shape == (HEIGHT, WIDTH, 3) and picture_.dtype == np.uint8
    game = env.unwrapped.game
    items = layout(game, hand_of=1)
    assert "Your hand (Hyde)" in _texts(items, "hand.title")
    hand = [i.card for i in items if i.name == "hand.card"]
    assert hand == [c for c in range(25) if game.hands[1] >> c & 1]


def test_a_card_shows_its_value_large_and_its_id_small():
    items = layout(_game())
    cards = [i for i in items if i.kind == "card" and i.name == "hand.card"]
    assert [c.card for c in cards] == DEAL["jekyll"]
    for card in cards:
        value = next(i for i in items if i.name == "hand.card.value" and _inside(i.box, card.box))
        card_id = next(i for i in items if i.name == "hand.card.id" and _inside(i.box, card.box))
        expected = "5+" if card.card == 24 else str(card.card % 7 + 1)
        assert value.text == expected and card_id.text == f"#{card.card}"
        assert value.size >= 3 * card_id.size
        # the glyphs drawn: a value digit stands at least twice as tall as an id digit
        value_box = picture.font(value.size).getbbox(value.text)
        id_box = picture.font(card_id.size).getbbox(card_id.text)
        assert value_box[3] - value_box[1] >= 2 * (id_box[3] - id_box[1])


def test_the_legend_explains_every_border_and_the_card_face():
    cases = (
        (_game(), None),
        (_game(0), 0),  # Jekyll's hand with the card chosen for the exchange, Hyde to act
        (_game(*POTION_LED, DECLARE_BASE + GREED), None),
        (_game(*POTION_LED, DECLARE_BASE + GREED, 16), None),  # a trick won
    )
    borders = set()
    for state, hand_of in cases:
        items = layout(state, hand_of)
        legend = {
            i.outline: _texts(items, f"{i.name}.text")
            for i in items
            if i.kind == "box" and i.name.startswith("legend.") and i.outline
        }
        for card in (i for i in items if i.kind == "card" and i.outline):
            assert legend.get(card.outline), f"border {card.outline} of {card.name} is unexplained"
            borders.add(card.outline)
        # the white border is exactly the legal cards, and only for the player to act
        legal = legal_action_mask(state) if hand_of in (None, state.to_act) else 0
        for card in (i for i in items if i.name == "hand.card"):
            assert (card.outline == LEGAL_BORDER) == bool(legal >> card.card & 1), card
            assert (card.outline == CHOSEN_BORDER) == bool(state.picks[0] >> card.card & 1)
    assert borders == {LEGAL_BORDER, CHOSEN_BORDER, WON_BORDER}
    assert "may be played now" in legend[LEGAL_BORDER]
    assert "chosen to give" in legend[CHOSEN_BORDER]
    assert "won the last trick" in legend[WON_BORDER]
    face = _texts(items, "legend.face")
    assert "Large: the value" in face and "Small #: the card id" in face
    sample = _one(items, "legend.card")
    assert _one(items, "legend.card.value").size > 3 * _one(items, "legend.card.id").size
    assert sample.card >= 0


def test_each_trick_card_is_labelled_with_the_player_who_played_it():
    state = _game(*POTION_LED, DECLARE_BASE + GREED)  # Hyde to answer
    items = layout(state)
    label, card = _one(items, "trick.lead.player"), _one(items, "trick.lead.card")
    assert label.text == "Jekyll led" and card.card == 24
    assert label.box[0] == card.box[0] and label.box[3] <= card.box[1]  # just above the card
    assert _one(items, "trick.follow.player").text == "Hyde answers"
    assert "Trick 1 of 10" in _texts(items, "doing")

    apply_action(state, 16)  # Hyde answers greed 3: the 5+ potion wins (T5b), Greed effect (T6b)
    items = layout(state)
    assert _one(items, "last.lead.player").text == "Jekyll led"
    assert _one(items, "last.lead.card").card == 24
    assert _one(items, "last.follow.player").text == "Hyde answered"
    assert _one(items, "last.follow.card").card == 16
    assert _one(items, "last.lead.card").outline == WON_BORDER
    assert _one(items, "last.follow.card").outline is None
    trick = state.trick_log[-1]
    assert _texts(items, "last.reason") == f"Jekyll won: {trick_reason(trick)}"
    assert "Greed: each player now gives two cards" in _texts(items, "last.effect")


def test_the_declared_colour_is_shown_and_changes_the_picture():
    greed = _game(*POTION_LED, DECLARE_BASE + GREED)
    wrath = _game(*POTION_LED, DECLARE_BASE + WRATH)
    for state, name in ((greed, "Greed"), (wrath, "Wrath")):
        items = layout(state)
        assert _texts(items, "trick.follow_colour").startswith("Declared colour:")
        assert _one(items, "trick.follow_colour.colour").text == name
        swatch = _one(items, "trick.follow_colour.swatch")
        assert swatch.fill == CARD_COLOURS[state.declared]
    assert not np.array_equal(draw_table(greed), draw_table(wrath))
    # before the declaration, the picture says the colour is still to come
    assert "not declared yet" in _texts(layout(_game(*POTION_LED)), "trick.follow_colour")
    # after a colour card is led, the colour to follow is the colour led (T3a)
    items = layout(_game(*EXCHANGED, 1))  # Jekyll leads pride 2
    assert _texts(items, "trick.follow_colour").startswith("Colour to follow: Pride")
    # the finished trick keeps its declared colour
    items = layout(_game(*POTION_LED, DECLARE_BASE + WRATH, 8))
    assert _one(items, "last.follow_colour.colour").text == "Wrath"


def test_the_opponent_hand_size_is_shown_face_down():
    seen = set()
    for state in _random_states(2):
        if state.to_act < 0:
            continue
        items = layout(state)
        count = state.hands[1 - state.to_act].bit_count()
        opponent = _one(items, "opponent").text
        assert opponent.startswith(f"{picture.AGENTS[1 - state.to_act].capitalize()}'s hand: ")
        assert f": {count} card" in opponent
        assert sum(i.name == "opponent.back" for i in items) == count
        seen.add(count)
    assert len(seen) >= 5  # the count follows the game


def test_the_end_picture_names_the_winner_and_the_reason():
    winners = {}
    for state in _random_states(12):
        if state.phase == Phase.GAME_OVER:
            winners.setdefault(state.winner, state)
    assert set(winners) == {0, 1}, "both a Jekyll and a Hyde win among the games"
    for winner, state in winners.items():
        name = picture.AGENTS[winner].capitalize()
        items = layout(state)
        assert f"{name} wins" in _one(items, "title").text
        assert game_end_reason(state) in _one(items, "reason").text
        assert _one(items, "result.winner").text == f"{name} wins"
        assert game_end_reason(state) in _texts(items, "result.reason")
        results = [i.text for i in items if i.name == "rounds.result"]
        assert len(results) == len(state.round_log)
        assert marker_move(0, state.round_log[0].marker) in results[0]
        assert "you won" in _one(layout(state, hand_of=winner), "title").text
        assert "you lost" in _one(layout(state, hand_of=1 - winner), "title").text
    assert "reached space 10" in _one(layout(winners[1]), "reason").text
    assert "short of 10" in _one(layout(winners[0]), "reason").text


def test_every_frame_has_the_same_size_and_keeps_its_texts_apart():
    panels = {"trick": "trick.panel", "result": "trick.panel", "last": "last.panel"}
    panels["legend"] = "legend.panel"
    round_results = 0
    for step, state in enumerate(_random_states(3)):
        items = layout(state)
        boxes = {i.name: i.box for i in items if i.name.endswith(".panel")}
        texts = [i for i in items if i.kind == "text"]
        for item in items:
            assert _inside(item.box, (0, 0, WIDTH, HEIGHT)), item
            panel = panels.get(item.name.split(".")[0])
            if panel and not item.name.endswith(".panel"):
                assert _inside(item.box, boxes[panel]), (item, state.history)
        for i, a in enumerate(texts):
            for b in texts[i + 1 :]:
                apart = a.box[2] <= b.box[0] or b.box[2] <= a.box[0]
                apart = apart or a.box[3] <= b.box[1] or b.box[3] <= a.box[1]
                assert apart, (a, b, state.history)
        if state.phase == Phase.EXCHANGE and state.round_log and not state.trick_log:
            result = state.round_log[-1]
            before = state.round_log[-2].marker if len(state.round_log) > 1 else 0
            assert marker_move(before, result.marker) in _texts(items, "trick.last_round")
            round_results += 1
        if step % 25 == 0:
            frame = draw_table(state)
            assert frame.shape == (HEIGHT, WIDTH, 3) and frame.dtype == np.uint8
            assert np.array_equal(frame, draw_table(state))  # deterministic
    assert round_results >= 2


def test_hand_of_must_name_a_player():
    with pytest.raises(ValueError, match=r"hand_of must be None, 0 \(jekyll\) or 1 \(hyde\)"):
        layout(_game(), hand_of=2)


@pytest.mark.slow
def test_record_video_films_an_episode(tmp_path):
    from gymnasium.wrappers import RecordVideo

    env = RecordVideo(
        gym.make("JekyllHyde-v0", render_mode="rgb_array"),
        str(tmp_path),
        episode_trigger=lambda episode: True,
        disable_logger=True,
    )
    _, info = env.reset(seed=1)
    done = False
    while not done:
        _, _, terminated, truncated, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        done = terminated or truncated
    env.close()
    videos = list(tmp_path.glob("*.mp4"))
    assert videos and videos[0].stat().st_size > 1000


def test_missing_pillow_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "PIL", None)
    env = jekyll_hyde_v0.env(render_mode="rgb_array")
    env.reset(seed=0)
    with pytest.raises(DependencyNotInstalled, match=r"jekyll-hyde-env\[render\]"):
        env.render()


def test_a_pillow_without_sized_fonts_is_named(monkeypatch):
    from PIL import ImageFont

    bitmap = ImageFont.load_default_imagefont  # what Pillow gives without FreeType
    monkeypatch.setattr(ImageFont, "load_default", lambda size=None: bitmap())
    picture.font.cache_clear()
    try:
        with pytest.raises(DependencyNotInstalled, match=r"Pillow 10\.1 or newer with FreeType"):
            draw_table(_game())
    finally:
        picture.font.cache_clear()


WITHOUT_PILLOW = """
import builtins, importlib.util, sys
find_spec = importlib.util.find_spec
def no_pil_spec(name, *args):
    return None if name.split(".")[0] == "PIL" else find_spec(name, *args)
importlib.util.find_spec = no_pil_spec
real_import = builtins.__import__
def no_pil(name, *args, **kwargs):
    if name.split(".")[0] == "PIL":
        raise ImportError("no Pillow here")
    return real_import(name, *args, **kwargs)
builtins.__import__ = no_pil

import gymnasium as gym
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import render_test
import jekyll_hyde_env
from jekyll_hyde_env import jekyll_hyde_v0

assert "rgb_array" not in jekyll_hyde_v0.raw_env.metadata["render_modes"]
env = gym.make("JekyllHyde-v0")
assert "rgb_array" not in env.metadata["render_modes"]
check_env(env.unwrapped, skip_render_check=False)
render_test(lambda render_mode=None: jekyll_hyde_v0.env(render_mode=render_mode))
try:
    jekyll_hyde_v0.env(render_mode="rgb_array")
except ValueError as error:
    print(error)
"""


def test_without_pillow_rgb_array_is_not_advertised_and_the_checkers_pass():
    """A core install has no Pillow: the envs advertise the text modes only, so that
    Gymnasium's check_env and PettingZoo's render_test pass, and asking for a picture
    says what to install."""
    import subprocess

    result = subprocess.run(
        [sys.executable, "-c", WITHOUT_PILLOW], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    said = result.stdout.strip().splitlines()[-1]
    assert said.startswith('render_mode "rgb_array" draws with Pillow, which is not installed')
    assert 'pip install "jekyll-hyde-env[render]"' in said


def test_with_pillow_every_mode_is_advertised():
    assert jekyll_hyde_v0.raw_env.metadata["render_modes"] == ["human", "ansi", "rgb_array"]
    assert gym.make("JekyllHyde-v0").metadata["render_modes"] == ["human", "ansi", "rgb_array"]
