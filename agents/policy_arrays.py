"""A saved policy's arrays (``policy.npz``), read without trusting the file.

``read_npz_headers`` reads each array's header (shape and dtype) before any data, so
that a file declaring more than ``MAX_ARCHIVE_BYTES`` or arrays of the wrong shape is
refused before it is loaded; ``check_array_headers`` holds the headers against the
layer sizes that ``policy.json`` declares (``jekyll_hyde_agents.policy_file``), and
``load_npz`` reads the arrays named. Nothing in the file is unpickled.
"""

from __future__ import annotations

import math
import pathlib
import re
import zipfile
import zlib
from typing import Any, NamedTuple

import numpy as np

from jekyll_hyde_agents.policy_format import (
    METADATA_FILE,
    PolicyFileError,
    is_whole_number,
    shortened,
)
from jekyll_hyde_env.engine.cards import NUM_ACTIONS
from jekyll_hyde_env.observation import OBS_SIZE

MAX_ARCHIVE_BYTES = 2**30  # the arrays of one .npz, as their headers declare them
_ARRAY_NAME = re.compile(r"(?P<group>[^/]+)/(?P<kind>w|b)(?P<index>0|[1-9][0-9]{0,3})|[^/]+/v[wb]")


class ArrayHeader(NamedTuple):
    """What an ``.npy`` member's header declares: its shape and dtype."""

    shape: tuple[int, ...]
    dtype: np.dtype


def read_npz_headers(
    path: pathlib.Path, max_bytes: int = MAX_ARCHIVE_BYTES
) -> dict[str, ArrayHeader]:
    """The header of every array in an ``.npz`` archive, read without loading any array.

    Each member must be an ``.npy`` array of plain numbers (no objects, which
    would need unpickling), with a shape of whole numbers whose size is the
    number of bytes the member holds, and all of them together at most
    ``max_bytes``: a header that claims a huge array is refused here, before
    anything is allocated.

    Args:
        path: the ``.npz`` file.
        max_bytes: the most bytes all the arrays together may declare.

    Returns:
        Each array's name (its member name without ``.npy``) -> its ``ArrayHeader``.

    Raises:
        ValueError: ``"<path>: <problem>"``.
    """
    if not zipfile.is_zipfile(path):
        raise ValueError(f"{path}: corrupt, not an array archive (.npz)")
    headers: dict[str, ArrayHeader] = {}
    total = 0
    try:
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                if not info.filename.endswith(".npy"):
                    raise ValueError(
                        f"{path}: corrupt: member {info.filename!r} is not an array (.npy)"
                    )
                name = info.filename[: -len(".npy")]
                with archive.open(info) as member:
                    header = _read_header(path, name, member)
                    offset = member.tell()
                size = math.prod(header.shape) * header.dtype.itemsize
                if size != info.file_size - offset:
                    raise ValueError(
                        f"{path}: corrupt: {name!r} claims shape {header.shape} "
                        f"({size:,} bytes) but holds {info.file_size - offset:,} bytes"
                    )
                total += size
                if total > max_bytes:
                    raise ValueError(
                        f"{path}: its arrays claim more than {max_bytes:,} bytes, far more "
                        "than a file of this kind holds"
                    )
                headers[name] = header
    except (OSError, EOFError, zipfile.BadZipFile, zlib.error) as error:
        raise ValueError(f"{path}: corrupt array archive ({error})") from None
    return headers


def _read_header(path: pathlib.Path, name: str, member: Any) -> ArrayHeader:
    """One ``.npy`` header: version 1.0 or 2.0, a plain dtype, a shape of whole numbers."""
    try:
        version = np.lib.format.read_magic(member)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(member)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(member)
        else:
            raise ValueError(f".npy format version {version} is not read here")
    except ValueError as error:
        raise ValueError(f"{path}: corrupt array {name!r} ({error})") from None
    if dtype.hasobject:
        raise ValueError(
            f"{path}: refused, it holds objects that would need unpickling, "
            "which could run code; it may hold plain number arrays only"
        )
    if dtype.kind not in "biuf" or dtype.fields is not None or dtype.subdtype is not None:
        raise ValueError(f"{path}: corrupt: {name!r} holds {dtype}, not plain numbers")
    if not all(is_whole_number(n) and n >= 0 for n in shape) or fortran not in (True, False):
        raise ValueError(f"{path}: corrupt: {name!r} claims the shape {shortened(shape)}")
    return ArrayHeader(tuple(shape), dtype)


def _check_value_header(
    path: pathlib.Path, group: str, headers: dict[str, ArrayHeader], hidden: list[int]
) -> None:
    weight, bias = headers.get(f"{group}/vw"), headers.get(f"{group}/vb")
    if weight is None or bias is None:
        raise PolicyFileError(f"{path}: the metadata promises a value head; {group!r} has none")
    if not hidden:
        raise PolicyFileError(f"{path}: a value head needs a hidden layer; {group!r} has none")
    if weight.dtype.kind != "f" or bias.dtype.kind != "f":
        raise PolicyFileError(f"{path}: the value head of {group!r} is not floating point")
    if weight.shape != (hidden[-1],) or bias.shape != (1,):
        raise PolicyFileError(
            f"{path}: value head of {group!r} has shape {weight.shape}/{bias.shape}, "
            f"expected ({hidden[-1]},) and (1,)"
        )


def load_npz(path: pathlib.Path, names: list[str]) -> dict[str, np.ndarray]:
    """The arrays ``names`` of an ``.npz`` whose headers were checked; never unpickles.

    Args:
        path: the ``.npz`` file.
        names: the arrays to read (names without ``.npy``).

    Returns:
        Each name -> its array, as stored.

    Raises:
        ValueError: ``"<path>: <problem>"`` (data cut short or damaged).
    """
    try:
        with np.load(path, allow_pickle=False) as archive:
            return {name: archive[name] for name in names}
    except (ValueError, OSError, EOFError, zipfile.BadZipFile, zlib.error, KeyError) as error:
        raise ValueError(f"{path}: corrupt array archive ({error})") from None


def check_array_headers(
    path: pathlib.Path, metadata: dict[str, Any], headers: dict[str, ArrayHeader]
) -> list[str]:
    """Check the arrays' names, dtypes and shapes against the metadata, before loading.

    Each group that ``roles`` names holds layers ``w0, b0, w1, b1, ...`` of
    floats, the first reading the observation (``OBS_SIZE`` columns), each the
    one before's output, the last giving the ``NUM_ACTIONS`` logits; with
    ``value_head``, also ``vw`` (the last hidden layer's size) and ``vb`` (1).
    Every layer has at least one unit, ``architecture.hidden`` must be every
    group's hidden sizes, and no other array may be there.

    Args:
        path: the ``.npz`` file, named in the errors.
        metadata: the checked ``policy.json`` (``read_metadata``): its ``roles``,
            ``value_head`` and ``architecture.hidden`` are read.
        headers: the arrays' headers (``read_npz_headers``).

    Returns:
        The names of the arrays to load.

    Raises:
        PolicyFileError: naming the first array or key that disagrees.
    """
    groups = dict.fromkeys(metadata["roles"].values())
    extra = [n for n in headers if not _ARRAY_NAME.fullmatch(n) or n.split("/")[0] not in groups]
    if extra:
        raise PolicyFileError(
            f"{path}: arrays {extra[:5]} belong to no weight group of the metadata's roles "
            f"({list(groups)}); expected <group>/w<i>, <group>/b<i>, <group>/vw, <group>/vb"
        )
    wanted: list[str] = []
    sizes = {}
    for group in groups:
        count = 0
        while f"{group}/w{count}" in headers:
            count += 1
        if not count:
            raise PolicyFileError(f"{path}: no weights for group {group!r}")
        size = OBS_SIZE
        for i in range(count):
            weight, bias = headers[f"{group}/w{i}"], headers.get(f"{group}/b{i}")
            if weight.dtype.kind != "f" or bias is None or bias.dtype.kind != "f":
                raise PolicyFileError(f"{path}: layer {i} of {group!r} is not floating point")
            if len(weight.shape) != 2 or weight.shape[1] != size or bias.shape != weight.shape[:1]:
                raise PolicyFileError(
                    f"{path}: layer {i} of {group!r} has shape {weight.shape}/{bias.shape}, "
                    f"expected (*, {size}) and a matching bias"
                )
            if weight.shape[0] < 1:
                raise PolicyFileError(
                    f"{path}: layer {i} of {group!r} has no units (shape {weight.shape}); "
                    "every layer has at least one"
                )
            size = weight.shape[0]
            wanted += [f"{group}/w{i}", f"{group}/b{i}"]
        if size != NUM_ACTIONS:
            raise PolicyFileError(
                f"{path}: group {group!r} gives {size} outputs, expected {NUM_ACTIONS}"
            )
        sizes[group] = [headers[f"{group}/w{i}"].shape[0] for i in range(count - 1)]
        heads = [f"{group}/vw", f"{group}/vb"]
        if metadata["value_head"]:
            _check_value_header(path, group, headers, sizes[group])
            wanted += heads
        elif any(name in headers for name in heads):
            raise PolicyFileError(
                f"{path}: {group!r} has a value head, but the metadata says value_head false"
            )
    leftover = [name for name in headers if name not in wanted]
    if leftover:
        raise PolicyFileError(
            f"{path}: arrays {leftover[:5]} are not part of any layer (the layers are "
            "numbered from 0 without gaps, each weight with its bias)"
        )
    hidden = metadata["architecture"]["hidden"]
    for group, group_sizes in sizes.items():
        if group_sizes != hidden:
            raise PolicyFileError(
                f"{path.with_name(METADATA_FILE)}: architecture.hidden {hidden} disagrees with "
                f"the weights of group {group!r}, whose hidden layer sizes are "
                f"{shortened(group_sizes)} (every group has the metadata's sizes)"
            )
    return [name for name in wanted if name in headers]


def value_head(
    path: pathlib.Path, group: str, layers: list, arrays: dict[str, np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """The value head of a weight group, checked against its layers once loaded.

    Args:
        path: the ``.npz`` file, named in the errors.
        group: the weight group's name.
        layers: the group's layers as loaded, (weight, bias) pairs; the last layer's
            input size is the value head's.
        arrays: the loaded arrays (``load_npz``), holding ``<group>/vw`` and
            ``<group>/vb``.

    Returns:
        weight: float32 (last hidden size,).
        bias: float32 (1,).

    Raises:
        PolicyFileError: the head is missing, the group has no hidden layer, the
            head is not floating point or of the wrong shape, or holds NaN or
            infinite values.
    """
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


def check_layers(path: pathlib.Path, group: str, layers: list) -> None:
    """Check a weight group's layers once loaded: floating point, shapes that chain
    from the observation (``OBS_SIZE`` inputs) to the ``NUM_ACTIONS`` logits, and
    finite values.

    Args:
        path: the ``.npz`` file, named in the errors.
        group: the weight group's name.
        layers: the group's layers as loaded, (weight out x in, bias) pairs.

    Raises:
        PolicyFileError: no layers, or the first layer that is not floating point,
            has the wrong shape or holds NaN or infinite values; or a last layer
            that does not give ``NUM_ACTIONS`` outputs.
    """
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
