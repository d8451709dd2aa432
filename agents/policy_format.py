"""The saved-policy format's names and constants, and the error every reader raises.

A saved policy is a folder holding ``policy.json`` (``METADATA_FILE``: the format,
its version, the env, the layer sizes and activation, the roles) and ``policy.npz``
(``WEIGHTS_FILE``: the arrays). ``jekyll_hyde_agents.policy_file`` writes and reads
it; ``jekyll_hyde_agents.policy_arrays`` checks the arrays.
"""

from __future__ import annotations

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
    """An int that is not a bool (JSON's whole numbers)."""
    return isinstance(value, int) and not isinstance(value, bool)


def shortened(value: Any) -> str:
    """``value``'s repr, cut to 40 characters for a message."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
