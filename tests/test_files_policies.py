"""A damaged saved policy is refused in one line naming its file (``jekyll-hyde
eval``), and any value of a metadata key is read or refused as a PolicyFileError.
"""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jekyll_hyde_agents import PolicyFileError
from jekyll_hyde_agents.policy_file import read_policy
from jekyll_hyde_env.observation import OBS_SIZE
from tests.file_checks import (
    FUZZ,
    JSON,
    NESTED,
    RANDOM_BYTES,
    npy_claiming,
    refused,
)
from tests.test_policy_file import tiny_policy

# --- saved policies: jekyll-hyde eval -------------------------------------------------


def _metadata(**changes):
    def damage(folder):
        path = folder / "policy.json"
        path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))
        return path

    return damage


def _weights(**members):
    """Replace policy.npz by an archive of raw ``.npy`` members."""

    def damage(folder):
        path = folder / "policy.npz"
        with zipfile.ZipFile(path, "w") as archive:
            for name, data in members.items():
                archive.writestr(f"{name}.npy", data)
        return path

    return damage


def _extra_array(name, array):
    def damage(folder):
        path = folder / "policy.npz"
        with np.load(path) as archive:
            arrays = {key: archive[key] for key in archive.files}
        np.savez(path, **arrays, **{name: array})
        return path

    return damage


def _metadata_bytes(data):
    def damage(folder):
        path = folder / "policy.json"
        path.write_bytes(data)
        return path

    return damage


POLICY_DAMAGE = {
    "architecture a list": (_metadata(architecture=[8]), "'architecture' must be an object"),
    "hidden sizes that are not the weights'": (
        _metadata(architecture={"hidden": [7], "activation": "tanh"}),
        "architecture.hidden [7] disagrees with the weights",
    ),
    "a negative hidden size": (
        _metadata(architecture={"hidden": [-8], "activation": "tanh"}),
        "positive whole numbers",
    ),
    "observation size 5": (_metadata(observation_size=5), "observation_size 5"),
    "27 actions": (_metadata(num_actions=27), "num_actions 27"),
    "format version true": (_metadata(format_version=True), "policy format version True"),
    "roles naming lists": (_metadata(roles={"jekyll": ["shared"]}), "'roles' must map"),
    "value head 'yes'": (_metadata(value_head="yes"), "value_head must be true or false"),
    "training steps as text": (_metadata(training_steps="many"), "training_steps must be"),
    "metadata of random bytes": (_metadata_bytes(RANDOM_BYTES), "not UTF-8 text"),
    "metadata of nested brackets": (_metadata_bytes(NESTED), "nested too deeply"),
    "metadata with a 5000-digit number": (
        _metadata_bytes(b'{"format_version": ' + b"9" * 5000 + b"}"),
        "not a readable policy metadata file (Exceeds the limit (4300 digits)",
    ),
    "a header claiming 10^12 floats": (
        _weights(**{"shared/w0": npy_claiming((10**12,))}),
        "claims shape (1000000000000,)",
    ),
    "a header claiming a negative size": (
        _weights(**{"shared/w0": npy_claiming((-1, OBS_SIZE))}),
        "claims the shape",
    ),
    "an array of no layer": (_extra_array("shared/w7", np.zeros((4, 4), np.float32)), "w7"),
    "a value head the metadata denies": (
        _extra_array("shared/vw", np.zeros(8, np.float32)),
        "the metadata says value_head false",
    ),
}


@pytest.mark.parametrize("case", list(POLICY_DAMAGE))
def test_a_damaged_policy_is_refused_in_one_line_naming_its_file(case, tmp_path, capsys):
    damage, says = POLICY_DAMAGE[case]
    folder = tmp_path / "p"
    tiny_policy(folder)
    path = damage(folder)
    argv = ["eval", str(folder), "random", "--pairs", "1", "--workers", "1", "--no-progress"]
    refused(capsys, argv, path, says)


def test_eval_of_random_bytes_names_the_file_given_and_what_a_policy_is(tmp_path, capsys):
    path = tmp_path / "bad" / "rand.npz"
    path.parent.mkdir()
    path.write_bytes(RANDOM_BYTES)
    argv = ["eval", str(path), "random", "--pairs", "1", "--workers", "1", "--no-progress"]
    line = refused(capsys, argv, path, "a folder holding policy.json and policy.npz")
    assert "bad/policy.json" not in line  # a file the user never gave


METADATA_KEYS = [
    "format_version",
    "observation_size",
    "num_actions",
    "roles",
    "architecture",
    "value_head",
    "training_steps",
    "training",
]


@settings(max_examples=150, **FUZZ)
@given(key=st.sampled_from(METADATA_KEYS), value=JSON)
def test_any_value_of_a_metadata_key_is_read_or_refused_as_a_policy_file_error(
    tmp_path_factory, key, value
):
    folder = tmp_path_factory.mktemp("policy")
    tiny_policy(folder)
    _metadata(**{key: value})(folder)
    try:
        read_policy(folder)
    except PolicyFileError:
        pass
