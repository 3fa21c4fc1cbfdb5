"""The checks engine in the server's process: loaded on a thread after ``initialize``, then run
on the event loop, with the workspace scan and full garbage collections in idle time.

Start-up: the engine is imported, and warmed up on a small module, on a thread once
``initialize`` has been answered, so the editor's first answer waits only for pygls and the
engine is ready by the time the first document is opened.

Requests run on the event loop itself (an analysis of one edit takes about a millisecond; a hop
to a thread and back costs a fifth of that). After each, the loop reads the input that arrived
meanwhile before the caller goes on, so a version overtaken while it was analysed is not
published. The engine (:class:`~rewardkit_lsp.analysis.AnalysisService`) is thus only ever used
from one thread and needs no locks.

When the client pauses, the open documents whose RK401 across files changed meanwhile are
published once (not once per change). When it is quiet, the workspace's files are read for
RK401 across files, one file per loop iteration so a request waits for one file at most; then a
full garbage collection runs
(:mod:`rewardkit_lsp.memory`): collector pauses never land on an edit.
"""

from __future__ import annotations

import asyncio
import time
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rewardkit_lsp import memory

if TYPE_CHECKING:
    from rewardkit_lsp.analysis import AnalysisService

SCAN_AFTER_SECONDS = 0.5
"""Without a request for this long, the workspace scan takes a step (then another, until done)."""
SETTLE_AFTER_SECONDS = 0.05
"""Without a request for this long, the garbage of the last replies is freed (young generations)."""
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
    """Import the engine and run it once on :data:`WARM_UP` (on the loading thread)."""
    from rewardkit.checks import CheckConfig, ModuleAnalyzer, TaskField
    from rewardkit_lsp.analysis import AnalysisService

    service = AnalysisService(notify)
    config = CheckConfig(task_fields={"answer": TaskField("answer", "pyproject")})
    ModuleAnalyzer().analyze(WARM_UP, None, config)
    return service


async def read_pending_input() -> None:
    """Let the event loop read what the client sent meanwhile: the next iteration polls the
    input and runs its handlers after this task's step, so this task yields twice."""
    await asyncio.sleep(0)
    await asyncio.sleep(0)


class EngineHost:
    """Requests to the engine as coroutines; its unsolicited messages go to ``on_notify``."""

    def __init__(self) -> None:
        self.on_notify: Callable[[str, Any], None] = lambda kind, payload: None
        self._loading: asyncio.Future[AnalysisService] | None = None
        self._service: AnalysisService | None = None
        self._last_request = time.monotonic()
        self._settled = True
        self._collected = True
        self._idle: asyncio.TimerHandle | None = None

    def load(self) -> None:
        """Start importing the engine on a thread (once; call it after ``initialize``)."""
        if self._loading is not None:
            return
        self._loading = asyncio.get_running_loop().run_in_executor(
            None, _load_engine, lambda kind, data: self.on_notify(kind, data)
        )  # a failure to load is raised to every request

    async def request(self, kind: str, **payload: Any) -> Any:
        """Answer with ``AnalysisService.on_<kind>(**payload)``; loads the engine if nobody did."""
        self.load()
        assert self._loading is not None
        if self._service is None:
            self._service = await self._loading
            memory.freeze()  # what start-up left alive is never garbage
        self._last_request = time.monotonic()
        self._settled = self._collected = False
        try:
            return self._service.handle(kind, payload)
        except Exception:
            raise AnalysisError(traceback.format_exc()) from None
        finally:
            self._schedule_idle(SETTLE_AFTER_SECONDS)
            await read_pending_input()

    def close(self) -> None:
        """Stop the idle work (the server is exiting)."""
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None

    # -- idle work ----------------------------------------------------------------------------

    def _schedule_idle(self, delay: float) -> None:
        if self._idle is not None:
            self._idle.cancel()
        self._idle = asyncio.get_running_loop().call_later(delay, self._on_idle)

    def _on_idle(self) -> None:
        """One piece of idle work, as the time since the last request allows."""
        self._idle = None
        service = self._service
        if service is None:
            return
        quiet = time.monotonic() - self._last_request
        if not self._settled:
            self._settled = True
            memory.settle()
        if service.has_stale:  # other documents' RK401, once per pause rather than per change
            try:
                service.publish_stale()
            except Exception as error:  # reported; the documents get it with their next edit
                self.on_notify("warn", f"updating other documents' RK401 failed: {error!r}")
        if service.has_background_work:
            if quiet < SCAN_AFTER_SECONDS:
                self._schedule_idle(SCAN_AFTER_SECONDS - quiet)
                return
            try:
                service.background_step()
            except Exception as error:  # reported; the scan resumes after the next request
                self.on_notify("warn", f"reading the workspace's files failed: {error!r}")
                return
            self._schedule_idle(0)
        elif not self._collected:
            if quiet < COLLECT_AFTER_SECONDS:
                self._schedule_idle(COLLECT_AFTER_SECONDS - quiet)
                return
            memory.collect_now()
            self._collected = True


__all__ = ["AnalysisError", "EngineHost", "read_pending_input"]
