"""A damaged run folder (progress, fit history, PPO checkpoint, learner zip, shard of
labelled decisions) is refused on resume in one line naming the file, and nothing
in a learner checkpoint is unpickled.
"""

from __future__ import annotations

import io
import json
import pathlib
import shutil
import zipfile

import numpy as np
import pytest

from jekyll_hyde_env.engine.cards import NUM_ACTIONS
from jekyll_hyde_env.observation import OBS_SIZE
from jekyll_hyde_train.common.config import dump_config, load_config
from jekyll_hyde_train.ppo.config import TrainConfig
from tests.file_checks import (
    NESTED,
    PPO_SMOKE,
    RANDOM_BYTES,
    npy_claiming,
    refused,
)
from tests.test_exploit import _Touch, hostile_learner_zip

# --- run folders: jekyll-hyde train --resume, distill --fit-only ----------------------


def _write(name: str, data):
    """Damage ``name`` in the run: bytes, text or a JSON value."""

    def damage(run):
        path = run / name
        if isinstance(data, bytes):
            path.write_bytes(data)
        elif isinstance(data, str):
            path.write_text(data)
        else:
            path.write_text(json.dumps(data))
        return path

    return damage


def _state(**changes):
    return _write("state.json", {"generation": 1, "wall_time": 1.0, "finished": False, **changes})


def _truncated(name):
    def damage(run):
        path = run / name
        path.write_bytes(path.read_bytes()[:20])
        return path

    return damage


def _at_generation_1(damage):
    """``damage`` in a run that resumes at generation 1 (its games and fit already made)."""

    def both(run):
        _state()(run)
        return damage(run)

    return both


def _without(name: str, **state):
    """The run with ``name`` removed and ``state.json`` saying ``state``."""

    def damage(run):
        shutil.rmtree(run / name)
        return _state(**state)(run)

    return damage


def _fit_history(history):
    def damage(run):
        path = run / "generation_01" / "fit.json"
        path.write_text(json.dumps({**json.loads(path.read_text()), "history": history}))
        return path

    return damage


RUN_DAMAGE = {
    "state truncated": (_truncated("state.json"), "not valid JSON"),
    "state of random bytes": (_write("state.json", RANDOM_BYTES), "not UTF-8 text"),
    "state of nested brackets": (_write("state.json", NESTED), "nested deeper than"),
    "state empty": (_write("state.json", b""), "the file is empty"),
    "state a list": (_write("state.json", [1, 2]), "must be a JSON object"),
    "state generation -1": (_state(generation=-1), "generation must be a whole number >= 0"),
    "state generation NaN": (_state(generation=float("nan")), "generation must be"),
    "state generation true": (_state(generation=True), "generation must be"),
    "state wall time as text": (_state(wall_time="x"), "wall_time must be a finite number"),
    "state finished 'yes'": (_state(finished="yes"), "finished must be true or false"),
    "state with an unknown key": (_state(phase=3), "unknown keys ['phase']"),
    "state past the planned generations": (
        _state(generation=999),
        "generation is 999 (the generations done), but the run's config.yaml plans 2",
    ),
    "state finished without a policy": (
        _without("policy", generation=2, finished=True),
        "finished is true, but",
    ),
    "state done with a generation's policy gone": (
        _without("generation_01/policy", generation=2, finished=True),
        "generation_01/policy/policy.json does not exist",
    ),
    "fit summary truncated": (
        _at_generation_1(_truncated("generation_01/fit.json")),
        "not valid JSON",
    ),
    "fit history a dict": (_at_generation_1(_fit_history({"a": 1})), "history must be a list"),
    "fit epoch without a role": (
        _at_generation_1(_fit_history([{"epoch": 1, "train_loss": 1.0}])),
        "history[0] lacks the key 'role'",
    ),
    "distill settings a list": (
        _at_generation_1(_write("generation_01/distill.json", [1])),
        "must be a JSON object",
    ),
    "metrics without a generation column": (
        _at_generation_1(_write("metrics.csv", "teacher,games\nx,1\n")),
        "lacks the columns ['generation']",
    ),
    "metrics of random bytes": (
        _at_generation_1(_write("metrics.csv", RANDOM_BYTES)),
        "not UTF-8 text",
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(RUN_DAMAGE))
def test_a_damaged_run_folder_is_refused_on_resume_naming_the_file(
    smoke_run, case, tmp_path, capsys
):
    damage, says = RUN_DAMAGE[case]
    run = tmp_path / "run"
    shutil.copytree(smoke_run, run)
    path = damage(run)
    refused(capsys, ["train", "--resume", str(run)], path, says)


@pytest.fixture(scope="module")
def ppo_run(tmp_path_factory) -> pathlib.Path:
    """A PPO run folder as a checkpoint leaves it: config and progress (no learner yet)."""
    run = tmp_path_factory.mktemp("ppo") / "run"
    (run / "checkpoint").mkdir(parents=True)
    (run / "config.yaml").write_text(dump_config(load_config(PPO_SMOKE, schema=TrainConfig)))
    return run


PPO_DAMAGE = {
    "an unknown key": ({"steps": 0, "epoch": 3}, "unknown keys ['epoch']"),
    "a list": ([0, 1], "must be a JSON object"),
    "snapshots as text": (
        {
            "steps": 512,
            "phase": 1,
            "phase_progress": 0,
            "snapshots": "jekyll_0000",
            "next_eval": 1024,
            "wall_time": 1.0,
            "finished": False,
        },
        "snapshots must be a JSON object",
    ),
}


@pytest.mark.parametrize("case", list(PPO_DAMAGE))
def test_a_damaged_ppo_checkpoint_is_refused_on_resume_naming_it(ppo_run, case, tmp_path, capsys):
    data, says = PPO_DAMAGE[case]
    run = tmp_path / "run"
    shutil.copytree(ppo_run, run)
    path = run / "checkpoint" / "state.json"
    path.write_text(json.dumps(data))
    refused(capsys, ["train", "--resume", str(run)], path, says)


def _resumable(run: pathlib.Path) -> None:
    """Progress that sends ``train --resume`` to the learners' zips."""
    state = {
        "steps": 512, "phase": 1, "phase_progress": 0, "snapshots": {}, "next_eval": 1024,
        "wall_time": 1.0, "finished": False,
    }  # fmt: skip
    (run / "checkpoint" / "state.json").write_text(json.dumps(state))


@pytest.fixture(scope="module")
def learner_zip(tmp_path_factory) -> bytes:
    """A learner of the PPO smoke config, as a checkpoint holds it."""
    from jekyll_hyde_train.ppo.learner import learner_archive
    from jekyll_hyde_train.ppo.train import build_learner, build_vec_env

    config = load_config(
        PPO_SMOKE, ["env.n_envs=1", "env.vec_env=dummy", "ppo.batch_size=64"], schema=TrainConfig
    )
    venv = build_vec_env(config, "jekyll", [("random", 1.0)], seed=0)
    try:
        model = build_learner(config, venv, 0, tmp_path_factory.mktemp("tensorboard"))
        return learner_archive(model).getvalue()
    finally:
        venv.close()


PPO_PROGRESS = {
    "finished without a policy": ({"finished": True}, (), "policy/policy.json, which does not"),
    "a learner missing": ({}, ("hyde.zip",), "checkpoint/hyde.zip, which does not exist"),
    "a snapshot missing": (
        {"snapshots": {"jekyll": ["snapshots/jekyll_0000"]}},
        (),
        "snapshots/jekyll_0000/policy.json, which does not exist",
    ),
}


@pytest.mark.parametrize("case", list(PPO_PROGRESS))
def test_ppo_progress_that_the_run_folder_contradicts_is_refused_naming_it(
    ppo_run, learner_zip, case, tmp_path, capsys
):
    changes, missing, says = PPO_PROGRESS[case]
    run = tmp_path / "run"
    shutil.copytree(ppo_run, run)
    _resumable(run)
    path = run / "checkpoint" / "state.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))
    for role in ("jekyll", "hyde"):
        if f"{role}.zip" not in missing:
            (run / "checkpoint" / f"{role}.zip").write_bytes(learner_zip)
    refused(capsys, ["train", "--resume", str(run)], path, says)


def _members(archive: bytes, **replaced) -> bytes:
    """``archive`` with some members replaced (bytes) or removed (None)."""
    with zipfile.ZipFile(io.BytesIO(archive)) as source:
        members = {name: source.read(name) for name in source.namelist()}
    members.update(replaced)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as written:
        for name, data in members.items():
            if data is not None:
                written.writestr(name, data)
    return buffer.getvalue()


def _pickled_tensors(marker: pathlib.Path) -> bytes:
    import torch

    buffer = io.BytesIO()
    torch.save({"weight": torch.zeros(2), "payload": _Touch(marker)}, buffer)
    return buffer.getvalue()


def _described(archive: bytes, **changes) -> bytes:
    """The learner with its SB3 ``data`` member changed."""
    with zipfile.ZipFile(io.BytesIO(archive)) as source:
        data = json.loads(source.read("data"))
    data.update(changes)
    return _members(archive, data=json.dumps(data).encode())


LEARNER_DAMAGE = {
    "a pickled payload in SB3's data": (
        lambda good, marker: hostile_learner_zip(marker),
        "data._n_updates must be a whole number",
    ),
    "a pickled payload in the weights": (
        lambda good, marker: _members(good, **{"policy.pth": _pickled_tensors(marker)}),
        "its member policy.pth is not plain tensors",
    ),
    "weights far larger than the network's": (
        lambda good, marker: _members(good, **{"policy.pth": b"\0" * 8 * 2**20}),
        "its member policy.pth unpacks to more than",
    ),
    "random bytes": (lambda good, marker: RANDOM_BYTES, "not readable"),
    "no optimiser state": (
        lambda good, marker: _members(good, **{"policy.optimizer.pth": None}),
        "it has no member policy.optimizer.pth",
    ),
    "another network": (
        lambda good, marker: _described(
            good, policy_kwargs={"net_arch": [8], "activation_fn": "<class 'x'>"}
        ),
        "does not describe an MLP policy",
    ),
    "a network the config does not ask for": (
        lambda good, marker: _described(
            good,
            policy_kwargs={
                "net_arch": [32, 32],
                "activation_fn": "<class 'torch.nn.modules.activation.ReLU'>",
            },
        ),
        "it holds a relu network of hidden layers [32, 32], but the run's config.yaml asks",
    ),
    "a negative step count": (
        lambda good, marker: _described(good, num_timesteps=-1),
        "data.num_timesteps must be a whole number >= 0",
    ),
    "episodes that are not numbers": (
        lambda good, marker: _members(
            good, **{"episodes.json": b'{"info": [{"r": "x", "l": 1, "t": 1}], "success": []}'}
        ),
        "episodes.json: 'x' (string) is not a number of an episode",
    ),
}


@pytest.mark.parametrize("case", list(LEARNER_DAMAGE))
def test_a_learner_checkpoint_is_refused_on_resume_and_nothing_in_it_is_unpickled(
    ppo_run, learner_zip, case, tmp_path, capsys
):
    """SB3's loader would unpickle parts of the zip, running any code in them; the
    learner is built from the config instead, and only tensors and JSON are read."""
    damage, says = LEARNER_DAMAGE[case]
    run = tmp_path / "run"
    shutil.copytree(ppo_run, run)
    _resumable(run)
    marker = tmp_path / "marker"
    (run / "checkpoint" / "hyde.zip").write_bytes(learner_zip)
    path = run / "checkpoint" / "jekyll.zip"
    path.write_bytes(damage(learner_zip, marker))
    try:
        refused(capsys, ["train", "--resume", str(run)], path, says)
    finally:
        assert not marker.exists(), "the checkpoint's pickle ran"


def _shard(**members) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            archive.writestr(f"{name}.npy", data)
    return buffer.getvalue()


def _npy(array) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def _good_shard(rows: int = 3, obs_width: int = OBS_SIZE) -> dict[str, bytes]:
    return {
        "obs": _npy(np.zeros((rows, obs_width), np.int8)),
        "mask": _npy(np.ones((rows, NUM_ACTIONS), bool)),
        "target": _npy(np.full((rows, NUM_ACTIONS), 1 / NUM_ACTIONS, np.float32)),
        "role": _npy(np.zeros(rows, np.uint8)),
        "outcome": _npy(np.ones(rows, np.int8)),
        "search_value": _npy(np.zeros(rows, np.float32)),
        "games": _npy(np.array(1)),
    }


SHARD_DAMAGE = {
    "a header claiming 10^12 rows": (
        {**_good_shard(), "role": npy_claiming((10**12,), "|u1")},
        "claims shape (1000000000000,)",
    ),
    "observations of the wrong width": (
        {**_good_shard(), "obs": _npy(np.zeros((3, 5), np.int8))},
        "'obs' is int8 of shape (3, 5)",
    ),
    "roles as floats": (
        {**_good_shard(), "role": _npy(np.full(3, 0.5, np.float32))},
        "'role' is float32",
    ),
}


@pytest.mark.parametrize("case", list(SHARD_DAMAGE))
def test_a_damaged_shard_is_refused_before_the_fit_naming_it(case, tmp_path, capsys):
    members, says = SHARD_DAMAGE[case]
    run = tmp_path / "run"
    path = run / "data" / "shard_00000.npz"
    path.parent.mkdir(parents=True)
    path.write_bytes(_shard(**members))
    argv = ["distill", "--run-dir", str(run), "--fit-only", "--teacher", "ismcts:10"]
    refused(capsys, argv + ["--games", "2", "--games-per-shard", "2", "--hidden", "8"], path, says)
