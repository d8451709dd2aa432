"""Saved policies: weights in ``policy.npz``, metadata in ``policy.json``.

The format never needs unpickling: the weights are plain float32 arrays read
with ``numpy.load(allow_pickle=False)``, and the metadata is JSON. A policy
file from a stranger therefore cannot run code when it is loaded. The
metadata names the environment version and a hash of the observation layout;
a file made for another version or layout is refused, as are corrupt files.

``policy.json``::

    {"format": "jekyll_hyde_policy", "format_version": 2,
     "env": "jekyll_hyde_v0", "observation_layout": "<sha256>",
     "roles": {"jekyll": "jekyll", "hyde": "hyde"},   # role -> weight group
     "architecture": {"hidden": [128, 128], "activation": "tanh"},
     "value_head": true,
     "training_steps": 1234567, ...}

``policy.npz`` holds, for each weight group ``g`` and layer ``i``, the arrays
``g/w{i}`` (out x in) and ``g/b{i}``; the last layer gives the 28 logits.
With ``"value_head": true`` (format version 2), each group also has ``g/vw``
(the last hidden layer's size) and ``g/vb`` (one value): the value head
``tanh(vw . h + vb)`` reads the last hidden layer ``h`` and estimates the
outcome (+1 win, -1 loss) for the player whose observation went in.
Version 1 files (no value head) still load.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import pathlib
import tempfile
import zipfile
from typing import Any, NamedTuple

import numpy as np

from jekyll_hyde_env.engine.cards import AGENTS, NUM_ACTIONS
from jekyll_hyde_env.jekyll_hyde import raw_env
from jekyll_hyde_env.observation import LAYOUT, OBS_SIZE

FORMAT = "jekyll_hyde_policy"
FORMAT_VERSION = 2
READABLE_VERSIONS = (1, 2)
ENV_NAME = raw_env.metadata["name"]
ACTIVATIONS = ("tanh", "relu")
WEIGHTS_FILE = "policy.npz"
METADATA_FILE = "policy.json"


class PolicyFileError(ValueError):
    """A policy file that cannot be used; the message says why."""


class SavedPolicy(NamedTuple):
    """A policy file's contents: metadata, weight groups and their value heads.

    ``values`` maps each group to its value head ``(weight (hidden,), bias (1,))``,
    or to None when the file has none.
    """

    metadata: dict[str, Any]
    groups: dict[str, list]
    values: dict[str, tuple[np.ndarray, np.ndarray] | None]


def parse_layer_sizes(text: str) -> tuple[int, ...]:
    """``"1024x1024"`` as hidden layer sizes (1024, 1024); ValueError unless all are
    positive whole numbers."""
    try:
        sizes = tuple(int(size) for size in text.lower().split("x"))
    except ValueError:
        sizes = ()
    if not sizes or min(sizes) < 1:
        raise ValueError(f"layer sizes are positive whole numbers joined by x, got {text!r}")
    return sizes


def layer_sizes_text(sizes: tuple[int, ...] | list[int]) -> str:
    """Hidden layer sizes as ``"1024x1024"``, the form ``parse_layer_sizes`` reads."""
    return "x".join(map(str, sizes))


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
    values: dict[str, tuple[np.ndarray, np.ndarray]] | None = None,
) -> pathlib.Path:
    """Write ``policy.npz`` and ``policy.json`` into ``folder``, each atomically.

    Args:
        groups: weight group name -> layers as (weight out x in, bias).
        roles: role ("jekyll"/"hyde") -> the weight group that plays it.
        activation: hidden-layer activation, "tanh" or "relu".
        extra: more metadata (training steps, config, ...), JSON-serialisable.
        values: optional value heads, group -> (weight (last hidden size,),
            bias (1,)); every group needs one when any has one.

    Returns:
        The path of ``policy.json``.
    """
    folder = pathlib.Path(folder)
    arrays = {}
    hidden = None
    if values is not None and set(values) != set(groups):
        raise ValueError(f"value heads for groups {sorted(values)}, weights for {sorted(groups)}")
    for group, layers in groups.items():
        for i, (weight, bias) in enumerate(layers):
            arrays[f"{group}/w{i}"] = np.asarray(weight, dtype=np.float32)
            arrays[f"{group}/b{i}"] = np.asarray(bias, dtype=np.float32)
        if values is not None:
            arrays[f"{group}/vw"] = np.asarray(values[group][0], dtype=np.float32).reshape(-1)
            arrays[f"{group}/vb"] = np.asarray(values[group][1], dtype=np.float32).reshape(1)
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
        "value_head": values is not None,
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
    saved = read_policy(path)
    return saved.metadata, saved.groups


def read_policy(path: str | os.PathLike) -> SavedPolicy:
    """Read and check a saved policy, value heads included (see ``load_policy``)."""
    meta_path = resolve_policy_path(path)
    try:
        metadata = json.loads(meta_path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise PolicyFileError(
            f"{meta_path}: not a readable policy metadata file ({error})"
        ) from None
    if not isinstance(metadata, dict) or metadata.get("format") != FORMAT:
        raise PolicyFileError(f"{meta_path}: not a {FORMAT} file")
    if metadata.get("format_version") not in READABLE_VERSIONS:
        raise PolicyFileError(
            f"{meta_path}: policy format version {metadata.get('format_version')!r}; "
            f"this version reads {list(READABLE_VERSIONS)}"
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
    if weights_path.is_file() and not zipfile.is_zipfile(weights_path):
        raise PolicyFileError(f"{weights_path}: corrupt, not a weights archive (.npz)")
    try:
        with np.load(weights_path, allow_pickle=False) as archive:
            arrays = {name: archive[name] for name in archive.files}
    except ValueError as error:
        if _holds_objects(weights_path):
            raise PolicyFileError(
                f"{weights_path}: refused, it holds objects that would need unpickling, "
                "which could run code; a policy file holds plain float arrays only"
            ) from None
        raise PolicyFileError(f"{weights_path}: corrupt weights archive ({error})") from None
    except (OSError, zipfile.BadZipFile, EOFError) as error:
        raise PolicyFileError(f"{weights_path}: not a readable weights file ({error})") from None
    groups: dict[str, list] = {}
    values: dict[str, tuple[np.ndarray, np.ndarray] | None] = {}
    has_values = metadata.get("value_head", False) is True
    for group in set(roles.values()):
        layers = []
        while f"{group}/w{len(layers)}" in arrays:
            i = len(layers)
            layers.append((arrays[f"{group}/w{i}"], arrays.get(f"{group}/b{i}")))
        _check_layers(weights_path, group, layers)
        groups[group] = layers
        values[group] = _value_head(weights_path, group, layers, arrays) if has_values else None
    return SavedPolicy(metadata, groups, values)


def _holds_objects(path: pathlib.Path) -> bool:
    """Whether any array header in the archive declares Python objects (pickled data).

    Only the headers are read, never the data, so nothing is unpickled; a header
    that cannot be read counts as corrupt, not as objects.
    """
    try:
        with zipfile.ZipFile(path) as archive:
            for name in archive.namelist():
                with archive.open(name) as member:
                    version = np.lib.format.read_magic(member)
                    if version == (1, 0):
                        _, _, dtype = np.lib.format.read_array_header_1_0(member)
                    else:
                        _, _, dtype = np.lib.format.read_array_header_2_0(member)
                    if dtype.hasobject:
                        return True
    except (ValueError, OSError, zipfile.BadZipFile, EOFError):
        return False
    return False


def _value_head(
    path: pathlib.Path, group: str, layers: list, arrays: dict[str, np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    weight, bias = arrays.get(f"{group}/vw"), arrays.get(f"{group}/vb")
    if weight is None or bias is None:
        raise PolicyFileError(f"{path}: the metadata promises a value head; {group!r} has none")
    if len(layers) < 2:
        raise PolicyFileError(f"{path}: a value head needs a hidden layer; {group!r} has none")
    hidden = layers[-1][0].shape[1]
    if weight.dtype.kind != "f" or weight.shape != (hidden,) or bias.shape != (1,):
        raise PolicyFileError(
            f"{path}: value head of {group!r} has shape {weight.shape}/{bias.shape}, "
            f"expected ({hidden},) and (1,)"
        )
    if not (np.isfinite(weight).all() and np.isfinite(bias).all()):
        raise PolicyFileError(f"{path}: the value head of {group!r} holds NaN or infinite values")
    return weight.astype(np.float32), bias.astype(np.float32)


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
