"""A damaged or mutated training config is loaded or refused in one line naming it
(``jekyll-hyde train --config``); the shared JSON reader names the file and the problem.
"""

from __future__ import annotations

import dataclasses
import math

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from jekyll_hyde_train.algorithms import ALGORITHMS
from jekyll_hyde_train.common.config import ConfigError, load_config, read_algorithm
from jekyll_hyde_train.common.files import (
    FileFormatError,
    check_fields,
    read_json_bytes,
    read_json_file,
)
from jekyll_hyde_train.ppo.config import TrainConfig
from tests.file_checks import (
    FUZZ,
    NESTED,
    RANDOM_BYTES,
    SMOKE,
    nested,
    places,
    refused,
    replaced,
)

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


YAML_VALUES = nested(st.text(max_size=5) | st.integers())  # YAML keys may be numbers


@settings(max_examples=150, **FUZZ)
@given(data=st.data())
def test_any_mutation_of_a_config_is_loaded_or_refused_as_a_config_error(tmp_path_factory, data):
    """A value replaced anywhere, or a key of any type added to any mapping."""
    config = yaml.safe_load(SMOKE.read_text())
    spots = list(places(config))
    if data.draw(st.booleans()):
        path, _ = data.draw(st.sampled_from(spots))
        mutated = replaced(config, path, data.draw(YAML_VALUES))
    else:
        mappings = [path for path, value in spots if isinstance(value, dict)]
        path = data.draw(st.sampled_from(mappings))
        key = data.draw(st.text(max_size=5) | st.integers() | st.booleans())
        mutated = replaced(config, (*path, key), data.draw(YAML_VALUES))
    file = tmp_path_factory.mktemp("config") / "config.yaml"
    file.write_text(yaml.safe_dump(mutated))
    try:  # as jekyll-hyde train reads it
        config = load_config(file, schema=ALGORITHMS[read_algorithm(file)])
    except ConfigError:
        return
    numbers = [v for v in places(dataclasses.asdict(config)) if isinstance(v[1], float)]
    assert all(math.isfinite(value) for _, value in numbers), numbers
