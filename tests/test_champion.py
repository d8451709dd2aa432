"""The shipped champion: in the package, with provenance, behind every way of naming an agent."""

from __future__ import annotations

import json

import numpy as np
import pytest

from jekyll_hyde_agents import (
    AZAgent,
    PolicyAgent,
    champion_path,
    champion_provenance,
    make_agent,
    parse_az,
)
from jekyll_hyde_agents.policy_file import read_policy
from jekyll_hyde_agents.policy_format import METADATA_FILE, WEIGHTS_FILE
from jekyll_hyde_arena import evaluate
from jekyll_hyde_env.engine import apply_action, is_terminal, legal_actions, new_game, player_view
from jekyll_hyde_env.single_agent import JekyllHydeGymEnv

MAX_BYTES = 8 * 1024 * 1024


def test_the_champion_ships_in_the_package_with_a_value_head_and_fits_the_size_cap():
    folder = champion_path()
    assert (folder / WEIGHTS_FILE).stat().st_size <= MAX_BYTES
    saved = read_policy(folder)
    assert saved.metadata["value_head"] is True
    assert set(saved.metadata["roles"]) == {"jekyll", "hyde"}


def test_the_provenance_names_config_seed_commit_data_loss_and_scores():
    provenance = champion_provenance()
    assert "expert_iteration" in provenance["config"]
    assert isinstance(provenance["seed"], int)
    assert len(provenance["commit"]) == 40
    assert provenance["data"]["games"] > 0 and provenance["data"]["decisions"] > 0
    assert 0 < provenance["held_out"]["validation_loss"] < 5
    generations = {int(row["generation"]) for row in provenance["generations"]}
    assert provenance["generation"] in generations
    metadata = json.loads((champion_path() / METADATA_FILE).read_text())
    assert metadata["training"]["method"] == "expert_iteration"


def test_make_agent_champion_plays_legal_moves_in_both_roles():
    champion = make_agent("champion", seed=0)
    assert isinstance(champion, PolicyAgent) and champion.name == "champion"
    state = new_game(np.random.default_rng(5))
    while not is_terminal(state):
        legal = legal_actions(state)
        action = champion.act(player_view(state, state.to_act), legal)
        assert action in legal
        apply_action(state, action)


def test_az_searches_with_the_champion_unless_a_policy_is_named():
    agent = make_agent("az:20")
    assert isinstance(agent, AZAgent)
    assert agent.policy.path == str(champion_path())
    with pytest.raises(ValueError, match="name a saved policy"):
        parse_az("20")


def test_the_champion_takes_no_argument():
    with pytest.raises(ValueError, match="takes no argument"):
        make_agent("champion:3")


def test_the_gym_env_plays_against_the_champion():
    env = JekyllHydeGymEnv(role="hyde", opponent="champion")
    observation, info = env.reset(seed=3)
    done = False
    while not done:
        action = int(np.flatnonzero(info["action_mask"])[0])
        observation, reward, terminated, truncated, info = env.step(action)
        done = terminated or truncated
    assert reward in (-1.0, 1.0)


def test_the_champion_beats_the_heuristic():
    # The README's table measures about 0.9 over 1,000 pairs; 60 pairs keep CI short.
    report = evaluate("champion", "heuristic", 60, seed=4242, workers=1)
    assert report.score_ci[0] > 0.5
