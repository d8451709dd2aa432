"""An expert-iteration run's progress (``state.json``) and what a resumed run may change.

``state.json`` records the generations done, the wall time and whether the run
finished; ``check_state`` holds it against the run folder. ``check_resume_changes``
says which settings a resumed run may change (reporting, later generations'
settings, more generations) and refuses the others (the seed and the variant among
them), which would make the run's finished generations disagree with its config.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
from typing import Any

from jekyll_hyde_train.common.config import ConfigError
from jekyll_hyde_train.common.files import (
    FileFormatError,
    atomic_write_text,
    check_fields,
    read_json_file,
)
from jekyll_hyde_train.common.run_folder import (
    STATE_FILE,
)
from jekyll_hyde_train.expert_iteration.config import (
    EITrainConfig,
    ExpertIterationConfig,
)


def generation_dir(run_dir: pathlib.Path, generation: int) -> pathlib.Path:
    return run_dir / f"generation_{generation:02d}"


# --- progress -------------------------------------------------------------------


STATE_FIELDS = {"generation": "count", "wall_time": "seconds", "finished": "flag"}


def load_state(run_dir: pathlib.Path) -> dict[str, Any]:
    """The run's progress (``state.json``), checked against its schema.

    Raises:
        FileFormatError: the file is unreadable or not a progress file, naming it.
    """
    path = run_dir / STATE_FILE
    if not path.exists():
        return {"generation": 0, "wall_time": 0.0, "finished": False}
    what = "an expert-iteration run's progress (JSON)"
    return check_fields(path, read_json_file(path, what), STATE_FIELDS)


def check_state(run_dir: pathlib.Path, state: dict[str, Any], config: EITrainConfig) -> None:
    """Check the progress against the run: no more generations done than the config's
    ``expert_iteration.generations``, the last one's policy in its folder, and the
    run's ``policy/`` when it says the run is finished.

    Raises:
        FileFormatError: naming ``state.json`` and what in the run disagrees with it.
    """
    path = run_dir / STATE_FILE
    done, planned = state["generation"], config.expert_iteration.generations
    if done > planned:
        raise FileFormatError(
            path,
            f"generation is {done} (the generations done), but the run's config.yaml plans "
            f"{planned} (expert_iteration.generations); it is not this run's progress",
        )
    last = generation_dir(run_dir, done - 1) / "policy" / "policy.json"
    if done and not last.is_file():
        raise FileFormatError(
            path,
            f"generation is {done} (the generations done), but {last} does not exist; "
            "it is not this run's progress",
        )
    if state["finished"] and not (run_dir / "policy" / "policy.json").is_file():
        raise FileFormatError(
            path,
            f"finished is true, but {run_dir / 'policy' / 'policy.json'} does not exist; "
            "it is not this run's progress",
        )


def save_state(run_dir: pathlib.Path, state: dict[str, Any]) -> None:
    atomic_write_text(run_dir / STATE_FILE, json.dumps(state, indent=2))


# --- the run -----------------------------------------------------------------

# Settings that only decide how a run is watched or reported, never what a
# generation labels or fits: a resumed run may change them freely.
_REPORTING_KEYS = frozenset(
    {"generations", "stages", "eval_pairs", "eval_opponents", "exploiter_eval_pairs"}
)
# The exploiters' settings change only the generations named in ``exploiters``.
_EXPLOITER_KEYS = frozenset({"exploiters", "exploiter_steps", "exploiter_games"})
# Generation 0 of a run without a start_policy is labelled by first_teacher and fit
# from scratch on its own games; the later generations never use first_teacher, and
# a run's generation 0 never has a replay window.
_UNUSED_BY_FIRST = frozenset(
    {"simulations", "c_puct", "leaf_value_weight", "leaf_playouts", "network_play"}
    | {"full_search_share", "fast_simulations", "gumbel_actions"}
    | {"replay_generations"}
    | {"warm_start"}  # generation 0 has no previous network to start from
)


def check_resume_changes(saved: EITrainConfig, changed: EITrainConfig, done: int) -> None:
    """Refuse ``--set`` changes on ``--resume`` that would alter a generation already
    run (its games and network would no longer match the run's config.yaml).

    New generations may differ through ``expert_iteration.stages`` entries starting at
    ``done``, the next generation to run; ``generations`` may grow (extending a
    finished run) but not drop below ``done``. ``run.seed`` and ``run.variant``
    never change (another spelling of the same variant is no change).
    """
    if changed.expert_iteration.generations < done:
        raise ConfigError(
            f"expert_iteration.generations {changed.expert_iteration.generations} is below "
            f"the {done} generations this run has already made"
        )
    if changed.run.seed != saved.run.seed:
        raise ConfigError(
            f"run.seed cannot change on --resume (it fixed the {done} generations already "
            f"made: {saved.run.seed})"
        )
    if changed.run.game_variant != saved.run.game_variant:
        raise ConfigError(
            f"run.variant cannot change on --resume: the run plays variant "
            f"{saved.run.game_variant.name}, given {changed.run.game_variant.name}; start "
            "another run for another variant"
        )
    for generation in range(done):
        before = dataclasses.asdict(saved.expert_iteration.at(generation))
        after = dataclasses.asdict(changed.expert_iteration.at(generation))
        if generation == 0 and not before["start_policy"]:
            unused = _REPORTING_KEYS | _UNUSED_BY_FIRST
        elif generation == 0:  # guided by the start policy, with no window before it
            unused = _REPORTING_KEYS | {"first_teacher", "replay_generations"}
        else:
            unused = _REPORTING_KEYS | {"first_teacher"}
        exploited = [generation in settings["exploiters"] for settings in (before, after)]
        if exploited[0] != exploited[1]:
            raise ConfigError(
                f"expert_iteration.exploiters would change generation {generation}, already "
                f"made (exploiters {'left out' if exploited[0] else 'added'}); name only "
                f"generations from {done} on"
            )
        if not exploited[0]:
            unused = unused | _EXPLOITER_KEYS
        unused = unused | {"exploiters"}
        for key in before:
            if key in unused or before[key] == after[key]:
                continue
            problem = (
                f"expert_iteration.{key} would change generation {generation}, already made "
                f"({before[key]} -> {after[key]})"
            )
            if key not in ExpertIterationConfig.STAGE_KEYS:
                raise ConfigError(f"{problem}; it cannot change within a run")
            raise ConfigError(
                f"{problem}; change the generations to come with a stage instead, e.g. "
                f"--set 'expert_iteration.stages=[{{from_generation: {done}, "
                f"{key}: {after[key]}}}]' (with the run's earlier stages kept in the list)"
            )
