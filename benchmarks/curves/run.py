"""Train one trainer of the curves from scratch, with a checkpoint at each CPU mark.

``run_trainer`` starts ``python benchmarks/curves/run.py NAME OUT ...`` (the
child: it imports the trainer's module and calls its ``train``), counts the
CPU-seconds of the child and everything under it (``cpu.CpuMeter``), and as the
count passes each mark writes the mark's name into the child's request file; once
the child has saved the last mark's checkpoint, it is stopped. The marks' names
are ``cpu-SSSSSS`` (whole CPU-seconds), and each checkpoint's ``meta.json`` records
the CPU-seconds at which it was asked for (``requested_at``) and at which it was
saved (``cpu_seconds``: a trainer answers between two of its steps, so what it saved
may hold more work than the mark), and the wall-seconds.

A run that is cut short (Ctrl-C, a crash, the session's end) leaves the
checkpoints it finished; ``run_trainer`` starts the trainer again from scratch
unless every mark's checkpoint is there and ``run.json`` says they were made by the
same trainer, settings (its ``LABEL``), variant and seed (``done``).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import threading
import time

from cpu import CpuMeter
from protocol import CHECKPOINTS, REQUEST_FILE, Requests

from jekyll_hyde_env.engine.variant import Variant, parse_variant
from jekyll_hyde_train.common.files import atomic_write_text

HERE = pathlib.Path(__file__).resolve().parent

TRAINERS = {
    "expert-iteration": "expert_iteration",
    "ppo": "ppo",
    "rllib-ppo": "rllib_ppo",
    "openspiel-nfsp": "openspiel_nfsp",
    "openspiel-mccfr": "openspiel_mccfr",
    "rlcard-dmc": "rlcard_dmc",
    "rlcard-nfsp": "rlcard_nfsp",
    "cfr-plus": "cfr_plus",
}
"""The trainers' names on the page and their modules under ``benchmarks/curves/``."""

CHILD_ENVIRONMENT = {"OMP_WAIT_POLICY": "PASSIVE"}
"""Set for every trainer: OpenMP's threads (torch's) sleep while they wait instead of
spinning, so that CPU-seconds count work even when the machine is shared (a spinning
thread on a busy machine burned ten times the CPU of the work it waited for)."""

POLL = 0.25
"""Seconds between two readings of the CPU meter."""

RUN_FILE = "run.json"
"""What made a trainer's checkpoints, in its folder (``run_identity``)."""


def trainer_module(name: str):
    """The module of the trainer ``name``.

    Args:
        name: a key of ``TRAINERS``.

    Returns:
        The imported module.

    Raises:
        SystemExit: an unknown name, listing the known ones.
    """
    if name not in TRAINERS:
        raise SystemExit(f"error: unknown trainer {name!r}; choose from {', '.join(TRAINERS)}")
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))
    return importlib.import_module(TRAINERS[name])


def mark_name(seconds: float) -> str:
    """The checkpoint name of a mark at ``seconds`` CPU-seconds.

    Args:
        seconds: the mark.

    Returns:
        ``cpu-`` and the whole seconds, six digits.
    """
    return f"cpu-{int(round(seconds)):06d}"


def run_identity(name: str, variant: Variant, seed: int) -> dict:
    """What a trainer's checkpoints depend on besides the marks: the trainer, its
    settings as its module states them (``LABEL``), the variant and the seed.

    Args:
        name: the trainer (a key of ``TRAINERS``).
        variant: the version of the game.
        seed: the trainer's seed.

    Returns:
        The dict ``run.json`` holds.
    """
    label = trainer_module(name).LABEL
    return {"trainer": name, "label": label, "variant": variant.spec(), "seed": seed}


def done(out: pathlib.Path, marks: list[float], identity: dict | None = None) -> bool:
    """Whether the trainer in ``out`` has every mark's checkpoint, made by this run.

    Args:
        out: the trainer's folder.
        marks: the CPU-seconds marks.
        identity: what the checkpoints must have been made by (``run_identity``), as
            ``run.json`` records it; None to check the checkpoints only.

    Returns:
        True when each mark's checkpoint is saved (and ``run.json`` matches).
    """
    if identity is not None:
        try:
            if json.loads((out / RUN_FILE).read_text()) != identity:
                return False
        except (FileNotFoundError, json.JSONDecodeError):
            return False
    return all((out / CHECKPOINTS / mark_name(m) / "meta.json").is_file() for m in marks)


def run_trainer(
    name: str,
    out: pathlib.Path,
    variant: Variant,
    seed: int,
    marks: list[float],
    grace: float = 600.0,
    stop: threading.Event | None = None,
) -> None:
    """Train ``name`` from scratch in ``out``, checkpointing at each CPU mark.

    Args:
        name: the trainer (a key of ``TRAINERS``).
        out: its folder (its checkpoints go to ``out/checkpoints``).
        variant: the version of the game.
        seed: the trainer's seed.
        marks: CPU-seconds at which to ask for a checkpoint, ascending.
        grace: wall-seconds a trainer may take to answer a request.
        stop: once set, the trainer is stopped and ``KeyboardInterrupt`` raised (a
            run of several trainers at once, interrupted).

    Raises:
        RuntimeError: the trainer exited or did not answer a request in time.
        KeyboardInterrupt: ``stop`` was set; the trainer is stopped first.
    """
    identity = run_identity(name, variant, seed)  # an unknown name fails here
    if done(out, marks, identity):
        return
    shutil.rmtree(out / CHECKPOINTS, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    (out / REQUEST_FILE).unlink(missing_ok=True)
    atomic_write_text(out / RUN_FILE, json.dumps(identity, indent=2) + "\n")
    log = (out / "train.log").open("w")
    child = subprocess.Popen(
        [
            sys.executable,
            str(HERE / "run.py"),
            name,
            str(out),
            "--variant",
            variant.spec(),
            "--seed",
            str(seed),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env={**os.environ, **CHILD_ENVIRONMENT},
    )
    meter = CpuMeter(child.pid)
    started = time.perf_counter()
    try:
        for mark in marks:
            while meter.seconds() < mark:
                _check_alive(child, out, stop)
                time.sleep(POLL)
            cpu, wall = meter.seconds(), time.perf_counter() - started
            mark_id = mark_name(mark)
            (out / REQUEST_FILE).write_text(mark_id)
            deadline = time.perf_counter() + grace
            folder = out / CHECKPOINTS / mark_id
            while not folder.is_dir():
                _check_alive(child, out, stop)
                if time.perf_counter() > deadline:
                    raise RuntimeError(f"{name} did not save {mark_id} within {grace:.0f} s")
                time.sleep(0.05)
            saved = meter.seconds()  # a trainer may finish a step before it saves
            (out / REQUEST_FILE).unlink(missing_ok=True)  # answered
            meta = {"mark": mark, "requested_at": cpu, "cpu_seconds": saved, "wall_seconds": wall}
            atomic_write_text(folder / "meta.json", json.dumps(meta))
            print(f"{name}: {mark_id} saved at {saved:.0f} CPU-s, {wall:.0f} s", flush=True)
    finally:
        _stop(child)
        log.close()


def _check_alive(child: subprocess.Popen, out: pathlib.Path, stop: threading.Event | None) -> None:
    if stop is not None and stop.is_set():
        raise KeyboardInterrupt
    if child.poll() is not None:
        tail = (out / "train.log").read_text()[-2000:]
        raise RuntimeError(f"the trainer exited with {child.returncode}:\n{tail}")


def _stop(child: subprocess.Popen) -> None:
    if child.poll() is not None:
        return
    for sig, wait in ((signal.SIGINT, 10), (signal.SIGTERM, 10), (signal.SIGKILL, 10)):
        try:
            os.killpg(child.pid, sig)
        except ProcessLookupError:
            return
        try:
            child.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue


def main() -> None:
    """The child: train one trainer until stopped."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", choices=sorted(TRAINERS))
    parser.add_argument("out", type=pathlib.Path)
    parser.add_argument("--variant", default="small")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    # Started in the background, a process may inherit SIGINT ignored: stop on it as
    # on Ctrl-C. (SIGTERM keeps its default: process pools end their workers with it.)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    module = trainer_module(args.name)
    try:
        module.train(args.out, parse_variant(args.variant), args.seed, Requests(args.out))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
