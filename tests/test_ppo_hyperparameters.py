"""One PPO hyperparameter type for PPO self-play, RLlib and the exploit responder."""

from __future__ import annotations

import dataclasses

import pytest

from jekyll_hyde_train.common.config import load_config
from jekyll_hyde_train.common.config_checks import ConfigError
from jekyll_hyde_train.exploit.config import ExploitConfig, load_exploit_config
from jekyll_hyde_train.exploit.responder import responder_start
from jekyll_hyde_train.ppo.config import TrainConfig
from jekyll_hyde_train.ppo.hyperparameters import (
    MAX_ROLLOUT_STEPS,
    PPOHyperparameters,
    new_maskable_ppo,
    rllib_training,
)
from jekyll_hyde_train.ppo.rllib_config import RLlibTrainConfig

SHARED = {f.name for f in dataclasses.fields(PPOHyperparameters)}


def test_every_ppo_trainer_reads_the_same_keys_with_the_same_checks():
    sections = {
        "ppo": TrainConfig().ppo,
        "rllib": RLlibTrainConfig().ppo,
        "exploit": ExploitConfig().responder,
    }
    for name, section in sections.items():
        assert isinstance(section, PPOHyperparameters), name
        assert SHARED <= {f.name for f in dataclasses.fields(section)}, name
    # The same impossible value is refused by each, under its own section's name.
    for name, schema in (("ppo_smoke", TrainConfig), ("rllib_smoke", RLlibTrainConfig)):
        with pytest.raises(ConfigError, match=r"ppo.gae_lambda must be in \(0, 1\]"):
            load_config(name, ["ppo.gae_lambda=1.5"], schema=schema)
    with pytest.raises(ConfigError, match="responder.gae_lambda must be in"):
        load_exploit_config(None, ["responder.gae_lambda=1.5"])


def test_rllib_takes_each_hyperparameter_under_its_own_name():
    hp = PPOHyperparameters(
        learning_rate=1e-3, n_steps=100, batch_size=50, n_epochs=3, gamma=0.99,
        gae_lambda=0.9, clip_range=0.3, ent_coef=0.02, vf_coef=0.7, max_grad_norm=2.0,
    )  # fmt: skip
    assert rllib_training(hp, games=4) == {
        "train_batch_size_per_learner": 400,
        "minibatch_size": 50,
        "num_epochs": 3,
        "lr": 1e-3,
        "gamma": 0.99,
        "lambda_": 0.9,
        "clip_param": 0.3,
        "entropy_coeff": 0.02,
        "vf_loss_coeff": 0.7,
        "grad_clip": 2.0,
        "grad_clip_by": "global_norm",
    }


def test_an_rllib_key_that_moved_to_ppo_is_named_with_its_new_place(tmp_path):
    with pytest.raises(ConfigError, match=r"'rllib.lr' is now ppo.learning_rate"):
        load_config("rllib_smoke", ["rllib.lr=0.001"], schema=RLlibTrainConfig)
    old = tmp_path / "old.yaml"
    old.write_text("algorithm: rllib\nrllib:\n  fcnet_hiddens: [64]\n")
    with pytest.raises(ConfigError, match=r"'rllib.fcnet_hiddens' is now ppo.net_arch"):
        load_config(old, schema=RLlibTrainConfig)


@pytest.mark.parametrize(
    ("config", "overrides", "says"),
    [
        ("ppo_smoke", ["env.n_envs=4096", "ppo.n_steps=512"], "at most 1,048,576 are allowed"),
        ("ppo_smoke", ["env.n_envs=5000"], "env.n_envs must be at most 4,096"),
        ("ppo_smoke", ["env.vec_env=subproc", "env.n_envs=65"], "env.n_envs must be at most 64"),
        ("ppo_smoke", ["ppo.batch_size=100000"], "ppo.batch_size .* must not exceed a rollout"),
        ("rllib_smoke", ["ppo.n_steps=2000000"], "at most 1,048,576"),
        ("rllib_smoke", ["rllib.num_env_runners=1000"], "num_env_runners must be at most 64"),
        ("rllib_smoke", ["run.seed=4294967296"], "run.seed must be a whole number from 0"),
        (None, ["responder.n_envs=100000"], "responder.n_envs must be at most 4,096"),
        (None, ["responder.steps=2e9"], "responder.steps must be at most 1,000,000,000"),
        (None, ["evaluation.games=2e6"], "evaluation.games must be at most 1,000,000"),
        (None, ["search.games=2e6"], "search.games must be at most 1,000,000"),
        (None, ["search.simulations=2e6"], "search.simulations must be at most 1,000,000"),
        ("ppo_smoke", ["ppo.n_epochs=1001"], "ppo.n_epochs must be at most 1,000"),
    ],
)
def test_budgets_past_their_bounds_are_refused_naming_the_bound(config, overrides, says):
    with pytest.raises(ConfigError, match=says):
        if config is None:
            load_exploit_config(None, overrides)
        else:
            schema = RLlibTrainConfig if config.startswith("rllib") else TrainConfig
            load_config(config, overrides, schema=schema)


def test_the_rollout_bound_is_two_to_the_twentieth():
    assert MAX_ROLLOUT_STEPS == 2**20  # the messages above spell it out


def test_a_responder_activation_other_than_its_starting_policy_is_refused():
    assert responder_start(load_exploit_config(None, []), "jekyll").relu  # the champion's
    relu = load_exploit_config(None, ["responder.activation=relu"])
    assert responder_start(relu, "jekyll").relu
    tanh = load_exploit_config(None, ["responder.activation=tanh"])
    with pytest.raises(ConfigError, match="is not the activation 'relu' of responder.init"):
        responder_start(tanh, "jekyll")
    fresh = load_exploit_config(None, ["responder.init=null", "responder.activation=relu"])
    assert responder_start(fresh, "hyde").relu


def test_the_learner_has_the_hyperparameters_it_was_given():
    from jekyll_hyde_env.integrations.sb3_vec_env import JekyllHydeSB3VecEnv

    hp = PPOHyperparameters(n_steps=8, batch_size=16, vf_coef=0.25, max_grad_norm=1.5,
                            net_arch=[8], activation="relu")  # fmt: skip
    venv = JekyllHydeSB3VecEnv(num_envs=2, role="jekyll", opponent="random")
    try:
        model = new_maskable_ppo(hp, venv, seed=3)
        assert (model.n_steps, model.batch_size, model.vf_coef, model.max_grad_norm) == (
            8,
            16,
            0.25,
            1.5,
        )
        assert model.policy.net_arch == [8]
        assert model.policy.activation_fn.__name__ == "ReLU"
        other = new_maskable_ppo(hp, venv, seed=3, net_arch=[4, 4], activation="tanh")
        assert other.policy.net_arch == [4, 4]
        assert other.policy.activation_fn.__name__ == "Tanh"
    finally:
        venv.close()


@pytest.mark.parametrize("name", ["", "..", "../elsewhere", "a/b", "x" * 101])
def test_a_run_name_must_be_one_folder_in_every_trainer(name):
    for config, schema in (("rllib_smoke", RLlibTrainConfig), ("ppo_smoke", TrainConfig)):
        with pytest.raises(ConfigError, match="run.name .* must be a folder name"):
            load_config(config, [f"run.name={name!r}"], schema=schema)
