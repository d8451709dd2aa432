"""Training: the smoke config trains, checkpoints, survives kill -9 and Ctrl-C, exports."""

from __future__ import annotations

import json
import os
import pathlib
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from jekyll_hyde_agents import PolicyAgent, RandomAgent
from jekyll_hyde_app import cli
from jekyll_hyde_train.common.config import load_config
from jekyll_hyde_train.ppo.config import TrainConfig

ROOT = pathlib.Path(__file__).resolve().parents[1]
SMOKE = str(ROOT / "configs" / "ppo" / "smoke.yaml")

pytestmark = pytest.mark.slow


def play_legal_games(agent, games=4):
    from tests.test_agents import play_checked

    other = RandomAgent(seed=0)
    for seed in range(games):
        play_checked(agent, other, seed)
        play_checked(other, agent, seed)


def test_smoke_run_trains_exports_and_reports(tmp_path):
    run = tmp_path / "run"
    assert cli.main(["train", "--config", SMOKE, "--run-dir", str(run)]) == 0
    for name in (
        "config.yaml",
        "metrics.csv",
        "report.md",
        "policy/policy.json",
        "policy/policy.npz",
        "checkpoint/state.json",
        "checkpoint/jekyll.zip",
        "checkpoint/hyde.zip",
        "eval_curve.png",
        "reward_curve.png",
    ):
        assert (run / name).exists(), name
    assert any((run / "tensorboard").rglob("events.out.tfevents*"))
    state = json.loads((run / "checkpoint" / "state.json").read_text())
    assert state["finished"] and state["steps"] >= 2048
    rows = (run / "metrics.csv").read_text().splitlines()
    assert rows[0].startswith("steps,") and len(rows) == 1 + state["phase"]
    report = (run / "report.md").read_text()
    assert "| heuristic |" in report and "--seed 777" in report  # the arena can be replayed
    assert (
        load_config(run / "config.yaml", schema=TrainConfig).run.total_steps == 2048
    )  # the resolved config reloads
    metadata = json.loads((run / "policy" / "policy.json").read_text())
    assert metadata["training"] == {"method": "ppo", "backend": "sb3", "run": "smoke"}
    made = metadata["provenance"]
    assert made["seed"] == 0 and "algorithm: ppo" in made["config"] and made["created"]
    agent = PolicyAgent(run)
    assert agent.roles == ["jekyll", "hyde"] and agent.metadata["training_steps"] == state["steps"]
    play_legal_games(agent)
    # the exported agent is an opponent for the Gym env and an agent for the arena
    from jekyll_hyde_env import JekyllHydeGymEnv

    env = JekyllHydeGymEnv(role="jekyll", opponent=str(run))
    env.reset(seed=0)
    assert (
        cli.main(["eval", str(run), "heuristic", "--pairs", "3", "--workers", "1", "--no-progress"])
        == 0
    )
    # a finished run is not overwritten
    assert cli.main(["train", "--config", SMOKE, "--run-dir", str(run)]) == 2


def test_exported_policy_matches_the_trained_network(tmp_path):
    import torch

    from jekyll_hyde_train.common.config import from_dict
    from jekyll_hyde_train.ppo.train import build_learner, build_vec_env, export_policies

    config = from_dict(
        {
            "env": {"n_envs": 1, "vec_env": "dummy"},
            "ppo": {"net_arch": [16, 8], "n_steps": 64, "batch_size": 64},
            "selfplay": {"phase_steps": 64},
        },
        schema=TrainConfig,
    )
    venv = build_vec_env(config, "jekyll", [("random", 1.0)], seed=0)
    model = build_learner(config, venv, seed=0, tensorboard=tmp_path)
    export_policies(tmp_path / "p", {"jekyll": model}, config, steps=0)
    agent = PolicyAgent(tmp_path / "p")
    obs = venv.reset()
    for _ in range(5):
        with torch.no_grad():
            features = model.policy.extract_features(torch.as_tensor(obs).float())
            latent = model.policy.mlp_extractor.forward_actor(features)
            logits = model.policy.action_net(latent).numpy()[0]
        assert np.allclose(agent.logits(obs[0], "jekyll"), logits, atol=1e-5)
        obs, *_ = venv.step(np.array([int(np.flatnonzero(venv.env_method("action_masks")[0])[0])]))


def _start(run, *extra):
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jekyll_hyde_app.cli",
            "train",
            "--config",
            SMOKE,
            "--run-dir",
            str(run),
            "--set",
            "run.total_steps=6144",
            "--set",
            "run.eval_every=100000",
            *extra,
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _wait_for_checkpoint(run, process, timeout=120):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if (run / "checkpoint" / "state.json").exists():
            return json.loads((run / "checkpoint" / "state.json").read_text())
        assert process.poll() is None, process.stderr.read().decode()
        time.sleep(0.05)
    raise AssertionError("no checkpoint appeared")


def test_resume_after_kill_9_loses_at_most_one_phase(tmp_path, capsys):
    run = tmp_path / "run"
    process = _start(run)
    first = _wait_for_checkpoint(run, process)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    killed_at = json.loads((run / "checkpoint" / "state.json").read_text())
    assert killed_at["steps"] >= first["steps"] and not killed_at["finished"]
    capsys.readouterr()
    assert cli.main(["train", "--resume", str(run)]) == 0
    resumed = f"resuming {run} at step {killed_at['steps']:,} (phase {killed_at['phase']})\n"
    assert capsys.readouterr().out.startswith(resumed)
    state = json.loads((run / "checkpoint" / "state.json").read_text())
    assert state["finished"] and state["steps"] >= 6144
    assert state["phase"] == 12  # 6144 steps in phases of 512, none lost or repeated
    play_legal_games(PolicyAgent(run), games=2)


def test_ctrl_c_saves_a_checkpoint_and_stops_cleanly(tmp_path):
    run = tmp_path / "run"
    process = _start(run)
    _wait_for_checkpoint(run, process)
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=60) == 130
    assert "--resume" in process.stderr.read().decode()
    state = json.loads((run / "checkpoint" / "state.json").read_text())
    assert not state["finished"] and state["steps"] > 0
    assert cli.main(["train", "--resume", str(run)]) == 0
    assert json.loads((run / "checkpoint" / "state.json").read_text())["steps"] >= 6144


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("ppo.learnin_rate=0.1", "unknown key 'ppo.learnin_rate'; allowed keys in 'ppo'"),
        ("ppo.n_steps=lots", "ppo.n_steps must be of type int"),
        ("ppo.learning_rate=fast", "ppo.learning_rate must be of type float"),
        ("ppo.gamma=1.5", r"ppo.gamma must be in \(0, 1\]"),
        (
            "env.vec_env=threads",
            r"env.vec_env 'threads' is not one of \['batched', 'subproc', 'dummy'\]",
        ),
        ("selfplay.phase_steps=10", "must be at least one rollout"),
        ("selfplay.baselines={alpha: 1.0}", "unknown agent 'alpha'"),
        ("run.total_steps=-5", "run.total_steps must be positive"),
        ("nokey=3", "expected section.key=value"),
    ],
)
def test_bad_configs_stop_before_anything_starts(tmp_path, capsys, override, message):
    run = tmp_path / "run"
    assert cli.main(["train", "--config", SMOKE, "--run-dir", str(run), "--set", override]) == 2
    import re

    assert re.search(message, capsys.readouterr().err)
    assert not run.exists()


def test_bad_config_files(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("ppo: [1, 2]\n")
    assert cli.main(["train", "--config", str(bad)]) == 2
    assert "section 'ppo' must be a mapping" in capsys.readouterr().err
    assert cli.main(["train", "--config", str(tmp_path / "missing.yaml")]) == 2
    assert "cannot read config" in capsys.readouterr().err
    assert cli.main(["train", "--resume", str(tmp_path)]) == 2
    assert "not a run folder" in capsys.readouterr().err
