"""The champion: the strongest policy expert iteration has made (the long recipe, then a
generation continued from its best), shipped inside the package so that it plays right
after ``pip install``.

``make_agent("champion")`` plays it without search (its most likely legal
action, numpy only); ``az:N`` with no ``policy=`` searches with it. Its files
are ``agents/champion_policy/policy.json`` and ``policy.npz`` in the saved
policy format (``jekyll_hyde_agents.policy_file``), and ``policy.json`` carries the
provenance: the run's config, seed and commit, the data it was fit on, its
held-out loss, its generation's scores during training and the arena table
measured by ``benchmarks/champion.py``, which writes docs/results/champion.md.
"""

from __future__ import annotations

import json
import pathlib
from typing import Any

from jekyll_hyde_agents.policy_format import METADATA_FILE, PolicyFileError

CHAMPION_DIR = pathlib.Path(__file__).with_name("champion_policy")


def champion_path() -> pathlib.Path:
    """The champion's policy folder.

    Returns:
        The folder inside the installed package that holds the champion's
            ``policy.json`` and ``policy.npz``.

    Raises:
        PolicyFileError: the package was installed without it (a build that
            dropped package data); the message says how to get it.
    """
    if not (CHAMPION_DIR / METADATA_FILE).is_file():
        raise PolicyFileError(
            f"the champion policy is missing from this install ({CHAMPION_DIR}); reinstall "
            "jekyll-hyde-env from a wheel or a git checkout, which ship it"
        )
    return CHAMPION_DIR


def champion_provenance() -> dict[str, Any]:
    """Where the champion came from: its ``policy.json`` metadata's ``provenance``.

    Returns:
        The ``provenance`` dict (the run's config, seed and commit, its data, its
            held-out loss and scores, the arena table), or an empty dict.

    Raises:
        PolicyFileError: the champion is missing from the install (``champion_path``).
    """
    metadata = json.loads((champion_path() / METADATA_FILE).read_text())
    return metadata.get("provenance", {})


__all__ = ["CHAMPION_DIR", "champion_path", "champion_provenance"]
