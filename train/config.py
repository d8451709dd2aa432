"""Training configuration: YAML files loaded into typed dataclasses.

A config names its training algorithm with a top-level ``algorithm`` key:
``expert_iteration`` (the default; sections ``run`` and ``expert_iteration``)
or ``ppo`` (sections ``run``, ``env``, ``ppo`` and ``selfplay``). A config
without the key is PPO's when it has a PPO section, expert iteration's
otherwise; a config that mixes the two algorithms' sections is refused. Every
field below is documented where it is declared. Loading checks everything
before a run starts: an unknown section or key, a value of the wrong type or an
impossible value raises ``ConfigError`` naming the key and what is allowed
(the checks are ``jekyll_hyde_train.config_checks``; PPO's section is the one type
of ``jekyll_hyde_train.ppo_hyperparameters`` that RLlib and the exploit responder
read too).
``--set section.key=value`` overrides one value (parsed as YAML). Numbers may be
written ``3.0e-4`` or ``3e-4``, ``1000000`` or ``1e6`` (PyYAML reads ``1e6`` as a
string; the loader takes it as the number it spells).

A config is named by a path or by the name of a shipped config
(``resolve_config``): the repository's ``configs/`` folder, a folder per
algorithm (``configs/expert_iteration/default.yaml``, ``configs/ppo/smoke.yaml``,
...), installed with the package as ``jekyll_hyde_train.configs``. ``ppo/smoke``
names a config; ``ppo`` names that folder's ``default``; a name alone is expert
iteration's (``smoke``, ``long``), and ``ppo_smoke`` is ``ppo/smoke``.
"""

from __future__ import annotations

import dataclasses
import math
import os
import pathlib
import types
import typing
from dataclasses import dataclass, field
from typing import Any, ClassVar

import yaml

from jekyll_hyde_agents import agent_names, champion_path
from jekyll_hyde_agents.az import MAX_GUMBEL_ACTIONS, PLAYOUT_KINDS
from jekyll_hyde_agents.policy_file import (
    WEIGHTS_FILE,
    PolicyFileError,
    read_metadata,
    resolve_policy_path,
)
from jekyll_hyde_agents.sources import KINDS, detect_kind, names_an_agent
from jekyll_hyde_train.config_checks import (
    MAX_GAMES_PLAYED,
    MAX_TRAINING_STEPS,
    ConfigError,
    at_most,
    check_folder_name,
    check_seed,
    layer_sizes,
    one_of,
    positive,
    register_sections,
)
from jekyll_hyde_train.files import (
    MAX_DEPTH,
    FileFormatError,
    nesting_depth,
    one_line,
    read_text_file,
)
from jekyll_hyde_train.ppo_hyperparameters import PPOHyperparameters


@dataclass
class RunConfig:
    name: str = "default"
    """Run folder name under ``runs/`` when ``--run-dir`` is not given."""
    seed: int = 0
    """Seeds the environments, the networks and the opponent choices."""
    total_steps: int = 1_000_000
    """Environment steps over both roles (each step is one learner decision)."""
    shared_policy: bool = False
    """One policy for both roles (the role is in the observation) instead of two."""
    eval_every: int = 100_000
    """Steps between evaluations against the baselines, logged in metrics.csv."""
    eval_pairs: int = 100
    """Duplicate pairs per evaluation against each baseline."""
    final_pairs: int = 200
    """Duplicate pairs per opponent in the final report."""
    final_opponents: list[str] = field(
        default_factory=lambda: ["random", "heuristic", "ismcts:200"]
    )
    """Agents the exported policy meets in the final report."""
    workers: int = 2
    """Processes for evaluation matches."""
    torch_threads: int = 1
    """Threads torch may use in the learner's process (1 is fastest for small networks)."""

    def check(self) -> None:
        positive(
            self,
            "total_steps",
            "eval_every",
            "eval_pairs",
            "final_pairs",
            "workers",
            "torch_threads",
        )
        check_seed(self, "seed")
        check_folder_name(self, "name")


VEC_ENVS = ("batched", "subproc", "dummy")
MAX_BATCHED_GAMES = 4096
"""The most games a learner steps together."""
MAX_PROCESSES = 64
"""The most processes a learner's games may run in (``vec_env: subproc``)."""


@dataclass
class EnvConfig:
    n_envs: int = 2
    """Games per learner: batched in C (vec_env 'batched') or one env per process or loop."""
    vec_env: str = "batched"
    """'batched' (all games stepped together in C, in the learner's process; opponents
    batched where they can be), 'subproc' (one process per env) or 'dummy' (in process)."""

    def check(self) -> None:
        positive(self, "n_envs")
        one_of(self, "vec_env", VEC_ENVS)
        at_most(self, "n_envs", MAX_PROCESSES if self.vec_env == "subproc" else MAX_BATCHED_GAMES)


@dataclass
class SelfPlayConfig:
    phase_steps: int = 50_000
    """Steps one role trains (against a frozen pool) before the other role takes over;
    a checkpoint is written at the end of every phase."""
    pool_size: int = 8
    """Past snapshots kept per role in the opponent pool."""
    latest_weight: float = 0.5
    """Chance that an episode's opponent is the other role's latest snapshot."""
    past_weight: float = 0.25
    """Chance shared by the older snapshots of the pool."""
    baselines: dict[str, float] = field(default_factory=lambda: {"random": 0.05, "heuristic": 0.2})
    """Fixed opponents (agent names) and their chances."""

    def check(self) -> None:
        positive(self, "phase_steps", "pool_size")
        weights = {"latest_weight": self.latest_weight, "past_weight": self.past_weight}
        weights.update({f"baselines.{k}": v for k, v in self.baselines.items()})
        for name, value in weights.items():
            if value < 0:
                raise ConfigError(f"selfplay.{name} must be >= 0, got {value}")
        if sum(weights.values()) <= 0:
            raise ConfigError("selfplay weights must not all be zero")
        _known_agents("selfplay.baselines", list(self.baselines))


@dataclass
class TrainConfig:
    """PPO self-play (``algorithm: ppo``)."""

    ALGORITHM: ClassVar[str] = "ppo"
    run: RunConfig = field(default_factory=RunConfig)
    env: EnvConfig = field(default_factory=EnvConfig)
    ppo: PPOHyperparameters = field(default_factory=PPOHyperparameters)
    selfplay: SelfPlayConfig = field(default_factory=SelfPlayConfig)

    def check(self) -> None:
        for section in (self.run, self.env, self.ppo, self.selfplay):
            section.check()
        self.ppo.check_rollout(self.env.n_envs, "env.n_envs")
        if self.selfplay.phase_steps < self.ppo.n_steps * self.env.n_envs:
            raise ConfigError(
                f"selfplay.phase_steps ({self.selfplay.phase_steps}) must be at least one "
                f"rollout, ppo.n_steps * env.n_envs = {self.ppo.n_steps * self.env.n_envs}"
            )

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass
class EIRunConfig:
    name: str = "default"
    """Run folder name under ``runs/`` when ``--run-dir`` is not given."""
    seed: int = 0
    """Fixes every deal, every search and every fit."""
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
    ``ray`` (a task per shard on a Ray cluster; ``jekyll_hyde_train.executors``). Either writes
    the same shards."""
    ray_address: str = ""
    """The Ray cluster of executor ``ray``: ``host:port`` (``ray start --head``
    prints it), ``ray://host:port``, ``auto`` (the cluster started on this machine)
    or ``local`` (a Ray started for the run, of ``workers`` CPUs); empty: the
    ``RAY_ADDRESS`` environment variable, else ``local``."""

    def check(self) -> None:
        positive(self, "workers", "threads", "final_pairs")
        check_seed(self, "seed")
        check_folder_name(self, "name")
        _known_agents("run.final_opponents", self.final_opponents)
        one_of(self, "executor", EXECUTORS)
        problem = ray_address_problem(self.ray_address)
        if problem:
            raise ConfigError(f"run.ray_address {problem}")
        if self.ray_address and self.executor != "ray":
            raise ConfigError(
                f"run.ray_address {self.ray_address!r} is for run.executor 'ray' "
                f"(the executor is {self.executor!r}); set both, or neither"
            )


EXECUTORS = ("local", "ray")
"""Where expert iteration labels its games (``EIRunConfig.executor``)."""
RAY_ADDRESS_FORMS = "'host:port', 'ray://host:port', 'auto', 'local' or '' (RAY_ADDRESS)"


def ray_address_problem(address: str) -> str | None:
    """What is wrong with a Ray address (``EIRunConfig.ray_address``), or None.

    Allowed: empty, ``auto``, ``local``, ``host:port`` and ``ray://host:port``."""
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
    ``jekyll_hyde_train.distill.DistillSettings``: a share in (0, 1]; below 1, fast searches
    of fewer simulations than the full ones (so at least 2 of those); at 1, no
    fast searches."""
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


@dataclass
class ExpertIterationConfig:
    generations: int = 4
    """Rounds of self-play labelling and fitting."""
    games: int = 400
    """Self-play games labelled per generation."""
    games_per_shard: int = 10
    """Games per data file (the unit of resumption)."""
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
    gumbel_actions: int = 0
    """Gumbel root selection in the labelling search (from generation 1): it
    samples at most this many root actions, shares its simulations among them by
    sequential halving, plays its choice and labels its improved policy
    (``jekyll_hyde_agents.az``). 0: PUCT at the root, the visit shares labelled."""
    replay_generations: int = 3
    """Generations whose games train each fit (the newest and those before it)."""
    warm_start: bool = True
    """Each generation's fit starts from the previous generation's weights."""
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
    eval_pairs: int = 100
    """Duplicate pairs per opponent when each generation is scored (metrics.csv)."""
    eval_opponents: list[str] = field(default_factory=lambda: ["heuristic", "ismcts:200"])
    """Agents each generation's policy is scored against."""
    exploiters: list[int] = field(default_factory=list)
    """Generations (from 1) whose data add games against exploiters: RL responders
    trained against the network that guides the generation's search, answered by
    that search (``jekyll_hyde_train.exploiters``). Empty: none."""
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
        that start at or before it applied in order (``stages`` is then empty)."""
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
            start = _coerce(f"{key}.from_generation", stage["from_generation"], int)
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
                name: _coerce(f"{key}.{name}", value, hints[name])
                for name, value in stage.items()
                if name != "from_generation"
            }
            try:
                self.at(start)._check_settings()
            except ConfigError as error:
                raise ConfigError(f"{key} (from generation {start}): {error}") from None
            previous = start

    def _check_settings(self) -> None:
        positive(self, "generations", "games", "games_per_shard", "simulations")
        positive(self, "replay_generations", "epochs", "batch_size", "eval_pairs")
        if not self.first_teacher.startswith("ismcts"):
            raise ConfigError(
                f"expert_iteration.first_teacher {self.first_teacher!r} must be 'ismcts:N' "
                "or 'ismcts:Xs' (generation 0 has no network of the run to guide a search; "
                "start_policy starts a run from a saved one)"
            )
        _known_agents("expert_iteration.first_teacher", [self.first_teacher])
        if "," in self.start_policy:
            raise ConfigError(
                f"expert_iteration.start_policy: the path may not contain a comma, "
                f"got {self.start_policy!r}"
            )
        if self.c_puct < 0:
            raise ConfigError(f"expert_iteration.c_puct must be >= 0, got {self.c_puct}")
        if not 0 <= self.leaf_value_weight <= 1:
            raise ConfigError(
                "expert_iteration.leaf_value_weight must be in [0, 1], "
                f"got {self.leaf_value_weight}"
            )
        if not 0 <= self.network_play <= 1:
            raise ConfigError(
                f"expert_iteration.network_play must be in [0, 1], got {self.network_play}"
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
        layer_sizes("expert_iteration.hidden", self.hidden)
        one_of(self, "activation", ("relu", "tanh"))
        one_of(self, "leaf_playouts", tuple(PLAYOUT_KINDS))
        if self.leaf_playouts != "random" and self.leaf_value_weight == 1:
            raise ConfigError(
                f"expert_iteration.leaf_playouts {self.leaf_playouts!r} needs "
                "leaf_value_weight < 1 (at 1 the leaves take the value head alone)"
            )
        one_of(self, "lr_schedule", ("constant", "cosine"))
        if not 0 < self.learning_rate < 1:
            raise ConfigError(
                f"expert_iteration.learning_rate must be in (0, 1), got {self.learning_rate}"
            )
        if not 0 <= self.weight_decay < 1:
            raise ConfigError(
                f"expert_iteration.weight_decay must be in [0, 1), got {self.weight_decay}"
            )
        if not self.value_loss_weight > 0:
            raise ConfigError(
                "expert_iteration.value_loss_weight must be > 0 (the search needs a value head), "
                f"got {self.value_loss_weight}"
            )
        if not 0 <= self.validation_share < 1:
            raise ConfigError(
                f"expert_iteration.validation_share must be in [0, 1), got {self.validation_share}"
            )
        _known_agents("expert_iteration.eval_opponents", self.eval_opponents)
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


@dataclass
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


ALGORITHMS = {"expert_iteration": EITrainConfig, "ppo": TrainConfig}
ALGORITHM_NAMES = (*ALGORITHMS, "rllib")
"""Every algorithm a config may name; ``rllib`` is read by ``jekyll_hyde_train.rllib_backend``
(the rllib extra), the others here."""
PPO_SECTIONS = ("env", "ppo", "selfplay")


def start_policy_path(start_policy: str) -> pathlib.Path:
    """The policy folder ``expert_iteration.start_policy`` names: 'champion' (the
    shipped policy), a run folder or a policy folder, with a value head.

    Raises:
        ConfigError: no saved policy there, or one without a value head or weights,
            naming it and what the setting accepts.
    """
    key = "expert_iteration.start_policy"  # its comma is refused when the config loads
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
    return metadata_file.parent.resolve()


def _known_agents(key: str, specs: list[str]) -> None:
    """Refuse a spec that names no agent (its models are not loaded here)."""
    for spec in specs:
        if not names_an_agent(spec):
            raise ConfigError(
                f"{key}: unknown agent {spec!r}; known: {agent_names()}, or a model file "
                "(a saved policy, an SB3 .zip, an .onnx, ...)"
            )


def algorithm_of(data: Any, source: str = "config") -> str:
    """The algorithm a raw config names, or the one its sections imply."""
    if not isinstance(data, dict):
        return "expert_iteration"
    algorithm = data.get("algorithm")
    if algorithm is None:
        return "ppo" if any(name in data for name in PPO_SECTIONS) else "expert_iteration"
    if not isinstance(algorithm, str) or algorithm not in ALGORITHM_NAMES:
        raise ConfigError(
            f"{source}: algorithm {algorithm!r} is not one of {list(ALGORITHM_NAMES)}"
        )
    return algorithm


def shipped_configs_dir() -> pathlib.Path:
    """The folder of the shipped configs: ``train/configs`` in an installed package (package
    data taken from the repository's ``configs/``), the repository's ``configs/`` in a checkout."""
    here = pathlib.Path(__file__).resolve().parent
    installed = here / "configs"
    return installed if installed.is_dir() else here.parent / "configs"


def shipped_config_names() -> list[str]:
    """Every shipped config as ``FOLDER/NAME``: ``configs/<algorithm>/<name>.yaml`` (and
    the benchmarks' and the exploit command's settings in folders of their own)."""
    root = shipped_configs_dir()
    paths = root.glob("*/*.yaml")
    return sorted(path.relative_to(root).with_suffix("").as_posix() for path in paths)


def shipped_config(name: str) -> pathlib.Path | None:
    """The shipped config ``name`` means, or None. In order: ``FOLDER/NAME``
    (``ppo/smoke``); a folder alone, its ``default`` (``ppo``); a name alone, expert
    iteration's, the default algorithm (``smoke``); ``FOLDER_NAME`` (``ppo_smoke``)."""
    names = set(shipped_config_names())
    candidates = [name, f"{name}/default", f"expert_iteration/{name}"]
    folder, _, rest = name.partition("_")
    if rest:
        candidates.append(f"{folder}/{rest}")
    for candidate in candidates:
        if candidate in names:
            return shipped_configs_dir() / f"{candidate}.yaml"
    return None


def resolve_config(spec: str | pathlib.Path) -> pathlib.Path:
    """The config file ``spec`` names: a path that exists wins; otherwise a shipped
    config's name (``shipped_config``), with or without ``.yaml`` and with or without
    the repository's ``configs/`` before it (``configs/ppo/smoke.yaml`` works outside
    the repository too).

    Raises:
        ConfigError: neither such a file nor a shipped config; the message lists the names.
    """
    path = pathlib.Path(spec)
    if path.exists():
        return path
    names = shipped_config_names()
    shipped = ", ".join(names) or "none (the package was installed without them)"
    parts = path.with_suffix("").parts if path.suffix == ".yaml" else path.parts
    if parts and parts[0] == "configs":
        parts = parts[1:]
    if path.suffix in ("", ".yaml") and 1 <= len(parts) <= 2 and not path.is_absolute():
        found = shipped_config("/".join(parts))
        if found is not None:
            return found
        raise ConfigError(
            f"cannot read config {str(spec)!r}: no such file, nor a shipped config of that "
            f"name; shipped configs: {shipped}"
        )
    raise ConfigError(
        f"cannot read config {str(spec)!r}: no such file (shipped configs, by name: {shipped})"
    )


CONFIG_WHAT = "a training config (YAML)"


class _ConfigLoader(yaml.SafeLoader):
    """PyYAML's safe loader without aliases, and refusing a key given twice in one
    mapping (PyYAML would keep the last silently). A config never needs aliases,
    and a few nested ones can stand for billions of values (a "billion laughs" file)."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(
                None, None, "aliases (*name) are not allowed in a config", event.start_mark
            )
        return super().compose_node(parent, index)

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        seen: dict[Any, Any] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.setdefault(key, key_node)
            except TypeError:  # an unhashable key: PyYAML's own message names it
                break
            if first is not key_node:
                raise yaml.constructor.ConstructorError(
                    "while reading a mapping",
                    node.start_mark,
                    f"the key {key!r} is given twice (lines {first.start_mark.line + 1} "
                    f"and {key_node.start_mark.line + 1}); keep one",
                    key_node.start_mark,
                )
        return super().construct_mapping(node, deep)


def _parse_yaml(text: str) -> Any:
    """``text`` read by ``_ConfigLoader``.

    Raises:
        yaml.YAMLError: invalid YAML, an alias, a key given twice.
        ValueError: an integer of more digits than Python reads (4,300).
        RecursionError: nesting deeper than Python's recursion limit.
    """
    return yaml.load(text, Loader=_ConfigLoader)  # a SafeLoader: no Python objects


def _read_yaml(spec: str | pathlib.Path) -> tuple[Any, pathlib.Path]:
    """A config's raw YAML contents and the file they came from (``resolve_config``).

    Raises:
        ConfigError: the file is unreadable, not UTF-8, not YAML, uses aliases or
            nests deeper than ``MAX_DEPTH``; the message names the file.
    """
    path = resolve_config(spec)
    try:
        text = read_text_file(path, CONFIG_WHAT)
    except FileFormatError as error:
        raise ConfigError(str(error)) from None
    try:
        data = _parse_yaml(text)
    except yaml.YAMLError as error:
        raise ConfigError(f"{path}: not valid YAML ({one_line(str(error))})") from None
    except ValueError as error:  # an integer of more digits than int() reads
        raise ConfigError(
            f"{path}: not readable YAML ({one_line(str(error)).split(';')[0]})"
        ) from None
    except RecursionError:
        data, depth = None, MAX_DEPTH + 1
    else:
        depth = nesting_depth(data)
    if depth > MAX_DEPTH:
        raise ConfigError(f"{path}: nested deeper than {MAX_DEPTH} levels; expected {CONFIG_WHAT}")
    return data, path


def read_algorithm(path: str | pathlib.Path) -> str:
    """The algorithm of a config (``algorithm_of`` its contents), by path or shipped name."""
    data, path = _read_yaml(path)
    return algorithm_of(data, str(path))


def _check_algorithm(data: dict[str, Any], schema: Any, source: str) -> None:
    """Refuse a config naming another algorithm, or mixing two algorithms' sections."""
    expected = getattr(schema, "ALGORITHM", None)
    if expected is None:
        if "algorithm" in data:
            raise ConfigError(f"{source}: this config takes no 'algorithm' key")
        return
    named = data.pop("algorithm", expected)
    if named != expected:
        raise ConfigError(
            f"{source}: algorithm {named!r} here, but this is a {expected!r} config; "
            f"algorithms: {list(ALGORITHM_NAMES)}"
        )
    others = [
        (name, other)
        for other, cls in ALGORITHMS.items()
        if other != expected
        for name in (f.name for f in dataclasses.fields(cls))
        if name in data and name not in {f.name for f in dataclasses.fields(schema)}
    ]
    if others:
        raise ConfigError(
            f"{source}: the config mixes {expected} and other algorithms' keys: sections "
            + ", ".join(f"'{name}' ({other})" for name, other in others)
            + f" do not belong to algorithm '{expected}'"
        )


_SECTIONS = {
    "run": RunConfig,
    "env": EnvConfig,
    "ppo": PPOHyperparameters,
    "selfplay": SelfPlayConfig,
    "expert_iteration": ExpertIterationConfig,
}


register_sections(_SECTIONS)


def _coerce(key: str, value: Any, kind: Any) -> Any:
    """``value`` as the declared type of ``key``, or ConfigError."""
    origin = typing.get_origin(kind)
    if origin in (typing.Union, types.UnionType) and type(None) in typing.get_args(kind):
        if value is None:
            return None
        (other,) = [arg for arg in typing.get_args(kind) if arg is not type(None)]
        return _coerce(key, value, other)
    if kind is bool:
        if isinstance(value, bool):
            return value
    elif kind is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        number = _number(value)  # 1e6 or 1.0e+6 for a count: fine when it is whole
        if number is not None and number.is_integer():
            return int(number)
    elif kind is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if math.isfinite(value):
                return float(value)
            raise ConfigError(f"{key} must be a finite number, got {value!r}")
        number = _number(value)  # PyYAML reads 1e-4 (no dot) as a string
        if number is not None:
            return number
    elif kind is str:
        if isinstance(value, str):
            return value
    elif kind is Any:
        return value
    elif origin is list:
        (item,) = typing.get_args(kind)
        if isinstance(value, list):
            return [_coerce(f"{key}[{i}]", v, item) for i, v in enumerate(value)]
    elif origin is dict:
        _, item = typing.get_args(kind)
        if isinstance(value, dict):
            return {str(k): _coerce(f"{key}.{k}", v, item) for k, v in value.items()}
    name = getattr(kind, "__name__", str(kind))
    raise ConfigError(f"{key} must be of type {name}, got {value!r} ({type(value).__name__})")


def _number(value: Any) -> float | None:
    """A float written as a string such as '1e6' or '3e-4', or a float; else None."""
    if isinstance(value, float):
        return value
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


def _check_override_keys(overrides: list[str], schema: Any) -> None:
    """Name a ``--set`` that targets no section or key as --set's mistake, not the file's."""
    sections = {f.name: typing.get_type_hints(schema)[f.name] for f in dataclasses.fields(schema)}
    for item in overrides:
        path = item.partition("=")[0]
        section, _, key = path.partition(".")
        if section not in sections:
            raise ConfigError(
                f"--set {item!r}: unknown section {section!r}; sections: {list(sections)}"
            )
        allowed = [f.name for f in dataclasses.fields(sections[section])]
        moved = getattr(sections[section], "RENAMED", {}).get(key)
        if moved is not None:
            raise ConfigError(f"--set {item!r}: '{section}.{key}' is now {moved}")
        if key and key not in allowed:
            raise ConfigError(
                f"--set {item!r}: unknown key '{section}.{key}'; "
                f"allowed keys in '{section}': {allowed}"
            )


def from_dict(data: Any, source: str = "config", schema: Any = None) -> Any:
    """Build and check a config from nested dicts (defaults fill what is missing).

    ``schema`` is the config class (``TrainConfig`` by default): a dataclass
    whose fields are the sections, each itself a dataclass with a ``check``.
    """
    schema = schema or TrainConfig
    section_types = {
        f.name: typing.get_type_hints(schema)[f.name] for f in dataclasses.fields(schema)
    }
    register_sections(section_types)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: a config is a mapping of sections {list(section_types)}")
    unknown = sorted(map(str, set(data) - set(section_types)))
    if unknown:
        raise ConfigError(f"{source}: unknown sections {unknown}; allowed: {list(section_types)}")
    sections = {}
    for name, cls in section_types.items():
        values = data.get(name) or {}
        if not isinstance(values, dict):
            raise ConfigError(f"{source}: section {name!r} must be a mapping")
        hints = typing.get_type_hints(cls)
        allowed = [f.name for f in dataclasses.fields(cls)]
        coerced = {}
        for key, value in values.items():
            if key not in allowed:
                moved = getattr(cls, "RENAMED", {}).get(key)
                if moved is not None:
                    raise ConfigError(f"{source}: '{name}.{key}' is now {moved}")
                raise ConfigError(
                    f"{source}: unknown key '{name}.{key}'; allowed keys in '{name}': {allowed}"
                )
            coerced[key] = _coerce(f"{name}.{key}", value, hints[key])
        sections[name] = cls(**coerced)
    config = schema(**sections)
    config.check()
    return config


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Apply ``section.key=value`` overrides (values parsed as YAML) to raw config data."""
    # Sections that are not mappings are left for from_dict to name.
    data = {k: dict(v) if isinstance(v, dict) else v for k, v in (data or {}).items()}
    for item in overrides:
        path, sep, text = item.partition("=")
        section, dot, key = path.partition(".")
        if not sep or not dot or not key:
            raise ConfigError(f"--set {item!r}: expected section.key=value, e.g. ppo.n_epochs=8")
        try:
            value = _parse_yaml(text)
        except (yaml.YAMLError, ValueError, RecursionError) as error:
            problem = one_line(str(error))
            if isinstance(error, ValueError):  # an integer of more digits than int() reads
                problem = problem.split(";")[0]
            elif isinstance(error, RecursionError):
                problem = "nested too deeply"
            raise ConfigError(
                f"--set {item[:80]!r}: the value is not valid YAML ({problem})"
            ) from None
        if nesting_depth(value) > MAX_DEPTH:
            raise ConfigError(f"--set {item[:80]!r}: the value nests deeper than {MAX_DEPTH}")
        target = data.setdefault(section, {})
        if target is None:
            target = data[section] = {}
        if not isinstance(target, dict):
            raise ConfigError(f"--set {item!r}: section {section!r} is not a mapping")
        target[key] = value
    return data


def load_config(
    path: str | pathlib.Path, overrides: list[str] | None = None, schema: Any = None
) -> Any:
    """Load a YAML config (a file, or a shipped config's name: ``resolve_config``), apply
    overrides and check everything."""
    data, path = _read_yaml(path)
    if data is not None and not isinstance(data, dict):
        raise ConfigError(f"{path}: a config is a mapping of sections")
    data = apply_overrides(data or {}, overrides or [])
    _check_algorithm(data, schema or TrainConfig, str(path))
    _check_override_keys(overrides or [], schema or TrainConfig)
    try:
        return from_dict(data, str(path), schema)
    except ConfigError as error:  # a value's own message: say which file (and --set) gave it
        if str(error).startswith(f"{path}:"):
            raise
        where = f"{path} with --set {' '.join(overrides)}" if overrides else str(path)
        raise ConfigError(f"{where}: {error}") from None


def dump_config(config: Any) -> str:
    """YAML text of a config, floats with a dot and a signed exponent where small or large."""

    class Dumper(yaml.SafeDumper):
        pass

    def represent_float(dumper: yaml.SafeDumper, value: float) -> yaml.Node:
        text = repr(value)
        if "e" in text or "E" in text:
            mantissa, exponent = f"{value:.6e}".split("e")
            mantissa = mantissa.rstrip("0")
            mantissa += "0" if mantissa.endswith(".") else ""
            text = f"{mantissa}e{exponent[0]}{exponent[1:].lstrip('0') or '0'}"
        return dumper.represent_scalar("tag:yaml.org,2002:float", text)

    Dumper.add_representer(float, represent_float)
    data = dataclasses.asdict(config)
    algorithm = getattr(config, "ALGORITHM", None)
    if algorithm is not None:
        data = {"algorithm": algorithm, **data}
    return yaml.dump(data, Dumper=Dumper, sort_keys=False)
