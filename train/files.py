"""Writing run files so that a crash never leaves a half-written one behind."""

from __future__ import annotations

import os
import pathlib
import shutil
from collections.abc import Callable


def atomic_write_bytes(path: pathlib.Path, data: bytes) -> None:
    """Write ``data`` to a temporary file, flush it to disk, then rename it over ``path``."""
    temporary = path.with_name(f".{path.name}.tmp")
    with open(temporary, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


def atomic_write_text(path: pathlib.Path, text: str) -> None:
    """``atomic_write_bytes`` for text (UTF-8)."""
    atomic_write_bytes(path, text.encode())


def replace_folder(parent: pathlib.Path, name: str, fill: Callable[[pathlib.Path], None]) -> None:
    """Make ``parent/name`` anew as one unit.

    ``fill(folder)`` writes into ``.<name>.new/``, which is then swapped in by
    renames, so ``parent/name`` always holds a complete set of files. A crash
    between the two renames leaves the previous set in ``.<name>.old/``.
    """
    new, current, old = (parent / n for n in (f".{name}.new", name, f".{name}.old"))
    shutil.rmtree(new, ignore_errors=True)
    new.mkdir(parents=True)
    fill(new)
    shutil.rmtree(old, ignore_errors=True)
    if current.exists():
        os.rename(current, old)
    os.rename(new, current)
    shutil.rmtree(old, ignore_errors=True)
