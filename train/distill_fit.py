"""The fit of a distillation run: one network per role, trained on the labelled shards.

Kept apart from ``train.distill`` so that labelling games, and every other
``jekyll-hyde`` command, runs without importing torch.
"""

from __future__ import annotations

import json
import pathlib
import time
from collections.abc import Callable, Iterator

import numpy as np
import torch

from agents.policy_file import save_policy
from jekyll_hyde_env.engine.cards import AGENTS, NUM_ACTIONS
from jekyll_hyde_env.observation import OBS_SIZE

from .distill import DATA_FOLDER, DistillSettings, load_data, prepare_run
from .files import atomic_write_text, replace_folder

FIT_FILE = "fit.json"


def _network(settings: DistillSettings) -> torch.nn.Sequential:
    activation = torch.nn.Tanh if settings.activation == "tanh" else torch.nn.ReLU
    layers: list[torch.nn.Module] = []
    size = OBS_SIZE
    for hidden in settings.hidden:
        layers += [torch.nn.Linear(size, hidden), activation()]
        size = hidden
    layers.append(torch.nn.Linear(size, NUM_ACTIONS))
    return torch.nn.Sequential(*layers)


def _cross_entropy(
    network: torch.nn.Module, obs: torch.Tensor, mask: torch.Tensor, target: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Cross-entropy of the masked policy against the visit shares, and argmax agreement."""
    logits = network(obs).masked_fill(~mask, -1e9)
    loss = -(target * torch.log_softmax(logits, dim=-1)).sum(dim=-1).mean()
    agree = (logits.argmax(dim=-1) == target.argmax(dim=-1)).float().mean()
    return loss, agree


def fit(
    run_dir: pathlib.Path,
    settings: DistillSettings,
    report: Callable[[dict], None] | None = None,
    threads: int = 1,
) -> dict:
    """Train one network per role on the run's shards and export the policy.

    The last ``validation_share`` of the shards is held out; the weights of the
    epoch with the lowest validation loss are exported to ``run_dir/policy``.
    ``report(row)`` is called after each epoch. ``threads`` sets torch's
    threads: one by default, as threads that wait on cores busy with other
    work (labelling, say) made a fit five times slower here. Returns what
    ``fit.json`` holds.
    """
    if threads < 1:
        raise ValueError(f"threads must be >= 1, got {threads}")
    torch.set_num_threads(threads)
    prepare_run(run_dir, settings)
    data, shard, games = load_data(run_dir)
    is_validation = _held_out_rows(shard, settings.validation_share)
    torch.manual_seed(settings.seed)
    rng = np.random.default_rng(settings.seed)
    history: list[dict] = []
    best: dict[str, list] = {}
    started = time.perf_counter()
    for role, name in enumerate(AGENTS):
        rows = data["role"] == role
        train = _tensors(data, rows & ~is_validation)
        if len(train[0]) == 0:
            raise ValueError(f"no {name} decisions to train on in {run_dir / DATA_FOLDER}")
        validation = _tensors(data, rows & is_validation)
        for row, layers in _train_role(settings, train, validation, rng):
            row = {"role": name, **row}
            history.append(row)
            if report is not None:
                report(row)
            if layers is not None:
                best[name] = layers
    summary = {
        "games": games,
        "decisions": int(len(shard)),
        "validation_decisions": int(is_validation.sum()),
        "seconds": time.perf_counter() - started,
        "settings": settings.to_json(),
        "history": history,
    }
    export(run_dir, settings, best, summary)
    atomic_write_text(run_dir / FIT_FILE, json.dumps(summary, indent=2))
    return summary


def _held_out_rows(shard: np.ndarray, share: float) -> np.ndarray:
    """Rows of the last ``share`` of the shards present (at least one, never all, if share > 0)."""
    present = np.unique(shard)
    held_out = round(len(present) * share)
    if share and len(present) > 1:
        held_out = min(max(held_out, 1), len(present) - 1)
    return np.isin(shard, present[len(present) - held_out :] if held_out else present[:0])


def _train_role(
    settings: DistillSettings,
    train: tuple[torch.Tensor, ...],
    validation: tuple[torch.Tensor, ...],
    rng: np.random.Generator,
) -> Iterator[tuple[dict, list | None]]:
    """Fit one network; yields each epoch's losses, with its layers when it is the best so far.

    The best epoch has the lowest validation loss (the training loss when
    nothing is held out).
    """
    network = _network(settings)
    optimiser = torch.optim.AdamW(
        network.parameters(), lr=settings.learning_rate, weight_decay=settings.weight_decay
    )
    size = len(train[0])
    schedule = _schedule(settings, optimiser, -(-size // settings.batch_size))
    best = float("inf")
    for epoch in range(1, settings.epochs + 1):
        network.train()
        order = torch.from_numpy(rng.permutation(size))
        total = 0.0
        for start in range(0, size, settings.batch_size):
            batch = order[start : start + settings.batch_size]
            loss, _ = _cross_entropy(network, *(t[batch] for t in train))
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
            total += loss.item() * len(batch)
        row = {"epoch": epoch, "train_loss": total / size}
        if len(validation[0]):
            network.eval()
            with torch.no_grad():
                loss, agree = _cross_entropy(network, *validation)
            row.update(validation_loss=loss.item(), validation_agreement=agree.item())
        score = row.get("validation_loss", row["train_loss"])
        improved = score < best
        best = min(best, score)
        yield row, _layers(network) if improved else None


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
    return (
        torch.from_numpy(data["obs"][rows].astype(np.float32)),
        torch.from_numpy(data["mask"][rows]),
        torch.from_numpy(data["target"][rows]),
    )


def _layers(network: torch.nn.Sequential) -> list[tuple[np.ndarray, np.ndarray]]:
    linear = [m for m in network if isinstance(m, torch.nn.Linear)]
    return [(m.weight.detach().numpy().copy(), m.bias.detach().numpy().copy()) for m in linear]


def export(
    run_dir: pathlib.Path, settings: DistillSettings, groups: dict[str, list], summary: dict
) -> None:
    """Write ``run_dir/policy`` as one unit, in the format every agent loader reads."""
    extra = {
        "training_steps": summary["decisions"],
        "training": {
            "method": "distillation",
            "teacher": settings.teacher,
            "games": summary["games"],
            "decisions": summary["decisions"],
        },
    }
    replace_folder(
        run_dir,
        "policy",
        lambda folder: save_policy(
            folder, groups, {name: name for name in AGENTS}, settings.activation, extra
        ),
    )
