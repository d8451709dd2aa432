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
import re
import tempfile
from typing import Any, NamedTuple

import numpy as np

from jekyll_hyde_agents.policy_arrays import (
    check_array_headers,
    check_layers,
    load_npz,
    read_npz_headers,
    value_head,
)
from jekyll_hyde_agents.policy_format import (
    ACTIVATIONS,
    ENV_NAME,
    FORMAT,
    FORMAT_VERSION,
    METADATA_FILE,
    READABLE_VERSIONS,
    WEIGHTS_FILE,
    PolicyFileError,
    is_whole_number,
    shortened,
    training_problem,
)
from jekyll_hyde_env.engine.cards import AGENTS, NUM_ACTIONS
from jekyll_hyde_env.engine.variant import FULL, Variant, parse_variant
from jekyll_hyde_env.observation import LAYOUT, OBS_SIZE


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
    positive whole numbers.

    Args:
        text: sizes joined by ``x`` (or ``X``), such as ``"256x256"`` or ``"64"``.

    Returns:
        The sizes, in order.

    Raises:
        ValueError: a part that is not a whole number, or a size below 1.
    """
    try:
        sizes = tuple(int(size) for size in text.lower().split("x"))
    except ValueError:
        sizes = ()
    if not sizes or min(sizes) < 1:
        raise ValueError(f"layer sizes are positive whole numbers joined by x, got {text!r}")
    return sizes


def layer_sizes_text(sizes: tuple[int, ...] | list[int]) -> str:
    """Hidden layer sizes as ``"1024x1024"``, the form ``parse_layer_sizes`` reads.

    Args:
        sizes: the hidden layer sizes, in order.

    Returns:
        The sizes joined by ``x``; an empty string for no sizes.
    """
    return "x".join(map(str, sizes))


def layout_hash() -> str:
    """sha256 of the observation layout (names and sizes, in order).

    Returns:
        The hex digest that ``policy.json``'s ``observation_layout`` must equal.
    """
    text = ";".join(f"{name}:{size}" for name, size, _ in LAYOUT)
    return hashlib.sha256(text.encode()).hexdigest()


def weights_sha256(path: str | os.PathLike) -> str:
    """sha256 of a saved policy's weights file: which policy it is, whatever its path
    (``champion`` names another policy once a new champion ships).

    Args:
        path: a saved policy: a run folder, a policy folder or one of its files.

    Returns:
        The hex digest of its ``policy.npz``.

    Raises:
        PolicyFileError: no saved policy at ``path``.
        OSError: the weights file cannot be read.
    """
    weights = resolve_policy_path(path).with_name(WEIGHTS_FILE)
    return hashlib.sha256(weights.read_bytes()).hexdigest()


def _atomic_write_bytes(path: pathlib.Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except OSError as error:  # a full disk, say: name the file being written
        pathlib.Path(temporary).unlink(missing_ok=True)
        if error.filename is not None:
            raise
        raise OSError(error.errno, error.strerror or str(error), str(path)) from error
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
    variant: Variant = FULL,
) -> pathlib.Path:
    """Write ``policy.npz`` and ``policy.json`` into ``folder``, each atomically.

    Args:
        folder: the folder to write into, made when missing; files already there
            are replaced.
        groups: weight group name -> layers as (weight out x in, bias).
        roles: role ("jekyll"/"hyde") -> the weight group that plays it.
        activation: hidden-layer activation, "tanh" or "relu".
        extra: more metadata (training steps, config, ...), JSON-serialisable.
        values: optional value heads, group -> (weight (last hidden size,),
            bias (1,)); every group needs one when any has one.
        variant: the version of the game the policy was trained on (RULES.md V1-V7);
            ``policy.json`` names it under ``variant`` unless it is the full game.

    Returns:
        The path of ``policy.json``.

    Raises:
        ValueError: the groups' hidden sizes differ (the metadata states one
            architecture for all of them), a layer has no units, or the value
            heads are not one per group.
    """
    folder = pathlib.Path(folder)
    arrays = {}
    if values is not None and set(values) != set(groups):
        raise ValueError(f"value heads for groups {sorted(values)}, weights for {sorted(groups)}")
    sizes = {
        group: [int(np.shape(w)[0]) for w, _ in layers[:-1]] for group, layers in groups.items()
    }
    hidden = next(iter(sizes.values()), None)
    if any(group_sizes != hidden for group_sizes in sizes.values()):
        raise ValueError(
            f"the weight groups have different hidden layer sizes {sizes}; a saved policy "
            "states one architecture for all of its groups"
        )
    if any(int(np.shape(w)[0]) < 1 for layers in groups.values() for w, _ in layers):
        raise ValueError(f"a layer without units in the weight groups' sizes {sizes}")
    for group, layers in groups.items():
        for i, (weight, bias) in enumerate(layers):
            arrays[f"{group}/w{i}"] = np.asarray(weight, dtype=np.float32)
            arrays[f"{group}/b{i}"] = np.asarray(bias, dtype=np.float32)
        if values is not None:
            arrays[f"{group}/vw"] = np.asarray(values[group][0], dtype=np.float32).reshape(-1)
            arrays[f"{group}/vb"] = np.asarray(values[group][1], dtype=np.float32).reshape(1)
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
        **({} if variant == FULL else {"variant": variant.to_json()}),
        **(extra or {}),
    }
    buffer = io.BytesIO()
    # numpy's stubs: mypy matches **arrays to the allow_pickle: bool keyword too
    np.savez(buffer, **arrays)  # type: ignore[arg-type]
    _atomic_write_bytes(folder / WEIGHTS_FILE, buffer.getvalue())
    _atomic_write_bytes(folder / METADATA_FILE, json.dumps(metadata, indent=2).encode())
    return folder / METADATA_FILE


def resolve_policy_path(path: str | os.PathLike) -> pathlib.Path:
    """The ``policy.json`` of a run folder, a policy folder, the file itself, or the
    ``policy.json`` beside a ``policy.npz``.

    Args:
        path: a run folder (holding ``policy/``), a policy folder, or its
            ``policy.json`` or ``policy.npz``.

    Returns:
        The path of the existing ``policy.json``.

    Raises:
        PolicyFileError: none of these, naming ``path`` and what a policy is.
    """
    path = pathlib.Path(path)
    beside = [path.with_name(METADATA_FILE)] if path.name == WEIGHTS_FILE else []
    for candidate in (path, path / METADATA_FILE, path / "policy" / METADATA_FILE, *beside):
        if candidate.is_file() and candidate.name == METADATA_FILE:
            return candidate
    expected = (
        f"a saved policy is a folder holding {METADATA_FILE} and {WEIGHTS_FILE}, a run "
        f"folder holding policy/, or the {METADATA_FILE} or {WEIGHTS_FILE} of one"
    )
    if path.is_file() and path.name == WEIGHTS_FILE:
        raise PolicyFileError(
            f"{path}: no {METADATA_FILE} beside it to say what it holds; {expected}"
        )
    raise PolicyFileError(f"no saved policy at {str(path)!r}: {expected}")


def load_policy(path: str | os.PathLike) -> tuple[dict[str, Any], dict[str, list]]:
    """Read and check a saved policy.

    Args:
        path: a run folder, a policy folder, or its ``policy.json`` or ``policy.npz``.

    Returns:
        (metadata, weight groups as lists of (weight, bias) float32 arrays).

    Raises:
        PolicyFileError: missing, corrupt, for another env version or
            observation layout, or a weights file that would need unpickling.
    """
    saved = read_policy(path)
    return saved.metadata, saved.groups


def read_policy(path: str | os.PathLike) -> SavedPolicy:
    """Read and check a saved policy, value heads included (see ``load_policy``).

    ``policy.json`` is checked against its schema (``check_metadata``), then the
    array headers of ``policy.npz`` against the metadata and each other
    (``check_array_headers``: names, dtypes, shapes, the hidden sizes, the
    observation size and the 28 actions), all before any array is loaded, so
    that a file claiming a huge array is refused without allocating it.

    Args:
        path: a run folder, a policy folder, or its ``policy.json`` or ``policy.npz``.

    Returns:
        The ``SavedPolicy``: the checked metadata (``value_head`` filled in), the
        layers of each weight group as float32 (weight, bias) pairs, and each
        group's value head or None.

    Raises:
        PolicyFileError: naming the file and the first problem.
    """
    meta_path = resolve_policy_path(path)
    metadata = read_metadata(meta_path)
    weights_path = meta_path.with_name(WEIGHTS_FILE)
    if not weights_path.is_file():
        raise PolicyFileError(
            f"{weights_path}: no such file; the weights of {meta_path} belong there"
        )
    try:
        headers = read_npz_headers(weights_path)
        names = check_array_headers(weights_path, metadata, headers)
        arrays = load_npz(weights_path, names)
    except PolicyFileError:
        raise
    except ValueError as error:
        raise PolicyFileError(str(error)) from None
    groups: dict[str, list] = {}
    values: dict[str, tuple[np.ndarray, np.ndarray] | None] = {}
    for group in dict.fromkeys(metadata["roles"].values()):
        layers: list[tuple[np.ndarray, np.ndarray]] = []
        while f"{group}/w{len(layers)}" in arrays:
            i = len(layers)
            layers.append((arrays[f"{group}/w{i}"], arrays[f"{group}/b{i}"]))
        check_layers(weights_path, group, layers)
        groups[group] = layers
        values[group] = (
            value_head(weights_path, group, layers, arrays) if metadata["value_head"] else None
        )
    return SavedPolicy(metadata, groups, values)


MAX_METADATA_BYTES = 16 * 2**20  # a policy.json is a few kilobytes
_GROUP_NAME = re.compile(r"[A-Za-z0-9_.-]+")


def read_metadata(meta_path: pathlib.Path) -> dict[str, Any]:
    """``policy.json`` read (UTF-8 JSON, bounded in size and nesting) and checked
    (``check_metadata``), with ``value_head`` filled in (False when absent).

    Args:
        meta_path: the ``policy.json`` file.

    Returns:
        The metadata, a new dict.

    Raises:
        PolicyFileError: the file cannot be read, is larger than
            ``MAX_METADATA_BYTES``, is not UTF-8 JSON, or fails ``check_metadata``.
    """
    try:
        with open(meta_path, "rb") as handle:
            data = handle.read(MAX_METADATA_BYTES + 1)
        if len(data) > MAX_METADATA_BYTES:
            raise PolicyFileError(
                f"{meta_path}: larger than {MAX_METADATA_BYTES:,} bytes, not policy metadata"
            )
        metadata = json.loads(data.decode("utf-8"))
    except OSError as error:
        raise PolicyFileError(f"{meta_path}: cannot read it ({error.strerror})") from None
    except UnicodeDecodeError as error:
        raise PolicyFileError(
            f"{meta_path}: not UTF-8 text (byte 0x{data[error.start]:02x} at offset "
            f"{error.start}), so not policy metadata (JSON)"
        ) from None
    except json.JSONDecodeError as error:
        raise PolicyFileError(
            f"{meta_path}: not a readable policy metadata file (invalid JSON: {error.msg} at "
            f"line {error.lineno} column {error.colno})"
        ) from None
    except ValueError as error:  # an integer of more digits than int() reads
        raise PolicyFileError(
            f"{meta_path}: not a readable policy metadata file ({str(error).split(';')[0]})"
        ) from None
    except RecursionError:
        raise PolicyFileError(
            f"{meta_path}: JSON nested too deeply to be policy metadata"
        ) from None
    check_metadata(meta_path, metadata)
    return {**metadata, "value_head": metadata.get("value_head", False)}


def check_metadata(meta_path: pathlib.Path, metadata: Any) -> None:
    """Check ``policy.json``'s schema: format, version, environment, observation
    layout and size, number of actions, roles, architecture and value head.

    Args:
        meta_path: the ``policy.json`` file, named in the error.
        metadata: the decoded JSON (any value: everything is checked).

    Raises:
        PolicyFileError: naming the first key that is missing or wrong.
    """
    if not isinstance(metadata, dict) or metadata.get("format") != FORMAT:
        raise PolicyFileError(f"{meta_path}: not a {FORMAT} file")
    version = metadata.get("format_version")
    if not is_whole_number(version) or version not in READABLE_VERSIONS:
        raise PolicyFileError(
            f"{meta_path}: policy format version {shortened(version)}; "
            f"this version reads {list(READABLE_VERSIONS)}"
        )
    if metadata.get("env") != ENV_NAME:
        raise PolicyFileError(
            f"{meta_path}: made for environment {shortened(metadata.get('env'))}, "
            f"this is {ENV_NAME!r}"
        )
    if metadata.get("observation_layout") != layout_hash():
        raise PolicyFileError(
            f"{meta_path}: made for another observation layout (hash "
            f"{str(metadata.get('observation_layout'))[:12]}..., "
            f"this env's is {layout_hash()[:12]}...)"
        )
    for key, expected in (("observation_size", OBS_SIZE), ("num_actions", NUM_ACTIONS)):
        if key in metadata and (not is_whole_number(metadata[key]) or metadata[key] != expected):
            raise PolicyFileError(
                f"{meta_path}: {key} {shortened(metadata[key])}, but this env's is {expected}"
            )
    roles = metadata.get("roles")
    if (
        not isinstance(roles, dict)
        or not roles
        or not set(roles) <= set(AGENTS)
        or not all(isinstance(g, str) and _GROUP_NAME.fullmatch(g) for g in roles.values())
    ):
        raise PolicyFileError(
            f"{meta_path}: 'roles' must map some of {list(AGENTS)} to weight group names "
            f"(letters, digits, _ . -), got {shortened(roles)}"
        )
    architecture = metadata.get("architecture")
    if not isinstance(architecture, dict):
        raise PolicyFileError(
            f"{meta_path}: 'architecture' must be an object with 'hidden' and 'activation', "
            f"got {shortened(architecture)}"
        )
    activation = architecture.get("activation")
    if activation not in ACTIVATIONS:
        raise PolicyFileError(
            f"{meta_path}: activation {shortened(activation)} is not one of {ACTIVATIONS}"
        )
    hidden = architecture.get("hidden")
    if not isinstance(hidden, list) or not all(is_whole_number(h) and h >= 1 for h in hidden):
        raise PolicyFileError(
            f"{meta_path}: architecture.hidden must list the hidden layer sizes (positive "
            f"whole numbers), got {shortened(hidden)}"
        )
    if not isinstance(metadata.get("value_head", False), bool):
        raise PolicyFileError(
            f"{meta_path}: value_head must be true or false, "
            f"got {shortened(metadata['value_head'])}"
        )
    steps = metadata.get("training_steps", 0)
    if not is_whole_number(steps) or steps < 0:
        raise PolicyFileError(
            f"{meta_path}: training_steps must be a whole number >= 0, got {shortened(steps)}"
        )
    problem = training_problem(metadata.get("training"), metadata.get("provenance"))
    if problem is not None:
        raise PolicyFileError(f"{meta_path}: {problem}")
    if "variant" in metadata:  # the smaller variant trained on (absent: the full game)
        try:
            parse_variant(metadata["variant"])
        except (ValueError, TypeError) as error:
            raise PolicyFileError(f"{meta_path}: 'variant': {error}") from None
