"""Saved policies: weights in ``policy.npz``, metadata in ``policy.json``.

The format never needs unpickling: the weights are plain float32 arrays read
with ``numpy.load(allow_pickle=False)``, and the metadata is JSON. A policy
file from a stranger therefore cannot run code when it is loaded. The
metadata names the environment version and a hash of the observation layout;
a file made for another version or layout is refused, as are corrupt files.

``policy.json``::

    {"format": "jekyll_hyde_policy", "format_version": 1,
     "env": "jekyll_hyde_v0", "observation_layout": "<sha256>",
     "roles": {"jekyll": "jekyll", "hyde": "hyde"},   # role -> weight group
     "architecture": {"hidden": [128, 128], "activation": "tanh"},
     "training_steps": 1234567, ...}

``policy.npz`` holds, for each weight group ``g`` and layer ``i``, the arrays
``g/w{i}`` (out x in) and ``g/b{i}``; the last layer gives the 28 logits.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import pathlib
import tempfile
import zipfile
from typing import Any

import numpy as np

from jekyll_hyde_env.engine.cards import AGENTS, NUM_ACTIONS
from jekyll_hyde_env.jekyll_hyde import raw_env
from jekyll_hyde_env.observation import LAYOUT, OBS_SIZE

FORMAT = "jekyll_hyde_policy"
FORMAT_VERSION = 1
ENV_NAME = raw_env.metadata["name"]
ACTIVATIONS = ("tanh", "relu")
WEIGHTS_FILE = "policy.npz"
METADATA_FILE = "policy.json"


class PolicyFileError(ValueError):
    """A policy file that cannot be used; the message says why."""


def layout_hash() -> str:
    """sha256 of the observation layout (names and sizes, in order)."""
    text = ";".join(f"{name}:{size}" for name, size, _ in LAYOUT)
    return hashlib.sha256(text.encode()).hexdigest()


def _atomic_write_bytes(path: pathlib.Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        pathlib.Path(temporary).unlink(missing_ok=True)
        raise


def save_policy(
    folder: str | os.PathLike,
    groups: dict[str, list[tuple[np.ndarray, np.ndarray]]],
    roles: dict[str, str],
    activation: str = "tanh",
    extra: dict[str, Any] | None = None,
) -> pathlib.Path:
    """Write ``policy.npz`` and ``policy.json`` into ``folder``, each atomically.

    Args:
        groups: weight group name -> layers as (weight out x in, bias).
        roles: role ("jekyll"/"hyde") -> the weight group that plays it.
        activation: hidden-layer activation, "tanh" or "relu".
        extra: more metadata (training steps, config, ...), JSON-serialisable.

    Returns:
        The path of ``policy.json``.
    """
    folder = pathlib.Path(folder)
    arrays = {}
    hidden = None
    for group, layers in groups.items():
        for i, (weight, bias) in enumerate(layers):
            arrays[f"{group}/w{i}"] = np.asarray(weight, dtype=np.float32)
            arrays[f"{group}/b{i}"] = np.asarray(bias, dtype=np.float32)
        hidden = [int(np.shape(w)[0]) for w, _ in layers[:-1]]
    metadata = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "env": ENV_NAME,
        "observation_layout": layout_hash(),
        "observation_size": OBS_SIZE,
        "num_actions": NUM_ACTIONS,
        "roles": roles,
        "architecture": {"hidden": hidden, "activation": activation},
        **(extra or {}),
    }
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    _atomic_write_bytes(folder / WEIGHTS_FILE, buffer.getvalue())
    _atomic_write_bytes(folder / METADATA_FILE, json.dumps(metadata, indent=2).encode())
    return folder / METADATA_FILE


def resolve_policy_path(path: str | os.PathLike) -> pathlib.Path:
    """The ``policy.json`` of a run folder, a policy folder or the file itself."""
    path = pathlib.Path(path)
    for candidate in (path, path / METADATA_FILE, path / "policy" / METADATA_FILE):
        if candidate.is_file() and candidate.name == METADATA_FILE:
            return candidate
    if path.is_file() and path.suffix == ".npz":
        return path.with_name(METADATA_FILE)
    raise PolicyFileError(
        f"no saved policy at {str(path)!r}: expected a run folder (with policy/{METADATA_FILE}), "
        f"a policy folder, or its {METADATA_FILE}"
    )


def load_policy(path: str | os.PathLike) -> tuple[dict[str, Any], dict[str, list]]:
    """Read and check a saved policy.

    Returns:
        (metadata, weight groups as lists of (weight, bias) float32 arrays).

    Raises:
        PolicyFileError: missing, corrupt, for another env version or
            observation layout, or a weights file that would need unpickling.
    """
    meta_path = resolve_policy_path(path)
    try:
        metadata = json.loads(meta_path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise PolicyFileError(
            f"{meta_path}: not a readable policy metadata file ({error})"
        ) from None
    if not isinstance(metadata, dict) or metadata.get("format") != FORMAT:
        raise PolicyFileError(f"{meta_path}: not a {FORMAT} file")
    if metadata.get("format_version") != FORMAT_VERSION:
        raise PolicyFileError(
            f"{meta_path}: policy format version {metadata.get('format_version')!r}; "
            f"this version reads {FORMAT_VERSION}"
        )
    if metadata.get("env") != ENV_NAME:
        raise PolicyFileError(
            f"{meta_path}: made for environment {metadata.get('env')!r}, this is {ENV_NAME!r}"
        )
    if metadata.get("observation_layout") != layout_hash():
        raise PolicyFileError(
            f"{meta_path}: made for another observation layout (hash "
            f"{str(metadata.get('observation_layout'))[:12]}..., "
            f"this env's is {layout_hash()[:12]}...)"
        )
    roles = metadata.get("roles")
    if not isinstance(roles, dict) or not set(roles) <= set(AGENTS) or not roles:
        raise PolicyFileError(f"{meta_path}: 'roles' must map some of {list(AGENTS)} to groups")
    activation = metadata.get("architecture", {}).get("activation")
    if activation not in ACTIVATIONS:
        raise PolicyFileError(f"{meta_path}: activation {activation!r} is not one of {ACTIVATIONS}")
    weights_path = meta_path.with_name(WEIGHTS_FILE)
    try:
        with np.load(weights_path, allow_pickle=False) as archive:
            arrays = {name: archive[name] for name in archive.files}
    except ValueError as error:
        raise PolicyFileError(
            f"{weights_path}: refused, it holds objects that would need unpickling ({error})"
        ) from None
    except (OSError, zipfile.BadZipFile, EOFError) as error:
        raise PolicyFileError(f"{weights_path}: not a readable weights file ({error})") from None
    groups: dict[str, list] = {}
    for group in set(roles.values()):
        layers = []
        while f"{group}/w{len(layers)}" in arrays:
            i = len(layers)
            layers.append((arrays[f"{group}/w{i}"], arrays.get(f"{group}/b{i}")))
        _check_layers(weights_path, group, layers)
        groups[group] = layers
    return metadata, groups


def _check_layers(path: pathlib.Path, group: str, layers: list) -> None:
    if not layers:
        raise PolicyFileError(f"{path}: no weights for group {group!r}")
    size = OBS_SIZE
    for i, (weight, bias) in enumerate(layers):
        if weight.dtype.kind != "f" or bias is None or bias.dtype.kind != "f":
            raise PolicyFileError(f"{path}: layer {i} of {group!r} is not floating point")
        if weight.ndim != 2 or weight.shape[1] != size or bias.shape != (weight.shape[0],):
            raise PolicyFileError(
                f"{path}: layer {i} of {group!r} has shape {weight.shape}/{bias.shape}, "
                f"expected (*, {size}) and a matching bias"
            )
        if not (np.isfinite(weight).all() and np.isfinite(bias).all()):
            raise PolicyFileError(f"{path}: layer {i} of {group!r} holds NaN or infinite values")
        size = weight.shape[0]
    if size != NUM_ACTIONS:
        raise PolicyFileError(
            f"{path}: group {group!r} gives {size} outputs, expected {NUM_ACTIONS}"
        )
