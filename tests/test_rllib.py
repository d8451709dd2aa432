"""Training on Ray RLlib: a tiny local run exports a policy that plays legal actions."""

from __future__ import annotations

import csv
import importlib.util
import json
import pathlib

import numpy as np
import pytest

from jekyll_hyde_agents import PolicyAgent
from jekyll_hyde_app import cli
from jekyll_hyde_train.common.config import read_algorithm

ROOT = pathlib.Path(__file__).resolve().parents[1]
SMOKE = str(ROOT / "configs" / "rllib" / "smoke.yaml")

requires_ray = pytest.mark.skipif(
    importlib.util.find_spec("ray") is None,
    reason="Ray RLlib is not installed (pip install 'jekyll-hyde-env[rllib]'; .ci/run installs it)",
)


@requires_ray
def test_multi_agent_env_is_turn_based_and_masked():
    from jekyll_hyde_train.ppo.rllib_env import make_multi_agent_env_class

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
    training, made = metadata["training"], metadata["provenance"]
    assert training["method"] == "ppo" and training["backend"] == "rllib"
    assert metadata["training_steps"] >= 1200 and "algorithm: rllib" in made["config"]
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
    assert "is not a run folder (no config.yaml)" in capsys.readouterr().err


@requires_ray
def test_a_resumed_run_deals_fresh_games():
    from jekyll_hyde_train.ppo.rllib_env import make_multi_agent_env_class

    env_class = make_multi_agent_env_class()
    first = [env_class({"seed": 0, "stretch": stretch}) for stretch in (0, 0, 2)]
    hands = [env.reset()[0] for env in first]
    again = [np.array_equal(a["observations"], b["observations"]) for a, b in [
        (list(hands[0].values())[0], list(hands[1].values())[0]),
        (list(hands[0].values())[0], list(hands[2].values())[0]),
    ]]  # fmt: skip
    assert again == [True, False]


def _weights(algorithm, modules):
    from jekyll_hyde_train.ppo import rllib as rllib_backend

    return {m: [w.copy() for w, _ in rllib_backend.module_layers(algorithm.get_module(m))]
            for m in modules}  # fmt: skip


@requires_ray
@pytest.mark.slow
def test_an_interrupted_rllib_run_resumes_from_its_checkpoint_with_the_weights_it_saved(
    tmp_path, monkeypatch, capsys
):
    from jekyll_hyde_train.ppo import rllib as rllib_backend

    run = tmp_path / "run"
    build, save = rllib_backend.build_algorithm, rllib_backend._save_checkpoint
    saved, restored, remote = {}, {}, []

    def saving(algorithm, run_dir, progress):
        modules = ["jekyll", "hyde"] + [m for ids in progress["snapshots"].values() for m in ids]
        saved[progress["iteration"]] = _weights(algorithm, modules)
        save(algorithm, run_dir, progress)

    def interrupted_at_third_iteration(config, *stretch):
        algorithm = build(config, *stretch)
        train, calls = algorithm.train, []

        def once():
            calls.append(1)
            if len(calls) == 3:
                raise KeyboardInterrupt
            return train()

        algorithm.train = once
        return algorithm

    monkeypatch.setattr(rllib_backend, "_save_checkpoint", saving)
    monkeypatch.setattr(rllib_backend, "build_algorithm", interrupted_at_third_iteration)
    assert cli.main(["train", "--config", SMOKE, "--run-dir", str(run)]) == 130
    assert f"continue with: jekyll-hyde train --resume {run}" in capsys.readouterr().err
    progress = json.loads((run / "rllib_checkpoint" / "state.json").read_text())
    assert progress["iteration"] == 2
    assert progress["snapshots"]["jekyll"] == ["jekyll_v1", "jekyll_v2"]
    assert not (run / "policy").exists()
    # killed between the two renames of a checkpoint: the previous one is found
    (run / "rllib_checkpoint").rename(run / ".rllib_checkpoint.old")

    def recording_the_restored_weights(config, *stretch):
        assert stretch == (2,)  # the resumed run deals fresh games
        algorithm = build(config, *stretch)
        train = algorithm.train

        def first():
            if not restored:
                restored.update(_weights(algorithm, saved[2]))
                remote.extend(  # what the remote env runners play with
                    algorithm.env_runner_group.foreach_env_runner(
                        lambda runner: {
                            m: [w for w, _ in rllib_backend.module_layers(runner.module[m])]
                            for m in saved[2]
                        },
                        local_env_runner=False,
                    )
                )
            return train()

        algorithm.train = first
        return algorithm

    monkeypatch.setattr(rllib_backend, "build_algorithm", recording_the_restored_weights)
    assert cli.main(["train", "--resume", str(run)]) == 0
    assert restored.keys() == saved[2].keys()
    # The env runners play a snapshot with its weights: jekyll_v2 was copied from
    # jekyll just before the checkpoint at iteration 2.
    assert all(map(np.array_equal, saved[2]["jekyll_v2"], saved[2]["jekyll"]))
    assert not all(map(np.array_equal, saved[2]["jekyll_v1"], saved[2]["jekyll"]))
    assert len(remote) == 1  # the smoke config's one env runner
    for module, layers in saved[2].items():  # the learners and the frozen snapshots
        assert all(np.array_equal(a, b) for a, b in zip(layers, restored[module], strict=True))
        assert all(np.array_equal(a, b) for a, b in zip(layers, remote[0][module], strict=True))
    rows = list(csv.DictReader((run / "metrics.csv").open()))
    assert [int(r["iteration"]) for r in rows] == [1, 2, 3]
    assert int(rows[2]["steps"]) > int(rows[1]["steps"])
    assert (run / "policy" / "policy.json").exists()
    assert cli.main(["train", "--resume", str(run)]) == 0
    assert "already finished" in capsys.readouterr().out
    assert cli.main(["train", "--resume", str(run), "--set", "run.iterations=5"]) == 2
    assert "--set cannot change an RLlib run on --resume" in capsys.readouterr().err
