"""Ctrl-C reaches the command's code, never an import (jekyll_hyde_app.interrupts)."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

import pytest

from jekyll_hyde_app import interrupts
from jekyll_hyde_app.interrupts import deliver_interrupts, inside_import

# A module whose import is interrupted half-way: it sends SIGINT to its own process,
# then goes on for a while before it marks itself complete.
SLOW_MODULE = """
import os, signal, time
os.kill(os.getpid(), signal.SIGINT)
deadline = time.monotonic() + 0.3
while time.monotonic() < deadline:
    sum(range(1000))
COMPLETE = True
"""


def _import_fresh(tmp_path, monkeypatch, name: str, text: str = SLOW_MODULE):
    (tmp_path / f"{name}.py").write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop(name, None)
    return __import__(name)


def test_an_interrupt_during_an_import_lands_after_it(tmp_path, monkeypatch):
    with deliver_interrupts(), pytest.raises(KeyboardInterrupt):
        _import_fresh(tmp_path, monkeypatch, "slow_module_guarded")
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:  # the interrupt comes here, once the import is done
            time.sleep(0.01)
        pytest.fail("the interrupt was lost")
    assert sys.modules["slow_module_guarded"].COMPLETE


def test_without_the_guard_the_interrupt_breaks_the_import(tmp_path, monkeypatch):
    # What deliver_interrupts prevents: Python's own handler raises inside the import.
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    with pytest.raises(KeyboardInterrupt):
        _import_fresh(tmp_path, monkeypatch, "slow_module_bare")
    assert "slow_module_bare" not in sys.modules


def test_a_block_that_ends_while_an_interrupt_waits_raises_it(tmp_path, monkeypatch):
    with pytest.raises(KeyboardInterrupt), deliver_interrupts():
        _import_fresh(tmp_path, monkeypatch, "slow_module_last")  # the block's last step
    assert sys.modules["slow_module_last"].COMPLETE
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    try:
        time.sleep(0.2)
    except KeyboardInterrupt:
        pytest.fail("a retry outlived the block and interrupted the code after it")


def test_ctrl_c_pressed_again_during_an_import_interrupts_once(tmp_path, monkeypatch):
    pressed_thrice = SLOW_MODULE.replace(
        "os.kill(os.getpid(), signal.SIGINT)",
        "for _ in range(3):\n    os.kill(os.getpid(), signal.SIGINT)\n    time.sleep(0.07)",
    )
    caught, saved = 0, False
    with deliver_interrupts():
        try:
            _import_fresh(tmp_path, monkeypatch, "slow_module_thrice", pressed_thrice)
            time.sleep(5)
        except KeyboardInterrupt:
            caught += 1
            time.sleep(0.3)  # the command saving its work: no second interrupt lands here
            saved = True
    assert (caught, saved) == (1, True)
    assert sys.modules["slow_module_thrice"].COMPLETE


def test_one_retry_waits_however_often_ctrl_c_is_pressed(tmp_path, monkeypatch):
    presses = (
        "import sys, threading\nfrom jekyll_hyde_app.interrupts import _STATE\n"
        "before = threading.active_count()\n"
        "for _ in range(3):\n    _STATE.handle(2, sys._getframe())\n"
        "TIMERS = threading.active_count() - before\n"
    )
    with pytest.raises(KeyboardInterrupt), deliver_interrupts():
        module = _import_fresh(tmp_path, monkeypatch, "three_presses", presses)
        time.sleep(5)  # the one retry interrupts this
    assert module.TIMERS == 1


def test_a_retry_that_crosses_its_delivered_interrupt_is_dropped():
    with deliver_interrupts():
        interrupts._STATE.retry_sent = True  # as a retry fired just as the interrupt landed
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.1)  # nothing is raised: that interrupt was delivered already
        except KeyboardInterrupt:
            pytest.fail("a retry of an interrupt already delivered interrupted again")
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)  # a new Ctrl-C is one again
            time.sleep(5)


def test_an_import_that_hangs_is_interrupted_all_the_same(tmp_path, monkeypatch):
    monkeypatch.setattr(interrupts, "MAX_WAIT_SECONDS", 0.3)
    hanging = SLOW_MODULE.replace("+ 0.3", "+ 30")
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt), deliver_interrupts():
        _import_fresh(tmp_path, monkeypatch, "slow_module_hanging", hanging)
    assert time.monotonic() - started < 5
    assert "slow_module_hanging" not in sys.modules


def test_an_error_leaving_the_block_while_an_interrupt_waits_is_the_interrupt(
    tmp_path, monkeypatch
):
    garbled = SLOW_MODULE.replace("COMPLETE = True", "raise ValueError('half-initialised')")
    with pytest.raises(KeyboardInterrupt) as caught, deliver_interrupts():
        _import_fresh(tmp_path, monkeypatch, "slow_module_garbled", garbled)
    assert isinstance(caught.value.__cause__, ValueError)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    with pytest.raises(ValueError), deliver_interrupts():  # with no interrupt: the error itself
        raise ValueError("no interrupt here")


def test_an_interrupt_outside_imports_is_raised_at_once():
    with deliver_interrupts(), pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)
        pytest.fail("the interrupt was not raised")


def test_the_handler_is_given_back_and_an_ignored_sigint_stays_ignored():
    with deliver_interrupts():
        assert signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with deliver_interrupts():
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)


def test_off_the_main_thread_it_changes_nothing():
    seen = []

    def run():
        with deliver_interrupts():
            seen.append(signal.getsignal(signal.SIGINT))

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    assert seen == [signal.default_int_handler]


def test_inside_import_reads_the_whole_stack(tmp_path, monkeypatch):
    assert not inside_import(sys._getframe())
    (tmp_path / "probe_module.py").write_text(
        "import sys\nfrom jekyll_hyde_app.interrupts import inside_import\n"
        "def nested():\n    return inside_import(sys._getframe())\n"
        "DURING_IMPORT = nested()\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("probe_module", None)
    module = __import__("probe_module")
    assert module.DURING_IMPORT is True
    assert module.nested() is False  # the same code, called after the import
