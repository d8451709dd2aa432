"""What every ``jekyll-hyde`` command shares: option types, the help's format, examples
and the notes on agents and trust that several commands' help repeats."""

from __future__ import annotations

import argparse
import json
import os
import re

from jekyll_hyde_env.engine.variant import Variant, parse_variant
from jekyll_hyde_train.common.config_checks import SEED_MAX


def default_workers() -> int:
    """Processes a command uses by default: two, or one on a one-core machine."""
    return min(2, os.cpu_count() or 1)


def write_json(path: str, data: object) -> None:
    """Write ``data`` as JSON to ``path`` atomically (a temporary file, then a rename)."""
    temporary = f"{path}.tmp"
    with open(temporary, "w") as handle:
        json.dump(data, handle, indent=2)
    os.replace(temporary, path)


def seed_type(text: str) -> int:
    """The type of every command's ``--seed``: a whole number from 0 to ``SEED_MAX``."""
    try:
        seed = int(text)
    except ValueError:
        seed = -1
    if not 0 <= seed <= SEED_MAX:
        raise argparse.ArgumentTypeError(
            f"--seed must be a whole number from 0 to {SEED_MAX}, got {text!r}"
        )
    return seed


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Ends an option's help with its default once: not when the help already says
    it, nor for options with no default value (None) and flags."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if re.search(r"\(default[:)]", text) or action.default is None or action.default is False:
            return text
        return super()._get_help_string(action)


def layer_sizes_type(text: str) -> list[int]:
    try:
        return [int(size) for size in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a comma-separated list of layer sizes, e.g. 256,256"
        ) from None


EXAMPLES = {
    "eval": "jekyll-hyde eval runs/mine ismcts:1000 --pairs 500 --out results.json",
    "tournament": "jekyll-hyde tournament random heuristic ismcts:100 --pairs 100",
    "play": "jekyll-hyde play --as hyde --opponent ismcts:500 --seed 7 --save mygame.json",
    "replay": "jekyll-hyde replay mygame.json",
    "rules": "jekyll-hyde rules | less",
    "serve": "jekyll-hyde serve --opponent champion, then open http://127.0.0.1:8000/",
    "train": "jekyll-hyde train --config smoke --run-dir runs/mine",
    "distill": "jekyll-hyde distill --run-dir runs/distilled --teacher ismcts:2000 --games 2000",
    "exploit": "jekyll-hyde exploit runs/mine --out exploit.json",
    "solve": "jekyll-hyde solve tiny --out tiny-equilibrium",
    "ensemble": "jekyll-hyde ensemble --out runs/both runs/a runs/b",
    "export": "jekyll-hyde export champion --format onnx --out champion.onnx",
}

AGENT_HELP = (
    "an agent: a name (random, heuristic, ismcts:N, champion, az:N,...), a run or policy "
    "folder, an SB3 .zip, an RLlib checkpoint folder, a TorchScript or Tianshou .pt, an "
    ".onnx, python:module:name or python:file.py:name, or jekyll=A,hyde=B (prefixes sb3:, "
    "rllib:, tianshou:, torchscript:, onnx: name a file's kind)"
)
TRUST_NOTE = (
    "SB3 zips, RLlib checkpoints, Tianshou files, TorchScript modules and Python files run "
    "code when loaded: name only your own. policy.npz and .onnx files are data only."
)


def variant_type(text: str) -> Variant:
    """``--variant``: a preset or ``key=value`` pairs (``engine.variant.parse_variant``).

    Args:
        text: the option's value.

    Returns:
        The variant.

    Raises:
        argparse.ArgumentTypeError: an unknown or impossible variant, in one line.
    """
    try:
        return parse_variant(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
