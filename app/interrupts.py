"""Ctrl-C that always reaches the command, never inside an import.

Python raises ``KeyboardInterrupt`` wherever the main thread happens to be when
SIGINT arrives. The commands import heavy modules lazily (torch, and torch's
own lazy imports on the first optimiser step), and an interrupt raised inside
an import can be lost or turned into another error: raised in one of
importlib's weak-reference callbacks it is printed as "Exception ignored" and
the command runs on, and raised in the middle of a half-initialised module it
surfaces later as an unrelated error (an exit status of 2 instead of 130).

``deliver_interrupts`` installs a SIGINT handler that raises
``KeyboardInterrupt`` as usual, except while an import is running on the
main thread's stack: then it asks again a moment later (``RETRY_SECONDS``),
until the import has finished, so that the interrupt lands in the command's
own code, where its ``except KeyboardInterrupt`` saves what it must and says
how to go on. A block that ends while an interrupt waits raises it as it ends.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import types
from collections.abc import Iterator

RETRY_SECONDS = 0.05
IMPORT_MACHINERY = ("<frozen importlib._bootstrap", "importlib/_bootstrap")


def inside_import(frame: types.FrameType | None) -> bool:
    """Whether the import machinery is anywhere on the stack that ``frame`` ends."""
    while frame is not None:
        if frame.f_code.co_filename.startswith(IMPORT_MACHINERY):
            return True
        frame = frame.f_back
    return False


class _Deferred:
    """The interrupts put off until an import is done, and their retries."""

    def __init__(self) -> None:
        self.waiting = False
        self.retries: list[threading.Timer] = []

    def defer(self) -> None:
        self.waiting = True
        retry = threading.Timer(RETRY_SECONDS, os.kill, (os.getpid(), signal.SIGINT))
        retry.daemon = True  # a process that ends meanwhile does not wait for it
        self.retries = [timer for timer in self.retries if timer.is_alive()] + [retry]
        retry.start()

    def cancel(self) -> None:
        for timer in self.retries:
            timer.cancel()
        self.retries = []


_DEFERRED = _Deferred()


def _handler(signum: int, frame: types.FrameType | None) -> None:
    if inside_import(frame):
        _DEFERRED.defer()
        return
    _DEFERRED.waiting = False
    raise KeyboardInterrupt


@contextlib.contextmanager
def deliver_interrupts() -> Iterator[None]:
    """Within the block, Ctrl-C raises ``KeyboardInterrupt`` outside imports only.

    Does nothing off the main thread (where Python allows no signal handler) or
    when SIGINT is not Python's default handler (ignored, or someone else's).
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    if previous is not signal.default_int_handler:
        yield
        return
    signal.signal(signal.SIGINT, _handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        _DEFERRED.cancel()  # no retry may reach the code after the block
        waiting, _DEFERRED.waiting = _DEFERRED.waiting, False
    if waiting:  # the block ended while an interrupt waited for an import
        raise KeyboardInterrupt
