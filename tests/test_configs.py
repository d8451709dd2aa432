"""Every shipped config loads and passes its checks."""

from __future__ import annotations

import pathlib

import pytest

from jekyll_hyde_train.config import dump_config, from_dict, load_config

CONFIGS = sorted((pathlib.Path(__file__).resolve().parents[1] / "configs").glob("*.yaml"))


def test_configs_exist():
    names = {path.name for path in CONFIGS}
    assert {"default.yaml", "long.yaml", "smoke.yaml", "eval.yaml", "ppo.yaml"} <= names


@pytest.mark.parametrize(
    "path", [p for p in CONFIGS if p.name != "eval.yaml"], ids=lambda p: p.name
)
def test_training_configs_load_and_round_trip(path):
    import yaml

    from jekyll_hyde_train.config import ALGORITHMS, read_algorithm
    from jekyll_hyde_train.rllib_backend import RLlibTrainConfig

    if path.name.startswith("rllib"):
        schema = RLlibTrainConfig
    elif path.name == "exploit.yaml":
        from jekyll_hyde_train.exploit import ExploitConfig

        schema = ExploitConfig
    else:
        schema = ALGORITHMS[read_algorithm(path)]
    config = load_config(path, schema=schema)
    data = yaml.safe_load(dump_config(config))
    data.pop("algorithm", None)
    assert from_dict(data, schema=schema) == config
