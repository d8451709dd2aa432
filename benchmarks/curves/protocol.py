"""How a trainer of the exploitability curves runs, checkpoints and is scored.

``benchmarks/exploitability_curves.py`` trains each trainer in a process of its own,
counts the CPU-seconds of that process and all its children (``cpu.py``), and when
the count passes a mark (a budget of the page, or a point of its curves) asks the
trainer for a checkpoint by writing the mark's name into ``OUT/checkpoint-request``.
The trainer checks for a request between its steps (``Requests.pending``), saves
what it would play now (``Requests.save``) and goes on; it is stopped once the last
mark is passed. Its checkpoints are then scored exactly: the module's
``probabilities`` gives its action probabilities at every information set of the
variant's tree (``jekyll_hyde_train.exact.table.InfosetTable``), and an exact best
response in each seat measures them.

A trainer module under ``benchmarks/curves/`` defines:

- ``NAME``: its name on the page (``expert-iteration``, ``openspiel-nfsp``, ...);
- ``LABEL``: one line for the page: the library and algorithm, and its settings;
- ``train(out, variant, seed, requests)``: train from scratch until stopped,
  saving a checkpoint whenever ``requests.pending()`` names one;
- ``probabilities(checkpoint, table)``: the checkpoint's probabilities, an array of
  ``(table.size, NUM_ACTIONS)`` with zeros on illegal actions and rows summing to 1,
  each row the play of the seat that acts at that information set.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import threading
import traceback
from collections.abc import Callable
from typing import Any

REQUEST_FILE = "checkpoint-request"
"""The file a request's mark name is written to, in the trainer's folder."""

CHECKPOINTS = "checkpoints"
"""The folder of a trainer's checkpoints, one folder per mark."""


class Requests:
    """The trainer's side of the checkpoint requests.

    Args:
        out: the trainer's folder.
    """

    def __init__(self, out: pathlib.Path):
        self.out = out
        self.request = out / REQUEST_FILE
        self.answered: set[str] = set()
        (out / CHECKPOINTS).mkdir(parents=True, exist_ok=True)

    def pending(self) -> str | None:
        """The name of the checkpoint asked for and not yet saved, or None.

        The request file is the parent's to clear (once the checkpoint is there), so
        that a request written just after a save is never lost; a name already
        answered is not pending.

        Returns:
            The mark's name (a folder name under ``checkpoints/``), or None.
        """
        try:
            name = self.request.read_text().strip()
        except FileNotFoundError:
            return None
        return name if name and name not in self.answered else None

    def save(self, name: str, write: Callable[[pathlib.Path], None]) -> pathlib.Path:
        """Save a checkpoint atomically, and mark its request answered.

        Args:
            name: the mark's name, from ``pending``.
            write: writes the checkpoint's files into the folder it is given.

        Returns:
            The checkpoint's folder, ``checkpoints/NAME``.
        """
        final = self.out / CHECKPOINTS / name
        partial = self.out / CHECKPOINTS / f".{name}.partial"
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir()
        write(partial)
        if final.exists():
            shutil.rmtree(final)
        os.replace(partial, final)
        self.answered.add(name)
        return final

    def serve(self, write: Callable[[pathlib.Path], None], every: float = 0.2) -> Server:
        """Answer requests from a thread, for trainers whose loop runs elsewhere.

        A save that fails (a file the trainer was replacing at that moment) is reported
        on stderr, the trainer's log, and tried again at the next look.

        Args:
            write: writes a checkpoint of the trainer as it is now.
            every: seconds between two looks for a request.

        Returns:
            The thread's handle; ``stop()`` ends it and waits for a save under way.
        """
        stopping = threading.Event()

        def loop() -> None:
            while not stopping.wait(every):
                name = self.pending()
                if name is None:
                    continue
                try:
                    self.save(name, write)
                except Exception:  # noqa: BLE001 - reported, and the request stays pending
                    traceback.print_exc()

        thread = threading.Thread(target=loop, daemon=True, name="checkpoints")
        thread.start()
        return Server(stopping, thread)


class Server:
    """A thread that answers checkpoint requests (``Requests.serve``)."""

    def __init__(self, stopping: threading.Event, thread: threading.Thread):
        self._stopping = stopping
        self._thread = thread

    def stop(self) -> None:
        """End the thread, after any save it has begun."""
        self._stopping.set()
        self._thread.join()


def checkpoint_names(out: pathlib.Path) -> list[str]:
    """The checkpoints a trainer saved, finished ones only.

    Args:
        out: the trainer's folder.

    Returns:
        Their names, sorted.
    """
    folder = out / CHECKPOINTS
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))


def check_trained_on(checkpoint: pathlib.Path, variant_spec: str, table: Any) -> None:
    """Refuse to score a checkpoint on the table of a variant it was not trained on.

    Args:
        checkpoint: the checkpoint's folder.
        variant_spec: the variant it records (``Variant.spec()``).
        table: the information sets it is to be scored on (``InfosetTable``).

    Raises:
        ValueError: the variants differ, naming both.
    """
    if variant_spec != table.tree.variant.spec():
        raise ValueError(
            f"{checkpoint} was trained on {variant_spec}, the table is of "
            f"{table.tree.variant.spec()}"
        )
