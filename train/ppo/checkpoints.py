"""The checkpoint of a PPO self-play run: the learners and the run's progress, saved and read.

A run folder's ``checkpoint/`` holds one MaskablePPO learner per role
(``<role>.zip``: ``jekyll`` and ``hyde``, or ``shared`` when one learner plays both
seats) and ``state.json``, the ``TrainState`` that ``train`` carries from phase to
phase: the training steps so far, the phase and how far into it, the snapshots of
each role that fill the opponent pools, when the next evaluation is due, the wall
time and whether the run is finished.

``save_checkpoint`` writes all of it as one unit at the end of every phase (and on
Ctrl-C), replacing the folder by renames so that a run killed at any moment
resumes from its last complete checkpoint (``checkpoint_folder`` finds it).
``load_checkpoint`` reads the progress back and checks it against its schema, and
``load_learner`` continues a freshly built learner from its saved weights,
optimiser state and counters, refusing a learner of another network than the
config's. ``train.check_progress`` then checks the progress against the run's own
files.

A run on a smaller variant (``run.variant``, RULES.md V1-V7) records it in
``state.json`` under ``variant`` (absent: the full game, as in ``policy.json``), and
``load_checkpoint`` refuses to continue it as another variant.
"""

from __future__ import annotations

import json
import pathlib
from dataclasses import dataclass, field
from typing import Any

from jekyll_hyde_env.engine.variant import FULL, Variant, parse_variant
from jekyll_hyde_train.common.files import (
    FileFormatError,
    atomic_write_text,
    check_fields,
    read_json_file,
    replace_folder,
)
from jekyll_hyde_train.common.run_folder import STATE_FILE, saved_folder
from jekyll_hyde_train.ppo.config import TrainConfig
from jekyll_hyde_train.ppo.learner import learner_archive, read_learner, restore_learner


@dataclass
class TrainState:
    """Progress that a checkpoint carries besides the learners' weights."""

    steps: int = 0
    phase: int = 0
    phase_progress: int = 0
    snapshots: dict[str, list[str]] = field(default_factory=dict)
    next_eval: int = 0
    wall_time: float = 0.0
    finished: bool = False


def save_checkpoint(
    run_dir: pathlib.Path, models: dict[str, Any], state: TrainState, variant: Variant = FULL
) -> None:
    """The learners (``<role>.zip``) and the progress (``state.json``) as one unit.

    Everything is written to ``.checkpoint.new/`` first, then swapped in by
    renames, so ``checkpoint/`` always holds a complete, consistent checkpoint;
    a crash between the two renames leaves the previous one in
    ``.checkpoint.old/``, which ``load_checkpoint`` falls back to.

    Args:
        run_dir: the run's folder.
        models: the learners by role.
        state: the run's progress, written as ``state.json``.
        variant: the run's variant (``run.variant``), recorded unless it is the full game.
    """

    def fill(folder: pathlib.Path) -> None:
        for role, model in models.items():
            (folder / f"{role}.zip").write_bytes(learner_archive(model).getvalue())
        record = {**state.__dict__, **variant_record(variant)}
        atomic_write_text(folder / "state.json", json.dumps(record, indent=2))

    replace_folder(run_dir, "checkpoint", fill)


def checkpoint_folder(run_dir: pathlib.Path) -> pathlib.Path | None:
    """The folder of the last complete checkpoint, if any.

    Args:
        run_dir: the run's folder.

    Returns:
        ``checkpoint/``, or ``.checkpoint.old/`` after a crash between the renames,
        whichever holds ``state.json``; None when neither does.
    """
    return saved_folder(run_dir, "checkpoint", STATE_FILE)


STATE_FIELDS = {
    "steps": "count",
    "phase": "count",
    "phase_progress": "count",
    "snapshots": "mapping",
    "next_eval": "count",
    "wall_time": "seconds",
    "finished": "flag",
    "variant": "mapping",  # optional: a smaller variant's Variant.to_json (absent: full)
}


def variant_record(variant: Variant) -> dict[str, Any]:
    """What a checkpoint's progress records of the run's variant.

    Args:
        variant: the run's variant (``run.variant``).

    Returns:
        Nothing for the full game (a checkpoint without ``variant`` is of the full game,
        as a ``policy.json`` is); else ``{"variant": variant.to_json()}``.
    """
    return {} if variant == FULL else {"variant": variant.to_json()}


def check_saved_variant(path: pathlib.Path, data: dict[str, Any], variant: Variant | None) -> None:
    """Take ``variant`` out of a checkpoint's progress and refuse it if it is not the run's.

    Args:
        path: the progress file (``state.json``), for the messages.
        data: its fields, checked against its schema; ``variant`` is removed.
        variant: the run's variant (``run.variant``); None checks only that the
            saved one is readable.

    Raises:
        FileFormatError: an unreadable variant, or a checkpoint made on another variant
            than the run's, naming both.
    """
    try:
        saved = parse_variant(data.pop("variant", None))
    except (ValueError, TypeError) as error:
        raise FileFormatError(path, f"variant: {error}") from None
    if variant is not None and saved != variant:
        raise FileFormatError(
            path,
            f"the checkpoint was made on variant {saved.name}, but run.variant is "
            f"{variant.name}; resume with the variant the run was started with, or "
            "start a new run",
        )


def load_checkpoint(run_dir: pathlib.Path, variant: Variant | None = None) -> TrainState | None:
    """The progress of the last complete checkpoint (``state.json``), checked against
    its schema; None when there is no checkpoint.

    Args:
        run_dir: the run's folder.
        variant: the run's variant (``run.variant``): a checkpoint made on another one
            is refused; None accepts any.

    Returns:
        The progress, or None without a checkpoint.

    Raises:
        FileFormatError: the file is unreadable or not a checkpoint's progress, or the
            checkpoint is of another variant than ``variant``, naming it.
    """
    folder = checkpoint_folder(run_dir)
    if folder is None:
        return None
    path = folder / "state.json"
    data = read_json_file(path, "a PPO checkpoint's progress (JSON)")
    data = check_fields(path, data, STATE_FIELDS, optional=("variant",))
    check_saved_variant(path, data, variant)
    for role, paths in data["snapshots"].items():
        if role not in ("jekyll", "hyde", "shared") or not isinstance(paths, list):
            raise FileFormatError(
                path, f"snapshots must map jekyll, hyde or shared to lists of folders, got {role!r}"
            )
        for snapshot in paths:
            if (
                not isinstance(snapshot, str)
                or pathlib.PurePath(snapshot).is_absolute()
                or ".." in pathlib.PurePath(snapshot).parts
            ):
                raise FileFormatError(
                    path, f"snapshot {snapshot!r} is not a folder inside the run (snapshots/...)"
                )
    return TrainState(**data)


def load_learner(checkpoint: pathlib.Path, model: Any, config: TrainConfig) -> None:
    """Continue ``model``, built from the run's config (``build_learner``), from the
    learner saved in ``checkpoint`` (``<role>.zip``; ``read_learner``).

    Args:
        checkpoint: the saved learner, ``<role>.zip`` in the checkpoint folder.
        model: the learner to continue; its weights, optimiser state, counters and
            episodes are replaced.
        config: the run's config; the saved network must be its ``ppo`` network.

    Raises:
        FileFormatError: the file is not a learner checkpoint, or one of another
            network than the config's, naming it.
    """
    net_arch, activation = config.ppo.network()
    saved = read_learner(checkpoint, (list(net_arch), activation))
    restore_learner(model, saved)
