"""Pictures of the table: rgb_array in both environments, video, and a clear missing-extra error."""

from __future__ import annotations

import sys

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.error import DependencyNotInstalled

import jekyll_hyde_env  # noqa: F401
from jekyll_hyde_env import jekyll_hyde_v0


def test_aec_rgb_array_is_a_picture_that_follows_the_game():
    env = jekyll_hyde_v0.env(render_mode="rgb_array")
    env.reset(seed=0)
    first = env.render()
    assert first.dtype == np.uint8 and first.ndim == 3 and first.shape[2] == 3
    for _ in range(6):
        mask = env.observe(env.agent_selection)["action_mask"]
        env.step(int(np.flatnonzero(mask)[0]))
    assert not np.array_equal(env.render(), first)


def test_gym_rgb_array_shows_the_learner_hand():
    env = gym.make("JekyllHyde-v0", role="hyde", render_mode="rgb_array")
    env.reset(seed=0)
    picture = env.render()
    assert picture.shape == (420, 720, 3) and picture.dtype == np.uint8
    assert len(np.unique(picture.reshape(-1, 3), axis=0)) > 10  # more than a blank canvas


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
