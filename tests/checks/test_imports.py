"""The checks package imports in one direction: no module imports, even from inside a function,
a module that imports it back (`rewardkit check`'s light front and the full command used to)."""

from __future__ import annotations

import ast
from pathlib import Path

import rewardkit.checks

PACKAGE = Path(rewardkit.checks.__file__).parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _runtime_imports(tree: ast.AST) -> list[str]:
    """Every module a file imports when it runs (function-level imports included; what only
    type checkers see, under ``if TYPE_CHECKING:``, left out)."""
    found: list[str] = []
    pending = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            pending.extend(node.orelse)
            continue
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.append(node.module)
            found += [f"{node.module}.{alias.name}" for alias in node.names]
        pending.extend(ast.iter_child_nodes(node))
    return found


def _graph() -> dict[str, set[str]]:
    modules = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
    return {
        name: {
            imported
            for imported in _runtime_imports(ast.parse(path.read_text(encoding="utf-8")))
            if imported in modules and imported != name
        }
        for name, path in modules.items()
    }


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` (a path that ends where it starts), if any."""
    state: dict[str, str] = {}
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = "open"
        path.append(module)
        for imported in sorted(graph[module]):
            if state.get(imported) == "open":
                return [*path[path.index(imported) :], imported]
            if imported not in state and (found := visit(imported)):
                return found
        state[module] = "done"
        path.pop()
        return None

    for module in sorted(graph):
        if module not in state and (found := visit(module)):
            return found
    return None


def test_the_checks_package_has_no_import_cycle() -> None:
    graph = _graph()
    assert "rewardkit.checks.command_line" in graph["rewardkit.checks.cli"]
    assert "rewardkit.checks.cli" not in graph["rewardkit.checks.command"]
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


def test_the_cycle_finder_finds_one() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None
