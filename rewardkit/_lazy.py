"""Faces: lazy re-exports for package ``__init__`` modules (PEP 562: a name's module is imported
on first use, so importing the package stays cheap: ``rewardkit check`` starts in milliseconds),
and modules that act as the object they hold (``rewardkit.reward_threads``)."""

from __future__ import annotations

import importlib
import sys
import types

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any


def lazy_exports(
    package: str, namespace: dict[str, Any], exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package`` whose ``exports`` map each public name to
    the module defining it; a name, once imported, is stored in the package's ``namespace``."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value  # later accesses do not come here
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *exports})

    return __getattr__, __dir__


def module_acting_as(module_name: str, target: object, names: tuple[str, ...]) -> None:
    """Make module ``module_name`` act as ``target`` for ``names``: reading or setting one of them
    on the module reads or sets it on ``target``. ``from rewardkit import reward_threads`` gives
    the module, on which setting ``max_threads`` would otherwise silently do nothing."""

    def forward(name: str) -> property:
        return property(
            lambda _: getattr(target, name), lambda _, value: setattr(target, name, value)
        )

    acting = type(
        "ModuleActingAsItsObject", (types.ModuleType,), {name: forward(name) for name in names}
    )
    sys.modules[module_name].__class__ = acting
