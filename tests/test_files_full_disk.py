"""A full disk or Ctrl-C during a write stops training in one line naming the file,
leaves no half-written file, and the run resumes to completion.
"""

from __future__ import annotations

import csv
import errno
import json
import os

import pytest
import yaml

from jekyll_hyde_agents.policy_file import read_policy
from jekyll_hyde_app import cli
from tests.file_checks import (
    PPO_SMOKE,
    SMOKE,
)

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
