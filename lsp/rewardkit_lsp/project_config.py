"""Which check configuration applies to a document, cached until a watched file changes.

``[tool.rewardkit]`` of the nearest ``pyproject.toml`` (the engine's ``load_config``) plus the
task fields the editor declares in its settings. Reading it on every keystroke would hit the
disk; it is cached per directory and dropped when a ``pyproject.toml`` or task schema changes.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from pathlib import Path

from rewardkit.checks import CheckConfig, ConfigError, TaskField, load_config

SETTINGS_SOURCE = "rewardkit.taskFields"
"""The setting hover names as the source of task fields declared in the editor."""


def with_editor_task_fields(config: CheckConfig, names: Iterable[str]) -> CheckConfig:
    """``config`` plus task fields declared in the editor (project declarations win)."""
    return config.with_task_fields(TaskField(name, "editor", SETTINGS_SOURCE) for name in names)


class ProjectConfigs:
    """``load_config`` results per directory; a broken configuration is cached as its error."""

    def __init__(self) -> None:
        self._by_directory: dict[str, CheckConfig | ConfigError] = {}
        self._lock = threading.Lock()

    def for_directory(self, directory: str) -> CheckConfig | ConfigError:
        """The configuration of files in ``directory``, or the error that prevents reading it."""
        with self._lock:
            cached = self._by_directory.get(directory)
        if cached is not None:
            return cached
        try:
            result: CheckConfig | ConfigError = load_config(directory)
        except ConfigError as error:
            result = error
        with self._lock:
            self._by_directory[directory] = result
        return result

    def _watched_paths(self) -> set[str]:
        paths: set[str] = set()
        for result in self._by_directory.values():
            if isinstance(result, CheckConfig):
                if result.config_path:
                    paths.add(os.path.normcase(os.path.realpath(result.config_path)))
                paths.update(
                    os.path.normcase(os.path.realpath(field.source_path))
                    for field in result.task_fields.values()
                    if field.source == "dataset" and field.source_path
                )
        return paths

    def invalidate(self, changed_paths: Iterable[str]) -> bool:
        """Forget cached configurations if one of ``changed_paths`` can affect them; say if it did.

        Any ``pyproject.toml`` counts (a new one may now be the nearest), and so does a task
        schema file in use, and any file while some configuration is broken (it may be the fix).
        """
        with self._lock:
            watched = self._watched_paths()
            broken = any(isinstance(r, ConfigError) for r in self._by_directory.values())
            relevant = any(
                Path(path).name == "pyproject.toml"
                or os.path.normcase(os.path.realpath(path)) in watched
                or broken
                for path in changed_paths
            )
            if relevant:
                self._by_directory.clear()
            return relevant
