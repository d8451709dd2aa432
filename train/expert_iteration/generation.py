"""One generation of expert iteration: its teacher and settings, its games, its fit and its scores.

``jekyll_hyde_train.expert_iteration.loop`` runs these steps for each generation
in turn and keeps the run's record (metrics, state, report). Here are the
teacher that labels a generation's games (``teacher_for``: plain ISMCTS for
generation 0 of a run without a start policy, else network-guided search with
the previous generation's policy), the distillation settings in force for it
(``settings_for``), the labelling of its games (``label``, missing shards only),
the fit of its Jekyll and Hyde networks on the replay window (``fit_generation``,
warm-started only from a network of the same kind, ``network_kind``) and its
duplicate-match scores against the eval opponents (``score_generation``, on
``EVAL_SEED``'s deals). Each step works from the run's config, its folder and
the generation's number, and reads the generations before it only through their
folders, so the loop only orders the steps. ``START_POLICY`` names the run
folder's copy of the policy a run starts from.
"""

from __future__ import annotations

import pathlib
import time

from jekyll_hyde_agents import AZConfig, AZSpec
from jekyll_hyde_agents.policy_file import layer_sizes_text, read_metadata, resolve_policy_path
from jekyll_hyde_agents.policy_format import provenance
from jekyll_hyde_arena import evaluate
from jekyll_hyde_arena.duplicate import progress_bar
from jekyll_hyde_train.common.config import dump_config
from jekyll_hyde_train.expert_iteration.config import EITrainConfig, ExpertIterationConfig
from jekyll_hyde_train.expert_iteration.distill import DATA_FOLDER, generate
from jekyll_hyde_train.expert_iteration.executors import Executor
from jekyll_hyde_train.expert_iteration.exploiters import exploiters_dir
from jekyll_hyde_train.expert_iteration.progress import generation_dir
from jekyll_hyde_train.expert_iteration.settings import (
    DistillSettings,
    follow_a_moved_run,
    read_fit_summary,
    with_defaults,
)
from jekyll_hyde_train.expert_iteration.teacher import Teacher, teacher_label

EVAL_SEED = 12345  # each generation's scoring deals
START_POLICY = "start_policy"  # the run folder's copy of expert_iteration.start_policy


def teacher_for(config: EITrainConfig, run_dir: pathlib.Path, generation: int) -> Teacher:
    """Generation 0: plain ISMCTS, or az search guided by ``start_policy`` when the run
    starts from one; later: az search guided by the previous generation.

    Args:
        config: the run's config.
        run_dir: the run's folder (the policies the search reads are in it).
        generation: the generation, from 0.

    Returns:
        ``expert_iteration.first_teacher`` (an ``ismcts`` name) for generation 0 of a
        run without a start policy; otherwise an ``AZSpec`` searching with the previous
        generation's ``policy/`` (generation 0: the run's ``start_policy/`` copy) and
        the generation's search settings.
    """
    ei = config.expert_iteration.at(generation)
    if generation == 0 and not ei.start_policy:
        return ei.first_teacher
    previous = (
        generation_dir(run_dir, generation - 1) / "policy"
        if generation > 0
        else run_dir / START_POLICY
    )
    search = AZConfig(
        num_simulations=ei.simulations,
        c_puct=ei.c_puct,
        value_weight=ei.leaf_value_weight,
        playouts=ei.leaf_playouts,
        gumbel=ei.gumbel_actions,
    )
    return AZSpec(str(previous), search)


def settings_for(config: EITrainConfig, run_dir: pathlib.Path, generation: int) -> DistillSettings:
    """The labelling and fit of one generation, as a distillation run's settings: the
    generation's ``LabelAndFitSettings``, its teacher and its seed.

    Args:
        config: the run's config.
        run_dir: the run's folder.
        generation: the generation, from 0.

    Returns:
        The ``DistillSettings``: the settings in force for ``generation``
        (``ExpertIterationConfig.at``), its teacher (``teacher_for``), the seed
        ``run.seed * 1000 + generation`` and the run's variant (``run.variant``).
        Without a network yet (generation 0 of a run without a start policy) no
        network plays and every search is a full one.
    """
    ei = config.expert_iteration.at(generation)
    shared = ei.label_and_fit()
    if not (generation > 0 or ei.start_policy):  # no network to play or to search fast yet
        shared.update(network_play=0.0, full_search_share=1.0, fast_simulations=0)
    return DistillSettings(
        teacher=teacher_for(config, run_dir, generation),
        seed=config.run.seed * 1000 + generation,
        variant=config.run.variant,
        **shared,
    )


def label(
    config: EITrainConfig,
    run_dir: pathlib.Path,
    generation: int,
    executor: Executor | None = None,
) -> float:
    """Label the generation's games (missing shards only) with ``executor`` (a local
    pool of ``run.workers`` when None); returns the seconds spent.

    Args:
        config: the run's config.
        run_dir: the run's folder; the shards go in the generation's folder.
        generation: the generation, from 0.
        executor: where the games are labelled; None for a local pool of processes.

    Returns:
        The wall-clock seconds the labelling took.
    """
    settings = settings_for(config, run_dir, generation)
    folder = generation_dir(run_dir, generation)
    started = time.perf_counter()
    bar = progress_bar(settings.shards, f"generation {generation}: labelling", unit="shard")
    last = [0]

    def report(done: int, total: int, decisions: int) -> None:
        if bar is not None:
            bar.n = done
            bar.refresh()
        elif done == total or done - last[0] >= max(1, total // 10):
            print(f"generation {generation}: shard {done}/{total}", flush=True)
            last[0] = done

    follow_a_moved_run(folder, settings)
    try:
        generate(folder, settings, config.run.workers, report, executor)
    finally:
        if bar is not None:
            bar.close()
    return time.perf_counter() - started


def fit_generation(config: EITrainConfig, run_dir: pathlib.Path, generation: int) -> dict:
    """Fit the generation's networks on the replay window; returns the fit's summary.

    The window is the generation's games and those of the ``replay_generations - 1``
    before it, with the games against exploiters made in it. The fit starts from the
    previous generation's weights (generation 0: the start policy's) under
    ``warm_start`` when the networks have the same shape, else from fresh weights. A
    fit already finished with the same settings is not made again.

    Args:
        config: the run's config.
        run_dir: the run's folder.
        generation: the generation, from 0.

    Returns:
        What the generation's ``fit.json`` holds: the games and decisions trained on,
        the settings, the seconds taken and each epoch's measures (``history``).
    """
    # lazy: torch (distill_fit) loads only for a fit, so labelling processes start without it
    from jekyll_hyde_train.expert_iteration.fit import FIT_FILE, fit

    ei = config.expert_iteration.at(generation)
    folder = generation_dir(run_dir, generation)
    settings = settings_for(config, run_dir, generation)
    if (folder / FIT_FILE).exists() and (folder / "policy" / "policy.json").exists():
        done = read_fit_summary(folder / FIT_FILE)  # before an interruption
        changed = _changed_fit_settings(done["settings"], settings)
        if not changed:
            return done
        print(f"generation {generation}: fit again, with other settings ({', '.join(changed)})")
    first = max(0, generation - ei.replay_generations + 1)
    window = [generation_dir(run_dir, g) for g in range(first, generation)]
    window += [  # the games against exploiters of the generations in the window
        exploiters_dir(generation_dir(run_dir, g))
        for g in range(first, generation + 1)
        if (exploiters_dir(generation_dir(run_dir, g)) / DATA_FOLDER).is_dir()
    ]
    init = None
    if generation == 0 and ei.start_policy and ei.warm_start:
        init = run_dir / START_POLICY
        if saved_network_kind(init) != (network_kind(ei), ei.activation):
            print(
                f"generation 0: {_kind(ei)} ({ei.activation}) where the start policy {init} "
                f"has {_saved_kind(init)}: fit from fresh weights"
            )
            init = None
    if generation > 0 and ei.warm_start:
        before = config.expert_iteration.at(generation - 1)
        if network_kind(before) == network_kind(ei):
            init = generation_dir(run_dir, generation - 1) / "policy"
        else:  # nothing of that kind to start from
            print(
                f"generation {generation}: {_kind(ei)} where generation {generation - 1} "
                f"had {_kind(before)}: fit from fresh weights"
            )

    def report(row: dict) -> None:
        measures = ", ".join(f"{k} {v:.4f}" for k, v in row.items() if isinstance(v, float))
        print(f"generation {generation} fit, {row['role']} epoch {row['epoch']}: {measures}")

    extra = {
        "training": {
            "method": "expert_iteration",
            "generation": generation,
            "teacher": teacher_label(teacher_for(config, run_dir, generation)),
            "replay_generations": [g for g in range(first, generation + 1)],
        },
        "provenance": provenance(dump_config(config), config.run.seed),
    }
    return fit(
        folder,
        settings,
        report,
        threads=config.run.threads,
        more_data=window,
        init_from=init,
        extra=extra,
    )


def network_kind(settings: ExpertIterationConfig | DistillSettings) -> tuple[tuple[int, ...], bool]:
    """What a warm start needs the previous network to share: the hidden sizes,
    and whether one network serves both roles.

    Args:
        settings: a generation's or a distillation's settings.

    Returns:
        ``(hidden sizes, shared_policy)``.
    """
    return tuple(settings.hidden), settings.shared_policy


def saved_network_kind(folder: pathlib.Path) -> tuple[tuple[tuple[int, ...], bool], str]:
    """A saved policy's ``network_kind`` and activation, from its metadata.

    Args:
        folder: the policy folder (or a run folder holding one).

    Returns:
        ``((hidden sizes, shared), activation)``: shared is True when both roles use
        one network; the activation is ``"relu"`` or ``"tanh"``.

    Raises:
        PolicyFileError: no readable policy there.
    """
    metadata = read_metadata(resolve_policy_path(folder))
    shared = set(metadata["roles"].values()) == {"shared"}
    architecture = metadata["architecture"]
    return (tuple(architecture["hidden"]), shared), architecture["activation"]


def _saved_kind(folder: pathlib.Path) -> str:
    (hidden, shared), activation = saved_network_kind(folder)
    return f"{_kind_text(hidden, shared)} ({activation})"


def _kind(ei: ExpertIterationConfig) -> str:
    return _kind_text(ei.hidden, ei.shared_policy)


def _kind_text(hidden, shared: bool) -> str:
    """``a 1024x1024 network for both roles``, say."""
    return f"a {layer_sizes_text(list(hidden))} network " + (
        "for both roles" if shared else "per role"
    )


def _changed_fit_settings(saved: dict, settings: DistillSettings) -> list[str]:
    """The settings a finished fit (its ``fit.json`` record) was not made with, as
    ``key old -> new``: a stage added on ``--resume`` for a generation that was fit
    but not yet scored. The teacher is left out: only its policy's path can differ
    there (a moved run), as its games are checked when they are labelled."""
    saved, wanted = with_defaults(saved), settings.to_json()
    return [
        f"{key} {saved.get(key)!r} -> {value!r}"
        for key, value in wanted.items()
        if key != "teacher" and saved.get(key) != value
    ]


def score_generation(config: EITrainConfig, policy: pathlib.Path) -> dict[str, float]:
    """Duplicate matches of the generation's policy against each eval opponent.

    Args:
        config: the run's config: ``expert_iteration.eval_opponents`` and
            ``eval_pairs``, and ``run.workers`` processes; the deals come from
            ``EVAL_SEED``, in ``run.variant``.
        policy: the generation's policy folder.

    Returns:
        ``score_vs_<opponent>`` to the policy's mean score against it (0 to 1, 0.5
        even), for each opponent.
    """
    scores = {}
    for opponent in config.expert_iteration.eval_opponents:
        report = evaluate(
            str(policy),
            opponent,
            config.expert_iteration.eval_pairs,
            seed=EVAL_SEED,
            workers=config.run.workers,
            variant=config.run.game_variant,
        )
        scores[f"score_vs_{opponent}"] = report.score
    return scores
