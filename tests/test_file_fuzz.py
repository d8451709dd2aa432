"""Every file a ``jekyll-hyde`` command reads is checked, and a full disk ends a run cleanly.

Each malformed file (a game record, a saved policy, a config, a run's progress,
a shard of labelled decisions) goes through the real command line
(``jekyll_hyde_app.cli.main``) and must end in exit status 2 with one line on stderr that
names the file, never a traceback. Hypothesis also mutates valid files at
random: the readers may accept the result or refuse it with their ValueError,
nothing else. A write that fails for want of space stops training with one line
naming the file and the command that continues the run, which then completes.
"""

from __future__ import annotations

import copy
import csv
import dataclasses
import errno
import io
import json
import math
import os
import pathlib
import shutil
import subprocess
import sys
import zipfile

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jekyll_hyde_agents import PolicyFileError
from jekyll_hyde_agents.policy_file import read_policy
from jekyll_hyde_app import cli
from jekyll_hyde_env.engine import game_record, replay_record
from jekyll_hyde_env.engine.cards import NUM_ACTIONS
from jekyll_hyde_env.engine.record import RecordError
from jekyll_hyde_env.observation import OBS_SIZE
from jekyll_hyde_train.algorithms import ALGORITHMS
from jekyll_hyde_train.common.config import ConfigError, dump_config, load_config, read_algorithm
from jekyll_hyde_train.common.files import (
    FileFormatError,
    check_fields,
    read_json_bytes,
    read_json_file,
)
from jekyll_hyde_train.ppo.config import TrainConfig
from tests.engine.test_record import play_random
from tests.test_exploit import _Touch, hostile_learner_zip
from tests.test_policy_file import tiny_policy

ROOT = pathlib.Path(__file__).resolve().parents[1]
SMOKE = ROOT / "configs" / "expert_iteration" / "smoke.yaml"
PPO_SMOKE = ROOT / "configs" / "ppo" / "smoke.yaml"
NESTED = b"[" * 100_000 + b"]" * 100_000  # 200 KB of brackets
RANDOM_BYTES = np.random.default_rng(7).integers(0, 256, 4096, dtype=np.uint8).tobytes()


def refused(capsys, argv: list[str], path: pathlib.Path, says: str = "") -> str:
    """Run the command; it must exit 2 with one line on stderr naming ``path``."""
    capsys.readouterr()
    status = cli.main(argv)
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert status == 2, err
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert str(path) in lines[0], err
    assert says in lines[0], err
    return lines[0]


# --- game records: jekyll-hyde replay -----------------------------------------------


@pytest.fixture(scope="module")
def record() -> dict:
    data = game_record(play_random(1))
    data["players"] = {"jekyll": "heuristic", "hyde": "random"}
    return json.loads(json.dumps(data))


def _set_action(value):
    def damage(record):
        record["actions"][0]["action"] = value

    return damage


def _bool_action(record):
    """An action 0 or 1 written as false or true: the same number to Python, not an id."""
    item = next(i for i in record["actions"] if i["action"] in (0, 1))
    item["action"] = bool(item["action"])


def _disagreeing_round(record):
    record["rounds"][0]["marker"] += 1


def _deal_of_a_number(record):
    record["deals"][1]["hyde"] = 7


RECORD_DAMAGE = {
    "action a string": (_set_action("23"), "is not an action id"),
    "action a float": (_set_action(23.0), "is not an action id"),
    "action a list": (_set_action([23]), "is not an action id"),
    "action NaN": (_set_action(float("nan")), "is not an action id"),
    "action negative": (_set_action(-1), "is not an action id"),
    "action a boolean": (_bool_action, "is not an action id"),
    "action missing": (lambda r: r["actions"][0].pop("action"), "has no 'action'"),
    "actions a dict": (lambda r: r.update(actions={"0": 1}), "'actions' must be a list"),
    "actions a number": (lambda r: r.update(actions=23), "'actions' must be a list"),
    "players a list": (lambda r: r.update(players=[]), "'players' must map roles"),
    "result a list": (lambda r: r.update(result=[]), "'result' must be an object"),
    "version true": (lambda r: r.update(version=True), "unsupported record version"),
    "cards a number": (_deal_of_a_number, "must be a list of card ids"),
    "unknown key": (lambda r: r.update(comment="mine"), "unknown keys ['comment']"),
    "rounds disagree": (_disagreeing_round, "disagrees with the replay"),
}


@pytest.mark.parametrize("case", list(RECORD_DAMAGE))
def test_a_damaged_game_record_is_refused_in_one_line_naming_it(record, case, tmp_path, capsys):
    damage, says = RECORD_DAMAGE[case]
    bad = copy.deepcopy(record)
    damage(bad)
    path = tmp_path / "game.json"
    path.write_text(json.dumps(bad))
    refused(capsys, ["replay", str(path), "--no-wait"], path, says)


RAW_FILES = {
    "empty": (b"", "the file is empty"),
    "random bytes": (RANDOM_BYTES, "not UTF-8 text"),
    "nested brackets": (NESTED, "nested deeper than"),
    "truncated": (None, "not valid JSON"),
    "a list": (b"[1, 2, 3]", "not a game record"),
    "a 5000-digit number": (
        b'{"version": ' + b"9" * 5000 + b"}",
        "not readable JSON (Exceeds the limit (4300 digits)",
    ),
}


@pytest.mark.parametrize("case", list(RAW_FILES))
def test_a_record_file_that_is_not_json_of_a_record_is_named(record, case, tmp_path, capsys):
    data, says = RAW_FILES[case]
    if data is None:
        text = json.dumps(record)
        data = text[: len(text) // 2].encode()
    path = tmp_path / "game.json"
    path.write_bytes(data)
    refused(capsys, ["replay", str(path), "--no-wait"], path, says)


def test_the_installed_command_refuses_random_bytes_without_a_traceback(tmp_path):
    path = tmp_path / "rand.json"
    path.write_bytes(RANDOM_BYTES)
    result = subprocess.run(
        [sys.executable, "-m", "jekyll_hyde_app.cli", "replay", str(path), "--no-wait"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [
        f"error: {path}: not UTF-8 text (byte 0x{RANDOM_BYTES[0]:02x} at offset 0); expected "
        "a game record (JSON, from jekyll-hyde play --save or eval --save-games)"
    ]


# Derandomized: the same examples on every run, so a failure is always reproduced.
FUZZ = dict(derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True)
    | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=8,
)


def _places(data, path=()):
    """Every place in a JSON value: (path to it, value)."""
    yield path, data
    if isinstance(data, dict):
        items = data.items()
    else:
        items = enumerate(data) if isinstance(data, list) else ()
    for key, value in items:
        yield from _places(value, (*path, key))


def _replaced(data, path, value):
    data = copy.deepcopy(data)
    if not path:
        return value
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return data


@settings(max_examples=300, **FUZZ)
@given(data=st.data())
def test_any_mutation_of_a_record_is_replayed_or_refused_with_a_value_error(record, data):
    """``replay_record`` (also behind the web server's /api/replay) raises RecordError
    for a malformed record, never another ValueError, TypeError, AttributeError,
    KeyError or RecursionError."""
    places = list(_places(record))
    path, _ = data.draw(st.sampled_from(places))
    mutated = _replaced(record, path, data.draw(JSON))
    try:
        replay_record(mutated)
    except RecordError:
        pass


# --- saved policies: jekyll-hyde eval -------------------------------------------------


def _metadata(**changes):
    def damage(folder):
        path = folder / "policy.json"
        path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))
        return path

    return damage


def _npy_claiming(shape, dtype="<f4") -> bytes:
    buffer = io.BytesIO()
    header = {"descr": dtype, "fortran_order": False, "shape": shape}
    np.lib.format.write_array_header_1_0(buffer, header)
    return buffer.getvalue() + b"\0" * 64


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
        _weights(**{"shared/w0": _npy_claiming((10**12,))}),
        "claims shape (1000000000000,)",
    ),
    "a header claiming a negative size": (
        _weights(**{"shared/w0": _npy_claiming((-1, OBS_SIZE))}),
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


# --- configs: jekyll-hyde train --config ---------------------------------------------


def _smoke_with(text: str) -> bytes:
    return (SMOKE.read_text() + text).encode()


CONFIG_DAMAGE = {
    "random bytes": (RANDOM_BYTES, "not UTF-8 text"),
    "nested brackets": (b"run: " + NESTED, "nested deeper than"),
    "keys of two types": (b"1: x\nrun: {}\n", "unknown sections ['1']"),
    "an algorithm that is a list": (b"algorithm: [ppo]\n", "algorithm ['ppo']"),
    "an unclosed quote": (b'run: {name: "smoke\n', "not valid YAML (while scanning"),
    "a 5000-digit number": (
        b"run:\n  seed: " + b"9" * 5000 + b"\n",
        "not readable YAML (Exceeds the limit (4300 digits)",
    ),
    "a key given twice": (
        _smoke_with("  epochs: 3\n"),
        "the key 'epochs' is given twice",
    ),
    "NaN where a number is expected": (
        _smoke_with("  c_puct: .nan\n"),
        "expert_iteration.c_puct must be a finite number",
    ),
}


@pytest.mark.parametrize("case", list(CONFIG_DAMAGE))
def test_a_damaged_config_is_refused_in_one_line_naming_it(case, tmp_path, capsys):
    data, says = CONFIG_DAMAGE[case]
    path = tmp_path / "config.yaml"
    path.write_bytes(data)
    argv = ["train", "--config", str(path), "--run-dir", str(tmp_path / "run")]
    refused(capsys, argv, path, says)
    assert not (tmp_path / "run").exists()


def test_a_config_with_aliases_is_refused_before_they_multiply(tmp_path):
    """Aliases can make a few lines stand for billions of values; configs need none."""
    path = tmp_path / "config.yaml"
    lines = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    for a, b in ("ab", "bc", "cd", "de"):  # e: 9**5 values in five lines
        lines.append(f"{b}: &{b} [{', '.join([f'*{a}'] * 9)}]")
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ConfigError, match=f"^{path}: not valid YAML \\(aliases"):
        load_config(path, schema=TrainConfig)


def test_the_shared_reader_names_the_file_and_the_problem(tmp_path):
    """What every reader of a command's files builds on (jekyll_hyde_train.common.files)."""
    path = tmp_path / "progress.json"
    path.write_text('{"generation": true, "finished": false}')
    data = read_json_file(path, "a progress file (JSON)")
    with pytest.raises(FileFormatError) as refusal:
        check_fields(path, data, {"generation": "count", "finished": "flag"})
    assert refusal.value.path == str(path) and isinstance(refusal.value, ValueError)
    problem = "generation must be a whole number >= 0, got True (boolean)"
    assert str(refusal.value) == f"{path}: {problem}" and refusal.value.problem == problem
    path.write_bytes(b'{"generation": 1,\n "finished": "')
    with pytest.raises(FileFormatError, match="not valid JSON .* at line 2 column 14"):
        read_json_file(path, "a progress file (JSON)")


JSON_BYTES = st.one_of(
    st.binary(max_size=64),
    st.text(max_size=64).map(str.encode),
    st.integers(4290, 4400).map(lambda digits: b"1" * digits),
    st.integers(1, 5000).map(lambda depth: b"[" * depth + b"]" * depth),
    st.integers(1, 5000).map(lambda depth: b'{"a":' * depth),
)


@settings(max_examples=200, **FUZZ)
@given(data=JSON_BYTES)
def test_the_shared_reader_returns_a_value_or_refuses_with_a_file_format_error(data):
    """Whatever the bytes, ``read_json_bytes`` (under every JSON file a command and a
    checkpoint's members are read with) returns a value or raises FileFormatError
    naming where they came from, never another ValueError or a RecursionError."""
    try:
        read_json_bytes("checkpoint.zip: resume.json", data, "a progress file (JSON)")
    except FileFormatError as error:
        assert error.path == "checkpoint.zip: resume.json"


YAML_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True)
    | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.text(max_size=5) | st.integers(), children, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=150, **FUZZ)
@given(data=st.data())
def test_any_mutation_of_a_config_is_loaded_or_refused_as_a_config_error(tmp_path_factory, data):
    """A value replaced anywhere, or a key of any type added to any mapping."""
    config = yaml.safe_load(SMOKE.read_text())
    places = list(_places(config))
    if data.draw(st.booleans()):
        path, _ = data.draw(st.sampled_from(places))
        mutated = _replaced(config, path, data.draw(YAML_VALUES))
    else:
        mappings = [path for path, value in places if isinstance(value, dict)]
        path = data.draw(st.sampled_from(mappings))
        key = data.draw(st.text(max_size=5) | st.integers() | st.booleans())
        mutated = _replaced(config, (*path, key), data.draw(YAML_VALUES))
    file = tmp_path_factory.mktemp("config") / "config.yaml"
    file.write_text(yaml.safe_dump(mutated))
    try:  # as jekyll-hyde train reads it
        config = load_config(file, schema=ALGORITHMS[read_algorithm(file)])
    except ConfigError:
        return
    numbers = [v for v in _places(dataclasses.asdict(config)) if isinstance(v[1], float)]
    assert all(math.isfinite(value) for _, value in numbers), numbers


# --- run folders: jekyll-hyde train --resume, distill --fit-only ----------------------


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory) -> pathlib.Path:
    run = tmp_path_factory.mktemp("smoke") / "run"
    assert cli.main(["train", "--config", str(SMOKE), "--run-dir", str(run)]) == 0
    return run


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
        {**_good_shard(), "role": _npy_claiming((10**12,), "|u1")},
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


# --- a full disk while training ----------------------------------------------------------


def _failing_fsync(monkeypatch, at: int, error: BaseException) -> list[int]:
    """Make the ``at``-th flush of a file to disk raise ``error`` (every run file is
    flushed once, when written); returns the count of flushes so far."""
    calls = [0]
    fsync = os.fsync

    def flush(fd: int) -> None:
        calls[0] += 1
        if calls[0] == at:
            raise error
        fsync(fd)

    monkeypatch.setattr(os, "fsync", flush)
    return calls


@pytest.mark.slow
@pytest.mark.parametrize("at", [3, 11, 13])
def test_a_full_disk_stops_training_in_one_line_and_the_run_resumes(
    at, tmp_path, capsys, monkeypatch
):
    run = tmp_path / "run"
    full = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    calls = _failing_fsync(monkeypatch, at, full)
    capsys.readouterr()
    assert cli.main(["train", "--config", str(SMOKE), "--run-dir", str(run)]) == 1
    assert calls[0] == at  # nothing was written after the failed write
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert "Traceback" not in err and len(lines) == 1, err
    assert lines[0].startswith(f"error: cannot write {run}/"), err
    assert "the disk is full" in lines[0] and f"jekyll-hyde train --resume {run}" in lines[0]
    assert not list(run.rglob(".*.tmp")) and not list(run.rglob(".*.new"))
    monkeypatch.undo()
    assert cli.main(["train", "--resume", str(run)]) == 0
    state = json.loads((run / "state.json").read_text())
    assert state["finished"] and state["generation"] == 2
    read_policy(run / "policy")


@pytest.mark.slow
@pytest.mark.parametrize("at", [4, 5])  # metrics.csv; the checkpoint after it
def test_a_full_disk_stops_ppo_training_and_the_resumed_run_has_each_phase_once(
    at, tmp_path, capsys, monkeypatch
):
    run = tmp_path / "run"
    _failing_fsync(monkeypatch, at, OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)))
    capsys.readouterr()
    assert cli.main(["train", "--config", str(PPO_SMOKE), "--run-dir", str(run)]) == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and f"jekyll-hyde train --resume {run}" in lines[0], lines
    monkeypatch.undo()
    assert cli.main(["train", "--resume", str(run)]) == 0
    with open(run / "metrics.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [int(row["phase"]) for row in rows] == list(range(1, len(rows) + 1))
    assert int(rows[-1]["steps"]) >= yaml.safe_load(PPO_SMOKE.read_text())["run"]["total_steps"]


@pytest.mark.slow
def test_ctrl_c_during_a_write_leaves_no_half_file_and_the_run_resumes(
    tmp_path, capsys, monkeypatch
):
    run = tmp_path / "run"
    _failing_fsync(monkeypatch, 5, KeyboardInterrupt())
    assert cli.main(["train", "--config", str(SMOKE), "--run-dir", str(run)]) == 130
    assert f"jekyll-hyde train --resume {run}" in capsys.readouterr().err
    assert not list(run.rglob(".*.tmp"))
    monkeypatch.undo()
    assert cli.main(["train", "--resume", str(run)]) == 0
    assert json.loads((run / "state.json").read_text())["finished"]
