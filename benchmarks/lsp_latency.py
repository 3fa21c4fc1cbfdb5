"""Latency of the language server over real stdio: didChange -> publishDiagnostics.

Starts ``python -m rewardkit_lsp`` with ``debounceMs = 0``, opens a generated 2,000-line
reward module and sends edits one at a time (a constant changed inside one reward, a parameter
misspelled and fixed, a line inserted at the top that shifts every definition), timing each
until the diagnostics of that version arrive. Prints p50/p95/max (target p95 <= 50 ms), the
server's resident memory along 1,000 edits (target: flat), and, as the peer measured in the same
run, the engine's stateless ``check_source`` on the same text in this process.

Run: ``.venv/bin/python benchmarks/lsp_latency.py [--edits 1000] [--lines 2000]``
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from rewardkit.checks import check_source, load_config

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
    kept = [c.lower() for c in text if c.isalnum() or c.isspace()]
    return " ".join("".join(kept).split())


class Task{index}Reward(BaseReward):
    name = "task_{index}_class"

    async def call(self, final_response: str, answer: str, context=None):
        """The same grade, as a class-based async reward."""
        result = task_{index}_reward(final_response=final_response, answer=answer)
        return result.reward
'''

HEADER = '''"""Generated reward module for the language server latency benchmark."""

from rewardkit import BaseReward, reward
'''


def reward_module(lines: int) -> str:
    """A realistic reward module of about ``lines`` lines (several rewards, helpers, classes)."""
    parts = [HEADER]
    index = 0
    while sum(part.count("\n") for part in parts) < lines:
        parts.append(REWARD_TEMPLATE.format(index=index, digit=index % 10))
        index += 1
    return "".join(parts)


def edited(text: str, step: int, definitions: int) -> str:
    """The ``step``-th edit: change one reward's constant, misspell/fix a parameter, shift lines."""
    target = step % definitions
    if step % 10 == 0:  # a line inserted or removed at the top: every definition moves
        return (
            text.replace(HEADER, HEADER + "\n", 1)
            if step % 20 == 0
            else text.replace(HEADER + "\n", HEADER, 1)
        )
    if step % 10 == 5:  # misspell a field (RK101 appears) or fix it back
        good = f"def task_{target}_reward(final_response: str, answer: str"
        bad = f"def task_{target}_reward(final_response: str, answr: str"
        return text.replace(good, bad, 1) if good in text else text.replace(bad, good, 1)
    marker = f"normalise_{target}(answer)\n    bonus = 0."
    start = text.index(marker) + len(marker)
    return text[:start] + str(step % 10) + text[start + 1 :]


def rss_kib(pid: int) -> int:
    """Resident memory of process ``pid`` in KiB (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for process {pid}")


async def measure(edits: int, lines: int) -> None:
    workdir = Path(tempfile.mkdtemp(prefix="rewardkit-lsp-bench-"))
    (workdir / "pyproject.toml").write_text('[tool.rewardkit]\ntask_fields = ["answer"]\n')
    path = workdir / "rewards.py"
    text = reward_module(lines)
    path.write_text(text)
    definitions = text.count("@reward(")
    uri = path.as_uri()

    client = LanguageClient("lsp-latency-bench", "1")
    arrived: dict[int, float] = {}
    waiters: dict[int, asyncio.Future[float]] = {}

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_publish(params: types.PublishDiagnosticsParams) -> None:
        now = time.perf_counter()
        if params.uri == uri and params.version is not None:
            arrived[params.version] = now
            waiter = waiters.pop(params.version, None)
            if waiter is not None and not waiter.done():
                waiter.set_result(now)

    @client.feature(types.WINDOW_LOG_MESSAGE)
    def on_log(params: types.LogMessageParams) -> None:
        if params.type == types.MessageType.Error:
            print("server error:", params.message, file=sys.stderr)

    await client.start_io(sys.executable, "-m", "rewardkit_lsp")
    server_pid = client._server.pid  # type: ignore[union-attr]
    await client.initialize_async(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            root_uri=workdir.as_uri(),
            initialization_options={"rewardkit": {"debounceMs": 0}},
        )
    )
    client.initialized(types.InitializedParams())

    async def send(version: int, new_text: str) -> float:
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[float] = loop.create_future()
        waiters[version] = waiter
        started = time.perf_counter()
        if version == 1:
            client.text_document_did_open(
                types.DidOpenTextDocumentParams(
                    text_document=types.TextDocumentItem(
                        uri=uri, language_id="python", version=1, text=new_text
                    )
                )
            )
        else:
            client.text_document_did_change(
                types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                    content_changes=[types.TextDocumentContentChangeWholeDocument(text=new_text)],
                )
            )
        finished = await asyncio.wait_for(waiter, timeout=60)
        return (finished - started) * 1000

    open_ms = await send(1, text)
    checkpoints = {max(1, edits * share // 100) for share in (10, 25, 50, 75, 100)}
    latencies: list[float] = []
    memory: list[tuple[int, int]] = [(0, rss_kib(server_pid))]
    texts = [text]
    for step in range(1, edits + 1):
        text = edited(text, step, definitions)
        if step <= 50:
            texts.append(text)
        latencies.append(await send(step + 1, text))
        if step in checkpoints:
            memory.append((step, rss_kib(server_pid)))

    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()

    # Peer, same run: the stateless engine (full parse and analysis) on the same texts, in-process.
    config = load_config(path)
    stateless: list[float] = []
    for sample in texts:
        started = time.perf_counter()
        check_source(sample, str(path), config)
        stateless.append((time.perf_counter() - started) * 1000)

    quantiles = statistics.quantiles(latencies, n=100)
    p50, p95 = statistics.median(latencies), quantiles[94]
    print(
        f"module: {text.count(chr(10))} lines, {definitions * 2} reward definitions, {edits} edits over stdio"
    )
    print(f"didOpen -> publishDiagnostics: {open_ms:.1f} ms (first full analysis, process warm-up)")
    print(
        f"didChange -> publishDiagnostics: p50 {p50:.1f} ms, p95 {p95:.1f} ms, max {max(latencies):.1f} ms "
        f"(target p95 <= 50 ms: {'met' if p95 <= 50 else 'NOT met'})"
    )
    peer = statistics.median(stateless)
    print(
        f"peer: stateless check_source of the same text in-process: p50 {peer:.1f} ms; "
        f"server p50 / stateless p50 = {p50 / peer:.2f}"
    )
    print("server RSS (KiB) after N edits: " + ", ".join(f"{n}: {kib}" for n, kib in memory))
    (first_step, first_kib), (half_step, half_kib), (last_step, last_kib) = (
        memory[1],
        memory[3],
        memory[-1],
    )
    print(
        f"RSS growth, edit {first_step} -> {last_step}: {last_kib - first_kib:+d} KiB "
        f"({(last_kib - first_kib) / first_kib * 100:+.1f}%); second half, edit {half_step} -> {last_step}: "
        f"{last_kib - half_kib:+d} KiB ({(last_kib - half_kib) / half_kib * 100:+.1f}%)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=1000)
    parser.add_argument("--lines", type=int, default=2000)
    args = parser.parse_args()
    asyncio.run(measure(args.edits, args.lines))


if __name__ == "__main__":
    main()
