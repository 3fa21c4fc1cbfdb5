"""The checks engine on one thread beside the event loop: loaded after ``initialize``, idle work.

The engine (:class:`~rewardkit_lsp.analysis.AnalysisService`) lives in the server's process and
is only ever touched from one thread, so it needs no locks, and the event loop keeps reading the
client while a document is analysed: a version overtaken meanwhile is never published, and
``$/cancelRequest`` or ``shutdown`` are answered at once. Requests reach the engine in the order
they were made.

Start-up: the engine is imported, and warmed up on a small module, on that thread once
``initialize`` has been answered, so the editor's first answer waits only for pygls. When the
client is quiet, the thread reads the workspace's files (RK401 across files), one file per
step so a request waits for one file at most, and then runs a full garbage collection
(:mod:`rewardkit_lsp.memory`): collector pauses never land on an edit.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rewardkit_lsp import memory

if TYPE_CHECKING:
    from rewardkit_lsp.analysis import AnalysisService

SCAN_AFTER_SECONDS = 0.5
"""Without a request for this long, the workspace scan takes a step (then another, until done)."""
COLLECT_AFTER_SECONDS = 2.0
"""Without a request for this long, and the scan done, a full garbage collection runs."""

WARM_UP = """from rewardkit import reward


@reward(name="warm_up")
def warm_up(final_response: str, answr: str) -> dict:
    return {"score": 1}
"""
"""A module for a first analysis at start-up: the engine's lazy set-up happens before any edit."""


class AnalysisError(RuntimeError):
    """The engine raised while answering; the message holds its traceback."""


def _load_engine(notify: Callable[[str, Any], None]) -> AnalysisService:
    """Import the engine, run it once on :data:`WARM_UP`, freeze what start-up left alive."""
    from rewardkit.checks import CheckConfig, ModuleAnalyzer, TaskField
    from rewardkit_lsp.analysis import AnalysisService

    service = AnalysisService(notify)
    config = CheckConfig(task_fields={"answer": TaskField("answer", "pyproject")})
    ModuleAnalyzer().analyze(WARM_UP, None, config)
    memory.freeze()
    return service


class AnalysisThread:
    """Requests to the engine as awaitables; its unsolicited messages go to ``on_notify``."""

    def __init__(self) -> None:
        self.on_notify: Callable[[str, Any], None] = lambda kind, payload: None
        self._executor = concurrent.futures.ThreadPoolExecutor(1, "rewardkit-analysis")
        self._loop: asyncio.AbstractEventLoop | None = None
        self._service: concurrent.futures.Future[AnalysisService] | None = None
        self._in_flight = 0
        self._last_request = time.monotonic()
        self._collected = True
        self._idle: asyncio.TimerHandle | None = None

    def load(self) -> None:
        """Start importing the engine on the thread (once; call it after ``initialize``)."""
        if self._service is not None:
            return
        self._loop = asyncio.get_running_loop()
        loop = self._loop

        def notify(kind: str, payload: Any) -> None:  # from the analysis thread
            loop.call_soon_threadsafe(self.on_notify, kind, payload)

        self._service = self._executor.submit(_load_engine, notify)

    def request(self, kind: str, **payload: Any) -> asyncio.Future[Any]:
        """Ask the engine (``AnalysisService.on_<kind>``); loads it first if nobody did."""
        self.load()
        assert self._loop is not None
        assert self._service is not None
        service = self._service
        self._in_flight += 1
        self._last_request = time.monotonic()
        self._collected = False

        def answer() -> Any:
            try:
                return service.result().handle(kind, payload)
            except Exception:
                raise AnalysisError(traceback.format_exc()) from None

        future = asyncio.wrap_future(self._executor.submit(answer), loop=self._loop)
        future.add_done_callback(self._answered)
        return future

    def _answered(self, _: Any) -> None:
        self._in_flight -= 1
        self._schedule_idle(SCAN_AFTER_SECONDS)

    def settle_soon(self) -> None:
        """After a reply went out: free its cyclic garbage, off the path of that reply."""
        if self._loop is not None:
            self._loop.call_soon(memory.settle)

    # -- idle work ----------------------------------------------------------------------------

    def _schedule_idle(self, delay: float) -> None:
        if self._idle is not None:
            self._idle.cancel()
        assert self._loop is not None
        self._idle = self._loop.call_later(delay, self._on_idle)

    def _on_idle(self) -> None:
        self._idle = None
        service = self._service
        if self._in_flight or service is None or not service.done() or service.exception():
            return  # a request is running: its answer schedules the next idle check
        quiet = time.monotonic() - self._last_request
        engine = service.result()
        if engine.has_background_work:
            if quiet < SCAN_AFTER_SECONDS:
                self._schedule_idle(SCAN_AFTER_SECONDS - quiet)
                return
            self._in_flight += 1
            step = asyncio.wrap_future(self._executor.submit(engine.background_step))
            step.add_done_callback(self._stepped)
        elif not self._collected:
            if quiet < COLLECT_AFTER_SECONDS:
                self._schedule_idle(COLLECT_AFTER_SECONDS - quiet)
                return
            memory.collect_now()
            self._collected = True

    def _stepped(self, step: asyncio.Future[None]) -> None:
        self._in_flight -= 1
        error = None if step.cancelled() else step.exception()
        if error is not None:  # reported; the scan resumes after the next request
            self.on_notify("warn", f"reading the workspace's files failed: {error!r}")
            return
        self._schedule_idle(0)

    def close(self) -> None:
        """Stop the thread (a running analysis finishes; queued ones are dropped)."""
        if self._idle is not None:
            self._idle.cancel()
        self._executor.shutdown(wait=False, cancel_futures=True)


__all__ = ["AnalysisError", "AnalysisThread"]
