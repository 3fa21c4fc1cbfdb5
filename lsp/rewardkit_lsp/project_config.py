"""Which check configuration applies to a document, cached until a file it was read from changes.

``[tool.rewardkit]`` of the nearest ``pyproject.toml`` (the engine's ``load_config``) plus the
task fields the editor declares in its settings. Reading it on every keystroke would hit the
disk, so it is cached per directory with the signature (modification time and size) of every
file it depends on: each ``pyproject.toml`` from the directory up to the one used (a new one
nearer the document would win), and every configured dataset file (``task_schema``), whether or
not ``task_fields`` also declares its fields. :meth:`ProjectConfigs.refresh` compares them (a few
``stat`` calls), so clients without file watching still see a changed configuration; watched-file
events (:meth:`ProjectConfigs.invalidate`) drop the cache at once.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterable
from pathlib import Path

from rewardkit.checks import CheckConfig, ConfigError, TaskField, load_config

if sys.version_info >= (3, 11):
    pass
else:  # pragma: no cover - exercised on 3.10 only
    pass

SETTINGS_SOURCE = "rewardkit.taskFields"
"""The setting hover names as the source of task fields declared in the editor."""

Signature = tuple[int, int] | None
"""``(st_mtime_ns, st_size)`` of a file, ``None`` when it does not exist."""


def with_editor_task_fields(config: CheckConfig, names: Iterable[str]) -> CheckConfig:
    """``config`` plus task fields declared in the editor (project declarations win)."""
    return config.with_task_fields(TaskField(name, "editor", SETTINGS_SOURCE) for name in names)


def _normal(path: str | Path) -> str:
    return os.path.normcase(os.path.realpath(path))


def signature(path: str) -> Signature:
    """The file's modification time and size, or ``None`` when there is no such file."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    return status.st_mtime_ns, status.st_size


def dataset_paths(config: CheckConfig) -> set[str]:
    """Every dataset file ``config`` was read from: its ``task_schema`` and the fields' sources
    (fields the dataset shares with ``task_fields`` keep the pyproject as their source, so the
    schema path comes from ``CheckConfig.task_schema_path``)."""
    paths = {
        field.source_path
        for field in config.task_fields.values()
        if field.source == "dataset" and field.source_path
    }
    if config.task_schema_path:
        paths.add(config.task_schema_path)
    return paths


def _dependencies(directory: str, result: CheckConfig | ConfigError) -> set[str]:
    """The files a directory's configuration depends on (see the module's docstring)."""
    used = result.config_path if isinstance(result, CheckConfig) else None
    files: set[str] = set()
    current = Path(directory).resolve()
    for folder in (current, *current.parents):
        candidate = folder / "pyproject.toml"
        files.add(str(candidate))
        if used is not None and _normal(candidate) == _normal(used):
            break
    if isinstance(result, CheckConfig):
        if result.config_path:
            files.add(result.config_path)
        files |= dataset_paths(result)
    return files


class ProjectConfigs:
    """``load_config`` results per directory; a broken configuration is cached as its error."""

    def __init__(self) -> None:
        self._by_directory: dict[str, CheckConfig | ConfigError] = {}
        self._signatures: dict[str, Signature] = {}
        """Each file some cached configuration depends on, with its signature when it was read."""
        self._lock = threading.Lock()

    def for_directory(self, directory: str) -> CheckConfig | ConfigError:
        """The configuration of files in ``directory``, or the error that prevents reading it."""
        with self._lock:
            cached = self._by_directory.get(directory)
        if cached is not None:
            return cached
        # Signatures first: a file changed while being read is read again at the next refresh.
        result: CheckConfig | ConfigError
        try:
            before = {path: signature(path) for path in _dependencies(directory, ConfigError())}
            result = load_config(directory)
        except ConfigError as error:
            result = error
        dependencies = _dependencies(directory, result)
        with self._lock:
            for path in dependencies:
                self._signatures.setdefault(
                    path, before[path] if path in before else signature(path)
                )
            self._by_directory[directory] = result
        return result

    def refresh(self) -> list[str]:
        """Drop the cache if a file it was read from changed (by ``stat``); return those files."""
        with self._lock:
            changed = [path for path, seen in self._signatures.items() if signature(path) != seen]
            if changed:
                self._clear()
            return changed

    def watched_paths(self) -> set[str]:
        """The (normalised) files the cached configurations depend on."""
        with self._lock:
            return {_normal(path) for path in self._signatures}

    def _clear(self) -> None:
        self._by_directory.clear()
        self._signatures.clear()

    def invalidate(self, changed_paths: Iterable[str]) -> bool:
        """Forget cached configurations if one of ``changed_paths`` can affect them; say if it did.

        Any ``pyproject.toml`` counts (a new one may now be the nearest), and so does any file a
        configuration was read from (every configured dataset), and any file while some
        configuration is broken (it may be the fix).
        """
        watched = self.watched_paths()
        with self._lock:
            broken = any(isinstance(r, ConfigError) for r in self._by_directory.values())
            relevant = any(
                Path(path).name == "pyproject.toml" or _normal(path) in watched or broken
                for path in changed_paths
            )
            if relevant:
                self._clear()
            return relevant
