"""`rewardkit.evaluation` split along its process boundary, as docs/architecture.md writes it:
the input side imports neither the worker nor the main side, the worker side never imports the
main side, and nothing below `evaluation` imports it (it is on top). Every import counts, those
inside functions too. And no module of it grows past ~800 lines or a function past ~80."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "rewardkit" / "evaluation"

# Lower layers first; a module may import its own layer and those before it.
LAYERS: list[tuple[str, ...]] = [
    ("option_names", "scoring", "tasks"),
    ("inputs",),
    ("errors",),
    ("worker",),
    ("main",),
    ("options",),
    ("dispatch",),
    ("runner",),
    ("cli", "cases", "html_report", "__init__"),
]


def _layer(module: str) -> int:
    """The layer of `rewardkit.evaluation.<module>` (by its first part)."""
    first = module.split(".")[0]
    for rank, names in enumerate(LAYERS):
        if first in names:
            return rank
    raise AssertionError(f"rewardkit.evaluation.{module} is in no layer of this test")


def _imports(path: Path) -> list[tuple[int, str]]:
    """Every module `path` imports, anywhere in it, with the line."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
    return found


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts)


def test_no_import_runs_up_the_layers_of_evaluation() -> None:
    upward = []
    for path in sorted(PACKAGE.rglob("*.py")):
        importer = _module(path)
        for line, name in _imports(path):
            if not name.startswith("rewardkit.evaluation."):
                continue
            imported = name.removeprefix("rewardkit.evaluation.")
            if _layer(imported) > _layer(importer):
                upward.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
    assert upward == []


def test_nothing_below_evaluation_imports_it() -> None:
    roots = [ROOT / "rewardkit", ROOT / "lsp" / "rewardkit_lsp", ROOT / "pytest_plugin"]
    importers = []
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            if PACKAGE in path.parents:
                continue
            for line, name in _imports(path):
                if name == "rewardkit.evaluation" or name.startswith("rewardkit.evaluation."):
                    importers.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
    assert importers == []


def test_modules_and_functions_of_evaluation_stay_small() -> None:
    too_big = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if text.count("\n") > 800:
            too_big.append(f"{path.relative_to(ROOT)}: {text.count(chr(10))} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > 80:
                    too_big.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}: {length}")
    assert too_big == []
