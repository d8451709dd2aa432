"""Ensembles of saved policies: one policy file whose logits are the mean of the members'."""

from __future__ import annotations

import numpy as np
import pytest

from jekyll_hyde_agents import PolicyAgent, PolicyFileError
from jekyll_hyde_agents.policy_ensemble import average_policies
from jekyll_hyde_agents.policy_file import save_policy
from jekyll_hyde_app import cli
from jekyll_hyde_env.engine.cards import AGENTS, NUM_ACTIONS
from jekyll_hyde_env.observation import OBS_SIZE


def random_policy(folder, hidden, activation="relu", roles=AGENTS, seed=0, shared=False):
    """A policy of random weights with these hidden sizes; returns its folder."""
    rng = np.random.default_rng(seed)

    def layers():
        sizes = [OBS_SIZE, *hidden, NUM_ACTIONS]
        return [
            (rng.normal(0, 0.3, (out, inp)).astype(np.float32), rng.normal(0, 0.3, out))
            for inp, out in zip(sizes, sizes[1:], strict=False)
        ]

    if shared:
        groups, role_map = {"shared": layers()}, {role: "shared" for role in roles}
    else:
        groups, role_map = {role: layers() for role in roles}, {role: role for role in roles}
    extra = {"training_steps": 100, "training": {"method": "distillation", "games": 7}}
    save_policy(folder, groups, role_map, activation, extra)
    return folder


def observations(count=50, seed=1):
    # the observation may hold negative entries, which the merged first layer must pass on
    return np.random.default_rng(seed).integers(-1, 3, (count, OBS_SIZE)).astype(np.float32)


def test_the_ensemble_plays_the_mean_of_the_members_logits_whatever_their_depth(tmp_path):
    members = [
        random_policy(tmp_path / "a", [16], seed=1),
        random_policy(tmp_path / "b", [8, 12, 6], seed=2),
        random_policy(tmp_path / "c", [10, 10], seed=3, shared=True),
    ]
    average_policies(members, tmp_path / "ensemble")
    merged = PolicyAgent(tmp_path / "ensemble")
    players = [PolicyAgent(path) for path in members]
    assert merged.roles == list(AGENTS)
    # side by side: 16+8+10, then 16 (identity)+12+10, then 16 (identity)+6+10 (identity)
    assert merged.metadata["architecture"] == {"hidden": [34, 38, 32], "activation": "relu"}
    for role in AGENTS:
        for observation in observations():
            expected = np.mean([p.logits(observation, role) for p in players], axis=0)
            np.testing.assert_allclose(merged.logits(observation, role), expected, atol=1e-4)
    training = merged.metadata["training"]
    assert training["method"] == "ensemble"
    assert [m["hidden"] for m in training["members"]] == [[16], [8, 12, 6], [10, 10]]
    assert merged.metadata["training_steps"] == 300


def test_tanh_members_of_one_depth_merge_exactly(tmp_path):
    members = [
        random_policy(tmp_path / "a", [16, 4], "tanh", seed=1),
        random_policy(tmp_path / "b", [8, 12], "tanh", seed=2),
    ]
    average_policies(members, tmp_path / "ensemble")
    merged, players = PolicyAgent(tmp_path / "ensemble"), [PolicyAgent(p) for p in members]
    for observation in observations(10):
        expected = np.mean([p.logits(observation, "hyde") for p in players], axis=0)
        np.testing.assert_allclose(merged.logits(observation, "hyde"), expected, atol=1e-4)


def test_linear_members_merge_into_a_linear_policy(tmp_path):
    members = [random_policy(tmp_path / str(i), [], seed=i) for i in range(2)]
    average_policies(members, tmp_path / "ensemble")
    merged, players = PolicyAgent(tmp_path / "ensemble"), [PolicyAgent(p) for p in members]
    observation = observations(1)[0]
    expected = np.mean([p.logits(observation, "jekyll") for p in players], axis=0)
    np.testing.assert_allclose(merged.logits(observation, "jekyll"), expected, atol=1e-4)


@pytest.mark.parametrize(
    "first, second, message",
    [
        ({"activation": "tanh"}, {"hidden": [8, 8], "activation": "tanh"}, "tanh .* unequal depth"),
        ({}, {"activation": "tanh"}, "uses tanh, .* uses relu; an ensemble needs one activation"),
        ({}, {"roles": ("jekyll",)}, r"plays \['jekyll'\], .* plays \['hyde', 'jekyll'\]"),
        ({}, {"hidden": []}, "a policy without hidden layers cannot be merged with deeper ones"),
    ],
)
def test_members_that_do_not_fit_together_are_refused_by_name(tmp_path, first, second, message):
    members = [
        random_policy(tmp_path / "a", **{"hidden": [8], **first}),
        random_policy(tmp_path / "b", **{"hidden": [8], **second}),
    ]
    with pytest.raises(PolicyFileError, match=message):
        average_policies(members, tmp_path / "ensemble")
    assert not (tmp_path / "ensemble").exists()


def test_an_ensemble_of_one_is_refused(tmp_path):
    with pytest.raises(PolicyFileError, match="two or more policies, got 1"):
        average_policies([random_policy(tmp_path / "a", [8])], tmp_path / "ensemble")


def test_command_line_writes_the_ensemble_and_reports_bad_members(tmp_path, capsys):
    a, b = random_policy(tmp_path / "a", [8], seed=1), random_policy(tmp_path / "b", [4], seed=2)
    assert cli.main(["ensemble", "--out", str(tmp_path / "e"), str(a), str(b)]) == 0
    assert "the mean of the logits of 2 policies" in capsys.readouterr().out
    assert PolicyAgent(tmp_path / "e").metadata["training"]["method"] == "ensemble"
    assert cli.main(["ensemble", "--out", str(tmp_path / "f"), str(a), str(tmp_path)]) == 2
    assert "no saved policy at" in capsys.readouterr().err
