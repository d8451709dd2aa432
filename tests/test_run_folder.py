"""Every trainer's run folder goes through one module: made once, metrics rewritten
atomically with a rerun replacing its rows, one progress bar, one-line write errors."""

from __future__ import annotations

import errno
import pathlib
import sys

import pytest

from jekyll_hyde_train.common import run_folder
from jekyll_hyde_train.common.files import FileFormatError, RunWriteError
from jekyll_hyde_train.common.run_folder import MetricsFile, run_writes, start_run_folder

TRAIN = pathlib.Path(__file__).resolve().parents[1] / "train"
METRICS = MetricsFile(key="phase", what="test metrics (CSV)", columns={"role": str})
FIELDS = ("phase", "role", "score")


def test_a_folder_that_holds_a_run_is_never_started_over(tmp_path):
    run = start_run_folder(tmp_path / "run", "x", "a: 1\n")
    assert (run / "config.yaml").read_text() == "a: 1\n"
    with pytest.raises(FileExistsError, match=f"continue it with --resume {run}"):
        start_run_folder(run, "x", "a: 2\n")
    assert (run / "config.yaml").read_text() == "a: 1\n"
    other = tmp_path / "other"
    other.mkdir()
    (other / "checkpoint").mkdir()
    with pytest.raises(FileExistsError):
        start_run_folder(other, "x", "a: 1\n", lambda p: (p / "checkpoint").exists())
    with pytest.raises(FileNotFoundError, match="is not a run folder"):
        run_folder.run_config_file(other)


def test_a_row_written_again_replaces_its_row_and_the_rows_after_it(tmp_path):
    for phase, score in ((0, 0.25), (1, 0.5), (2, 0.75)):
        METRICS.add(tmp_path, {"phase": phase, "role": "jekyll", "score": score}, FIELDS)
    METRICS.add(tmp_path, {"phase": 1, "role": "hyde", "score": 1 / 3}, FIELDS)
    rows = METRICS.read(tmp_path)
    assert [(r["phase"], r["role"], r["score"]) for r in rows] == [
        ("0", "jekyll", "0.25"),
        ("1", "hyde", "0.333333"),
    ]
    assert not list(tmp_path.glob(".*.tmp"))
    (tmp_path / "metrics.csv").write_text("phase,role,score\nfirst,jekyll,1\n")
    with pytest.raises(FileFormatError, match="line 2: phase must be a whole number"):
        METRICS.read(tmp_path)


def test_a_bar_is_drawn_on_a_terminal_only(monkeypatch):
    from jekyll_hyde_arena.duplicate import progress_bar

    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    assert progress_bar(10, "x", unit="step") is None  # no bars in log files
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    bar = progress_bar(10, "x", unit="step", initial=4)
    try:
        assert (bar.total, bar.n, bar.unit) == (10, 4, "step")
    finally:
        bar.close()


def test_a_full_disk_stops_a_run_in_one_line_naming_the_file(tmp_path):
    run = start_run_folder(tmp_path / "run", "x", "a: 1\n")
    with pytest.raises(RunWriteError) as caught, run_writes(run):
        raise OSError(errno.ENOSPC, "No space left on device", str(run / "metrics.csv"))
    message = str(caught.value)
    assert "\n" not in message and "the disk is full" in message
    assert f"jekyll-hyde train --resume {run}" in message
    with pytest.raises(FileExistsError), run_writes(run):
        raise FileExistsError("kept as it is")


def test_no_trainer_writes_its_run_folder_plumbing_itself():
    """metrics.csv, the report's charts and the run folder's making are run_folder's,
    progress bars the arena's: no other training module opens a bar, writes CSV or draws."""
    for path in sorted(TRAIN.glob("*.py")):
        if path.name == "run_folder.py":
            continue
        text = path.read_text()
        for needle in ("tqdm", "csv.DictWriter", "matplotlib", "datetime.datetime.now().strftime"):
            assert needle not in text, f"{path.name} uses {needle}; run_folder.py does that"
