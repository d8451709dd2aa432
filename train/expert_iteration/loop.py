"""Expert iteration: generations of search self-play, each distilled into the next network.

Reads top to bottom. Generation 0's games are played and labelled by plain
ISMCTS (``expert_iteration.first_teacher``), or, in a run that starts from a
saved policy (``expert_iteration.start_policy``, copied into the run folder),
by network-guided search (``az``, agents/az.py) with that policy; every later
generation's by that search with the previous generation's network as priors
and value. Each decision with a choice is labelled with
the root's visit shares (the policy target) and the game's outcome for the
player to act (the value target). Each generation then fits each role's
policy-and-value network on its own games and those of the generations
before it (``replay_generations``), starting from the previous weights
(``warm_start``), keeps the epoch with the best held-out loss, exports it,
and scores it against ``eval_opponents`` in duplicate matches. Settings
may change from a generation on (``expert_iteration.stages``: a deeper
teacher for the last generations, say); ``ExpertIterationConfig.at`` gives
the settings of each generation. One
generation of this loop is exactly ``jekyll-hyde distill``: the labelling is
``jekyll_hyde_train.expert_iteration.distill`` and the fit
``jekyll_hyde_train.expert_iteration.fit``; the steps of a generation (its
teacher and settings, labelling, fit and scores) are
``jekyll_hyde_train.expert_iteration.generation``. The games are
labelled on a local pool of processes or on a Ray cluster (``run.executor``,
``jekyll_hyde_train.expert_iteration.executors``), which write the same shards. The generations
named in ``expert_iteration.exploiters`` also learn from games of their search
against responders trained to beat the network (``jekyll_hyde_train.expert_iteration.exploiters``).

A run folder holds::

    config.yaml             the resolved config
    state.json              the generations finished (the resume point)
    start_policy/           the policy the run starts from, if any (its copy)
    generation_NN/          distill.json, data/shard_*.npz, fit.json, policy/
                            (and exploiters/, at a generation with exploiters)
    metrics.csv             a row per generation: data, time, losses, scores
    tensorboard/            the same measures, for ``tensorboard --logdir runs/``
    policy/                 the newest generation's policy (value head included)
    report.md               curves and the final arena

Every file is written atomically. Labelling skips shards already on disk and
the fit continues from its last finished epoch, so a run killed even with
``kill -9`` resumes (``jekyll-hyde train --resume RUN``) losing at most one
shard per worker or one epoch. Ctrl-C stops cleanly and says how to resume.
``--resume RUN --set ...`` may add generations to a finished run and stages
for them; it refuses a change to a generation already made
(``check_resume_changes``), and the run's config.yaml records the new settings.

A run plays the variant of the game ``run.variant`` names (RULES.md V1-V7; the full
game by default): its games are dealt in it, its searches, scores, exploiters and
final arena play it, and its policies record it. It starts from no policy or from
one of that variant, and keeps its variant on ``--resume``.
"""

from __future__ import annotations

import functools
import pathlib
import shutil
import sys
import time

import numpy as np

from jekyll_hyde_agents import make_agent
from jekyll_hyde_env.engine import legal_actions, new_game, player_view
from jekyll_hyde_env.engine.variant import FULL
from jekyll_hyde_train.common.config import ConfigError, dump_config, load_config
from jekyll_hyde_train.common.files import (
    atomic_write_text,
    one_line,
    replace_folder,
)
from jekyll_hyde_train.common.run_folder import (
    STATE_FILE,
    resume_hint,
    run_config_file,
    run_writes,
    start_run_folder,
)
from jekyll_hyde_train.expert_iteration.config import EITrainConfig, start_policy_path
from jekyll_hyde_train.expert_iteration.executors import Executor, open_executor
from jekyll_hyde_train.expert_iteration.exploiters import (
    label_exploiter_games,
    score_after,
    train_exploiters,
)
from jekyll_hyde_train.expert_iteration.generation import (
    START_POLICY,
    fit_generation,
    label,
    score_generation,
    settings_for,
    teacher_for,
)
from jekyll_hyde_train.expert_iteration.progress import (
    check_resume_changes,
    check_state,
    generation_dir,
    load_state,
    save_state,
)
from jekyll_hyde_train.expert_iteration.report import METRICS, write_report
from jekyll_hyde_train.expert_iteration.teacher import teacher_label

METRICS_FIELDS = (
    "generation",
    "teacher",
    "games",
    "train_games",
    "train_decisions",
    "label_seconds",
    "fit_seconds",
    "eval_seconds",
    "wall_time",
    "train_loss",
    "validation_loss",
    "validation_value_loss",
    "validation_agreement",
)


def train(
    config: EITrainConfig, run_dir: pathlib.Path, executor: Executor | None = None
) -> pathlib.Path:
    """Run (or continue) expert iteration in ``run_dir``; returns the policy folder.

    The games are labelled by ``executor``, or by the one ``run.executor`` names
    (``jekyll_hyde_train.expert_iteration.executors.open_executor``), opened here and
    closed at the end.

    Args:
        config: the run's config.
        run_dir: the run's folder, made by ``prepare_run_dir``.
        executor: where the games are labelled; None opens the one ``run.executor``
            names.

    Returns:
        The run's ``policy/`` folder, the newest generation's policy.

    Raises:
        KeyboardInterrupt: Ctrl-C, raised again once the progress is saved and the
            command that continues the run is printed.
        FileFormatError: the run's ``state.json`` is not valid or disagrees with the
            run.
        FileNotFoundError: the run starts from a policy whose copy is missing.
    """
    if executor is None:
        with open_executor(config.run) as opened:
            return train(config, run_dir, opened)
    state = load_state(run_dir)
    check_state(run_dir, state, config)
    check_start_copy(run_dir, config, state)
    ei = config.expert_iteration
    if state["finished"] and state["generation"] >= ei.generations:
        print(f"{run_dir} is already finished; its policy is in {run_dir / 'policy'}")
        return run_dir / "policy"
    if state["finished"]:
        print(f"extending {run_dir} from {state['generation']} to {ei.generations} generations")
        state["finished"] = False
    fields = list(METRICS_FIELDS) + [f"score_vs_{name}" for name in ei.eval_opponents]
    if ei.exploiters:
        fields += ["exploiter_before", "exploiter_after", "exploiter_seconds"]
    writer = _tensorboard(run_dir)
    started = time.perf_counter() - state["wall_time"]
    try:
        for generation in range(state["generation"], ei.generations):
            folder = generation_dir(run_dir, generation)
            label_seconds = label(config, run_dir, generation, executor)
            exploited = generation in ei.exploiters
            if exploited:
                exploiters_started = time.perf_counter()
                target = generation_dir(run_dir, generation - 1) / "policy"
                before = train_exploiters(config, folder, target, generation)
                settings = settings_for(config, run_dir, generation)
                label_exploiter_games(config, folder, settings, executor)
                exploiter_seconds = time.perf_counter() - exploiters_started
            fit_started = time.perf_counter()
            summary = fit_generation(config, run_dir, generation)
            fit_seconds = time.perf_counter() - fit_started
            replace_folder(run_dir, "policy", functools.partial(_copy_policy, folder / "policy"))
            eval_started = time.perf_counter()
            scores = score_generation(config, folder / "policy")
            if exploited:
                scores["exploiter_before"] = before
                scores["exploiter_after"] = score_after(config, folder, generation)
                scores["exploiter_seconds"] = round(exploiter_seconds, 1)
            best = _best_epochs(summary["history"], summary["settings"]["value_loss_weight"])
            row = {
                "generation": generation,
                "teacher": teacher_label(teacher_for(config, run_dir, generation)),
                "games": ei.at(generation).games,
                "train_games": summary["games"],
                "train_decisions": summary["decisions"],
                "label_seconds": round(label_seconds, 1),
                "fit_seconds": round(fit_seconds, 1),
                "eval_seconds": round(time.perf_counter() - eval_started, 1),
                "wall_time": round(time.perf_counter() - started, 1),
                **best,
                **scores,
            }
            METRICS.add(run_dir, row, fields)
            if writer is not None:
                for key, value in row.items():
                    if isinstance(value, (int, float)) and key != "generation":
                        writer.add_scalar(f"expert_iteration/{key}", value, generation)
                writer.flush()
            print(
                f"generation {generation}: "
                + ", ".join(f"{k} {v:.3f}" for k, v in scores.items())
                + f" ({row['wall_time']:.0f} s so far)",
                flush=True,
            )
            state.update(generation=generation + 1, wall_time=time.perf_counter() - started)
            save_state(run_dir, state)
    except KeyboardInterrupt:
        state["wall_time"] = time.perf_counter() - started
        save_state(run_dir, state)
        print(f"\n{resume_hint(run_dir)}", file=sys.stderr)
        raise
    finally:
        if writer is not None:
            writer.close()
    write_report(run_dir, config, state["wall_time"])
    state["finished"] = True
    save_state(run_dir, state)
    return run_dir / "policy"


def _best_epochs(history: list[dict], value_weight: float) -> dict[str, float]:
    """The mean over roles of the exported epoch's measures: the one with the lowest
    held-out loss, policy plus ``value_weight`` times value, as the fit chooses it."""

    def loss(row: dict) -> float:
        if "validation_loss" in row:
            return row["validation_loss"] + value_weight * row["validation_value_loss"]
        return row["train_loss"] + value_weight * row["train_value_loss"]

    best: dict[str, dict] = {}
    for row in history:
        if row["role"] not in best or loss(row) < loss(best[row["role"]]):
            best[row["role"]] = row
    names = ("train_loss", "validation_loss", "validation_value_loss", "validation_agreement")
    out = {}
    for name in names:
        values = [row[name] for row in best.values() if name in row]
        if values:
            out[name] = sum(values) / len(values)
    return out


def _copy_policy(source: pathlib.Path, folder: pathlib.Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("policy.json", "policy.npz"):
        shutil.copyfile(source / name, folder / name)


def _tensorboard(run_dir: pathlib.Path):
    try:
        # lazy: tensorboard may be missing, and the run then goes on without its logs
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        return None
    return SummaryWriter(str(run_dir / "tensorboard"))


def prepare_run_dir(
    config: EITrainConfig, run_dir: str | None, start_policy: pathlib.Path | None = None
) -> pathlib.Path:
    """A new run's folder with its config, a copy of the policy it starts from (if
    any: the run never reads it elsewhere, so it may move or change) and a state
    of no generation done.

    Args:
        config: the run's config, written to ``config.yaml``.
        run_dir: the folder to make; None for ``runs/<run.name>-<time>``.
        start_policy: the policy folder to copy into the run's ``start_policy/``; None
            for none.

    Returns:
        The run's folder.

    Raises:
        FileExistsError: the folder already holds a run.
        RunWriteError: a file of the folder cannot be written.
    """
    path = start_run_folder(
        run_dir, config.run.name, dump_config(config), lambda p: (p / STATE_FILE).exists()
    )
    with run_writes(path):
        if start_policy is not None:
            replace_folder(path, START_POLICY, lambda out: _copy_policy(start_policy, out))
        save_state(path, load_state(path))
    return path


def check_start_copy(run_dir: pathlib.Path, config: EITrainConfig, state: dict) -> None:
    """A run that starts from a policy and has generation 0 to make needs its copy.

    Args:
        run_dir: the run's folder.
        config: the run's config.
        state: the run's progress (``state.json``); its ``generation`` is the next one
            to make.

    Raises:
        FileNotFoundError: the copy is missing, naming it and what to do.
    """
    copy = run_dir / START_POLICY / "policy.json"
    if config.expert_iteration.start_policy and state["generation"] == 0 and not copy.is_file():
        raise FileNotFoundError(
            f"{copy} is missing: the run's copy of its start policy "
            f"({config.expert_iteration.start_policy}); copy that policy folder to "
            f"{copy.parent} to go on"
        )


def check_opponents(config: EITrainConfig) -> None:
    """Refuse, before any work, an eval or final opponent that does not play the run's
    variant (``pimc``, a saved policy of another variant): each plays one decision of
    it. The full game's opponents are checked by their names alone.

    Args:
        config: the run's config: ``run.variant``, ``expert_iteration.eval_opponents``
            and ``run.final_opponents``.

    Raises:
        ConfigError: an opponent that refuses the variant, naming it, the key and the
            variant, in one line.
    """
    variant = config.run.game_variant
    if variant == FULL:
        return
    state = new_game(np.random.default_rng(0), variant=variant)
    view, legal = player_view(state, state.to_act), legal_actions(state)
    for key, specs in (
        ("expert_iteration.eval_opponents", config.expert_iteration.eval_opponents),
        ("run.final_opponents", config.run.final_opponents),
    ):
        for spec in specs:
            try:
                make_agent(spec, seed=0).act(view, legal)
            except ValueError as error:
                if "variant" not in str(error):
                    raise
                raise ConfigError(
                    f"{key}: {spec} does not play variant {variant.name} (run.variant): "
                    f"{one_line(str(error))}"
                ) from None


def main(config_path: str, run_dir: str | None, overrides: list[str], resume: str | None) -> int:
    """``jekyll-hyde train`` with ``algorithm: expert_iteration``.

    Args:
        config_path: the config, a YAML file or a shipped config's name; unused with
            ``resume``.
        run_dir: the new run's folder; None for ``runs/<run.name>-<time>``.
        overrides: ``--set`` items, ``section.key=value``; on ``resume`` they are
            checked against the generations made and saved to the run's config.yaml.
        resume: a run folder to continue instead of starting a run; None to start one.

    Returns:
        The exit status, 0.

    Raises:
        ConfigError: a bad config or ``--set``, a change to a generation already
            made or to the run's variant, a start policy of another variant (the
            champion plays only the full game) or an opponent that does not play it.
        FileExistsError: ``run_dir`` already holds a run.
        FileNotFoundError: ``resume`` is not a run folder.
        FileFormatError: the run's progress file is not valid.
        RunWriteError: a file of the run cannot be written.
        KeyboardInterrupt: Ctrl-C, after the progress is saved.
    """
    if resume:
        folder = pathlib.Path(resume)
        config_file = run_config_file(folder)
        config = load_config(config_file, overrides, schema=EITrainConfig)
        state = load_state(folder)
        if overrides:
            saved = load_config(config_file, schema=EITrainConfig)
            check_resume_changes(saved, config, state["generation"])
            check_opponents(config)
        check_state(folder, state, config)
        # The executor (a Ray cluster, checked node by node) before the folder changes.
        with open_executor(config.run) as executor:
            if overrides:
                atomic_write_text(config_file, dump_config(config))
                print(f"{config_file} now holds the run's settings with {' '.join(overrides)}")
            print(f"resuming {folder} at generation {state['generation']}")
            _train_or_explain(config, folder, executor)
        return 0
    config = load_config(config_path, overrides, schema=EITrainConfig)
    start_policy = config.expert_iteration.start_policy
    # before any folder: the start policy (of the run's variant) and the opponents
    start = start_policy_path(start_policy, config.run.variant) if start_policy else None
    check_opponents(config)
    with open_executor(config.run) as executor:
        folder = prepare_run_dir(config, run_dir, start)
        print(f"run folder: {folder}")
        print(dump_config(config))
        _train_or_explain(config, folder, executor)
    return 0


def _train_or_explain(config: EITrainConfig, folder: pathlib.Path, executor: Executor) -> None:
    """``train``; a file that cannot be written (a full disk) stops the run with a
    ``RunWriteError`` naming it and the command that continues the run."""
    print(f"labelling with {executor.describe()}", flush=True)
    with run_writes(folder):
        train(config, folder, executor)
