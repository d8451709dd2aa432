"""Training on Ray RLlib: a tiny local run exports a policy that plays legal actions."""

from __future__ import annotations

import importlib.util
import json
import pathlib

import numpy as np
import pytest

from jekyll_hyde_agents import PolicyAgent
from jekyll_hyde_app import cli
from jekyll_hyde_train.config import read_algorithm

ROOT = pathlib.Path(__file__).resolve().parents[1]
SMOKE = str(ROOT / "configs" / "rllib_smoke.yaml")

requires_ray = pytest.mark.skipif(
    importlib.util.find_spec("ray") is None,
    reason="Ray RLlib is not installed (pip install 'jekyll-hyde-env[rllib]'; .ci/run installs it)",
)


@requires_ray
def test_multi_agent_env_is_turn_based_and_masked():
    from jekyll_hyde_train.rllib_backend import make_multi_agent_env_class

    env = make_multi_agent_env_class()({"seed": 0})
    observations, _ = env.reset(seed=1)
    steps = 0
    rng = np.random.default_rng(0)
    while True:
        (agent,) = observations  # only the agent to act observes
        mask = observations[agent]["action_mask"]
        assert mask.dtype == np.float32 and mask.any()
        observations, rewards, terminated, truncated, _ = env.step(
            {agent: int(rng.choice(np.flatnonzero(mask)))}
        )
        steps += 1
        if terminated["__all__"]:
            break
        assert rewards == {agent: 0.0}
    assert sorted(rewards.values()) == [-1.0, 1.0] and set(observations) == {"jekyll", "hyde"}
    env.reset(seed=2)
    illegal = int(np.flatnonzero(env._observe(env.game.to_act)["action_mask"] == 0)[0])
    _, rewards, terminated, _, _ = env.step({"jekyll": illegal})
    assert terminated["__all__"] and rewards == {"jekyll": -1.0, "hyde": 0.0}


@requires_ray
@pytest.mark.slow
def test_tiny_rllib_run_exports_a_policy_that_plays_both_roles(tmp_path):
    run = tmp_path / "run"
    code = cli.main(["train", "--config", SMOKE, "--run-dir", str(run)])  # algorithm: rllib
    assert code == 0
    metadata = json.loads((run / "policy" / "policy.json").read_text())
    assert metadata["backend"] == "rllib" and metadata["training_steps"] >= 1200
    assert (run / "rllib_checkpoint").is_dir() and (run / "report.md").exists()
    rows = (run / "metrics.csv").read_text().splitlines()
    assert len(rows) == 1 + 3
    agent = PolicyAgent(run)
    from jekyll_hyde_agents import RandomAgent
    from tests.test_agents import play_checked

    for seed in range(3):
        play_checked(agent, RandomAgent(seed=seed), seed)
        play_checked(RandomAgent(seed=seed), agent, seed)


def test_rllib_config_errors_name_the_key(tmp_path, capsys):
    code = cli.main(
        [
            "train",
            "--config",
            SMOKE,
            "--run-dir",
            str(tmp_path / "r"),
            "--set",
            "rllib.num_env_runner=3",
        ]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "unknown key 'rllib.num_env_runner'" in err or "needs Ray RLlib" in err


def test_the_config_chooses_rllib_and_the_old_backend_flag_says_so(tmp_path, capsys):
    assert read_algorithm(SMOKE) == "rllib"
    flags = ["--config", "smoke", "--run-dir", str(tmp_path)]
    code = cli.main(["train", "--backend", "rllib", *flags])
    assert code == 2
    err = capsys.readouterr().err
    assert "--backend rllib is deprecated" in err and "not an rllib one" in err
    assert cli.main(["train", "--config", SMOKE, "--resume", str(tmp_path)]) == 2
