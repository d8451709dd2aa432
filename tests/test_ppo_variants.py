"""PPO self-play and RLlib on a smaller variant (run.variant, RULES.md V1-V7): every game
is of the variant, an opponent that cannot play it is refused before the run starts, the
exported policy plays the variant only and a checkpoint of another variant is not resumed."""

from __future__ import annotations

import importlib.util
import json
import pathlib

import numpy as np
import pytest

from jekyll_hyde_agents import PolicyAgent, RandomAgent
from jekyll_hyde_app import cli
from jekyll_hyde_env.engine import (
    NUM_CARDS,
    legal_actions,
    new_game,
    player_view,
)
from jekyll_hyde_env.engine.variant import FULL, TINY
from jekyll_hyde_train.common.config import from_dict, load_config
from jekyll_hyde_train.common.files import FileFormatError
from jekyll_hyde_train.ppo.checkpoints import TrainState, load_checkpoint, variant_record
from jekyll_hyde_train.ppo.config import TrainConfig
from jekyll_hyde_train.ppo.rllib_config import RLlibTrainConfig
from tests.test_agents import play_checked

ROOT = pathlib.Path(__file__).resolve().parents[1]
SMOKE = str(ROOT / "configs" / "ppo" / "smoke.yaml")
RLLIB_SMOKE = str(ROOT / "configs" / "rllib" / "smoke.yaml")

requires_ray = pytest.mark.skipif(
    importlib.util.find_spec("ray") is None,
    reason="Ray RLlib is not installed (pip install 'jekyll-hyde-env[rllib]'; .ci/run installs it)",
)


def refuses_the_full_game(agent):
    state = new_game(np.random.default_rng(0))
    with pytest.raises(ValueError, match="variant tiny and does not play variant full"):
        agent.act(player_view(state, state.to_act), legal_actions(state))


@pytest.mark.slow
def test_a_tiny_ppo_run_trains_on_tiny_and_exports_a_policy_of_tiny(tmp_path, capsys):
    run = tmp_path / "run"
    tiny = ["--set", "run.variant=tiny", "--set", "run.total_steps=1024"]
    assert cli.main(["train", "--config", SMOKE, "--run-dir", str(run), *tiny]) == 0
    agent = PolicyAgent(run)
    assert agent.variant.name == "tiny" and agent.roles == ["jekyll", "hyde"]
    assert json.loads((run / "policy" / "policy.json").read_text())["variant"]["name"] == "tiny"
    for seed in range(3):
        play_checked(agent, RandomAgent(seed=seed), seed, TINY)
        play_checked(RandomAgent(seed=seed), agent, seed, TINY)
    refuses_the_full_game(agent)
    snapshots = sorted((run / "snapshots").iterdir())
    assert snapshots and all(PolicyAgent(s).variant == TINY for s in snapshots)  # the pool's
    state = json.loads((run / "checkpoint" / "state.json").read_text())
    assert state["variant"]["name"] == "tiny" and state["finished"]
    rows = (run / "metrics.csv").read_text().splitlines()
    assert any(row.split(",")[5] for row in rows[1:])  # evaluated during training
    report = (run / "report.md").read_text()
    assert "- variant: tiny" in report and f"--variant {TINY.spec()}" in report
    assert "| heuristic |" in report
    # the run's checkpoint is of tiny: resuming it as the full game is refused in one line
    capsys.readouterr()
    resume = ["train", "--resume", str(run), "--set", "run.variant=full"]
    assert cli.main(resume) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "made on variant tiny, but run.variant is full" in err


@pytest.mark.parametrize(
    ("override", "key", "opponent"),
    [
        ("run.final_opponents=[random, pimc:10]", "run.final_opponents", "pimc:10"),
        ("selfplay.baselines={random: 0.5, az:10: 0.5}", "selfplay.baselines", "az:10"),
    ],
)
def test_an_opponent_that_cannot_play_the_variant_is_refused_before_the_run(
    tmp_path, capsys, override, key, opponent
):
    run = tmp_path / "run"
    flags = ["--set", "run.variant=tiny", "--set", override]
    assert cli.main(["train", "--config", SMOKE, "--run-dir", str(run), *flags]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"{key}: opponent '{opponent}' cannot play variant tiny" in err
    assert not run.exists()


def test_the_full_game_checks_no_opponent_and_records_no_variant():
    from jekyll_hyde_train.ppo.opponent_pool import check_opponents

    check_opponents(FULL, {"run.final_opponents": ["pimc:10"]})  # the full game: as before
    assert variant_record(FULL) == {}


def _checkpoint(run: pathlib.Path, **fields) -> None:
    (run / "checkpoint").mkdir(parents=True)
    state = {**TrainState().__dict__, **fields}
    (run / "checkpoint" / "state.json").write_text(json.dumps(state))


def test_a_checkpoint_of_another_variant_is_not_resumed(tmp_path):
    full_run, tiny_run = tmp_path / "full", tmp_path / "tiny"
    _checkpoint(full_run)  # no variant: the full game
    _checkpoint(tiny_run, **variant_record(TINY))
    assert load_checkpoint(full_run, FULL) is not None
    assert load_checkpoint(tiny_run, TINY) is not None
    with pytest.raises(FileFormatError, match="made on variant full, but run.variant is tiny"):
        load_checkpoint(full_run, TINY)
    with pytest.raises(FileFormatError, match="made on variant tiny, but run.variant is full"):
        load_checkpoint(tiny_run, FULL)


@pytest.mark.parametrize("vec_env", ["batched", "dummy", "subproc"])
def test_every_env_of_the_learner_plays_the_variant(vec_env):
    from jekyll_hyde_train.ppo.train import build_vec_env

    config = from_dict(
        {
            "run": {"variant": "tiny"},
            "env": {"n_envs": 2, "vec_env": vec_env},
            "ppo": {"n_steps": 64, "batch_size": 64},
            "selfplay": {"phase_steps": 128},
        },
        schema=TrainConfig,
    )
    venv = build_vec_env(config, "random", [("heuristic", 1.0)], seed=0)
    try:
        if vec_env == "batched":
            assert venv.venv.env.variant == TINY
        else:
            assert venv.get_attr("variant") == [TINY, TINY]
        venv.reset()
        off_deck = [card for card in range(NUM_CARDS) if not TINY.deck >> card & 1]
        episodes = 0
        for _ in range(12):  # a tiny game is a few decisions: episodes end and restart
            masks = np.stack(venv.env_method("action_masks"))
            assert not masks[:, off_deck].any()  # only the variant's cards are played
            actions = np.array([int(np.flatnonzero(mask)[0]) for mask in masks])
            episodes += int(venv.step(actions)[2].sum())
        assert episodes >= 2
    finally:
        venv.close()


# --- RLlib ---------------------------------------------------------------------------


def test_an_rllib_policy_records_its_variant(tmp_path):
    import torch

    from jekyll_hyde_env.engine.cards import NUM_ACTIONS
    from jekyll_hyde_env.observation import OBS_SIZE
    from jekyll_hyde_train.ppo.rllib import export_rllib_policy

    rng = torch.Generator().manual_seed(0)

    class Module:
        def state_dict(self):
            return {
                "encoder.actor_encoder.net.mlp.0.weight": torch.randn(8, OBS_SIZE, generator=rng),
                "encoder.actor_encoder.net.mlp.0.bias": torch.zeros(8),
                "pi.net.mlp.0.weight": torch.randn(NUM_ACTIONS, 8, generator=rng),
                "pi.net.mlp.0.bias": torch.zeros(NUM_ACTIONS),
            }

    class Algorithm:
        def get_module(self, module_id):
            return Module()

    config = from_dict(
        {"run": {"variant": "tiny"}, "ppo": {"activation": "tanh"}}, schema=RLlibTrainConfig
    )
    export_rllib_policy(Algorithm(), tmp_path / "policy", config, steps=10)
    agent = PolicyAgent(tmp_path / "policy")
    assert agent.variant.name == "tiny"
    play_checked(agent, RandomAgent(seed=0), 0, TINY)
    refuses_the_full_game(agent)


def test_an_rllib_checkpoint_of_another_variant_is_not_resumed(tmp_path):
    from jekyll_hyde_train.ppo.rllib import read_progress

    folder = tmp_path / "rllib_checkpoint"
    (folder / "algorithm").mkdir(parents=True)
    progress = {"iteration": 1, "steps": 400, "wall_time": 1.0, "snapshots": {}}
    (folder / "state.json").write_text(json.dumps({**progress, **variant_record(TINY)}))
    tiny = from_dict({"run": {"variant": "tiny"}}, schema=RLlibTrainConfig)
    assert read_progress(tmp_path, tiny)["iteration"] == 1
    full = load_config(RLLIB_SMOKE, schema=RLlibTrainConfig)
    with pytest.raises(FileFormatError, match="made on variant tiny, but run.variant is full"):
        read_progress(tmp_path, full)


@requires_ray
def test_the_rllib_env_plays_the_variant():
    from jekyll_hyde_train.ppo.rllib_env import make_multi_agent_env_class

    env = make_multi_agent_env_class()({"seed": 0, "variant": "tiny"})
    rng = np.random.default_rng(0)
    for seed in range(3):
        observations, _ = env.reset(seed=seed)
        assert env.game.variant == TINY
        while True:
            (agent,) = observations
            mask = observations[agent]["action_mask"]
            action = int(rng.choice(np.flatnonzero(mask)))
            observations, rewards, terminated, _, _ = env.step({agent: action})
            if terminated["__all__"]:
                break
        assert sorted(rewards.values()) == [-1.0, 1.0]


@requires_ray
@pytest.mark.slow
def test_a_tiny_rllib_run_exports_a_policy_of_tiny(tmp_path):
    run = tmp_path / "run"
    flags = ["--set", "run.variant=tiny", "--set", "run.iterations=2"]
    assert cli.main(["train", "--config", RLLIB_SMOKE, "--run-dir", str(run), *flags]) == 0
    agent = PolicyAgent(run)
    assert agent.variant.name == "tiny" and agent.metadata["training"]["backend"] == "rllib"
    for seed in range(2):
        play_checked(agent, RandomAgent(seed=seed), seed, TINY)
        play_checked(RandomAgent(seed=seed), agent, seed, TINY)
    refuses_the_full_game(agent)
    state = json.loads((run / "rllib_checkpoint" / "state.json").read_text())
    assert state["variant"]["name"] == "tiny" and state["iteration"] == 2
    assert "- variant: tiny" in (run / "report.md").read_text()


@requires_ray
def test_an_rllib_opponent_that_cannot_play_the_variant_is_refused(tmp_path, capsys):
    run = tmp_path / "run"
    flags = ["--set", "run.variant=tiny", "--set", "run.final_opponents=[random, pimc:10]"]
    assert cli.main(["train", "--config", RLLIB_SMOKE, "--run-dir", str(run), *flags]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "run.final_opponents: opponent 'pimc:10' cannot play variant tiny" in err
    assert not run.exists()
