"""Lazy package faces (PEP 562): ``__all__``, the ``_EXPORTS`` table and the typed imports agree."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

FACES = {
    "rewardkit": {"__version__"},
    "rewardkit.checks": set(),
    "rewardkit.serve": set(),
    "rewardkit.testing": set(),
}
"""Each package with a lazy ``_EXPORTS`` table -> the public names it defines eagerly."""


def _typed_imports(path: Path) -> dict[str, str]:
    """Names imported under ``if TYPE_CHECKING:`` -> their module (each ``import X as X``, the
    explicit re-export type checkers read from a ``py.typed`` package)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom), ast.dump(statement)
                for alias in statement.names:
                    assert alias.asname == alias.name, f"{path}: import {alias.name} as itself"
                    names[alias.name] = statement.module or ""
    return names


def test_every_lazy_face_is_listed() -> None:
    root = Path(importlib.import_module("rewardkit").__file__).parent
    lazy = {
        ".".join(("rewardkit", *path.parent.relative_to(root).parts))
        for path in root.rglob("__init__.py")
        if "_EXPORTS = {" in path.read_text(encoding="utf-8")
    }
    assert lazy == set(FACES)


@pytest.mark.parametrize("package", sorted(FACES))
def test_all_is_the_table_and_the_typed_imports(package: str) -> None:
    module = importlib.import_module(package)
    table = module._EXPORTS
    assert sorted(module.__all__) == sorted({*table, *FACES[package]})
    assert len(module.__all__) == len(set(module.__all__))
    typed = _typed_imports(Path(module.__file__))
    assert set(typed) == set(table)
    for name, where in table.items():
        full = where if where.startswith("rewardkit") else f"{package}.{where}"
        assert typed[name] == full, name


@pytest.mark.parametrize("package", sorted(FACES))
def test_every_public_name_resolves_from_its_module(package: str) -> None:
    module = importlib.import_module(package)
    for name in module.__all__:
        value = getattr(module, name)
        if name in module._EXPORTS:
            where = module._EXPORTS[name]
            full = where if where.startswith("rewardkit") else f"{package}.{where}"
            assert value is getattr(importlib.import_module(full), name)
    assert set(module.__all__) <= set(dir(module))


MODULE_FACES = {
    "rewardkit.reward_threads": "rewardkit.runtime.run.reward_threads",
    "rewardkit.reward_processes": "rewardkit.runtime.run.reward_processes",
    "rewardkit.schema": "rewardkit.runtime.define.schema",
}
"""Documented modules kept where users import them -> the runtime module defining their names."""


@pytest.mark.parametrize(("face", "defining"), sorted(MODULE_FACES.items()))
def test_a_module_face_gives_the_objects_of_its_defining_module(face: str, defining: str) -> None:
    module, source = importlib.import_module(face), importlib.import_module(defining)
    assert module.__all__
    for name in module.__all__:
        assert getattr(module, name) is getattr(source, name), name
