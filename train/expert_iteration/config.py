"""Expert iteration's config (``algorithm: expert_iteration``): the sections ``run``
and ``expert_iteration``, their defaults and their checks.

A YAML file (``configs/expert_iteration/*.yaml``) overrides these defaults; it is
read into these types by ``jekyll_hyde_train.common.config.load_config``. The
labelling and fit settings that ``jekyll-hyde distill`` takes too are declared
once, in ``LabelAndFitSettings``, which both ``ExpertIterationConfig`` and
``jekyll_hyde_train.expert_iteration.settings.DistillSettings`` extend.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
import typing
from dataclasses import field
from typing import Any, ClassVar

from jekyll_hyde_agents import champion_path
from jekyll_hyde_agents.az import MAX_GUMBEL_ACTIONS, PLAYOUT_KINDS
from jekyll_hyde_agents.policy_file import read_metadata, resolve_policy_path
from jekyll_hyde_agents.policy_format import ACTIVATIONS, WEIGHTS_FILE, PolicyFileError
from jekyll_hyde_agents.sources import KINDS, detect_kind
from jekyll_hyde_env.engine.variant import FULL, Variant, parse_variant
from jekyll_hyde_train.common.config import register_algorithm, validate_value
from jekyll_hyde_train.common.config_checks import (
    MAX_GAMES_PLAYED,
    MAX_TRAINING_STEPS,
    ConfigError,
    at_most,
    check_folder_name,
    check_seed,
    check_variant,
    known_agents,
    layer_sizes,
    one_of,
    positive,
    section,
)


@section
class EIRunConfig:
    name: str = "default"
    """Run folder name under ``runs/`` when ``--run-dir`` is not given."""
    seed: int = 0
    """Fixes every deal, every search and every fit."""
    variant: str = "full"
    """The version of the game (RULES.md V1-V7): ``full``, ``small``, ``tiny`` or
    ``key=value`` pairs such as ``values=3,potions=3,hand=3,rounds=1``."""
    workers: int = 2
    """Processes labelling games (executor ``local``, or the size of the local Ray that
    executor ``ray`` starts) and playing evaluation matches."""
    threads: int = 1
    """Torch threads for the fits (they run when no game is being labelled)."""
    final_pairs: int = 200
    """Duplicate pairs per opponent in the final report."""
    final_opponents: list[str] = field(
        default_factory=lambda: ["random", "heuristic", "ismcts:200"]
    )
    """Agents the final policy meets in the final report."""
    executor: str = "local"
    """Where the games are labelled: ``local`` (a pool of ``workers`` processes) or
    ``ray`` (a task per shard on a Ray cluster; ``jekyll_hyde_train.expert_iteration.executors``).
    Either writes
    the same shards."""
    ray_address: str = ""
    """The Ray cluster of executor ``ray``: ``host:port`` (``ray start --head``
    prints it), ``ray://host:port``, ``auto`` (the cluster started on this machine)
    or ``local`` (a Ray started for the run, of ``workers`` CPUs); empty: the
    ``RAY_ADDRESS`` environment variable, else ``local``."""

    @property
    def game_variant(self) -> Variant:
        """The variant the run trains on and is scored in (``variant`` parsed)."""
        return parse_variant(self.variant)

    def check(self) -> None:
        check_variant(self, "variant")
        positive(self, "workers", "threads", "final_pairs")
        check_seed(self, "seed")
        check_folder_name(self, "name")
        known_agents("run.final_opponents", self.final_opponents)
        one_of(self, "executor", EXECUTORS)
        problem = ray_address_problem(self.ray_address)
        if problem:
            raise ConfigError(f"run.ray_address {problem}")
        if self.ray_address and self.executor != "ray":
            raise ConfigError(
                f"run.ray_address {self.ray_address!r} is for run.executor 'ray' "
                f"(the executor is {self.executor!r}); set both, or neither"
            )


LR_SCHEDULES = ("constant", "cosine")
"""How a fit's step size moves: constant, or falling along a half cosine to zero."""
EXECUTORS = ("local", "ray")
"""Where expert iteration labels its games (``EIRunConfig.executor``)."""
RAY_ADDRESS_FORMS = "'host:port', 'ray://host:port', 'auto', 'local' or '' (RAY_ADDRESS)"


def ray_address_problem(address: str) -> str | None:
    """What is wrong with a Ray address (``EIRunConfig.ray_address``), or None.

    Allowed: empty, ``auto``, ``local``, ``host:port`` and ``ray://host:port``.

    Args:
        address: the address as configured or given with ``--address``.

    Returns:
        None when the address has an allowed form (a port from 1 to 65535, a host
        without spaces, ``/``, ``,`` or ``@``); otherwise the problem, naming the
        address and the forms allowed.
    """
    if address in ("", "auto", "local"):
        return None
    host, colon, port = address.removeprefix("ray://").rpartition(":")
    if (
        colon
        and host
        and not any(c.isspace() or c in "/,@" for c in host)
        and port.isdigit()
        and 0 < int(port) < 65536
    ):
        return None
    return f"{address!r} is not a Ray address: expected {RAY_ADDRESS_FORMS}"


def playout_cap_problem(
    full_search_share: float, fast_simulations: int, simulations: int
) -> str | None:
    """What is wrong with a playout cap for a search of ``simulations``, or None.

    The one statement of the rule, for the expert-iteration config and
    ``jekyll_hyde_train.expert_iteration.settings.DistillSettings``: a share in (0, 1]; below 1,
    fast searches
    of fewer simulations than the full ones (so at least 2 of those); at 1, no
    fast searches.

    Args:
        full_search_share: the share of decisions searched with all the simulations.
        fast_simulations: the simulations of the other, fast searches.
        simulations: the simulations of a full search.

    Returns:
        None when the three agree with the rule; otherwise the problem, beginning with
        the key it names (``full_search_share must be in (0, 1], ...``), for the caller
        to prefix with its section.
    """
    if not 0 < full_search_share <= 1:
        return f"full_search_share must be in (0, 1], got {full_search_share}"
    if full_search_share == 1:
        if fast_simulations:
            return (
                f"fast_simulations {fast_simulations} would do nothing: fast searches are made "
                "only when full_search_share is below 1; leave it 0"
            )
        return None
    if simulations < 2:
        return (
            "full_search_share below 1 needs at least 2 simulations (the fast searches make "
            f"fewer), got {simulations}"
        )
    if not 1 <= fast_simulations < simulations:
        return (
            f"fast_simulations must be in [1, {simulations - 1}] (fewer than the search's "
            f"{simulations}) when full_search_share is below 1, got {fast_simulations}"
        )
    return None


@section
class LabelAndFitSettings:
    """How games are labelled and how a network is fit to them: the settings that each
    generation of expert iteration (``ExpertIterationConfig``) and ``jekyll-hyde
    distill`` (``jekyll_hyde_train.expert_iteration.settings.DistillSettings``) both
    take, declared once with their defaults."""

    games: int = 400
    """Self-play games labelled per generation."""
    games_per_shard: int = 10
    """Games per data file (the unit of resumption)."""
    hidden: list[int] = field(default_factory=lambda: [256, 256])
    """Hidden layer sizes of each role's network. A stage may change them: the
    generation where they change is fit from fresh weights (no warm start), and
    the search of the next generation uses that network."""
    shared_policy: bool = False
    """One network for both roles, fit on both roles' decisions (the role is in
    the observation), instead of one per role on its own role's decisions. A
    stage may change it; the generation where it changes is fit from fresh weights."""
    activation: str = "relu"
    """'relu' or 'tanh'."""
    epochs: int = 8
    """Passes over each generation's training data."""
    batch_size: int = 256
    """Decisions per gradient step."""
    learning_rate: float = 1.0e-3
    """Adam's step size (the first step's, under 'cosine')."""
    lr_schedule: str = "cosine"
    """'constant' or 'cosine' (falls to zero over each fit)."""
    weight_decay: float = 0.0
    """AdamW's decoupled weight decay."""
    value_loss_weight: float = 1.0
    """Weight of the value head's squared error beside the policy's cross-entropy."""
    validation_share: float = 0.1
    """Share of each generation's shards held out to choose the best epoch."""
    network_play: float = 0.0
    """Share of each generation's games (from generation 1) whose moves the
    previous network plays alone while the search labels every decision, so
    that the network also learns the positions its own play leads to."""
    full_search_share: float = 1.0
    """Playout-cap randomisation (from generation 1): the share of decisions
    searched with all the simulations and kept as training rows; the others are
    searched with fast_simulations only to move the game on. 1: all kept."""
    fast_simulations: int = 0
    """Simulations of those fast searches: at least 1 and fewer than simulations
    when full_search_share is below 1, else 0."""

    def check_label_and_fit(self, prefix: str = "") -> None:
        """Refuse impossible values, each named as ``prefix`` + key (``expert_iteration.``
        in a config, nothing for ``distill``'s settings).

        Args:
            prefix: put before each key in a message (``"expert_iteration."``).

        Raises:
            ConfigError: a count below 1, bad layer sizes, an unknown activation or
                learning-rate schedule, or a learning rate, weight decay, validation
                share or network-play share out of its range.
        """
        for name in ("games", "games_per_shard", "epochs", "batch_size"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{prefix}{name} must be positive, got {getattr(self, name)}")
        layer_sizes(f"{prefix}hidden", self.hidden)
        choices = {"activation": ACTIVATIONS, "lr_schedule": LR_SCHEDULES}
        for name, allowed in choices.items():
            if getattr(self, name) not in allowed:
                raise ConfigError(
                    f"{prefix}{name} {getattr(self, name)!r} is not one of {list(allowed)}"
                )
        bounds = {
            "learning_rate": (self.learning_rate, 0 < self.learning_rate < 1, "(0, 1)"),
            "weight_decay": (self.weight_decay, 0 <= self.weight_decay < 1, "[0, 1)"),
            "validation_share": (self.validation_share, 0 <= self.validation_share < 1, "[0, 1)"),
            "network_play": (self.network_play, 0 <= self.network_play <= 1, "[0, 1]"),
        }
        for name, (value, inside, interval) in bounds.items():
            if not inside:
                raise ConfigError(f"{prefix}{name} must be in {interval}, got {value}")

    def label_and_fit(self) -> dict[str, Any]:
        """These settings' values by name, to build another settings type from them.

        Returns:
            Each field of ``LabelAndFitSettings`` (not those of a subclass) to its value.
        """
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(LabelAndFitSettings)}


@section
class ExpertIterationConfig(LabelAndFitSettings):
    generations: int = 4
    """Rounds of self-play labelling and fitting."""
    first_teacher: str = "ismcts:1000"
    """The search that labels generation 0 of a run without a start_policy, before
    there is a network: 'ismcts:N'."""
    start_policy: str = ""
    """A saved policy with a value head to start from: a run folder, a policy
    folder or 'champion'. A new run copies it into its folder (start_policy/).
    Generation 0 is then labelled like the later ones, by the network-guided
    search with that copy, and fit from its weights when its network has the
    configured shape (first_teacher is unused). Empty: generation 0 labelled by
    first_teacher and fit from fresh weights."""
    simulations: int = 200
    """Network-guided search (az) simulations per decision from generation 1 on."""
    c_puct: float = 1.5
    """PUCT's exploration weight in that search."""
    leaf_value_weight: float = 0.5
    """How that search values a new leaf: 1 the value head alone, 0 a playout
    alone, between a blend (a young network's value is noisy; playouts are not)."""
    leaf_playouts: str = "random"
    """Who plays those playouts: 'random' moves, or both players by the 'heuristic'
    agent (better informed; needs leaf_value_weight < 1)."""
    gumbel_actions: int = 0
    """Gumbel root selection in the labelling search (from generation 1): it
    samples at most this many root actions, shares its simulations among them by
    sequential halving, plays its choice and labels its improved policy
    (``jekyll_hyde_agents.az``). 0: PUCT at the root, the visit shares labelled."""
    replay_generations: int = 3
    """Generations whose games train each fit (the newest and those before it)."""
    warm_start: bool = True
    """Each generation's fit starts from the previous generation's weights."""
    eval_pairs: int = 100
    """Duplicate pairs per opponent when each generation is scored (metrics.csv)."""
    eval_opponents: list[str] = field(default_factory=lambda: ["heuristic", "ismcts:200"])
    """Agents each generation's policy is scored against."""
    exploiters: list[int] = field(default_factory=list)
    """Generations (from 1) whose data add games against exploiters: RL responders
    trained against the network that guides the generation's search, answered by
    that search (``jekyll_hyde_train.expert_iteration.exploiters``). Empty: none."""
    exploiter_steps: int = 300_000
    """Training steps of each seat's exploiter (the exploit command's RL responder)."""
    exploiter_games: int = 400
    """Games of the generation's search against the exploiters, labelled at the
    search's decisions (half with the exploiter as Hyde, half as Jekyll)."""
    exploiter_eval_pairs: int = 200
    """Duplicate pairs that score the exploiters against the network before and
    after the generation's fit (metrics.csv: exploiter_before, exploiter_after;
    exploiter_seconds is the time the exploiters took: training, scoring, games)."""
    stages: list[dict[str, Any]] = field(default_factory=list)
    """Settings that change from a generation on, each entry holding until a later
    one changes it again: ``{from_generation: 8, simulations: 1000, games: 6000}``.
    The keys an entry may change are ``STAGE_KEYS``. A finished run extended with
    more generations (``--resume RUN --set ...``) records its new settings here."""

    STAGE_KEYS: ClassVar[tuple[str, ...]] = (
        "games",
        "simulations",
        "c_puct",
        "leaf_value_weight",
        "leaf_playouts",
        "network_play",
        "full_search_share",
        "fast_simulations",
        "gumbel_actions",
        "replay_generations",
        "hidden",
        "shared_policy",
        "epochs",
        "batch_size",
        "learning_rate",
        "lr_schedule",
        "weight_decay",
        "value_loss_weight",
    )

    def at(self, generation: int) -> ExpertIterationConfig:
        """The settings in force for ``generation``: the base ones with the stages
        that start at or before it applied in order (``stages`` is then empty).

        Args:
            generation: the generation, from 0.

        Returns:
            A copy of these settings with the stages' changes applied and no stages.
        """
        changes: dict[str, Any] = {}
        for stage in self.stages:
            if stage["from_generation"] <= generation:
                changes.update({k: v for k, v in stage.items() if k != "from_generation"})
        return dataclasses.replace(self, stages=[], **changes)

    def check(self) -> None:
        self._check_settings()
        self._check_stages()

    def _check_stages(self) -> None:
        hints = typing.get_type_hints(type(self))
        previous = 0
        for index, stage in enumerate(self.stages):
            key = f"expert_iteration.stages[{index}]"
            if not isinstance(stage, dict) or "from_generation" not in stage:
                raise ConfigError(
                    f"{key} must be a mapping with from_generation and the settings it "
                    f"changes ({list(self.STAGE_KEYS)}), got {stage!r}"
                )
            start = validate_value(f"{key}.from_generation", stage["from_generation"], int)
            if not previous < start < self.generations:
                raise ConfigError(
                    f"{key}.from_generation must be after the previous stage's ({previous}) "
                    f"and before expert_iteration.generations ({self.generations}), got {start}"
                )
            unknown = sorted(map(str, set(stage) - {"from_generation", *self.STAGE_KEYS}))
            if unknown or len(stage) == 1:
                raise ConfigError(
                    f"{key}: {'unknown keys ' + str(unknown) if unknown else 'no setting'}; "
                    f"a stage changes some of {list(self.STAGE_KEYS)}"
                )
            self.stages[index] = {"from_generation": start} | {
                name: validate_value(f"{key}.{name}", value, hints[name])
                for name, value in stage.items()
                if name != "from_generation"
            }
            try:
                self.at(start)._check_settings()
            except ConfigError as error:
                raise ConfigError(f"{key} (from generation {start}): {error}") from None
            previous = start

    def _check_settings(self) -> None:
        positive(self, "generations", "simulations", "replay_generations", "eval_pairs")
        self.check_label_and_fit("expert_iteration.")
        if not self.first_teacher.startswith("ismcts"):
            raise ConfigError(
                f"expert_iteration.first_teacher {self.first_teacher!r} must be 'ismcts:N' "
                "or 'ismcts:Xs' (generation 0 has no network of the run to guide a search; "
                "start_policy starts a run from a saved one)"
            )
        known_agents("expert_iteration.first_teacher", [self.first_teacher])
        if self.c_puct < 0:
            raise ConfigError(f"expert_iteration.c_puct must be >= 0, got {self.c_puct}")
        if not 0 <= self.leaf_value_weight <= 1:
            raise ConfigError(
                "expert_iteration.leaf_value_weight must be in [0, 1], "
                f"got {self.leaf_value_weight}"
            )
        problem = playout_cap_problem(
            self.full_search_share, self.fast_simulations, self.simulations
        )
        if problem:
            raise ConfigError(f"expert_iteration.{problem}")
        if not 0 <= self.gumbel_actions <= MAX_GUMBEL_ACTIONS:
            raise ConfigError(
                "expert_iteration.gumbel_actions must be 0 (PUCT at the root) or a number of "
                f"sampled root actions from 1 to {MAX_GUMBEL_ACTIONS}, got {self.gumbel_actions}"
            )
        one_of(self, "leaf_playouts", tuple(PLAYOUT_KINDS))
        if self.leaf_playouts != "random" and self.leaf_value_weight == 1:
            raise ConfigError(
                f"expert_iteration.leaf_playouts {self.leaf_playouts!r} needs "
                "leaf_value_weight < 1 (at 1 the leaves take the value head alone)"
            )
        if not self.value_loss_weight > 0:
            raise ConfigError(
                "expert_iteration.value_loss_weight must be > 0 (the search needs a value head), "
                f"got {self.value_loss_weight}"
            )
        known_agents("expert_iteration.eval_opponents", self.eval_opponents)
        positive(self, "exploiter_steps", "exploiter_games", "exploiter_eval_pairs")
        at_most(self, "exploiter_steps", MAX_TRAINING_STEPS)
        at_most(self, "exploiter_games", MAX_GAMES_PLAYED)
        at_most(self, "exploiter_eval_pairs", MAX_GAMES_PLAYED)
        outside = [g for g in self.exploiters if not 1 <= g < self.generations]
        if outside or len(set(self.exploiters)) != len(self.exploiters):
            raise ConfigError(
                f"expert_iteration.exploiters {self.exploiters} must list distinct generations "
                f"from 1 to {self.generations - 1} (generation 0 has no network to exploit)"
            )


@section
class EITrainConfig:
    """Expert iteration (``algorithm: expert_iteration``)."""

    ALGORITHM: ClassVar[str] = "expert_iteration"
    run: EIRunConfig = field(default_factory=EIRunConfig)
    expert_iteration: ExpertIterationConfig = field(default_factory=ExpertIterationConfig)

    def check(self) -> None:
        self.run.check()
        self.expert_iteration.check()
        if self.expert_iteration.exploiters and self.run.executor != "local":
            raise ConfigError(
                "expert_iteration.exploiters needs run.executor 'local': the exploiters' "
                "policy is read from the run folder, which Ray's other nodes do not see"
            )


def start_policy_path(start_policy: str, variant: str = FULL.name) -> pathlib.Path:
    """The policy folder ``expert_iteration.start_policy`` names: 'champion' (the
    shipped policy), a run folder or a policy folder, with a value head, trained on
    the run's variant.

    Args:
        start_policy: the setting's value: ``"champion"``, a run folder or a policy
            folder.
        variant: the run's ``run.variant``; the policy must have been trained on it
            (the champion plays only the full game).

    Returns:
        The policy folder, resolved to an absolute path.

    Raises:
        ConfigError: no saved policy there, one without a value head or weights, or
            one of another variant, naming it and what the setting accepts.
    """
    key = "expert_iteration.start_policy"
    accepted = "'champion' (the shipped policy), a run folder or a policy folder"
    try:
        folder = champion_path() if start_policy == "champion" else start_policy
        metadata_file = resolve_policy_path(folder)
        metadata = read_metadata(metadata_file)
    except (PolicyFileError, OSError, ValueError) as error:
        kind = detect_kind(start_policy) if os.path.exists(start_policy) else None
        if kind not in (None, "policy"):
            raise ConfigError(
                f"{key}: {start_policy} is {KINDS[kind].what}; the search that labels expert "
                "iteration's games needs a saved policy whose value head reads the policy's "
                f"last hidden layer, which that model does not have; {key} is {accepted}"
            ) from None
        raise ConfigError(f"{key} is {accepted}: {error}") from None
    if not (metadata_file.parent / WEIGHTS_FILE).is_file():
        raise ConfigError(f"{key}: {metadata_file.parent} has no {WEIGHTS_FILE} (the weights)")
    if not metadata.get("value_head"):
        raise ConfigError(
            f"{key}: {metadata_file.parent} has no value head, which the search needs; "
            "start from a policy that expert iteration or distill made"
        )
    trained, wanted = parse_variant(metadata.get("variant")), parse_variant(variant)
    if trained != wanted:
        raise ConfigError(
            f"{key}: {start_policy} was trained on variant {trained.name}, but run.variant "
            f"is {wanted.name}; start from a policy of variant {wanted.name}, or from none"
        )
    return metadata_file.parent.resolve()


register_algorithm(EITrainConfig)
