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
how to go on. However many times Ctrl-C is pressed meanwhile, one
``KeyboardInterrupt`` is raised. An import that runs past ``MAX_WAIT_SECONDS``
(one that hangs) is interrupted all the same. A block that ends while an
interrupt waits raises it as it ends, also in place of an error leaving it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
import types
from collections.abc import Iterator

RETRY_SECONDS = 0.05
MAX_WAIT_SECONDS = 3.0
IMPORT_MACHINERY = "<frozen importlib._bootstrap"


def inside_import(frame: types.FrameType | None) -> bool:
    """Whether the import machinery is anywhere on the stack that ``frame`` ends."""
    while frame is not None:
        if frame.f_code.co_filename.startswith(IMPORT_MACHINERY):
            return True
        frame = frame.f_back
    return False


class _Interrupts:
    """The SIGINT handler of ``deliver_interrupts`` and the interrupt it holds back."""

    def __init__(self) -> None:
        self.waiting_since: float | None = None  # an interrupt waits for an import
        self.closing = False  # the block is ending: record, never raise
        self.retry: threading.Timer | None = None
        self.retry_sent = False  # the signal about to arrive is a retry's

    def _ask_again(self) -> None:
        self.retry_sent = True
        os.kill(os.getpid(), signal.SIGINT)

    def handle(self, signum: int, frame: types.FrameType | None) -> None:
        from_retry, self.retry_sent = self.retry_sent, False
        if from_retry and self.waiting_since is None:
            return  # a retry that crossed the interrupt it repeated: already delivered
        now = time.monotonic()
        if self.waiting_since is None:
            self.waiting_since = now
        if self.closing:
            return
        if inside_import(frame) and now - self.waiting_since < MAX_WAIT_SECONDS:
            if self.retry is None or not self.retry.is_alive():  # one retry at a time
                self.retry = threading.Timer(RETRY_SECONDS, self._ask_again)
                self.retry.daemon = True  # a process that ends meanwhile does not wait for it
                self.retry.start()
            return
        self.waiting_since = None
        self.stop_retry()
        raise KeyboardInterrupt

    def stop_retry(self) -> None:
        retry, self.retry = self.retry, None
        if retry is not None:
            retry.cancel()
            retry.join()  # one past its wait sends its signal before we go on


_STATE = _Interrupts()


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
    _STATE.waiting_since, _STATE.closing, _STATE.retry_sent = None, False, False
    signal.signal(signal.SIGINT, _STATE.handle)
    try:
        yield
    except BaseException as error:
        waiting = _closed(previous)
        if waiting and not isinstance(error, KeyboardInterrupt):
            raise KeyboardInterrupt from error  # the error came of the interrupted import
        raise
    if _closed(previous):
        raise KeyboardInterrupt


def _closed(previous) -> bool:
    """Give SIGINT back to ``previous`` with no retry left; whether an interrupt waited."""
    _STATE.closing = True  # a signal handled from here on is only recorded
    _STATE.stop_retry()
    signal.signal(signal.SIGINT, previous)  # runs a signal still pending, recorded
    waiting = _STATE.waiting_since is not None
    _STATE.waiting_since, _STATE.closing = None, False
    return waiting
