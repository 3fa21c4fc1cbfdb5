"""Per-document debouncing: the latest request for a key wins, earlier pending ones are cancelled.

pygls has no debounce of its own; one asyncio task per document, cancelled on the next change,
keeps a burst of keystrokes to one check of the final text.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable


class Debouncer:
    """Runs at most one pending job per key, ``delay`` seconds after the last request."""

    def __init__(self) -> None:
        self._pending: dict[str, asyncio.Task[None]] = {}

    def schedule(
        self, key: str, delay: float, job: Callable[[], Awaitable[None]]
    ) -> asyncio.Task[None]:
        """Cancel ``key``'s pending job and start ``job`` after ``delay`` seconds."""
        self.cancel(key)
        task = asyncio.get_running_loop().create_task(self._run(key, delay, job))
        self._pending[key] = task
        return task

    async def _run(self, key: str, delay: float, job: Callable[[], Awaitable[None]]) -> None:
        try:
            if delay > 0:
                await asyncio.sleep(delay)
            await job()
        finally:
            if self._pending.get(key) is asyncio.current_task():
                del self._pending[key]

    def cancel(self, key: str) -> None:
        """Cancel ``key``'s pending job, if any."""
        task = self._pending.pop(key, None)
        if task is not None:
            task.cancel()
