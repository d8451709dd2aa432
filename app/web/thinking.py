"""Agents think here, off the server's event loop, each decision bounded in time.

``ThinkPool`` runs decisions on a fixed number of worker threads, first come first
served. ``Thinker`` decides for the web application: it gives each client one
decision in the pool at a time (a client's other games wait for their turn, so no
client holds more than one worker), and waits at most ``limit`` seconds from the
moment a decision is asked for, waiting included. A decision that has not come by
then, or whose agent failed or answered an illegal action, is replaced by the
fallback: ``HeuristicAgent``'s choice for the same view, a legal action found in
well under a millisecond on the event loop itself. The late decision is dropped if
it never started; if it is running it finishes in the background (agents given to
the server stop their own search before the limit, see ``jekyll_hyde_app.web.opponents``)
and only then lets the client's next decision start, so that an agent is never
asked two things at once.

The workers are daemon threads: the server stops without waiting for a search
that is still running (a search in C cannot be interrupted).
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import operator
import os
import queue
import threading
from collections.abc import Callable
from typing import Any

from jekyll_hyde_agents import Agent, HeuristicAgent
from jekyll_hyde_env.engine.state import PlayerView

MAX_THINK_SECONDS = 3.0  # the default limit of one decision, waiting for a worker included
_STOP = object()


def default_workers() -> int:
    """The cores this process may run on: one worker thread each."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


class ThinkPool:
    """``workers`` daemon threads that run submitted calls in the order they came."""

    def __init__(self, workers: int) -> None:
        if workers < 1:
            raise ValueError(f"a think pool needs at least 1 worker, got {workers}")
        self.workers = workers
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._closed = False

    def submit(self, function: Callable[..., Any], *args: Any) -> concurrent.futures.Future:
        """Run ``function(*args)`` on a worker; its future can be cancelled until it starts."""
        future: concurrent.futures.Future = concurrent.futures.Future()
        with self._lock:
            if self._closed:
                raise RuntimeError("the think pool is closed")
            if len(self._threads) < self.workers:  # started on first use
                thread = threading.Thread(
                    target=self._work, name=f"think-{len(self._threads)}", daemon=True
                )
                thread.start()
                self._threads.append(thread)
            self._queue.put((future, function, args))
        return future

    def close(self) -> None:
        """Stop the workers once they finish what they run; queued calls are cancelled."""
        with self._lock:
            self._closed = True
            while True:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                item[0].cancel()
            for _ in self._threads:
                self._queue.put(_STOP)

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is _STOP:
                return
            future, function, args = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = function(*args)
            except BaseException as error:  # handed to whoever waits for the decision
                future.set_exception(error)
            else:
                future.set_result(result)


class _Turns:
    """One decision at a time per client; the client's other decisions queue in order."""

    def __init__(self) -> None:
        self._busy: set[str] = set()
        self._waiting: dict[str, collections.deque[asyncio.Future]] = {}

    async def acquire(self, client: str) -> None:
        if client not in self._busy:
            self._busy.add(client)
            return
        turn = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(client, collections.deque()).append(turn)
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():  # handed the turn while cancelled
                self.release(client)
            else:
                waiting = self._waiting.get(client)
                if waiting is not None and turn in waiting:
                    waiting.remove(turn)
            raise

    def release(self, client: str) -> None:
        waiting = self._waiting.get(client)
        while waiting:
            turn = waiting.popleft()
            if not turn.done():
                turn.set_result(None)  # the client stays busy: the turn passes on
                return
        self._waiting.pop(client, None)
        self._busy.discard(client)

    def busy(self, client: str) -> bool:
        return client in self._busy


class Thinker:
    """Agents' decisions for the web application, each within ``limit`` seconds."""

    def __init__(self, pool: ThinkPool, limit: float) -> None:
        if not 0 < limit < float("inf"):
            raise ValueError(f"the thinking limit must be a positive number of seconds: {limit}")
        self.pool = pool
        self.limit = limit
        self._turns = _Turns()
        self._fallback = HeuristicAgent()

    def fallback(self, view: PlayerView, legal: list[int]) -> int:
        """The heuristic's legal action for ``view`` (the first legal action if it fails)."""
        try:
            action = self._fallback.act(view, list(legal))
        except Exception:  # any legal action will do
            return legal[0]
        return action if action in legal else legal[0]

    async def decide(
        self, client: str, agent: Agent, view: PlayerView, legal: list[int]
    ) -> tuple[int, str | None]:
        """``agent``'s action for ``view``, or the fallback's with the reason it was needed.

        Waits ``limit`` seconds at most, for the client's turn and the agent together.
        """
        if len(legal) == 1:
            return legal[0], None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.limit
        try:
            await asyncio.wait_for(self._turns.acquire(client), self.limit)
        except asyncio.TimeoutError:
            return self.fallback(view, legal), self._late()
        try:
            future = self.pool.submit(agent.act, view, list(legal))
        except BaseException:
            self._turns.release(client)
            raise

        def finished(_: concurrent.futures.Future) -> None:
            try:
                loop.call_soon_threadsafe(self._turns.release, client)
            except RuntimeError:  # the event loop is closed: the server has stopped
                pass

        future.add_done_callback(finished)
        try:
            action = await asyncio.wait_for(
                asyncio.wrap_future(future), max(0.0, deadline - loop.time())
            )
        except asyncio.TimeoutError:
            return self.fallback(view, legal), self._late()
        except Exception as error:  # the agent failed: play on without it
            return self.fallback(view, legal), f"failed ({type(error).__name__})"
        try:
            action = operator.index(action)
        except TypeError:
            action = None
        if action not in legal:
            return self.fallback(view, legal), "answered an action that is not allowed"
        return action, None

    def _late(self) -> str:
        return f"did not decide within {self.limit:g} s"
