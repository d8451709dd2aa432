"""A damaged or mutated game record is replayed or refused in one line naming it
(``jekyll-hyde replay``), never with a traceback.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jekyll_hyde_env.engine import game_record, replay_record
from jekyll_hyde_env.engine.record import RecordError
from tests.engine.test_record import play_random
from tests.file_checks import (
    FUZZ,
    JSON,
    NESTED,
    RANDOM_BYTES,
    ROOT,
    places,
    refused,
    replaced,
)

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


@settings(max_examples=300, **FUZZ)
@given(data=st.data())
def test_any_mutation_of_a_record_is_replayed_or_refused_with_a_value_error(record, data):
    """``replay_record`` (also behind the web server's /api/replay) raises RecordError
    for a malformed record, never another ValueError, TypeError, AttributeError,
    KeyError or RecursionError."""
    spots = list(places(record))
    path, _ = data.draw(st.sampled_from(spots))
    mutated = replaced(record, path, data.draw(JSON))
    try:
        replay_record(mutated)
    except RecordError:
        pass
