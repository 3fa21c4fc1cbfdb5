"""The wasm backend (placeholder until the worker lands): reports itself unusable."""

from __future__ import annotations


def probe_wasm() -> str | None:
    return "the wasm backend is not built yet"


class WasmSandbox:  # pragma: no cover - replaced by the real backend
    pass
