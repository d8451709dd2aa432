"""The fit of a distillation run or generation: one policy-and-value network per role,
or one for both (``shared_policy``: the role is in the observation).

Each role's network is a trunk of hidden layers with two heads: the 28 action
logits, trained by cross-entropy against the teacher's root visit shares,
and a value in [-1, 1] (tanh), trained by squared error, weighted by
``value_loss_weight``, against the mean of the game's outcome for the acting
player and the search's value of the position. The outcome alone is a noisy
target here (hidden cards decide many games), on which the value head learned
its training games by heart (training error 0.07, held-out 1.16, above the
1.0 of always answering 0); the search's value averages over many worlds. The best
epoch by held-out loss is exported in the policy format (value head
included), which every agent loader and the search in C read.

The fit saves its progress after every epoch (``fit_state.pt``, replaced
atomically), so a fit killed even with ``kill -9`` resumes losing at most one
epoch. Kept apart from ``jekyll_hyde_train.expert_iteration.distill`` so that labelling games, and
every
other ``jekyll-hyde`` command, runs without importing torch.
"""

from __future__ import annotations

import contextlib
import io
import json
import pathlib
import time
from collections.abc import Callable, Iterator, Sequence

import numpy as np
import torch

from jekyll_hyde_agents.policy_file import read_policy, save_policy
from jekyll_hyde_agents.policy_format import provenance
from jekyll_hyde_env.engine.cards import AGENTS, NUM_ACTIONS
from jekyll_hyde_env.observation import OBS_SIZE
from jekyll_hyde_train.common.files import atomic_write_bytes, atomic_write_text, replace_folder
from jekyll_hyde_train.expert_iteration.distill import DATA_FOLDER, load_data, prepare_run
from jekyll_hyde_train.expert_iteration.settings import DistillSettings, with_defaults
from jekyll_hyde_train.expert_iteration.teacher import teacher_label

FIT_FILE = "fit.json"
FIT_STATE_FILE = "fit_state.pt"


class PolicyValueNet(torch.nn.Module):
    """Hidden layers, then a policy head (28 logits) and a value head (tanh of one output)."""

    def __init__(self, hidden: Sequence[int], activation: str):
        super().__init__()
        act = torch.nn.Tanh if activation == "tanh" else torch.nn.ReLU
        layers: list[torch.nn.Module] = []
        size = OBS_SIZE
        for width in hidden:
            layers += [torch.nn.Linear(size, width), act()]
            size = width
        self.trunk = torch.nn.Sequential(*layers)
        self.policy = torch.nn.Linear(size, NUM_ACTIONS)
        self.value = torch.nn.Linear(size, 1)

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.trunk(obs)
        return self.policy(h), torch.tanh(self.value(h)).squeeze(-1)

    def export(self) -> tuple[list[tuple[np.ndarray, np.ndarray]], tuple[np.ndarray, np.ndarray]]:
        """(layers as (weight, bias) numpy arrays, value head (weight, bias))."""
        linear = [m for m in self.trunk if isinstance(m, torch.nn.Linear)] + [self.policy]
        layers = [(_array(m.weight), _array(m.bias)) for m in linear]
        return layers, (_array(self.value.weight).reshape(-1), _array(self.value.bias))

    def load(self, layers: list, head: tuple[np.ndarray, np.ndarray] | None) -> None:
        """Start from saved weights of the same shape (expert iteration's warm start)."""
        linear = [m for m in self.trunk if isinstance(m, torch.nn.Linear)] + [self.policy]
        if [tuple(m.weight.shape) for m in linear] != [tuple(w.shape) for w, _ in layers]:
            raise ValueError(
                "the saved policy's layers "
                f"{[tuple(w.shape) for w, _ in layers]} differ from this network's "
                f"{[tuple(m.weight.shape) for m in linear]}"
            )
        with torch.no_grad():
            for module, (weight, bias) in zip(linear, layers, strict=True):
                module.weight.copy_(torch.from_numpy(np.asarray(weight, np.float32)))
                module.bias.copy_(torch.from_numpy(np.asarray(bias, np.float32)))
            if head is not None:
                self.value.weight.copy_(torch.from_numpy(head[0].reshape(1, -1)))
                self.value.bias.copy_(torch.from_numpy(head[1].reshape(1)))


def _array(tensor: torch.Tensor) -> np.ndarray:
    return tensor.detach().numpy().copy()


def _losses(
    network: PolicyValueNet,
    batch: tuple[torch.Tensor, ...],
    value_weight: float,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """(total loss, policy cross-entropy, value squared error, argmax agreement)."""
    obs, mask, target, outcome = batch
    logits, value = network(obs)
    logits = logits.masked_fill(~mask, -1e9)
    policy = -(target * torch.log_softmax(logits, dim=-1)).sum(dim=-1).mean()
    squared = ((value - outcome) ** 2).mean()
    agree = (logits.argmax(dim=-1) == target.argmax(dim=-1)).float().mean()
    return policy + value_weight * squared, policy, squared, agree


def flushing_denormals_now() -> bool:
    """Whether this thread's float math flushes denormal numbers to zero.

    Torch has no getter, so this asks the arithmetic: a denormal times one
    stays itself unless flushing is on.
    """
    return bool((torch.tensor([1e-39]) * 1.0).item() == 0.0)


@contextlib.contextmanager
def flushing_denormals() -> Iterator[None]:
    """Flush denormal floats to zero inside the block; restore the previous mode after.

    As a fit goes on, more of the wide network's weight updates and Adam
    moments fall below float32's normal range, where x86 arithmetic is slow:
    a 1024x1024 fit went from 6.7 to 10-12 ms a step after 500 steps, and
    stayed at 7-8 ms with flushing, which left ``make train``'s weights the
    same bit for bit. The mode is per thread and also governs the C search's
    float math, hence restored, whatever ends the block. Where the CPU has no
    such mode, torch leaves the arithmetic as it is.
    """
    before = flushing_denormals_now()
    torch.set_flush_denormal(True)
    try:
        yield
    finally:
        torch.set_flush_denormal(before)


@flushing_denormals()
def fit(
    run_dir: pathlib.Path,
    settings: DistillSettings,
    report: Callable[[dict], None] | None = None,
    threads: int = 1,
    more_data: list[pathlib.Path] | None = None,
    init_from: pathlib.Path | None = None,
    extra: dict | None = None,
) -> dict:
    """Train one network per role on the run's shards and export the policy.

    The whole fit runs with denormal floats flushed to zero (``flushing_denormals``).

    Args:
        run_dir: the run (or generation) folder; its shards are the data and
            the last ``validation_share`` of them is held out.
        settings: the network and the fit.
        report: called with each epoch's row of measures.
        threads: torch's threads; one by default, as threads that wait on
            cores busy with other work (labelling, say) made a fit five
            times slower here.
        more_data: other run folders whose shards also train (expert
            iteration's replay window); never held out.
        init_from: a saved policy of the same shape to start from (expert
            iteration's previous generation, or the policy its run starts
            from), instead of random weights.
        extra: more metadata for the exported policy.

    Returns:
        What ``fit.json`` holds. The weights of the epoch with the lowest
        held-out loss are exported to ``run_dir/policy``.
    """
    if threads < 1:
        raise ValueError(f"threads must be >= 1, got {threads}")
    torch.set_num_threads(threads)
    prepare_run(run_dir, settings)
    data, shard, games = load_data(run_dir, more_data)
    is_validation = _held_out_rows(shard, settings.validation_share)
    initial = read_policy(init_from) if init_from is not None else None
    progress = _FitProgress.load(run_dir, settings)
    history = progress.history
    started = time.perf_counter() - progress.seconds
    for role, name in enumerate(_networks(settings)):
        if name in progress.best and progress.role > role:
            continue
        rows = data["role"] == role if name in AGENTS else np.ones(len(shard), dtype=bool)
        train = _tensors(data, rows & ~is_validation)
        if len(train[0]) == 0:
            raise ValueError(f"no {name} decisions to train on in {run_dir / DATA_FOLDER}")
        validation = _tensors(data, rows & is_validation)
        torch.manual_seed(settings.seed * 2 + role)  # each role's start, whatever ran before
        network = PolicyValueNet(settings.hidden, settings.activation)
        if initial is not None:  # a shared network starts from Jekyll's
            group = initial.metadata["roles"][name if name in AGENTS else AGENTS[0]]
            network.load(initial.groups[group], initial.values[group])
        for row, layers in _train_role(settings, network, train, validation, progress, role):
            row = {"role": name, **row}
            history.append(row)
            if layers is not None:
                progress.best[name] = layers
            progress.seconds = time.perf_counter() - started
            progress.save(run_dir)  # before anything else can interrupt
            if report is not None:
                report(row)
    summary = {
        "games": games,
        "decisions": int(len(shard)),
        "validation_decisions": int(is_validation.sum()),
        "seconds": time.perf_counter() - started,
        "settings": settings.to_json(),
        "history": history,
    }
    export(run_dir, settings, progress.best, summary, extra)
    atomic_write_text(run_dir / FIT_FILE, json.dumps(summary, indent=2))
    (run_dir / FIT_STATE_FILE).unlink(missing_ok=True)
    return summary


SHARED = "shared"  # the weight group of a network fit on both roles' decisions


def _networks(settings: DistillSettings) -> tuple[str, ...]:
    """The networks a fit trains, in order: one per role, or the shared one."""
    return (SHARED,) if settings.shared_policy else tuple(AGENTS)


def _plain(value: object) -> object:
    """A numpy scalar as the Python number it holds (what ``weights_only`` reads back)."""
    return value.item() if isinstance(value, np.generic) else value


class _FitProgress:
    """What a fit has done so far: saved after every epoch, read back on resume.

    ``role`` and ``epoch`` say where to continue; ``state`` holds the network,
    optimiser and schedule of the role in progress; ``best`` the best layers
    of each role so far (with its score in ``best_score``).
    """

    def __init__(self, settings: DistillSettings):
        self.settings = settings.to_json()
        self.role = 0
        self.epoch = 0
        self.state: dict | None = None
        self.best: dict[str, tuple] = {}
        self.best_score = float("inf")
        self.history: list[dict] = []
        self.seconds = 0.0
        self.rng = np.random.default_rng(settings.seed)

    @classmethod
    def load(cls, run_dir: pathlib.Path, settings: DistillSettings) -> _FitProgress:
        progress = cls(settings)
        path = run_dir / FIT_STATE_FILE
        if not path.exists():
            return progress
        try:
            # weights_only: the file holds tensors and plain values only, so a damaged or
            # hostile file cannot run code when a fit resumes.
            saved = torch.load(path, weights_only=True)
            if not isinstance(saved, dict) or set(saved) != set(progress.__dict__):
                raise ValueError("not a fit's state")
            if with_defaults(saved["settings"]) != progress.settings:
                return progress  # another fit's state: not this one's to continue
            saved["best"] = {
                name: (
                    [(w.numpy(), b.numpy()) for w, b in layers],
                    tuple(part.numpy() for part in head),
                )
                for name, (layers, head) in saved["best"].items()
            }
            rng = np.random.default_rng()
            rng.bit_generator.state = saved["rng"]
            saved["rng"] = rng
        except Exception:  # a file cut short by a crash, or not a fit's: start the fit again
            return progress
        progress.__dict__.update(saved)
        return progress

    def save(self, run_dir: pathlib.Path) -> None:
        """Write the progress as tensors and plain values (what ``load`` accepts)."""
        saved = dict(self.__dict__)
        saved["best"] = {
            name: (
                [(torch.from_numpy(w), torch.from_numpy(b)) for w, b in layers],
                tuple(torch.from_numpy(part) for part in head),
            )
            for name, (layers, head) in self.best.items()
        }
        saved["rng"] = self.rng.bit_generator.state
        saved["best_score"] = float(self.best_score)
        saved["history"] = [
            {key: _plain(value) for key, value in row.items()} for row in self.history
        ]
        buffer = io.BytesIO()
        torch.save(saved, buffer)
        atomic_write_bytes(run_dir / FIT_STATE_FILE, buffer.getvalue())


def _held_out_rows(shard: np.ndarray, share: float) -> np.ndarray:
    """Rows of the last ``share`` of the run's own shards (at least one, never all, if share > 0).

    Rows from other runs (shard -1) are never held out.
    """
    present = np.unique(shard[shard >= 0])
    held_out = round(len(present) * share)
    if share and len(present) > 1:
        held_out = min(max(held_out, 1), len(present) - 1)
    return np.isin(shard, present[len(present) - held_out :] if held_out else present[:0])


def _train_role(
    settings: DistillSettings,
    network: PolicyValueNet,
    train: tuple[torch.Tensor, ...],
    validation: tuple[torch.Tensor, ...],
    progress: _FitProgress,
    role: int,
) -> Iterator[tuple[dict, tuple | None]]:
    """Fit one network; yields each epoch's measures, with (layers, value head) when best.

    The best epoch has the lowest held-out loss (the training loss when
    nothing is held out). ``progress`` is advanced after every epoch, and a
    fit that stopped mid-role continues from its last finished epoch.
    """
    # The fused kernel does AdamW's arithmetic in one pass over each tensor:
    # timed in turn with the default kernel, it stepped a 1024x1024 network
    # 1.6 times faster (README, Training).
    optimiser = torch.optim.AdamW(
        network.parameters(),
        lr=settings.learning_rate,
        weight_decay=settings.weight_decay,
        fused=True,
    )
    size = len(train[0])
    schedule = _schedule(settings, optimiser, -(-size // settings.batch_size))
    if progress.role == role and progress.state is not None:
        network.load_state_dict(progress.state["network"])
        optimiser.load_state_dict(progress.state["optimiser"])
        schedule.load_state_dict(progress.state["schedule"])
    else:
        progress.role, progress.epoch, progress.best_score = role, 0, float("inf")
    weight = settings.value_loss_weight
    rng = progress.rng
    for epoch in range(progress.epoch + 1, settings.epochs + 1):
        network.train()
        order = torch.from_numpy(rng.permutation(size))
        totals = np.zeros(3)
        for start in range(0, size, settings.batch_size):
            batch = order[start : start + settings.batch_size]
            loss, policy, squared, _ = _losses(network, tuple(t[batch] for t in train), weight)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
            totals += np.array([loss.item(), policy.item(), squared.item()]) * len(batch)
        totals /= size
        row = {
            "epoch": epoch,
            "train_loss": totals[1],  # the policy's cross-entropy, as before value heads
            "train_value_loss": totals[2],
        }
        score = totals[0]
        if len(validation[0]):
            network.eval()
            with torch.no_grad():
                loss, policy, squared, agree = _losses(network, validation, weight)
            row.update(
                validation_loss=policy.item(),
                validation_value_loss=squared.item(),
                validation_agreement=agree.item(),
            )
            score = loss.item()
        improved = score < progress.best_score
        progress.best_score = min(progress.best_score, score)
        progress.epoch = epoch
        progress.state = {
            "network": network.state_dict(),
            "optimiser": optimiser.state_dict(),
            "schedule": schedule.state_dict(),
        }
        if epoch == settings.epochs:
            progress.role, progress.state = role + 1, None
        yield row, network.export() if improved else None


def _schedule(
    settings: DistillSettings, optimiser: torch.optim.Optimizer, steps_per_epoch: int
) -> torch.optim.lr_scheduler.LRScheduler:
    """The step-size schedule of ``settings.lr_schedule``, stepped once per batch."""
    if settings.lr_schedule == "constant":
        return torch.optim.lr_scheduler.LambdaLR(optimiser, lambda step: 1.0)
    return torch.optim.lr_scheduler.CosineAnnealingLR(
        optimiser, T_max=settings.epochs * steps_per_epoch
    )


def _tensors(data: dict[str, np.ndarray], rows: np.ndarray) -> tuple[torch.Tensor, ...]:
    value = 0.5 * (data["outcome"][rows].astype(np.float32) + data["search_value"][rows])
    return (
        torch.from_numpy(data["obs"][rows].astype(np.float32)),
        torch.from_numpy(data["mask"][rows]),
        torch.from_numpy(data["target"][rows]),
        torch.from_numpy(value),
    )


def export(
    run_dir: pathlib.Path,
    settings: DistillSettings,
    best: dict[str, tuple],
    summary: dict,
    extra: dict | None = None,
) -> None:
    """Write ``run_dir/policy`` as one unit, in the format every agent loader reads,
    recording the variant its games were of (``save_policy``'s ``variant``)."""
    metadata = {
        "training_steps": summary["decisions"],
        "training": {
            "method": "distillation",
            "teacher": teacher_label(settings.teacher),
            "games": summary["games"],
            "decisions": summary["decisions"],
        },
        "provenance": provenance(json.dumps(settings.to_json()), settings.seed),
        **(extra or {}),
    }
    groups = {name: layers for name, (layers, _) in best.items()}
    values = None
    if settings.value_loss_weight > 0:
        values = {name: head for name, (_, head) in best.items()}
    roles = {name: SHARED if settings.shared_policy else name for name in AGENTS}
    replace_folder(
        run_dir,
        "policy",
        lambda folder: save_policy(
            folder,
            groups,
            roles,
            settings.activation,
            metadata,
            values,
            variant=settings.game_variant,  # policy.json names it unless it is the full game
        ),
    )
