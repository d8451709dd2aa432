"""The main job, expert iteration, as a trainer of the exploitability curves.

Runs ``jekyll_hyde_train.expert_iteration.loop.train`` with
``configs/expert_iteration/small.yaml`` (its seed and variant replaced by the
curve's) in a run folder under the trainer's folder, and answers each checkpoint
request with the newest generation's policy (``run/policy``), which is what the job
would deliver if stopped then. Before generation 0 is fitted there is no network:
the checkpoint then says so, and it plays uniformly at random, as an untrained
network of zero weights would.

Every process of the job (its labelling pool, its fits' threads) counts in the CPU
the runner measures.
"""

from __future__ import annotations

import pathlib
import shutil

import numpy as np
from protocol import Requests

from jekyll_hyde_env.engine.variant import Variant
from jekyll_hyde_train.common.config import load_config
from jekyll_hyde_train.exact.table import InfosetTable, policy_probabilities
from jekyll_hyde_train.expert_iteration.config import EITrainConfig
from jekyll_hyde_train.expert_iteration.loop import prepare_run_dir
from jekyll_hyde_train.expert_iteration.loop import train as train_ei

NAME = "expert-iteration"
CONFIG = pathlib.Path(__file__).resolve().parents[2] / "configs" / "expert_iteration" / "small.yaml"
LABEL = (
    "this project's expert iteration (configs/expert_iteration/small.yaml: 400 games a "
    "generation, ISMCTS then network-guided search of 300 simulations, one 256x256 "
    "network, 2 workers); checkpoint: the newest generation's policy, sampled"
)
NO_POLICY = "no-policy-yet"
"""The file a checkpoint holds instead of a policy before the first generation."""


def train(out: pathlib.Path, variant: Variant, seed: int, requests: Requests) -> None:
    """Run expert iteration until stopped, answering checkpoint requests.

    Args:
        out: the trainer's folder; the run goes to ``out/run``.
        variant: the version of the game.
        seed: the run's seed.
        requests: the checkpoint requests.
    """
    overrides = [f"run.seed={seed}", f"run.variant={variant.spec()}"]
    config = load_config(CONFIG, overrides, schema=EITrainConfig)
    run = out / "run"
    shutil.rmtree(run, ignore_errors=True)
    prepare_run_dir(config, str(run))

    def write(folder: pathlib.Path) -> None:
        # The run replaces its policy folder by two renames; between them the complete
        # previous policy is in .policy.old.
        for policy in (run / "policy", run / ".policy.old"):
            if (policy / "policy.json").is_file():
                shutil.copytree(policy, folder / "policy")
                return
        (folder / NO_POLICY).write_text("no generation has finished yet\n")

    server = requests.serve(write)
    try:
        train_ei(config, run)
    finally:
        server.stop()


def probabilities(checkpoint: pathlib.Path, table: InfosetTable) -> np.ndarray:
    """The checkpoint's policy, sampled as the arena plays a run's policy with sampling.

    Args:
        checkpoint: a checkpoint folder written by ``train``.
        table: the information sets.

    Returns:
        float64 (size, 28): the softmax of the legal logits; uniform over the legal
        actions before the first generation.
    """
    if (checkpoint / NO_POLICY).is_file():
        legal = table.legal()
        return legal / legal.sum(axis=1, keepdims=True)
    return policy_probabilities(checkpoint / "policy", table, deterministic=False)
