"""How a module uses its functions, read from its tree: which it passes to rewardkit's adapters
(``to_trl(f, timeout=5)``) and which call a signal-based timeout (``def is_equiv(a, b): return
verify(parse(a), parse(b))``). The engine scans each chunk once; the module's imports then
decide whose adapter or grader each call is (:mod:`rewardkit.checks.frameworks`)."""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import replace

from rewardkit.checks.discovery import dotted_name
from rewardkit.checks.frameworks import (
    MENTIONS_ADAPTER,
    SIGNAL_LEAVES,
    SIGNAL_TIMEOUTS,
    Adapter,
    AdapterCall,
    AdapterUse,
    HelperInfo,
    uses_signals,
)


def _field_map(value: ast.expr) -> tuple[tuple[str, ...] | None, tuple[str, ...]]:
    """(reward fields filled, framework names mapped) of a literal ``field_map``."""
    if not isinstance(value, ast.Dict):
        return None, ()
    filled: list[str] = []
    sources: list[str] = []
    for key, item in zip(value.keys, value.values):
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            return None, ()
        sources.append(key.value)
        if isinstance(item, ast.Constant) and isinstance(item.value, str):
            filled.append(item.value)
        elif not (isinstance(item, ast.Constant) and item.value is None):
            return None, ()
    return tuple(filled), tuple(sources)


def _adapter_call(node: ast.Call, adapter: Adapter) -> AdapterCall | None:
    target = node.args[0] if node.args else None
    use = AdapterUse(adapter)  # no line: the context stays equal as lines move
    for keyword in node.keywords:
        value = keyword.value
        if keyword.arg == "reward":
            target = value
        elif keyword.arg == "timeout":
            use = replace(use, timeout=not (isinstance(value, ast.Constant) and value.value is None))
        elif keyword.arg == "execution":
            use = replace(use, process=isinstance(value, ast.Constant) and value.value == "process")
        elif keyword.arg == "field_map":
            mapped, sources = _field_map(value)
            use = replace(use, mapped=mapped, unmapped=sources)
    if not isinstance(target, ast.Name):
        return None
    return AdapterCall(dotted_name(node.func) or "", target.id, use)


def scan_adapter_calls(text: str, body: Sequence[ast.stmt]) -> tuple[AdapterCall, ...]:
    """Calls named like an adapter (``to_trl(f, ...)``, ``rk.to_verl(reward=f)``) anywhere in
    ``body``, whose first argument is a name; empty at once when ``text`` names no adapter."""
    if not MENTIONS_ADAPTER.search(text):
        return ()
    found = []
    for statement in body:
        for node in ast.walk(statement):
            if not isinstance(node, ast.Call):
                continue
            callee = dotted_name(node.func)
            leaf = callee.rsplit(".", 1)[-1] if callee else ""
            if leaf in ("to_trl", "to_verl", "to_openrlhf"):
                call = _adapter_call(node, leaf[3:])  # type: ignore[arg-type]
                if call is not None:
                    found.append(call)
    return tuple(found)


def _candidate(node: ast.Call) -> tuple[str, frozenset[str]] | None:
    written = dotted_name(node.func)
    if written is None:
        return None
    qualified = SIGNAL_LEAVES.get(written.rsplit(".", 1)[-1], ())
    signalling = frozenset(q for q in qualified if uses_signals(node, SIGNAL_TIMEOUTS[q]))
    return (written, signalling) if signalling else None


def helper_infos(body: Sequence[ast.stmt]) -> tuple[HelperInfo, ...]:
    """:data:`HelperInfo` of each function ``body`` defines at its top level (module helpers
    a reward may call: ``def is_equiv(a, b): return verify(parse(a), parse(b))``)."""
    infos = []
    for statement in body:
        if not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        candidates = []
        called = set()
        for node in ast.walk(statement):
            if isinstance(node, ast.Call):
                if isinstance(node.func, ast.Name):
                    called.add(node.func.id)
                candidate = _candidate(node)
                if candidate is not None:
                    candidates.append(candidate)
        infos.append((statement.name, tuple(candidates), frozenset(called)))
    return tuple(infos)


