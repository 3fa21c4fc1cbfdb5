"""The language server against its floors and against ``ruff server``, measured in one run.

Every figure is taken over real stdio by a minimal JSON-RPC client (no pygls on the client side,
so both servers pay the same client costs), with the capabilities VS Code 1.65 declares
(push diagnostics; bundled with pytest-lsp). Rows, each against its floor or ruff:

- ``initialize`` answered, from spawning the process: at most 1.2x the time a process takes to
  import pygls + lsprotocol alone, plus 50 ms. ``ruff server`` for reference.
- first diagnostics of a generated 2,017-line module with 100 rewards, from ``didOpen`` (sent
  right after ``initialized``, as editors do) to its ``publishDiagnostics``: at most 1.2x one
  ``libcst.parse_module`` of the same text (in a fresh process, libcst imported). ruff for reference.
- per edit, ``debounceMs = 0``, 100 edits (a constant changed in one reward, a parameter
  misspelled and fixed, a line inserted at the top that moves every definition), each timed from
  ``didChange`` to the diagnostics of that version: p50 at most 1.3x ruff's, p95 at most 1.5x
  ruff's, max at most 3x the server's own p95.

The machine is shared: each row is the best of ``--rounds`` rounds; in each round the floors,
ruff and rewardkit run one after another, so they see the same load. ``uptime`` is printed.

Run: ``python benchmarks/lsp_latency.py [--rounds 3] [--edits 100]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REWARD_TEMPLATE = '''

@reward(name="task_{index}")
def task_{index}_reward(final_response: str, answer: str, trajectory=None):
    """Grade task {index}: exact match after normalisation, with a length penalty."""
    text = normalise_{index}(final_response)
    expected = normalise_{index}(answer)
    bonus = 0.{digit}
    if not text:
        return {{"reward": 0.0, "matched": False, "length": 0}}
    matched = text == expected
    penalty = min(len(text) / 4000, 0.5)
    score = (1.0 if matched else 0.0) + bonus - penalty
    return {{"reward": max(score, 0.0), "matched": matched, "length": len(text)}}


def normalise_{index}(text: str) -> str:
    """Lower-case, strip punctuation and collapse spaces."""
    # Keep letters, digits and spaces only; case does not matter.
    kept = [c.lower() for c in text if c.isalnum() or c.isspace()]
    return " ".join("".join(kept).split())


class Task{index}Reward(BaseReward):
    """The same grade as a class-based async reward, with a retry budget."""

    name = "task_{index}_class"
    retries = {digit}

    async def call(self, final_response: str, answer: str, context=None):
        """Grade once; a failure of the helper counts as a wrong answer.

        The helper raises ``ValueError`` on text it cannot normalise (never for str input, but
        subclasses may override it), and a reward must never raise into the training loop.
        """
        try:
            result = task_{index}_reward(final_response=final_response, answer=answer)
        except ValueError:
            return 0.0
        return result.reward
'''

HEADER = '''"""Generated reward module for the language server benchmark.

Fifty tasks, each graded by a function reward and a class-based reward (100 rewards),
with a normalisation helper per task.
"""

from __future__ import annotations

from rewardkit import BaseReward, reward

__all__ = ["BaseReward", "reward"]

TASKS = 50
"""How many tasks this module grades."""

MAX_LENGTH = 4000
'''

SERVER_COMMAND = [sys.executable, "-m", "rewardkit_lsp"]
RUFF_COMMAND = ["ruff", "server"]
IMPORT_FLOOR = "import pygls.lsp.server, lsprotocol.types"
PARSE_FLOOR = (
    "import sys, time, libcst\n"
    "source = open(sys.argv[1], encoding='utf-8').read()\n"
    "started = time.perf_counter()\n"
    "libcst.parse_module(source)\n"
    "print(time.perf_counter() - started)\n"
)
ENGINE_ALONE = (
    "import json, statistics, sys, time\n"
    "sys.path.insert(0, sys.argv[2])\n"
    "from lsp_latency import edited\n"
    "from rewardkit.checks import ModuleAnalyzer, load_config\n"
    "path, edits = sys.argv[1], int(sys.argv[3])\n"
    "config = load_config(path)\n"
    "text = open(path, encoding='utf-8').read()\n"
    "ModuleAnalyzer().analyze('from rewardkit import reward\\n', path, config)\n"
    "analyzer = ModuleAnalyzer()\n"
    "started = time.perf_counter()\n"
    "analyzer.analyze(text, path, config)\n"
    "first = time.perf_counter() - started\n"
    "times = []\n"
    "for step in range(1, edits + 1):\n"
    "    text = edited(text, step, 50)\n"
    "    started = time.perf_counter()\n"
    "    analyzer.analyze(text, path, config)\n"
    "    times.append(time.perf_counter() - started)\n"
    "print(json.dumps([first, times]))\n"
)
"""The engine alone (``ModuleAnalyzer``, in a fresh process): what any server built on it pays."""
WAIT = 120.0
"""Seconds to wait for any one answer before giving up (a hang guard)."""


def reward_module(tasks: int = 50) -> str:
    """The benchmark module: ``tasks`` tasks of two rewards each (2,017 lines for 50)."""
    return HEADER + "".join(
        REWARD_TEMPLATE.format(index=index, digit=index % 10) for index in range(tasks)
    )


def edited(text: str, step: int, tasks: int) -> str:
    """The ``step``-th edit: change one reward's constant, misspell/fix a parameter, shift lines."""
    target = step % tasks
    if step % 10 == 0:  # a line inserted or removed at the top: every definition moves
        return (
            text.replace(HEADER, HEADER + "\n", 1)
            if step % 20 == 0
            else text.replace(HEADER + "\n", HEADER, 1)
        )
    if step % 10 == 5:  # misspell a field (a diagnostic appears) or fix it back
        good = f"def task_{target}_reward(final_response: str, answer: str"
        bad = f"def task_{target}_reward(final_response: str, answr: str"
        return text.replace(good, bad, 1) if good in text else text.replace(bad, good, 1)
    marker = f"normalise_{target}(answer)\n    bonus = 0."
    start = text.index(marker) + len(marker)
    digit = (int(text[start]) + 1) % 10  # every edit changes the text
    return text[:start] + str(digit) + text[start + 1 :]


def client_capabilities() -> dict[str, Any]:
    """VS Code 1.65.2's declared capabilities, as pytest-lsp records them (push diagnostics)."""
    import pytest_lsp

    recorded = Path(pytest_lsp.__file__).parent / "clients" / "visual_studio_code_v1.65.2.json"
    return json.loads(recorded.read_text(encoding="utf-8"))["capabilities"]


class RawClient:
    """A bare LSP client over a subprocess's stdio: frames, ids, and the few server requests."""

    def __init__(self, settings: dict[str, Any]) -> None:
        self.settings = settings
        self.process: asyncio.subprocess.Process | None = None
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._next_id = 0
        self.published: dict[tuple[str, int | None], float] = {}
        self._waiters: dict[tuple[str, int | None], asyncio.Future[float]] = {}
        self._reader: asyncio.Task[None] | None = None

    async def start(self, command: list[str], cwd: Path) -> None:
        self.process = await asyncio.create_subprocess_exec(
            *command,
            cwd=cwd,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            limit=1 << 24,
        )
        self._reader = asyncio.get_running_loop().create_task(self._read())

    def _send(self, message: dict[str, Any]) -> None:
        assert self.process is not None
        assert self.process.stdin is not None
        body = json.dumps(message).encode()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def request(self, method: str, params: Any) -> Any:
        self._next_id += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[self._next_id] = future
        self._send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        return await asyncio.wait_for(future, WAIT)

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def diagnostics_of(self, uri: str, version: int | None) -> asyncio.Future[float]:
        """A future resolved with the arrival time of ``uri``'s diagnostics at ``version``."""
        future: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        arrived = self.published.get((uri, version))
        if arrived is not None:
            future.set_result(arrived)
        else:
            self._waiters[(uri, version)] = future
        return future

    async def _read(self) -> None:
        assert self.process is not None
        assert self.process.stdout is not None
        stream = self.process.stdout
        while True:
            length = None
            while True:
                line = await stream.readline()
                if not line:
                    return
                if not line.strip():
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            if length is None:
                continue
            message = json.loads(await stream.readexactly(length))
            now = time.perf_counter()
            self._handle(message, now)

    def _handle(self, message: dict[str, Any], now: float) -> None:
        method = message.get("method")
        if method is None:
            future = self._pending.pop(message.get("id"), None)  # type: ignore[arg-type]
            if future is not None and not future.done():
                future.set_result(message.get("result", message.get("error")))
            return
        if "id" in message:  # a request from the server
            result: Any = None
            if method == "workspace/configuration":
                result = [
                    self.settings.get(item.get("section")) for item in message["params"]["items"]
                ]
            self._send({"jsonrpc": "2.0", "id": message["id"], "result": result})
            return
        if method == "textDocument/publishDiagnostics":
            params = message["params"]
            key = (params["uri"], params.get("version"))
            self.published[key] = now
            waiter = self._waiters.pop(key, None)
            if waiter is not None and not waiter.done():
                waiter.set_result(now)

    async def stop(self) -> None:
        assert self.process is not None
        try:
            await asyncio.wait_for(self.request("shutdown", None), 10)
            self.notify("exit", None)
            await asyncio.wait_for(self.process.wait(), 10)
        except (TimeoutError, asyncio.TimeoutError, ConnectionError):
            self.process.kill()
            await self.process.wait()
        if self._reader is not None:
            self._reader.cancel()


@dataclass
class Timings:
    """Per-edit times (milliseconds)."""

    edits: list[float]

    @property
    def p50(self) -> float:
        return statistics.median(self.edits)

    @property
    def p95(self) -> float:
        return statistics.quantiles(self.edits, n=100)[94]

    @property
    def max(self) -> float:
        return max(self.edits)


@dataclass
class Session(Timings):
    """One server's figures in one round (milliseconds)."""

    initialize: float = 0.0
    first_diagnostics: float = 0.0
    rss_kib: int | None = None


@dataclass
class EngineAlone(Timings):
    """The engine's own cost on the same text and edits (milliseconds)."""

    first: float = 0.0


def rss_kib(pid: int) -> int | None:
    """Resident memory of process ``pid`` and its children in KiB (Linux), ``None`` elsewhere."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        total = 0
        for process in [pid, *map(int, children)]:
            for line in Path(f"/proc/{process}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        return total
    except OSError:
        return None


async def run_session(
    command: list[str], workdir: Path, text: str, edits: int, tasks: int, settings: dict[str, Any]
) -> Session:
    """Spawn a server, initialise it, open the module, apply ``edits`` edits; time each step."""
    path = workdir / "rewards.py"
    uri = path.as_uri()
    client = RawClient(settings)
    capabilities = client_capabilities()
    started = time.perf_counter()
    await client.start(command, workdir)
    await client.request(
        "initialize",
        {
            "processId": os.getpid(),
            "rootUri": workdir.as_uri(),
            "workspaceFolders": [{"uri": workdir.as_uri(), "name": workdir.name}],
            "capabilities": capabilities,
            "initializationOptions": settings,
        },
    )
    initialize_ms = (time.perf_counter() - started) * 1000
    client.notify("initialized", {})
    opened = time.perf_counter()
    first = client.diagnostics_of(uri, 1)
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
    )
    first_ms = (await asyncio.wait_for(first, WAIT) - opened) * 1000
    session = Session([], initialize_ms, first_ms)
    for step in range(1, edits + 1):
        text = edited(text, step, tasks)
        version = step + 1
        arrived = client.diagnostics_of(uri, version)
        sent = time.perf_counter()
        client.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"text": text}],
            },
        )
        session.edits.append((await asyncio.wait_for(arrived, WAIT) - sent) * 1000)
    assert client.process is not None
    session.rss_kib = rss_kib(client.process.pid)
    await client.stop()
    return session


def import_floor_ms() -> float:
    """Wall time of a process that only imports pygls + lsprotocol."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", IMPORT_FLOOR], check=True)
    return (time.perf_counter() - started) * 1000


def parse_floor_ms(path: Path) -> float:
    """One ``libcst.parse_module`` of the module, timed inside a fresh process."""
    completed = subprocess.run(
        [sys.executable, "-c", PARSE_FLOOR, str(path)], check=True, capture_output=True, text=True
    )
    return float(completed.stdout) * 1000


def engine_alone(path: Path, edits: int) -> EngineAlone:
    completed = subprocess.run(
        [sys.executable, "-c", ENGINE_ALONE, str(path), str(Path(__file__).parent), str(edits)],
        check=True,
        capture_output=True,
        text=True,
    )
    first, times = json.loads(completed.stdout)
    return EngineAlone([t * 1000 for t in times], first * 1000)


def verdict(value: float, limit: float) -> str:
    return "met" if value <= limit else "NOT met"


def report(
    floors_import: list[float],
    floors_parse: list[float],
    ours: list[Session],
    ruff: list[Session],
    edits: int,
) -> None:
    best: Callable[[list[float]], float] = min
    import_floor = best(floors_import)
    parse_floor = best(floors_parse)
    ours_init = best([s.initialize for s in ours])
    ruff_init = best([s.initialize for s in ruff])
    ours_first = best([s.first_diagnostics for s in ours])
    ruff_first = best([s.first_diagnostics for s in ruff])
    ours_p50, ruff_p50 = best([s.p50 for s in ours]), best([s.p50 for s in ruff])
    ours_p95, ruff_p95 = best([s.p95 for s in ours]), best([s.p95 for s in ruff])
    steadiest = min(ours, key=lambda s: s.max / s.p95)
    ruff_max = best([s.max for s in ruff])
    init_limit = 1.2 * import_floor + 50
    rows = [
        (
            "initialize answered",
            f"{ours_init:.0f} ms",
            f"import floor {import_floor:.0f} ms; ruff {ruff_init:.0f} ms",
            f"{ours_init / import_floor:.2f}x floor",
            f"<= 1.2x floor + 50 ms = {init_limit:.0f} ms: {verdict(ours_init, init_limit)}",
        ),
        (
            "first diagnostics (didOpen)",
            f"{ours_first:.0f} ms",
            f"libcst parse {parse_floor:.0f} ms; ruff {ruff_first:.0f} ms",
            f"{ours_first / parse_floor:.2f}x parse",
            f"<= 1.2x parse: {verdict(ours_first, 1.2 * parse_floor)}",
        ),
        (
            f"per edit p50 ({edits} edits)",
            f"{ours_p50:.1f} ms",
            f"ruff {ruff_p50:.1f} ms",
            f"{ours_p50 / ruff_p50:.2f}x ruff",
            f"<= 1.3x ruff: {verdict(ours_p50, 1.3 * ruff_p50)}",
        ),
        (
            "per edit p95",
            f"{ours_p95:.1f} ms",
            f"ruff {ruff_p95:.1f} ms",
            f"{ours_p95 / ruff_p95:.2f}x ruff",
            f"<= 1.5x ruff: {verdict(ours_p95, 1.5 * ruff_p95)}",
        ),
        (
            "per edit max / own p95",
            f"{steadiest.max:.1f} ms",
            f"own p95 {steadiest.p95:.1f} ms (that round); ruff max {ruff_max:.1f} ms",
            f"{steadiest.max / steadiest.p95:.2f}x own p95",
            f"<= 3x own p95: {verdict(steadiest.max, 3 * steadiest.p95)}",
        ),
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    header = ("measure", "rewardkit", "floor / ruff, same run", "ratio", "target")
    widths = [max(w, len(h)) for w, h in zip(widths, header)]
    for row in (header, *rows):
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    memory = [s.rss_kib for s in ours if s.rss_kib]
    if memory:
        print(
            f"rewardkit server RSS after {edits} edits (one process: protocol and engine): "
            f"{min(memory) / 1024:.0f} MiB"
        )


def round_figures(
    index: int, floor_import: float, floor_parse: float, ours: Session, ruff: Session
) -> None:
    print(
        f"round {index}: import floor {floor_import:.0f} ms, parse floor {floor_parse:.0f} ms | "
        f"rewardkit init {ours.initialize:.0f}, open {ours.first_diagnostics:.0f}, "
        f"edit p50/p95/max {ours.p50:.1f}/{ours.p95:.1f}/{ours.max:.1f} | "
        f"ruff init {ruff.initialize:.0f}, open {ruff.first_diagnostics:.0f}, "
        f"edit p50/p95/max {ruff.p50:.1f}/{ruff.p95:.1f}/{ruff.max:.1f}",
        flush=True,
    )


async def measure(rounds: int, edits: int) -> None:
    if shutil.which(RUFF_COMMAND[0]) is None:
        raise SystemExit("ruff is not on PATH: it is the peer this benchmark compares against")
    tasks = 50
    text = reward_module(tasks)
    workdir = Path(tempfile.mkdtemp(prefix="rewardkit-lsp-bench-"))
    try:
        (workdir / "pyproject.toml").write_text(
            '[tool.rewardkit]\ntask_fields = ["answer"]\n', encoding="utf-8"
        )
        (workdir / "rewards.py").write_text(text, encoding="utf-8")
        print(
            f"module: {text.count(chr(10)) + 1} lines, {text.count('@reward(') + text.count('(BaseReward)')} "
            f"rewards; {rounds} rounds; load before: {os.getloadavg()[0]:.2f}",
            flush=True,
        )
        settings = {"rewardkit": {"debounceMs": 0}}
        floors_import, floors_parse, ours, ruff, engine = [], [], [], [], []
        for index in range(1, rounds + 1):
            floors_import.append(import_floor_ms())
            floors_parse.append(parse_floor_ms(workdir / "rewards.py"))
            engine.append(engine_alone(workdir / "rewards.py", edits))
            ruff.append(await run_session(RUFF_COMMAND, workdir, text, edits, tasks, {}))
            ours.append(await run_session(SERVER_COMMAND, workdir, text, edits, tasks, settings))
            round_figures(index, floors_import[-1], floors_parse[-1], ours[-1], ruff[-1])
        print()
        report(floors_import, floors_parse, ours, ruff, edits)
        first = min(e.first for e in engine)
        p50, p95 = min(e.p50 for e in engine), min(e.p95 for e in engine)
        print(
            f"context, same run: the engine alone (ModuleAnalyzer in a fresh process, no LSP): "
            f"first analysis {first:.0f} ms ({first / min(floors_parse):.2f}x parse); "
            f"per edit p50 {p50:.1f} ms, p95 {p95:.1f} ms "
            f"({p50 / min(s.p50 for s in ruff):.2f}x / {p95 / min(s.p95 for s in ruff):.2f}x ruff's)"
        )
        print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--edits", type=int, default=100)
    args = parser.parse_args()
    asyncio.run(measure(args.rounds, args.edits))


if __name__ == "__main__":
    main()
