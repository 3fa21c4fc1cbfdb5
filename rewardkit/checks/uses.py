"""How a module uses its functions, read from its tree: which it passes to rewardkit's adapters
(``to_trl(f, timeout=5)``) and which call a signal-based timeout (``def is_equiv(a, b): return
verify(parse(a), parse(b))``). The engine scans each chunk once; the module's imports then
decide whose adapter or grader each call is (:mod:`rewardkit.checks.frameworks`)."""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from dataclasses import replace

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
from rewardkit.checks.scopes import block_statements, import_bindings
from rewardkit.runtime.define.return_keys import dotted_name


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
            use = replace(
                use, timeout=not (isinstance(value, ast.Constant) and value.value is None)
            )
        elif keyword.arg == "group_size":
            literal_none = isinstance(value, ast.Constant) and value.value is None
            use = replace(use, group_size=not literal_none)
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
    assigned: dict[int, str] = {}  # id() of an adapter call -> the name `name = call` binds
    called: set[int] = set()  # id() of adapter calls whose result is called: `to_trl(f)(...)`
    for statement in body:
        for node in ast.walk(statement):
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
            ):
                assigned[id(node.value)] = node.targets[0].id
            if not isinstance(node, ast.Call):
                continue
            if isinstance(node.func, ast.Call):
                called.add(id(node.func))
            callee = dotted_name(node.func)
            leaf = callee.rsplit(".", 1)[-1] if callee else ""
            if leaf in ("to_trl", "to_verl", "to_openrlhf"):
                call = _adapter_call(node, leaf[3:])  # type: ignore[arg-type]
                if call is not None:
                    if id(node) in called:
                        call = replace(call, use=replace(call.use, called=True))
                    found.append(replace(call, assigned=assigned.get(id(node))))
    return tuple(found)


def scan_process_calls(text: str, body: Sequence[ast.stmt]) -> tuple[tuple[str, str], ...]:
    """(callee as written, reward name) of each ``calculate_rewards(f, ...,
    execution="process")`` in ``body`` whose reward is a plain name; empty at once when
    ``text`` names no ``calculate_rewards``."""
    if "calculate_rewards" not in text:
        return ()
    found = []
    for statement in body:
        for node in ast.walk(statement):
            if not isinstance(node, ast.Call):
                continue
            callee = dotted_name(node.func)
            if callee is None or callee.rsplit(".", 1)[-1] != "calculate_rewards":
                continue
            keywords = {keyword.arg: keyword.value for keyword in node.keywords}
            execution = keywords.get("execution")
            if not (isinstance(execution, ast.Constant) and execution.value == "process"):
                continue
            target = node.args[0] if node.args else keywords.get("reward_fn")
            if isinstance(target, ast.Name):
                found.append((callee, target.id))
    return tuple(found)


def _candidate(node: ast.Call, local: dict[str, str]) -> tuple[str, frozenset[str]] | None:
    """(call as qualified by the function's own imports, graders it may signal as)."""
    written = dotted_name(node.func)
    if written is None:
        return None
    head, dot, rest = written.partition(".")
    if head in local:  # `def is_equiv(a, b): from math_verify import verify` (issue 32)
        written = local[head] + dot + rest
    qualified = SIGNAL_LEAVES.get(written.rsplit(".", 1)[-1], ())
    signalling = frozenset(q for q in qualified if uses_signals(node, SIGNAL_TIMEOUTS[q]))
    return (written, signalling) if signalling else None


def helper_infos(body: Sequence[ast.stmt]) -> tuple[HelperInfo, ...]:
    """:data:`HelperInfo` of each function ``body`` defines at its top level (module helpers
    a reward may call: ``def is_equiv(a, b): return verify(parse(a), parse(b))``). A call is
    read through the imports inside the function (math_verify is often imported there, to keep
    it optional), which win over the module's."""
    infos = []
    for statement in body:
        if not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        candidates = []
        called = set()
        nodes = list(ast.walk(statement))
        local = dict(
            binding
            for node in nodes
            if isinstance(node, (ast.Import, ast.ImportFrom))
            for binding in import_bindings(node)
            if binding[0] != "*"
        )
        for node in nodes:
            if isinstance(node, ast.Call):
                if isinstance(node.func, ast.Name):
                    called.add(node.func.id)
                candidate = _candidate(node, local)
                if candidate is not None:
                    candidates.append(candidate)
        infos.append((statement.name, tuple(candidates), frozenset(called)))
    return tuple(infos)


def _is_main_guard(test: ast.expr) -> bool:
    """``__name__ == "__main__"`` (either way round)."""
    if not (
        isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)
    ):
        return False
    sides = [test.left, test.comparators[0]]
    names = [s for s in sides if isinstance(s, ast.Name) and s.id == "__name__"]
    mains = [s for s in sides if isinstance(s, ast.Constant) and s.value == "__main__"]
    return bool(names and mains)


def script_evidence(text: str, body: Sequence[ast.stmt]) -> str | None:
    """Why a module (or chunk) is run as a script, if it says so: a ``#!`` line, an ``if
    __name__ == "__main__":`` block, or a flat training script's ``trainer.train()`` at its top
    level. Its rewards are then defined in ``__main__``, which a worker process cannot import."""
    if text.startswith("#!"):
        return "a `#!` line: it is run as a program"
    for statement in body:
        if isinstance(statement, ast.If) and _is_main_guard(statement.test):
            return 'an `if __name__ == "__main__":` block'
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
            called = statement.value.func
            if isinstance(called, ast.Attribute) and called.attr == "train":
                return f"`{dotted_name(called) or 'train'}()` at its top level: a training script"
    return None


_NESTED_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _own_nodes(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.AST]:
    """Every node of a function's body outside the functions, classes and lambdas it defines."""
    pending: list[ast.AST] = list(function.body)
    while pending:
        node = pending.pop()
        yield node
        if not isinstance(node, _NESTED_SCOPES):
            pending.extend(ast.iter_child_nodes(node))


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _own_statements(body: Sequence[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement of a function's body, in nested blocks too, not in nested scopes."""
    pending = list(body)
    while pending:
        statement = pending.pop()
        yield statement
        if not isinstance(statement, _NESTED_SCOPES):
            pending.extend(block_statements(statement))


def none_helpers(text: str, body: Sequence[ast.stmt]) -> tuple[tuple[str, str], ...]:
    """(name, how) of each undecorated function ``body`` (parsed from ``text``) defines at its
    top level that can return ``None``: a bare ``return``, ``return None``, or a path off the
    end of its body (a forgotten ``return``, issue 32). Generators are left out."""
    from rewardkit.checks.rules.returns import always_leaves

    found = []
    for statement in body:
        if not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if statement.decorator_list:
            continue
        how = None
        if not always_leaves(statement.body):
            how = "it can reach the end of its body"
        else:  # a `return` is a statement: the body's statements suffice (no expression walk)
            for node in _own_statements(statement.body):
                if isinstance(node, ast.Return) and (node.value is None or _is_none(node.value)):
                    how = (
                        "it has a `return` without a value"
                        if node.value is None
                        else "it returns `None`"
                    )
                    break
        if how is None:
            continue
        if "yield" in text and any(
            isinstance(node, (ast.Yield, ast.YieldFrom)) for node in _own_nodes(statement)
        ):
            continue  # a generator
        found.append((statement.name, how))
    return tuple(found)
