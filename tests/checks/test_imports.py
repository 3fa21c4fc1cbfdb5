"""rewardkit, rewardkit_lsp and pytest_rewardkit import in one direction: no import cycle and no
import running up the layers of docs/architecture.md, even from inside a function (what only
type checkers see, under ``if TYPE_CHECKING:``, left out). The layers are read from that page's
table, so the page and this test cannot disagree."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest_rewardkit
import rewardkit_lsp

import rewardkit

PACKAGES = {
    package.__name__: Path(package.__file__).parent
    for package in (rewardkit, rewardkit_lsp, pytest_rewardkit)
}
ARCHITECTURE = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"

Graph = dict[str, set[str]]


def _modules() -> dict[str, Path]:
    """Every module of the three packages -> its file (a package is named by its ``__init__``)."""
    modules: dict[str, Path] = {}
    for package, root in PACKAGES.items():
        for path in root.rglob("*.py"):
            parts = (package, *path.relative_to(root).with_suffix("").parts)
            modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The module ``from ... import`` names, relative imports resolved against ``module``."""
    if not node.level:
        return node.module or ""
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def runtime_imports(tree: ast.AST, module: str, is_package: bool, known: set[str]) -> set[str]:
    """The modules of ``known`` a file imports when it runs, function-level imports included.
    ``from package import submodule`` is an import of the submodule (not of the package's face)."""
    found: set[str] = set()
    pending = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            pending.extend(node.orelse)
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(node, module, is_package)
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                found.add(submodule if submodule in known else source)
        pending.extend(ast.iter_child_nodes(node))
    return {imported for imported in found if imported in known and imported != module}


def import_graph() -> Graph:
    modules = _modules()
    known = set(modules)
    return {
        name: runtime_imports(
            ast.parse(path.read_text(encoding="utf-8")), name, path.name == "__init__.py", known
        )
        for name, path in modules.items()
    }


def layer_table(markdown: str) -> list[tuple[str, tuple[str, ...]]]:
    """The rows of the ``## Layers`` table, bottom first: (layer, the module names it lists)."""
    section = markdown.split("\n## Layers\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")][1:]  # header aside
    table = []
    for row in rows:
        name, modules = (cell.strip() for cell in row.strip("|").split("|")[:2])
        if set(name) <= {"-"}:
            continue
        table.append((name, tuple(re.findall(r"`([\w.]+)`", modules))))
    return table


LAYERS = layer_table(ARCHITECTURE.read_text(encoding="utf-8"))


def placed(module: str, layers: list[tuple[str, tuple[str, ...]]] = LAYERS) -> tuple[int, str]:
    """(layer index, the entry placing ``module``): the most specific entry naming the module or
    a package above it."""
    matches = [
        (len(entry), index, entry)
        for index, (_, entries) in enumerate(layers)
        for entry in entries
        if module == entry or module.startswith(f"{entry}.")
    ]
    if not matches:
        raise AssertionError(f"{module} is in no layer of docs/architecture.md")
    _, index, entry = max(matches)
    return index, entry


def upward_imports(graph: Graph, layers: list[tuple[str, tuple[str, ...]]] = LAYERS) -> list[str]:
    """Every import of a module in a higher layer than the importer's, described."""
    found = []
    for module in sorted(graph):
        low, _ = placed(module, layers)
        for imported in sorted(graph[module]):
            high, _ = placed(imported, layers)
            if high > low:
                found.append(f"{module} ({layers[low][0]}) imports {imported} ({layers[high][0]})")
    return found


def find_cycle(graph: Graph) -> list[str] | None:
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


GRAPH = import_graph()


def test_there_is_no_import_cycle() -> None:
    assert "rewardkit.checks.command_line" in GRAPH["rewardkit.checks.cli"]
    assert "rewardkit.checks.cli" not in GRAPH["rewardkit.checks.command"]
    cycle = find_cycle(GRAPH)
    assert cycle is None, " -> ".join(cycle or [])


def test_no_import_runs_up_the_layers() -> None:
    assert [name for name, _ in LAYERS] == [
        "foundation", "define", "run", "batch", "graders", "adapt", "top"
    ]  # fmt: skip
    assert upward_imports(GRAPH) == []


def test_every_module_has_a_layer_of_its_own_package() -> None:
    """Only the face is placed by the bare ``rewardkit`` entry: a new package gets its own row."""
    loose = [
        module for module in GRAPH if placed(module)[1] == "rewardkit" and module != "rewardkit"
    ]
    assert loose == []
    listed = {entry for _, entries in LAYERS for entry in entries}
    missing = sorted(entry for entry in listed if entry not in GRAPH)
    assert missing == [], f"docs/architecture.md lists modules that do not exist: {missing}"


def test_the_runtime_core_imports_no_grader_adapter_or_face() -> None:
    """The cycles of last round, each hidden in a function, stay broken: ``rewards`` no longer
    imports the runner, ``calculate`` asks the definition layer what a group reward is."""
    assert not {m for m in GRAPH["rewardkit.runtime.define.rewards"] if ".run." in m}
    assert "rewardkit.runtime.batch.groups" in GRAPH["rewardkit.runtime.batch.calculate"]
    assert "rewardkit.runtime.batch.calculate" not in GRAPH["rewardkit.runtime.batch.groups"]


def test_the_cycle_finder_finds_one() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_a_planted_upward_import_is_found() -> None:
    """An import inside a function of the definition layer, of an adapter, is reported."""
    source = "def f():\n    from rewardkit.adapters import base\n    return base\n"
    known = set(GRAPH)
    imported = runtime_imports(ast.parse(source), "rewardkit.runtime.define.errors", False, known)
    assert imported == {"rewardkit.adapters.base"}
    planted = {**GRAPH, "rewardkit.runtime.define.errors": imported}
    assert upward_imports(planted) == [
        "rewardkit.runtime.define.errors (define) imports rewardkit.adapters.base (adapt)"
    ]


def test_imports_are_read_as_the_interpreter_runs_them() -> None:
    known = {"p", "p.a", "p.b", "p.sub", "p.sub.c", "q"}
    source = """
from p import a, name
from .b import thing
from . import c
import q
TYPE_CHECKING = False
if TYPE_CHECKING:
    from p import b
"""
    assert runtime_imports(ast.parse(source), "p.sub", True, known) == {"p.a", "p", "p.sub.c", "q"}
    assert runtime_imports(ast.parse("from ..b import x"), "p.sub.c", False, known) == {"p.b"}


def test_the_layer_table_is_read_as_written() -> None:
    table = layer_table(
        "# t\n\n## Layers\n\ntext\n\n| layer | modules | what |\n|---|---|---|\n"
        "| low | `x`, `y.z` | one |\n| high | `x.w` | two |\n\n## Next\n| a | `b` |\n"
    )
    assert table == [("low", ("x", "y.z")), ("high", ("x.w",))]
    assert placed("x.w.v", table) == (1, "x.w")
    assert placed("x.v", table) == (0, "x")
    assert upward_imports({"x.v": {"x.w"}, "x.w": {"x.v"}}, table) == [
        "x.v (low) imports x.w (high)"
    ]


def test_the_builtin_rewards_table_names_no_module_above_it() -> None:
    """``get_reward`` imports a built-in's module by name: a dependency the import graph does not
    show, so its table is held to the layers too."""
    from rewardkit.builtin_rewards import BUILTIN_REWARDS

    own, _ = placed("rewardkit.builtin_rewards")
    assert {module for module in BUILTIN_REWARDS.values() if placed(module)[0] > own} == set()
    assert set(BUILTIN_REWARDS.values()) <= set(GRAPH)


def test_graders_stand_beside_the_runtime() -> None:
    """Graders build on a reward's definition only: none imports the runner or the batch loop,
    so a grader works the same under any caller (``calculate_rewards``, an adapter, eval)."""
    order = [name for name, _ in LAYERS]
    graders, beside = order.index("graders"), {order.index("run"), order.index("batch")}
    found = [
        f"{module} imports {imported}"
        for module in sorted(GRAPH)
        if placed(module)[0] == graders
        for imported in sorted(GRAPH[module])
        if placed(imported)[0] in beside
    ]
    assert found == []
