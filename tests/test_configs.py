"""Every shipped config loads and passes its checks."""

from __future__ import annotations

import pathlib

import pytest

from train.config import dump_config, from_dict, load_config

CONFIGS = sorted((pathlib.Path(__file__).resolve().parents[1] / "configs").glob("*.yaml"))


def test_configs_exist():
    names = {path.name for path in CONFIGS}
    assert {"default.yaml", "long.yaml", "smoke.yaml", "eval.yaml"} <= names


@pytest.mark.parametrize(
    "path", [p for p in CONFIGS if p.name != "eval.yaml"], ids=lambda p: p.name
)
def test_training_configs_load_and_round_trip(path):
    import yaml

    from train.rllib_backend import RLlibTrainConfig

    schema = RLlibTrainConfig if path.name.startswith("rllib") else None
    config = load_config(path, schema=schema)
    assert from_dict(yaml.safe_load(dump_config(config)), schema=schema) == config
