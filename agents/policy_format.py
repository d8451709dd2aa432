"""The saved-policy format's names and constants, and the error every reader raises.

A saved policy is a folder holding ``policy.json`` (``METADATA_FILE``: the format,
its version, the env, the layer sizes and activation, the roles) and ``policy.npz``
(``WEIGHTS_FILE``: the arrays). ``jekyll_hyde_agents.policy_file`` writes and reads
it; ``jekyll_hyde_agents.policy_arrays`` checks the arrays.

Every trainer records what made a policy in two objects of ``policy.json``, the
same for every backend: ``training`` (``method``, one of ``TRAINING_METHODS``, and
that method's own record: steps, generation, teacher, backend ...) and
``provenance`` (``created``, ``commit``, and a run's ``config`` and ``seed``), built
by ``provenance``; ``training_problem`` checks them when a file is read.
"""

from __future__ import annotations

import datetime
import pathlib
import subprocess
from typing import Any

from jekyll_hyde_env.jekyll_hyde import raw_env

FORMAT = "jekyll_hyde_policy"
FORMAT_VERSION = 2
READABLE_VERSIONS = (1, 2)
ENV_NAME = raw_env.metadata["name"]
ACTIVATIONS = ("tanh", "relu")
WEIGHTS_FILE = "policy.npz"
METADATA_FILE = "policy.json"


class PolicyFileError(ValueError):
    """A policy file that cannot be used; the message says why."""


def is_whole_number(value: Any) -> bool:
    """An int that is not a bool (JSON's whole numbers).

    Args:
        value: any value, typically read from JSON.

    Returns:
        True for an ``int`` (of any size or sign) that is not ``True`` or ``False``;
        False for anything else, whole floats such as ``2.0`` included.
    """
    return isinstance(value, int) and not isinstance(value, bool)


def shortened(value: Any) -> str:
    """``value``'s repr, cut to 40 characters for a message.

    Args:
        value: any value.

    Returns:
        ``repr(value)`` when it has at most 40 characters, else its first 37 and
        ``...``.
    """
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


TRAINING_METHODS = ("expert_iteration", "distillation", "ppo", "exploiter", "ensemble")
"""What ``policy.json``'s ``training.method`` may say made the policy."""
PROVENANCE_TEXT = ("created", "commit", "config")
"""The keys of ``provenance`` that hold text; ``seed`` holds a whole number."""


def provenance(config: str | None = None, seed: int | None = None) -> dict[str, Any]:
    """What made a policy, as every trainer records it in ``policy.json``: when
    (``created``, UTC), from which code (``commit``, the checkout's git commit when
    the package runs from one, else empty), and, where a run has them, its config
    (as YAML or JSON text) and seed.

    Args:
        config: the run's config as text, or None to leave ``config`` out.
        seed: the run's seed, or None to leave ``seed`` out.

    Returns:
        The ``provenance`` object: ``created`` (an ISO 8601 time in UTC, to the
        second), ``commit`` (a hex commit id, or ``""`` outside a git checkout) and
        ``config`` and ``seed`` when given.
    """
    commit = ""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=pathlib.Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    made: dict[str, Any] = {
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "commit": commit,
    }
    if config is not None:
        made["config"] = config
    if seed is not None:
        made["seed"] = seed
    return made


def training_problem(training: Any, made_by: Any) -> str | None:
    """What is wrong with ``policy.json``'s ``training`` and ``provenance`` objects, or
    None. Both are optional (older files lack them); where present, ``training`` is an
    object whose ``method`` is one of ``TRAINING_METHODS``, and ``provenance`` an object
    whose ``created``, ``commit`` and ``config`` are text and ``seed`` a whole number.
    Other keys are the method's own record and are kept as they are.

    Args:
        training: the ``training`` value of ``policy.json``, or None when absent;
            its ``method``, when given, must be one of ``TRAINING_METHODS``.
        made_by: the ``provenance`` value of ``policy.json``, or None when absent.

    Returns:
        A message naming the first wrong key and the value found, or None when both
        are acceptable.
    """
    if training is not None:
        if not isinstance(training, dict):
            return f"'training' must be an object, got {shortened(training)}"
        method = training.get("method")
        if method is not None and method not in TRAINING_METHODS:
            return f"training.method {shortened(method)} is not one of {list(TRAINING_METHODS)}"
    if made_by is not None:
        if not isinstance(made_by, dict):
            return f"'provenance' must be an object, got {shortened(made_by)}"
        for key in PROVENANCE_TEXT:
            if key in made_by and not isinstance(made_by[key], str):
                return f"provenance.{key} must be text, got {shortened(made_by[key])}"
        if "seed" in made_by and not is_whole_number(made_by["seed"]):
            return f"provenance.seed must be a whole number, got {shortened(made_by['seed'])}"
    return None
