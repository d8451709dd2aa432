"""Search distillation: a policy network trained to imitate a search.

Self-play with PPO learns slowly against a search that sees thousands of
continuations per move. Distillation (one generation of expert iteration,
``jekyll_hyde_train.expert_iteration.loop``) instead asks the search what to do: the teacher
(ISMCTS, ``ismcts:N``, or network-guided search, ``az:N,policy=...``) plays
both roles, and at every decision with a choice the root's visit counts,
normalised, become the policy target of the acting role's network and the
game's outcome its value target. The network then plays alone, as fast as any
PPO policy, and is saved in the same policy format, value head included.

A run folder holds::

    distill.json        the settings (a rerun with another teacher, seed or
                        shard size is refused)
    data/shard_*.npz    the labelled decisions, ``games_per_shard`` games each
    fit.json            the fit's losses and agreement with the teacher
    policy/             the exported policy (``policy.json``, ``policy.npz``)

The fit is ``jekyll_hyde_train.expert_iteration.fit``; this module labels the games and needs no
torch. Generation writes each shard atomically and skips shards already on
disk, so an interrupted run continues where it stopped and loses at most one
shard per worker.
"""

from __future__ import annotations

import contextlib
import io
import json
import pathlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import cast

import numpy as np

from jekyll_hyde_agents import Agent, AZAgent, ISMCTSAgent, make_agent
from jekyll_hyde_agents.policy_arrays import load_npz, read_npz_headers
from jekyll_hyde_agents.self_play import MAX_DECISIONS, label_game_in_core, runs_in_core
from jekyll_hyde_env.engine.cards import HYDE, JEKYLL, NUM_ACTIONS
from jekyll_hyde_env.engine.information import player_view
from jekyll_hyde_env.engine.rules import apply_action, is_terminal, legal_actions, new_game
from jekyll_hyde_env.engine.variant import FULL, Variant
from jekyll_hyde_env.observation import OBS_SIZE, encode
from jekyll_hyde_train.common.files import (
    atomic_write_bytes,
    atomic_write_text,
    one_line,
)
from jekyll_hyde_train.expert_iteration.executors import Executor, LocalExecutor
from jekyll_hyde_train.expert_iteration.settings import (
    GENERATION_KEYS,
    SETTINGS_FILE,
    DistillSettings,
    read_settings,
    recorded,
)
from jekyll_hyde_train.expert_iteration.teacher import (
    ShippedTeacher,
    build_teacher,
    ship_teacher,
    unpack_teacher,
)

DATA_FOLDER = "data"
LABEL_KEYS = ("obs", "mask", "target", "role", "outcome", "search_value")


# --- generation --------------------------------------------------------------


@dataclass(frozen=True)
class RootStatistics:
    """What one search of the teacher says about a decision.

    Attributes:
        visits: the visit count of each of the 28 actions at the root.
        value: the search's value of the position for the player to act (its
            mean outcome over the simulations, in [-1, 1]).
        priors: the network's policy at the root (``az`` teachers), else None.
        target: the policy target: the root's visit shares, or the improved
            policy of an ``az`` teacher with Gumbel root selection.
        choice: the move of Gumbel root selection, else None.
    """

    visits: np.ndarray
    value: float
    priors: np.ndarray | None
    target: np.ndarray | None = None
    choice: int | None = None

    def move(self, legal: list[int], network_moves: bool = False) -> int:
        """The search's choice (Gumbel's move, else most visits), or with
        ``network_moves`` the network's (highest prior): the move the network
        alone would play.

        Args:
            legal: the legal action ids of the decision.
            network_moves: play the network's move instead of the search's (an ``az``
                teacher only).

        Returns:
            The action id: with ``network_moves`` the legal action of highest prior;
            otherwise Gumbel's choice when there is one, else the legal action with
            the most visits (ties to the lowest id).

        Raises:
            ValueError: ``network_moves`` without the network's priors (an ISMCTS
                teacher).
        """
        if network_moves:
            priors = self.priors
            if priors is None:
                raise ValueError("network moves need a network-guided teacher (az:...)")
            return max(legal, key=lambda a: (priors[a], -a))
        if self.choice is not None:
            return self.choice
        return max(legal, key=lambda a: (self.visits[a], -a))


def root_statistics(teacher: ISMCTSAgent | AZAgent, view) -> RootStatistics:
    """The root statistics of the teacher's search from ``view``.

    Args:
        teacher: the search agent: ISMCTS, or network-guided search (``az``).
        view: what the player to act knows (``player_view``).

    Returns:
        The root's visits, value for the player to act (in [-1, 1]), priors (``az``
        only), policy target (the visit shares, or an ``az`` teacher's improved policy)
        and Gumbel's choice (else None).
    """
    visits = np.zeros(NUM_ACTIONS, dtype=np.float32)
    priors = target = choice = None
    if isinstance(teacher, AZAgent):
        result = teacher.search(view)
        visits[:] = result.visits
        wins = float(result.values.sum())
        priors, target, choice = result.priors, result.policy, result.choice
    else:
        wins = 0.0
        for candidate, child in teacher.search(view).children.items():
            visits[candidate] = child.visits
            wins += child.wins
    value = 2.0 * wins / max(float(visits.sum()), 1.0) - 1.0
    if target is None:  # ISMCTS: the visit shares
        target = visits / visits.sum()
    return RootStatistics(visits, value, priors, target, choice)


def label_game(
    teacher: ISMCTSAgent | AZAgent,
    deal_seed: int,
    network_moves: bool = False,
    full_search_share: float = 1.0,
    fast_simulations: int = 0,
    in_core: bool = True,
    opponent: Agent | None = None,
    opponent_seat: int = HYDE,
    variant: Variant = FULL,
) -> dict[str, np.ndarray]:
    """One self-play game of ``teacher``, labelled at every decision with a choice.

    The teacher's search picks each move (its most visited action, or with
    Gumbel root selection the action it chose), or with
    ``network_moves`` (an ``az`` teacher only) its network does: the root's most
    likely legal action by the priors, the move the network alone would play.
    With ``full_search_share`` below 1 (an ``az`` teacher only), each decision
    is searched fully with that probability and kept, else searched with
    ``fast_simulations`` and not kept; the draws come from ``deal_seed``.

    Returns arrays with one row per labelled decision: ``obs`` (int8
    observation of the acting player), ``mask`` (bool, legal actions),
    ``target`` (float32, the root visit share of each action, or an ``az``
    teacher's improved policy with Gumbel root selection), ``role`` (0
    Jekyll, 1 Hyde), ``outcome`` (+1 when the acting player went on to win
    the game, -1 otherwise) and ``search_value`` (float32, the search's value
    of the position for the acting player, in [-1, 1]).

    With an ``opponent``, it plays ``opponent_seat`` (its decisions are not
    labelled) and the teacher the other seat; such games run in this loop, since
    the C labelling plays the teacher in both seats.

    With ``in_core`` and a teacher whose search runs in C, the whole game runs
    there (``jekyll_hyde_agents.self_play``): the same game and labels (the search's value
    to float32 rounding), without the Python engine's work between searches.
    This loop is its reference.

    Args:
        teacher: the search agent that plays and labels: ISMCTS or ``az``.
        deal_seed: seeds the deal and the draws of the playout cap.
        network_moves: the teacher's network plays the moves (an ``az`` teacher only).
        full_search_share: the share of decisions searched fully and kept, in (0, 1].
        fast_simulations: the simulations of the other decisions' searches (when
            ``full_search_share`` is below 1).
        in_core: run the game in C when the teacher's search does and there is no
            ``opponent``.
        opponent: an agent playing ``opponent_seat``, never labelled; None for
            self-play.
        opponent_seat: the opponent's seat: 0 for Jekyll, 1 for Hyde (the default).
        variant: the version of the game the deal is of (RULES.md V1-V7); the C
            labelling reads it from the state.

    Returns:
        The arrays by name (``LABEL_KEYS``), one row per labelled decision.

    Raises:
        ValueError: ``network_moves`` with a teacher that is not network-guided.
    """
    if network_moves and not isinstance(teacher, AZAgent):
        raise ValueError("network moves need a network-guided teacher (az:...)")
    state = new_game(np.random.default_rng(deal_seed), variant=variant)
    capped = np.random.default_rng([deal_seed, 1])  # which decisions are searched fully
    if in_core and opponent is None and runs_in_core(teacher):
        uniforms = capped.random(MAX_DECISIONS) if full_search_share < 1 else np.empty(0)
        labels, winner = label_game_in_core(
            teacher, state, network_moves, full_search_share, fast_simulations, uniforms
        )
        labels["outcome"] = np.where(labels["role"] == winner, 1, -1).astype(np.int8)
        return {key: labels[key] for key in LABEL_KEYS}
    rows: list[tuple[np.ndarray, np.ndarray, np.ndarray, int, float]] = []
    while not is_terminal(state):
        player = state.to_act
        legal = legal_actions(state)
        view = player_view(state, player)
        if len(legal) == 1:
            action = legal[0]
        elif opponent is not None and player == opponent_seat:
            action = opponent.act(view, legal)
        elif full_search_share < 1 and capped.random() >= full_search_share:
            # only a network-guided teacher takes a share below 1 (DistillSettings)
            fast = cast(AZAgent, teacher).search(view, simulations=fast_simulations)
            action = RootStatistics(fast.visits, 0.0, fast.priors, None, fast.choice).move(
                legal, network_moves
            )
        else:
            root = root_statistics(teacher, view)
            mask = np.zeros(NUM_ACTIONS, dtype=bool)
            mask[legal] = True
            assert root.target is not None  # root_statistics always sets it
            rows.append((encode(view), mask, root.target, player, root.value))
            action = root.move(legal, network_moves)
        apply_action(state, action)
    roles = np.array([row[3] for row in rows], dtype=np.uint8)
    return {
        "obs": np.array([row[0] for row in rows], dtype=np.int8).reshape(-1, OBS_SIZE),
        "mask": np.array([row[1] for row in rows], dtype=bool).reshape(-1, NUM_ACTIONS),
        "target": np.array([row[2] for row in rows], dtype=np.float32).reshape(-1, NUM_ACTIONS),
        "role": roles,
        "outcome": np.where(roles == state.winner, 1, -1).astype(np.int8),
        "search_value": np.array([row[4] for row in rows], dtype=np.float32),
    }


def _shard_path(run_dir: pathlib.Path, index: int) -> pathlib.Path:
    return run_dir / DATA_FOLDER / f"shard_{index:05d}.npz"


def _shard_seeds(settings: DistillSettings, index: int) -> Iterator[tuple[int, int, bool]]:
    """(deal seed, search seed, whether the network plays the moves) of each game of
    shard ``index``, from the settings alone."""
    first = index * settings.games_per_shard
    for game in range(first, min(first + settings.games_per_shard, settings.games)):
        deal, search = np.random.SeedSequence([settings.seed, game]).generate_state(2)
        # spread evenly: game g is the network's when (g + 1) * share passes a whole number
        share = settings.network_play
        network_moves = int((game + 1) * share) > int(game * share)
        yield int(deal), int(search), network_moves


def write_shard(run_dir: pathlib.Path, settings: DistillSettings, index: int) -> int:
    """Label the games of shard ``index`` and write them atomically; returns its decisions.

    Args:
        run_dir: the run's folder; the shard goes in its ``data/``.
        settings: the labelling settings.
        index: the shard's index, from 0.

    Returns:
        The decisions (rows) the shard holds.
    """
    arrays = label_shard(settings, index)
    atomic_write_bytes(_shard_path(run_dir, index), shard_bytes(arrays))
    return len(arrays["role"])


def label_shard(
    settings: DistillSettings, index: int, teacher: ISMCTSAgent | AZAgent | None = None
) -> dict[str, np.ndarray]:
    """The arrays of shard ``index``: its games labelled (``label_game``) and their count.

    ``teacher`` is the settings' teacher, made anew when not given; each game
    resets its seed, so one teacher may label any number of shards.

    Args:
        settings: the labelling settings (teacher, seed, games per shard, ...).
        index: the shard's index, from 0; its games and seeds follow from it.
        teacher: the settings' teacher already built; None builds it.

    Returns:
        The games' ``label_game`` arrays concatenated, and ``games``: how many games
        the shard holds (a 0-d array).
    """
    teacher = teacher or build_teacher(settings.teacher)
    opponent = make_agent(settings.opponent) if settings.opponent is not None else None
    games = []
    first = index * settings.games_per_shard
    for game, (deal_seed, search_seed, network_moves) in enumerate(
        _shard_seeds(settings, index), start=first
    ):
        teacher.reset(search_seed)
        if opponent is not None:
            opponent.reset(search_seed + 1)
        games.append(
            label_game(
                teacher,
                deal_seed,
                network_moves,
                settings.full_search_share,
                settings.fast_simulations,
                opponent=opponent,
                opponent_seat=HYDE if game % 2 == 0 else JEKYLL,
                variant=settings.game_variant,
            )
        )
    arrays = {key: np.concatenate([game[key] for game in games]) for key in games[0]}
    arrays["games"] = np.array(len(games))
    return arrays


def shard_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    """A shard's file contents: its arrays, compressed (``read_shard`` reads them).

    Args:
        arrays: the shard's arrays by name (``label_shard``'s).

    Returns:
        The bytes of a compressed ``.npz`` file.
    """
    buffer = io.BytesIO()
    # numpy's stubs: mypy matches **arrays to the allow_pickle: bool keyword too
    np.savez_compressed(buffer, **arrays)  # type: ignore[arg-type]
    return buffer.getvalue()


@dataclass(frozen=True)
class ShardJob:
    """One shard to label: a job of ``generate``'s executor."""

    settings: DistillSettings
    index: int

    def describe(self) -> str:
        """Name the job in an executor's messages.

        Returns:
            ``shard <index>``.
        """
        return f"shard {self.index}"


def label_shard_job(shipped: ShippedTeacher, job: ShardJob) -> tuple[int, bytes, int]:
    """Label a shard with the shipped teacher: (its index, its file's bytes, its decisions).

    Runs in a worker, which reads no file of the run.

    Args:
        shipped: the teacher with its policy's files (``ship_teacher``).
        job: the shard to label.

    Returns:
        index: the shard's index.
        data: the shard file's bytes (``shard_bytes``).
        decisions: the decisions it holds.
    """
    arrays = label_shard(job.settings, job.index, unpack_teacher(shipped))
    return job.index, shard_bytes(arrays), len(arrays["role"])


def _shard_complete(run_dir: pathlib.Path, settings: DistillSettings, index: int) -> bool:
    """Whether shard ``index`` is on disk with all its games (the last one may have grown)."""
    path = _shard_path(run_dir, index)
    if not path.exists():
        return False
    try:
        games = int(read_shard(path)["games"])
    except ValueError:
        return False  # unreadable: label its games again
    return games == len(list(_shard_seeds(settings, index)))


SHARD_WHAT = "a shard of labelled decisions (.npz)"
# Each shard array: the dtype kinds it may have and its shape (None: the decisions).
SHARD_ARRAYS = {
    "obs": ("biuf", (None, OBS_SIZE)),
    "mask": ("b", (None, NUM_ACTIONS)),
    "target": ("f", (None, NUM_ACTIONS)),
    "role": ("iu", (None,)),
    "outcome": ("i", (None,)),
    "search_value": ("f", (None,)),
    "games": ("iu", ()),
}


def read_shard(path: pathlib.Path) -> dict[str, np.ndarray]:
    """The arrays of one shard, checked; never unpickles.

    The array headers are checked before anything is loaded (names, dtypes,
    shapes, one row count), then the values: roles 0 or 1, outcomes +-1,
    finite targets and search values.

    Args:
        path: the shard file (``data/shard_NNNNN.npz``).

    Returns:
        The arrays by name (``SHARD_ARRAYS``); a shard labelled before search values
        were kept gets its outcomes as ``search_value``.

    Raises:
        ValueError: the file is unreadable or not a shard, naming it and what is wrong.
    """
    again = "delete it and rerun without --fit-only to label its games again"
    try:
        headers = read_npz_headers(path)
        _check_shard_headers(path, headers)
        arrays = load_npz(path, list(headers))
    except ValueError as error:
        problem = one_line(str(error)).removeprefix(f"{path}: ")
        raise ValueError(f"{path}: not a readable shard ({problem}); {again}") from None
    if "search_value" not in arrays:  # labelled before it was kept
        arrays["search_value"] = arrays["outcome"].astype(np.float32)
    if (
        not np.isin(arrays["role"], (0, 1)).all()
        or not np.isin(arrays["outcome"], (-1, 1)).all()
        or not np.isfinite(arrays["target"]).all()
        or not np.isfinite(arrays["search_value"]).all()
        or int(arrays["games"]) < 0
    ):
        raise ValueError(
            f"{path}: corrupt: roles must be 0 or 1, outcomes -1 or 1, targets and values "
            f"finite, games >= 0; {again}"
        )
    return arrays


def _check_shard_headers(path: pathlib.Path, headers: dict) -> None:
    unknown = [name for name in headers if name not in SHARD_ARRAYS]
    if unknown:
        raise ValueError(f"{path}: not {SHARD_WHAT}: unknown arrays {unknown[:5]}")
    optional = ("search_value",)
    missing = [key for key in SHARD_ARRAYS if key not in headers and key not in optional]
    if missing:
        raise ValueError(f"{path}: not a shard of this version, it lacks {missing}")
    rows = headers["role"].shape[:1]
    for name, header in headers.items():
        kinds, shape = SHARD_ARRAYS[name]
        expected = tuple(rows[0] if n is None and rows else n for n in shape)
        if header.dtype.kind not in kinds or header.shape != expected:
            raise ValueError(
                f"{path}: corrupt: {name!r} is {header.dtype} of shape {header.shape}, "
                f"expected shape {expected} of kind {kinds!r}"
            )


def prepare_run(run_dir: pathlib.Path, settings: DistillSettings) -> None:
    """Create the run folder, or check that its data came from the same teacher and seeds.

    A rerun may ask for more games (the first games keep their seeds) or
    another fit, but not for another teacher, seed, shard size or variant: the
    shards on disk would then mix two datasets.

    Args:
        run_dir: the run's folder; it and its ``data/`` are made when missing.
        settings: the settings, written to ``distill.json``.

    Raises:
        ValueError: the folder's ``distill.json`` names another teacher, seed, shard
            size or variant (``GENERATION_KEYS``), or cannot be read.
    """
    path = run_dir / SETTINGS_FILE
    wanted = settings.to_json()
    if path.exists():
        saved = read_settings(path)
        differing = [k for k in GENERATION_KEYS if recorded(saved, k) != recorded(wanted, k)]
        if differing:
            raise ValueError(
                f"{run_dir} holds data made with other settings: "
                + ", ".join(
                    f"{k} {recorded(saved, k)!r} (given {recorded(wanted, k)!r})" for k in differing
                )
                + "; use another --run-dir"
            )
    (run_dir / DATA_FOLDER).mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(wanted, indent=2))


def generate(
    run_dir: pathlib.Path,
    settings: DistillSettings,
    workers: int = 2,
    report: Callable[[int, int, int], None] | None = None,
    executor: Executor | None = None,
) -> int:
    """Write every missing shard; returns the shards written.

    The shards are labelled by ``executor`` (``jekyll_hyde_train.expert_iteration.executors``: a
    local pool
    or a Ray cluster; by default a local pool of ``workers`` processes), which
    receives the teacher once (``ship_teacher``) and hands back each shard's
    bytes; they are written here, each atomically, as they come.
    ``report(done, total, decisions)`` is called after each shard.

    Args:
        run_dir: the run's folder (``prepare_run`` makes or checks it).
        settings: the labelling settings.
        workers: processes of the local pool made when ``executor`` is None.
        report: called after each shard written with the shards done (those on
            disk before included), the shards in all and the shard's decisions;
            None for none.
        executor: where the shards are labelled; None for a local pool of
            ``workers`` processes, closed at the end.

    Returns:
        The shards written: 0 when all were already on disk.

    Raises:
        ValueError: the folder holds data made with other settings (``prepare_run``).
    """
    prepare_run(run_dir, settings)
    missing = [i for i in range(settings.shards) if not _shard_complete(run_dir, settings, i)]
    done = settings.shards - len(missing)
    if not missing:
        return 0
    jobs = [ShardJob(settings, i) for i in missing]
    shipped = ship_teacher(settings.teacher)
    with contextlib.ExitStack() as stack:
        if executor is None:
            executor = stack.enter_context(LocalExecutor(workers))
        results = executor.map_shards(label_shard_job, jobs, shipped)
        stack.callback(getattr(results, "close", lambda: None))  # stop what is still running
        for index, data, decisions in results:
            atomic_write_bytes(_shard_path(run_dir, index), data)
            done += 1
            if report is not None:
                report(done, settings.shards, decisions)
    return len(missing)


def load_data(
    run_dir: pathlib.Path, more: list[pathlib.Path] | None = None
) -> tuple[dict[str, np.ndarray], np.ndarray, int]:
    """Every shard of the run (and of the runs in ``more``, expert iteration's
    replay window), concatenated.

    Args:
        run_dir: the run's folder, whose ``data/`` holds shards.
        more: other runs' folders whose shards are added; None for none.

    Returns:
        (the arrays of ``label_game``, the shard of each row, the games). Rows of
        ``run_dir`` have their shard index; rows of ``more`` have -1, so that
        only the run's own shards are ever held out for validation.

    Raises:
        FileNotFoundError: ``run_dir`` holds no shard.
        ValueError: a shard that is unreadable or corrupt (``read_shard``).
    """
    paths = sorted((run_dir / DATA_FOLDER).glob("shard_*.npz"))
    if not paths:
        raise FileNotFoundError(f"{run_dir / DATA_FOLDER} holds no shards; generate them first")
    extra = [p for folder in more or [] for p in sorted((folder / DATA_FOLDER).glob("shard_*.npz"))]
    parts, shards, games = [], [], 0
    for path in [*paths, *extra]:
        parts.append(read_shard(path))
        games += int(parts[-1]["games"])
        index = int(path.stem.split("_")[1]) if path in paths else -1
        shards.append(np.full(len(parts[-1]["role"]), index))
    data = {key: np.concatenate([part[key] for part in parts]) for key in LABEL_KEYS}
    return data, np.concatenate(shards), games
