"""Agents think here, off the server's event loop, each decision bounded in time.

``ThinkPool`` runs decisions on a fixed number of worker threads, first come first
served. ``Thinker`` decides for the web application: it gives each client one
decision in the pool at a time (a client's other games wait for their turn, so no
client holds more than one worker), and waits at most ``limit`` seconds from the
moment a decision is asked for, waiting included. One request may wait for several
decisions (an agent's exchange picks, then its lead and colour): together they wait
at most ``request_limit`` seconds from the request's ``deadline``, so a decision gets
what is left of it when that is less than ``limit``, and none once it has passed. A
decision that has not come in time, or whose agent failed or answered an illegal
action, is replaced by the fallback: ``HeuristicAgent``'s choice for the same view,
a legal action found in well under a millisecond on the event loop itself. The late
decision is dropped if it never started; if it is running it finishes in the
background (agents given to the server stop their own search before the limit, see
``jekyll_hyde_app.web.opponents``) and only then lets the client's next decision
start, so that an agent is never asked two things at once.

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
REQUEST_DECISIONS = 2.0  # one request's decisions wait this many decisions' limits in all
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
    """Agents' decisions for the web application, each within ``limit`` seconds, those of
    one request within ``request_limit`` seconds together (None: ``REQUEST_DECISIONS``
    times ``limit``)."""

    def __init__(self, pool: ThinkPool, limit: float, request_limit: float | None = None) -> None:
        if not 0 < limit < float("inf"):
            raise ValueError(f"the thinking limit must be a positive number of seconds: {limit}")
        if request_limit is None:
            request_limit = REQUEST_DECISIONS * limit
        if not limit <= request_limit < float("inf"):
            raise ValueError(
                f"a request's thinking limit must be at least one decision's ({limit:g} s) "
                f"and finite: {request_limit}"
            )
        self.pool = pool
        self.limit = limit
        self.request_limit = request_limit
        self._turns = _Turns()
        self._fallback = HeuristicAgent()

    def deadline(self) -> float:
        """The deadline of a request that starts now, on the running event loop's clock:
        the one its decisions share (``decide``)."""
        return asyncio.get_running_loop().time() + self.request_limit

    def fallback(self, view: PlayerView, legal: list[int]) -> int:
        """The heuristic's legal action for ``view`` (the first legal action if it fails)."""
        try:
            action = self._fallback.act(view, list(legal))
        except Exception:  # any legal action will do
            return legal[0]
        return action if action in legal else legal[0]

    async def decide(
        self,
        client: str,
        agent: Agent,
        view: PlayerView,
        legal: list[int],
        request_deadline: float | None = None,
    ) -> tuple[int, str | None]:
        """``agent``'s action for ``view``, or the fallback's with the reason it was needed.

        Waits ``limit`` seconds at most, for the client's turn and the agent together,
        and never past ``request_deadline`` (``deadline``: the request's, shared by its
        decisions); once that has passed, the agent is not asked at all.
        """
        if len(legal) == 1:
            return legal[0], None
        loop = asyncio.get_running_loop()
        now = loop.time()
        deadline, late = now + self.limit, self._late()
        if request_deadline is not None and request_deadline < deadline:
            deadline, late = request_deadline, self._request_late()
        if deadline <= now:
            return self.fallback(view, legal), late
        try:
            await asyncio.wait_for(self._turns.acquire(client), deadline - now)
        except asyncio.TimeoutError:
            return self.fallback(view, legal), late
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
            return self.fallback(view, legal), late
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

    def _request_late(self) -> str:
        return f"had no time left of the {self.request_limit:g} s one request gives its agents"
