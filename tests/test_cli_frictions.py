"""The command line loses no work and says what happened (output paths, pipes, typos)."""

from __future__ import annotations

import json
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

from jekyll_hyde_agents import PolicyAgent, PolicyFileError
from jekyll_hyde_app import cli
from jekyll_hyde_train.common.config import ConfigError, load_config
from jekyll_hyde_train.ppo.config import TrainConfig

from .test_policy_file import tiny_policy

ROOT = pathlib.Path(__file__).resolve().parents[1]
MISSING = "/nonexistent/dir/out.json"


@pytest.mark.parametrize(
    "argv",
    [
        ["play", "--as", "hyde", "--opponent", "heuristic", "--seed", "3", "--save", MISSING],
        ["eval", "heuristic", "random", "--pairs", "50", "--out", MISSING],
        ["eval", "heuristic", "random", "--pairs", "50", "--save-games", "/nonexistent/dir/g"],
        ["tournament", "random", "heuristic", "--pairs", "50", "--out", MISSING],
    ],
)
def test_an_output_path_in_a_missing_folder_stops_the_command_before_any_work(argv, capsys):
    assert cli.main(argv) == 2
    err = capsys.readouterr()
    assert "does not exist" in err.err and "/nonexistent/dir" in err.err
    assert err.out == ""  # no game was shown, no match was played


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["play", "--as", "hyde", "--opponent", "random", "--save", "{dir}"], "that is a folder"),
        (["eval", "random", "random", "--pairs", "50", "--out", "{dir}"], "that is a folder"),
        (["tournament", "random", "lowest", "--pairs", "50", "--out", "{dir}"], "that is a folder"),
        (["eval", "random", "random", "--pairs", "50", "--save-games", "{file}"], "is a file"),
        (["train", "--config", "smoke", "--run-dir", "{file}/run"], "no folder can be made"),
        (["train", "--config", "smoke", "--run-dir", "{file}"], "that is a file"),
        (["distill", "--run-dir", "{file}/run", "--games", "1"], "no folder can be made"),
        (["exploit", "random", "--run-dir", "{file}/run"], "no folder can be made"),
    ],
)
def test_an_output_path_that_cannot_be_written_stops_the_command_first(
    tmp_path, argv, message, capsys
):
    folder, file = tmp_path / "adir", tmp_path / "afile"
    folder.mkdir()
    file.write_text("")
    argv = [arg.format(dir=folder, file=file) for arg in argv]
    assert cli.main(argv) == 2
    err = capsys.readouterr()
    assert message in err.err and err.out == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adir", "afile"]  # nothing left over


def test_a_path_that_does_not_exist_is_called_so(capsys):
    assert cli.main(["eval", "runs/doesnotexist", "heuristic", "--pairs", "1"]) == 2
    assert "no such path 'runs/doesnotexist'" in capsys.readouterr().err


def test_a_weights_file_of_random_bytes_is_called_corrupt_without_unsafe_advice(tmp_path):
    tiny_policy(tmp_path)
    (tmp_path / "policy.npz").write_bytes(np.random.default_rng(0).bytes(4096))
    with pytest.raises(PolicyFileError, match="corrupt") as info:
        PolicyAgent(tmp_path)
    assert "allow_pickle" not in str(info.value)


def test_replay_into_a_closed_pipe_ends_quietly(tmp_path):
    assert cli.main(["eval", "heuristic", "random", "--pairs", "1", "--workers", "1",
                     "--no-progress", "--save-games", str(tmp_path)]) == 0  # fmt: skip
    record = tmp_path / "pair00000_a_jekyll.json"
    replay = subprocess.Popen(
        [sys.executable, "-m", "jekyll_hyde_app.cli", "replay", str(record), "--no-wait"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    replay.stdout.readline()
    replay.stdout.close()  # as `| head -1` does
    assert replay.wait(timeout=60) == 0
    assert b"Traceback" not in replay.stderr.read()


def test_numbers_written_with_an_exponent_are_numbers_and_set_typos_are_named(tmp_path):
    config = load_config(
        ROOT / "configs" / "ppo" / "default.yaml",
        ["run.total_steps=1e6", "ppo.learning_rate=1e-4"],
        schema=TrainConfig,
    )
    assert config.run.total_steps == 1_000_000 and config.ppo.learning_rate == 1e-4
    with pytest.raises(ConfigError, match="run.total_steps must be of type int"):
        load_config(
            ROOT / "configs" / "ppo" / "default.yaml", ["run.total_steps=2.5e0"], schema=TrainConfig
        )
    with pytest.raises(ConfigError, match=r"^--set 'ppo.learnin_rate=0.1': unknown key"):
        load_config(
            ROOT / "configs" / "ppo" / "default.yaml", ["ppo.learnin_rate=0.1"], schema=TrainConfig
        )


def test_ensemble_refuses_to_overwrite_a_policy(tmp_path, capsys):
    tiny_policy(tmp_path / "a", seed=1)
    tiny_policy(tmp_path / "b", seed=2)
    tiny_policy(tmp_path / "out", seed=3)
    before = (tmp_path / "out" / "policy.npz").read_bytes()
    argv = ["ensemble", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "out")]
    assert cli.main(argv) == 2
    assert "already holds a policy" in capsys.readouterr().err
    assert (tmp_path / "out" / "policy.npz").read_bytes() == before


def test_play_names_its_opponent_and_seed_and_says_when_nothing_is_saved(tmp_path):
    save = tmp_path / "game.json"
    done = subprocess.run(
        [sys.executable, "-m", "jekyll_hyde_app.cli", "play", "--opponent", "heuristic",
         "--save", str(save)],
        cwd=ROOT, input="q\n", capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0
    assert re.search(r"Opponent: heuristic\. Deals from seed \d+ \(--seed \d+ replays them\)",
                     done.stdout)  # fmt: skip
    assert f"Nothing was saved to {save}" in done.stdout and not save.exists()


def test_no_progress_bars_when_output_is_not_a_terminal():
    done = subprocess.run(
        [sys.executable, "-m", "jekyll_hyde_app.cli", "eval", "random", "random", "--pairs", "20",
         "--workers", "1"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0 and "pair/s" not in done.stderr and "it/s" not in done.stderr


def test_a_bare_command_prints_help_and_version_is_known(capsys):
    from jekyll_hyde_env import __version__

    assert cli.main([]) == 0
    out = capsys.readouterr().out
    assert "usage: jekyll-hyde" in out and "exploit" in out and "rules" in out
    with pytest.raises(SystemExit) as done:
        cli.main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"jekyll-hyde {__version__}"


@pytest.mark.parametrize("command", list(cli.EXAMPLES))
def test_every_command_has_help_with_defaults_and_an_example(command, capsys):
    with pytest.raises(SystemExit) as done:
        cli.main([command, "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert f"example: {cli.EXAMPLES[command]}" in " ".join(out.split())
    if command not in ("replay", "rules", "ensemble"):  # these have no option with a default
        assert "(default:" in out


def _help_entries(command: str, capsys) -> dict[str, str]:
    """Each option of ``command --help`` and its help text, joined onto one line."""
    with pytest.raises(SystemExit):
        cli.main([command, "--help"])
    entries: dict[str, str] = {}
    name = None
    for line in capsys.readouterr().out.splitlines():
        if re.match(r"  \S", line):  # an option or argument starts its entry
            name = line.split()[0]
            entries[name] = line
        elif line.startswith("   ") and name:
            entries[name] += " " + line.strip()
        else:
            name = None
    return entries


def test_help_states_each_default_once_and_never_none(capsys):
    twice = []
    for command in cli.EXAMPLES:
        for option, text in _help_entries(command, capsys).items():
            text = " ".join(text.split())
            statements = re.findall(r"\(default[:)]|\bby default\b|\bthe default is\b", text)
            if len(statements) > 1 or "(default: None)" in text:
                twice.append(f"{command} {option}: {text}")
    assert twice == []


@pytest.mark.parametrize(
    "argv",
    [
        ["play", "--opponent", "random", "--seed"],
        ["eval", "random", "random", "--pairs", "1", "--seed"],
        ["tournament", "random", "lowest", "--pairs", "1", "--seed"],
        ["distill", "--run-dir", "nowhere", "--seed"],
    ],
)
@pytest.mark.parametrize("seed", ["-5", "seven", "4294967296", "1.5"])
def test_a_bad_seed_is_refused_naming_seed_and_its_range_before_anything_runs(argv, seed, capsys):
    with pytest.raises(SystemExit) as done:
        cli.main([*argv, seed])
    assert done.value.code == 2
    printed = capsys.readouterr()
    assert f"--seed must be a whole number from 0 to 4294967295, got '{seed}'" in printed.err
    assert printed.out == ""  # play has not drawn or shown a seed line


def test_a_tournament_refuses_an_agent_named_twice_and_says_so_in_help(capsys):
    assert cli.main(["tournament", "heuristic", "random", "heuristic", "--pairs", "1"]) == 2
    printed = capsys.readouterr()
    assert printed.out == ""  # no match was played
    assert "'heuristic' named more than once" in printed.err
    assert "jekyll-hyde eval heuristic heuristic" in printed.err
    assert cli.main(["tournament", "runs/a", "runs/a/", "--pairs", "1"]) == 2  # one folder
    assert "'runs/a' named more than once" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main(["tournament", "--help"])
    assert "one named twice is refused" in " ".join(capsys.readouterr().out.split())


def _typed_at(*args):
    """``play`` or ``replay`` in a pseudo-terminal that is its controlling terminal, so that
    typing Ctrl-C there sends SIGINT, as in a person's terminal."""
    import fcntl
    import os
    import pty
    import termios

    from .test_play import Terminal

    def controlling_terminal():
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    terminal = Terminal.__new__(Terminal)
    terminal.master, slave = pty.openpty()
    terminal.process = subprocess.Popen(
        [sys.executable, "-m", "jekyll_hyde_app.cli", *args], cwd=ROOT, stdin=slave, stdout=slave,
        stderr=slave, close_fds=True, preexec_fn=controlling_terminal,
    )  # fmt: skip
    os.close(slave)
    terminal.output = ""
    return terminal


def test_ctrl_c_ends_play_and_replay_with_130_and_no_traceback(tmp_path):
    import os
    import time

    from .test_play import PROMPT

    save = tmp_path / "game.json"
    play = _typed_at("play", "--opponent", "heuristic", "--seed", "2", "--save", str(save))
    play.read_until(PROMPT)
    # Type Ctrl-C once input() waits for the line: readline shows the prompt a moment
    # before it waits, and a signal in that moment is only acted on at the next key.
    time.sleep(1.0)
    os.write(play.master, b"\x03")
    play.read_until("interrupted")
    assert play.close() == 130
    assert f"Nothing was saved to {save}" in play.output and not save.exists()
    assert "Traceback" not in play.output and "KeyboardInterrupt" not in play.output

    assert cli.main(["eval", "heuristic", "random", "--pairs", "1", "--workers", "1",
                     "--no-progress", "--save-games", str(tmp_path)]) == 0  # fmt: skip
    replay = _typed_at("replay", str(tmp_path / "pair00000_a_jekyll.json"))
    replay.read_until(r"\[Enter\] next, q stops: $")
    time.sleep(1.0)
    os.write(replay.master, b"\x03")
    replay.read_until("interrupted")
    assert replay.close() == 130
    assert "Traceback" not in replay.output and "KeyboardInterrupt" not in replay.output


def test_replay_says_who_leads_the_first_trick_of_each_round(tmp_path, capsys):
    """R3: Jekyll leads a round's first trick while the marker is on 0 to 4, Hyde from 5."""
    from jekyll_hyde_app.play import replay_command
    from jekyll_hyde_env.engine import (
        apply_action,
        game_record,
        is_terminal,
        legal_actions,
        new_game,
    )

    leaders = set()
    for seed in range(40):
        state, rng = new_game(np.random.default_rng(seed)), np.random.default_rng(seed)
        while not is_terminal(state):
            apply_action(state, int(rng.choice(legal_actions(state))))
        path = tmp_path / f"game{seed}.json"
        path.write_text(json.dumps(game_record(state)))
        replay_command(str(path), wait=False)
        lines = capsys.readouterr().out.splitlines()
        for number, line in enumerate(lines):
            found = re.match(r"Round \d begins with the marker on (\d+);.* then (\w+) leads", line)
            if found:
                marker, leader = int(found.group(1)), found.group(2)
                assert leader == ("jekyll" if marker < 5 else "hyde"), line
                first_trick = next(t for t in lines[number:] if t.startswith("Trick: "))
                assert first_trick.startswith(f"Trick: {leader} led"), (line, first_trick)
                leaders.add(leader)
    assert leaders == {"jekyll", "hyde"}


@pytest.mark.parametrize(
    ("jekyll", "hyde", "tricks", "says"),
    [
        # T6b: Greed after the round's tenth trick, hands empty, nothing to swap
        (["G3"], ["2+"], (4, 5), "Greed: the hands are empty, so nothing is swapped (T6b)"),
        # T6a: Pride when the loser holds no trick, nothing is taken
        (
            ["P3"],
            ["4+"],
            (0, 9),
            "Pride: the loser has no trick to take, so nothing more happens (T6a)",
        ),
        # T6a: Pride when the loser holds one: the winner takes it
        (["P3"], ["4+"], (2, 7), "Pride: the winner also takes a trick from the loser (T6a)"),
    ],
)
def test_the_last_trick_of_a_round_says_what_its_potion_did(jekyll, hyde, tricks, says):
    from jekyll_hyde_app.narration import step_events
    from jekyll_hyde_env.engine.cards import Phase

    from .engine.helpers import play, trick_state

    state = trick_state(jekyll, hyde, tricks=tricks)
    before = state.clone()
    play(state, jekyll[0], hyde[0])
    assert state.phase in (Phase.EXCHANGE, Phase.GAME_OVER)  # the round ended, no swap
    lines = [event.line() for event in step_events(before, state)]
    assert lines[0].endswith(says)
    result = state.round_log[-1]
    assert lines[1].startswith(
        f"Round 1 over: jekyll {result.tricks_jekyll} trick"
        + ("" if result.tricks_jekyll == 1 else "s")
        + f", hyde {result.tricks_hyde}; "
    )
    if state.phase == Phase.GAME_OVER:  # ten tricks apart: Hyde wins at once (R2.4)
        assert lines[2:] == ["Game over: hyde wins: the marker reached space 10"]
    else:
        assert lines[2:] == [] and state.round == 2
