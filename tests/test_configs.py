"""Every shipped config loads and passes its checks."""

from __future__ import annotations

import pathlib

import pytest

from jekyll_hyde_train.common.config import dump_config, from_dict, load_config
from jekyll_hyde_train.ppo.config import TrainConfig

CONFIGS = sorted((pathlib.Path(__file__).resolve().parents[1] / "configs").glob("*/*.yaml"))


def _name(path: pathlib.Path) -> str:
    return f"{path.parent.name}/{path.stem}"


def test_configs_exist():
    names = {_name(path) for path in CONFIGS}
    assert {"expert_iteration/default", "expert_iteration/long", "expert_iteration/smoke",
            "benchmarks/eval", "ppo/default"} <= names  # fmt: skip


@pytest.mark.parametrize("path", [p for p in CONFIGS if p.parent.name != "benchmarks"], ids=_name)
def test_training_configs_load_and_round_trip(path):
    import yaml

    from jekyll_hyde_train.algorithms import ALGORITHMS
    from jekyll_hyde_train.common.config import read_algorithm
    from jekyll_hyde_train.ppo.rllib_config import RLlibTrainConfig

    if path.parent.name == "rllib":
        schema = RLlibTrainConfig
    elif path.parent.name == "exploit":
        from jekyll_hyde_train.exploit.config import ExploitConfig

        schema = ExploitConfig
    else:
        schema = ALGORITHMS[read_algorithm(path)]
    config = load_config(path, schema=schema)
    data = yaml.safe_load(dump_config(config))
    data.pop("algorithm", None)
    assert from_dict(data, schema=schema) == config


ROOT = pathlib.Path(__file__).resolve().parents[1]


LAYERS = "must list positive layer sizes, 1 to 64"


@pytest.mark.parametrize(
    ("config", "override", "says"),
    [
        ("ppo_smoke", "run.seed=-1", "run.seed must be a whole number from 0 to 4294967295"),
        ("ppo_smoke", "run.seed=4294967296", "run.seed must be a whole number from 0 to"),
        ("smoke", "run.seed=4294967296", "run.seed must be a whole number from 0 to"),
        (
            "ppo_smoke",
            "ppo.net_arch=[4611686018427387904]",
            "ppo.net_arch must list positive layer sizes, 1 to 64 of them, each at most 65,536",
        ),
        ("ppo_smoke", "ppo.net_arch=[32, 0]", f"ppo.net_arch {LAYERS}"),
        ("ppo_smoke", "ppo.net_arch=[]", f"ppo.net_arch {LAYERS}"),
        ("ppo_smoke", f"ppo.net_arch={[1] * 65}", f"ppo.net_arch {LAYERS}"),
        ("smoke", "expert_iteration.hidden=[65537]", f"expert_iteration.hidden {LAYERS}"),
        (
            "smoke",
            "expert_iteration.stages=[{from_generation: 1, hidden: [100000]}]",
            f"expert_iteration.hidden {LAYERS}",
        ),
        ("ppo_smoke", "selfplay.baselines={random: 1, random: 2}", "'random' is given twice"),
    ],
)
def test_an_out_of_range_setting_is_refused_before_the_run_folder_is_made(
    tmp_path, capsys, config, override, says
):
    from jekyll_hyde_app import cli

    run = tmp_path / "run"
    assert cli.main(["train", "--config", config, "--run-dir", str(run), "--set", override]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and says in err, err
    assert not run.exists()


@pytest.mark.parametrize(
    ("override", "says"),
    [
        ("run.seed=4294967296", "run.seed must be a whole number from 0 to 4294967295"),
        ("evaluation.seed=-3", "evaluation.seed must be a whole number from 0 to 4294967295"),
        ("responder.net_arch=[70000]", f"responder.net_arch {LAYERS}"),
    ],
)
def test_an_out_of_range_exploit_setting_is_refused(override, says):
    from jekyll_hyde_train.common.config import ConfigError
    from jekyll_hyde_train.exploit.config import load_exploit_config

    with pytest.raises(ConfigError, match=says):
        load_exploit_config(None, ["responder.init=null", override])


def test_the_largest_seed_seeds_every_learner(tmp_path):
    """The learners' seeds (run.seed plus the learner's number) stay below 2**32,
    which numpy's legacy seeding in Stable-Baselines3 requires."""
    from jekyll_hyde_train.ppo.train import build_learner, build_vec_env, learner_seed

    config = load_config(
        ROOT / "configs" / "ppo" / "smoke.yaml",
        ["run.seed=4294967295", "env.n_envs=1", "env.vec_env=dummy", "ppo.batch_size=64"],
        schema=TrainConfig,
    )
    venv = build_vec_env(config, "hyde", [("random", 1.0)], seed=config.run.seed)
    try:
        model = build_learner(config, venv, learner_seed(config, 1), tmp_path)
    finally:
        venv.close()
    assert model.seed == 0 and learner_seed(config, 0) == 4294967295


@pytest.mark.parametrize(
    ("override", "says"),
    [
        ("run.seed=true", "run.seed must be of type int, got True (bool)"),
        ("run.seed=2.5", "run.seed must be of type int, got 2.5 (float)"),
        ("run.name=7", "run.name must be of type str, got 7 (int)"),
        ("expert_iteration.warm_start=1", "expert_iteration.warm_start must be of type bool"),
        ("expert_iteration.hidden=[64, x]", "expert_iteration.hidden[1] must be of type int"),
        ("expert_iteration.learning_rate=.inf", "expert_iteration.learning_rate must be a finite"),
        ("expert_iteration.games=1e3", None),  # a whole number with an exponent is a count
        ("expert_iteration.learning_rate=3e-4", None),
        ("expert_iteration.gamez=3", "unknown key 'expert_iteration.gamez'; allowed keys in"),
    ],
)
def test_a_value_of_the_wrong_type_is_refused_in_one_line_naming_its_key(override, says):
    """pydantic checks each section's types (strict); the loader names the key as the
    file spells it and what it got, in one line."""
    from jekyll_hyde_train.common.config import ConfigError
    from jekyll_hyde_train.expert_iteration.config import EITrainConfig

    if says is None:
        config = load_config("smoke", [override], schema=EITrainConfig)
        key, _, value = override.partition("=")
        assert getattr(config.expert_iteration, key.split(".")[1]) == float(value)
        return
    with pytest.raises(ConfigError) as refused:
        load_config("smoke", [override], schema=EITrainConfig)
    message = str(refused.value)
    assert says in message and "\n" not in message
