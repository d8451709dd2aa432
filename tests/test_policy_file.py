"""Saved policies: safe loading, and clear refusals of bad files."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest

from jekyll_hyde_agents import PolicyAgent, PolicyFileError, make_agent
from jekyll_hyde_agents.policy_file import (
    layer_sizes_text,
    layout_hash,
    parse_layer_sizes,
    read_policy,
    save_policy,
)
from jekyll_hyde_app import cli

from .test_agents import play_checked


def tiny_policy(folder, roles=None, hidden=8, seed=0):
    rng = np.random.default_rng(seed)
    layers = [
        (rng.normal(size=(hidden, 327)), rng.normal(size=hidden)),
        (rng.normal(size=(28, hidden)), rng.normal(size=28)),
    ]
    roles = roles or {"jekyll": "shared", "hyde": "shared"}
    return save_policy(folder, {"shared": layers}, roles, extra={"training_steps": 0})


def test_a_saved_policy_plays_legal_actions_in_both_roles(tmp_path):
    tiny_policy(tmp_path / "p")
    agent = make_agent(str(tmp_path / "p"))
    assert isinstance(agent, PolicyAgent) and agent.roles == ["jekyll", "hyde"]
    play_checked(agent, make_agent("random"), 0)
    play_checked(make_agent("random"), agent, 1)
    sampler = PolicyAgent(tmp_path / "p", deterministic=False, seed=3)
    play_checked(sampler, make_agent("random"), 2)


def test_a_one_role_policy_refuses_the_other_role(tmp_path):
    tiny_policy(tmp_path / "p", roles={"jekyll": "shared"})
    agent = PolicyAgent(tmp_path / "p")
    with pytest.raises(PolicyFileError, match="does not play hyde"):
        play_checked(make_agent("random"), agent, 0)


def _edit_metadata(folder, **changes):
    path = folder / "policy.json"
    data = json.loads(path.read_text())
    data.update(changes)
    path.write_text(json.dumps(data))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"env": "jekyll_hyde_v9"}, "made for environment 'jekyll_hyde_v9'"),
        ({"observation_layout": "0" * 64}, "another observation layout"),
        ({"format": "something"}, "not a jekyll_hyde_policy file"),
        ({"format_version": 7}, "format version 7"),
        ({"roles": {"gollum": "shared"}}, "'roles' must map"),
    ],
)
def test_policies_for_other_versions_or_layouts_are_refused(tmp_path, change, message):
    tiny_policy(tmp_path / "p")
    _edit_metadata(tmp_path / "p", **change)
    with pytest.raises(PolicyFileError, match=message):
        PolicyAgent(tmp_path / "p")


def test_a_weights_file_that_needs_unpickling_is_refused_without_running_code(tmp_path):
    tiny_policy(tmp_path / "p")
    marker = tmp_path / "pwned"

    class Exploit:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    np.savez(tmp_path / "p" / "policy.npz", **{"shared/w0": np.array([Exploit()], dtype=object)})
    with pytest.raises(PolicyFileError, match="would need unpickling"):
        PolicyAgent(tmp_path / "p")
    assert not marker.exists()
    assert pickle  # the exploit above is what a pickle-based format would run


@pytest.mark.parametrize("damage", ["truncate", "garbage", "missing", "nan", "shape"])
def test_corrupt_files_are_refused_with_a_clear_error(tmp_path, damage):
    tiny_policy(tmp_path / "p")
    weights = tmp_path / "p" / "policy.npz"
    if damage == "truncate":
        weights.write_bytes(weights.read_bytes()[:100])
    elif damage == "garbage":
        (tmp_path / "p" / "policy.json").write_text("{not json")
    elif damage == "missing":
        weights.unlink()
    elif damage == "nan":
        layers = {
            "shared/w0": np.full((8, 327), np.nan, np.float32),
            "shared/b0": np.zeros(8),
            "shared/w1": np.zeros((28, 8), np.float32),
            "shared/b1": np.zeros(28),
        }
        np.savez(weights, **layers)
    elif damage == "shape":
        np.savez(weights, **{"shared/w0": np.zeros((8, 300)), "shared/b0": np.zeros(8)})
    with pytest.raises(PolicyFileError):
        PolicyAgent(tmp_path / "p")


def test_the_cli_names_a_bad_policy_file(tmp_path, capsys):
    tiny_policy(tmp_path / "p")
    _edit_metadata(tmp_path / "p", env="other_env_v1")
    assert cli.main(["eval", str(tmp_path / "p"), "random", "--pairs", "1"]) == 2
    assert "made for environment 'other_env_v1'" in capsys.readouterr().err
    assert cli.main(["eval", str(tmp_path), "random", "--pairs", "1"]) == 2
    assert "no saved policy" in capsys.readouterr().err


def test_layout_hash_is_stable_and_names_the_layout():
    assert len(layout_hash()) == 64 and layout_hash() == layout_hash()


@pytest.mark.parametrize("damage", ["header", "short"])
def test_a_damaged_array_in_a_valid_archive_is_called_corrupt_not_pickled(tmp_path, damage):
    """A zip whose members are damaged float arrays is corrupt: no word of unpickling."""
    import zipfile

    tiny_policy(tmp_path / "p")
    path = tmp_path / "p" / "policy.npz"
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            if damage == "header":
                data = data[:12] + b"X" + data[13:]
            else:
                data = data[:-8]
            archive.writestr(name, data)
    with pytest.raises(PolicyFileError, match="corrupt") as info:
        PolicyAgent(tmp_path / "p")
    assert "unpickling" not in str(info.value) and "allow_pickle" not in str(info.value)


def test_layer_sizes_read_back_from_their_text_and_bad_text_is_named():
    for sizes in [(8,), (1024, 1024), (512, 256, 64)]:
        assert parse_layer_sizes(layer_sizes_text(sizes)) == sizes
    assert parse_layer_sizes("256X128") == (256, 128)
    for bad in ["8x0", "", "x", "ax2", "-4x4", "2.5x2"]:
        with pytest.raises(ValueError, match=f"positive whole numbers joined by x, got '{bad}'"):
            parse_layer_sizes(bad)


def _layers(rng, hidden):
    sizes = [327, *hidden, 28]
    return [
        (rng.normal(size=(out, inp)).astype(np.float32), rng.normal(size=out).astype(np.float32))
        for inp, out in zip(sizes[:-1], sizes[1:], strict=True)
    ]


def _two_groups(folder, jekyll_hidden, hyde_hidden):
    """A two-group policy saved for hidden [16] whose Hyde weights are then replaced."""
    rng = np.random.default_rng(0)
    roles = {"jekyll": "jekyll", "hyde": "hyde"}
    groups = {"jekyll": _layers(rng, jekyll_hidden), "hyde": _layers(rng, [16])}
    save_policy(folder, groups, roles)
    arrays = {}
    for group, hidden in (("jekyll", jekyll_hidden), ("hyde", hyde_hidden)):
        for i, (weight, bias) in enumerate(_layers(rng, hidden)):
            arrays[f"{group}/w{i}"], arrays[f"{group}/b{i}"] = weight, bias
    np.savez(folder / "policy.npz", **arrays)


@pytest.mark.parametrize(
    ("hyde_hidden", "message"),
    [
        ([4], r"architecture.hidden \[16\] disagrees with the weights of group 'hyde', whose"),
        ([16, 16], r"disagrees with the weights of group 'hyde'"),
        ([0], r"layer 0 of 'hyde' has no units \(shape \(0, 327\)\)"),
    ],
)
def test_every_weight_group_must_have_the_metadata_s_hidden_sizes(tmp_path, hyde_hidden, message):
    """One group matching architecture.hidden is not enough: the metadata states the
    architecture of every group, and a layer of no units is no layer."""
    _two_groups(tmp_path / "p", [16], hyde_hidden)
    with pytest.raises(PolicyFileError, match=message):
        PolicyAgent(tmp_path / "p")


def test_saving_groups_of_different_sizes_or_an_empty_layer_is_refused(tmp_path):
    rng = np.random.default_rng(0)
    roles = {"jekyll": "jekyll", "hyde": "hyde"}
    groups = {"jekyll": _layers(rng, [16]), "hyde": _layers(rng, [8])}
    with pytest.raises(ValueError, match="the weight groups have different hidden layer sizes"):
        save_policy(tmp_path / "p", groups, roles)
    groups = {"jekyll": _layers(rng, [0]), "hyde": _layers(rng, [0])}
    with pytest.raises(ValueError, match="a layer without units"):
        save_policy(tmp_path / "p", groups, roles)
    assert not (tmp_path / "p").exists()
    groups = {"jekyll": _layers(rng, [16, 8]), "hyde": _layers(rng, [16, 8])}
    save_policy(tmp_path / "p", groups, roles)
    assert PolicyAgent(tmp_path / "p").metadata["architecture"]["hidden"] == [16, 8]


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"training": "ppo"}, "'training' must be an object"),
        ({"training": {"method": "alchemy"}}, "training.method 'alchemy' is not one of"),
        ({"provenance": []}, "'provenance' must be an object"),
        ({"provenance": {"seed": "7"}}, "provenance.seed must be a whole number"),
        ({"provenance": {"commit": 7}}, "provenance.commit must be text"),
    ],
)
def test_the_training_record_has_one_schema_checked_on_load(tmp_path, change, says):
    """Every trainer writes ``training`` (its method and record) and ``provenance``
    (created, commit, config, seed); a file whose record breaks that is refused."""
    path = tiny_policy(tmp_path / "p")  # its policy.json
    metadata = json.loads(path.read_text())
    path.write_text(json.dumps(metadata | change))
    with pytest.raises(PolicyFileError, match=says):
        read_policy(path.parent)


def test_a_record_of_every_method_loads(tmp_path):
    from jekyll_hyde_agents.policy_format import TRAINING_METHODS, provenance

    path = tiny_policy(tmp_path / "p")  # its policy.json
    metadata = json.loads(path.read_text())
    made = provenance("algorithm: ppo\n", 3)
    assert set(made) == {"created", "commit", "config", "seed"}
    for method in TRAINING_METHODS:
        path.write_text(json.dumps(metadata | {"training": {"method": method}, "provenance": made}))
        assert read_policy(path.parent).metadata["training"]["method"] == method


def test_a_policy_is_named_by_its_folder_its_json_or_its_npz(tmp_path):
    """The weights file names its policy too, through the policy.json beside it; alone,
    it is refused saying what is missing."""
    from jekyll_hyde_agents.policy_file import resolve_policy_path

    meta = tiny_policy(tmp_path / "p")
    for name in (tmp_path / "p", meta, meta.with_name("policy.npz")):
        assert resolve_policy_path(name) == meta
    meta.unlink()
    with pytest.raises(PolicyFileError, match="no policy.json beside it"):
        resolve_policy_path(tmp_path / "p" / "policy.npz")
