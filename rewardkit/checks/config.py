"""``[tool.rewardkit]`` configuration of the static checks: which fields exist and which rules run.

Read from the nearest ``pyproject.toml`` that has a ``[tool.rewardkit]`` table, walking up from
the checked file. Task fields come from ``task_fields`` and/or the keys of a dataset file
(``task_schema``), each remembered with where it came from and an example value, for hover.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from rewardkit.checks.codes import unknown_code_prefixes
from rewardkit.runtime.define.fields import AGENTFLY_INJECTED_FIELDS, PREDEFINED_FIELDS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

SCHEMA_ROWS_READ = 50
"""How many rows of a ``task_schema`` file are read for field names and examples."""

DEFAULT_MAX_FILE_SIZE = 1_000_000
"""Modules longer than this many characters are not analysed (the language server's
``maxFileSize`` default): checking one costs time and memory in proportion to its size."""

PRESETS: Mapping[str, Mapping[str, str]] = MappingProxyType({"agentfly": AGENTFLY_INJECTED_FIELDS})
"""Named sets of extra injected fields (``preset = "agentfly"``)."""

KNOWN_KEYS = frozenset(
    {
        "task_fields",
        "task_schema",
        "injected_fields",
        "preset",
        "reward_decorators",
        "select",
        "ignore",
        "exclude",
        "max_file_size",
        "framework_rewards",
    }
)


class ConfigError(ValueError):
    """A ``[tool.rewardkit]`` table or a task schema file that cannot be used; the message names the file."""


TaskFieldSource = Literal["pyproject", "dataset", "editor"]
"""Where a task field was declared: ``task_fields`` of a pyproject, the keys of the ``task_schema``
dataset, or an editor's settings (the language server's ``taskFields``)."""


@dataclass(frozen=True)
class TaskField:
    """A task (dataset) field a reward may declare, with its provenance for hover."""

    name: str
    source: TaskFieldSource
    """Where it was declared (see :data:`TaskFieldSource`)."""
    source_path: str | None = None
    """The ``pyproject.toml`` or dataset file that declared it (for ``"editor"``: the setting's name)."""
    example: Any = None
    """A value from the dataset's first rows (``None`` when there is none, see ``has_example``)."""
    has_example: bool = False

    @property
    def example_text(self) -> str | None:
        """The example as short JSON text (at most 80 characters), or ``None``."""
        if not self.has_example:
            return None
        text = json.dumps(self.example, ensure_ascii=False, default=repr)
        return text if len(text) <= 80 else text[:77] + "..."

    def describe(self) -> str:
        """One line for hover: the field's source and, when known, an example value."""
        where = self.source_path or self.source
        if self.source == "pyproject":
            origin = f"task field declared in `task_fields` of {where}"
        elif self.source == "dataset":
            origin = f"task field from the dataset {where}"
        else:
            origin = f"task field declared in the editor settings ({where})"
        example = self.example_text
        return origin + (f"; example: {example}" if example is not None else "")


def _frozen(mapping: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True)
class CheckConfig:
    """Everything the rules need to know about the project (immutable; build a new one to change it).

    ``CheckConfig()`` is the default: no task fields (so RK101 is off), no extra injected names.
    """

    task_fields: Mapping[str, TaskField] = field(default_factory=dict)
    injected_fields: Mapping[str, str] = field(default_factory=dict)
    """Extra names the framework injects (``injected_fields`` and the ``preset``): name -> description."""
    reward_decorators: tuple[str, ...] = ()
    """Extra decorator names (``my_decorator`` or dotted ``pkg.mod.my_decorator``) that define rewards."""
    select: tuple[str, ...] = ()
    """Code prefixes to report (empty: all)."""
    ignore: tuple[str, ...] = ()
    """Code prefixes never to report."""
    exclude: tuple[str, ...] = ()
    """Glob patterns of paths (relative to ``root``) the CLI skips."""
    preset: str | None = None
    config_path: str | None = None
    """The file this configuration was read from (``None`` for the default)."""
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    """``rewardkit check`` does not analyse modules longer than this many characters."""
    task_schema_path: str | None = None
    """The dataset file ``task_schema`` names, resolved (watch it: its rows declare task fields)."""
    framework_rewards: tuple[tuple[str, str], ...] = ()
    """(framework, entry) of ``[tool.rewardkit.framework_rewards]``: functions written for TRL or
    verl, checked against what the framework passes and accepts. An entry is a function name,
    or ``glob:name`` for the function of the modules whose path (relative to ``root``) matches."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "task_fields", _frozen(self.task_fields))
        object.__setattr__(self, "injected_fields", _frozen(self.injected_fields))

    @property
    def root(self) -> Path | None:
        """The directory of the configuration file (``exclude`` globs are relative to it)."""
        return Path(self.config_path).parent if self.config_path else None

    @property
    def has_task_fields(self) -> bool:
        """Whether any task field is declared (RK101 only runs when one is)."""
        return bool(self.task_fields)

    @cached_property
    def field_names(self) -> tuple[str, ...]:
        """The names of :meth:`known_fields`, in the same order (computed once per config)."""
        return tuple(self.known_fields())

    def framework_functions(self, path: str | None) -> tuple[tuple[str, str], ...]:
        """(function name, framework) of the framework functions configured for the module at
        ``path`` (bare names apply to every module; ``glob:name`` to the matching ones)."""
        found = []
        for framework, entry in self.framework_rewards:
            pattern, _, name = entry.rpartition(":")
            if not pattern or (path is not None and self._matches(path, pattern)):
                found.append((name, framework))
        return tuple(found)

    def _matches(self, path: str, pattern: str) -> bool:
        import fnmatch  # only for configured `glob:name` entries

        candidates = [Path(path).as_posix()]
        root = self.root
        if root is not None and Path(path).resolve().is_relative_to(root.resolve()):
            candidates.append(Path(path).resolve().relative_to(root.resolve()).as_posix())
        return any(fnmatch.fnmatch(candidate, pattern) for candidate in candidates)

    def known_fields(self) -> dict[str, str]:
        """Every name the runtime can fill: predefined, injected and task fields -> a one-line description."""
        names = dict(PREDEFINED_FIELDS)
        names.update(self.injected_fields)
        for name, task_field in self.task_fields.items():
            names.setdefault(name, task_field.describe())
        return names

    def describe_field(self, name: str) -> str | None:
        """What a parameter called ``name`` receives, for hover; ``None`` when nothing fills it."""
        return self.known_fields().get(name)

    def is_selected(self, code: str) -> bool:
        """Whether a diagnostic code passes ``select``/``ignore`` (prefix match, like ruff)."""
        if self.select and not any(code.startswith(prefix) for prefix in self.select):
            return False
        return not any(code.startswith(prefix) for prefix in self.ignore)

    @property
    def fingerprint(self) -> tuple[object, ...]:
        """A hashable summary of everything that changes the diagnostics (the engine's cache key)."""
        return (
            tuple(sorted(self.task_fields)),
            tuple(sorted(self.injected_fields)),
            self.reward_decorators,
            self.select,
            self.ignore,
            self.preset,
            self.framework_rewards,
        )

    def with_task_fields(self, extra: Iterable[TaskField]) -> CheckConfig:
        """A copy that also declares ``extra`` task fields (those already declared keep their source)."""
        added = {f.name: f for f in extra if f.name not in self.task_fields}
        if not added:
            return self
        return replace(self, task_fields={**self.task_fields, **added})

    def with_overrides(
        self,
        *,
        select: Iterable[str] | None = None,
        ignore: Iterable[str] | None = None,
        max_file_size: int | None = None,
    ) -> CheckConfig:
        """A copy with command-line ``--select`` (replacing), ``--ignore`` (adding) and
        ``--max-file-size`` (replacing) applied."""
        return replace(
            self,
            select=tuple(select) if select is not None else self.select,
            ignore=self.ignore + tuple(ignore or ()),
            max_file_size=max_file_size if max_file_size is not None else self.max_file_size,
        )


def find_config_file(start: str | Path) -> Path | None:
    """The nearest ``pyproject.toml`` with a ``[tool.rewardkit]`` table, walking up from ``start``."""
    path = Path(start).resolve()
    directory = path if path.is_dir() else path.parent
    for candidate_dir in (directory, *directory.parents):
        candidate = candidate_dir / "pyproject.toml"
        if candidate.is_file():
            try:
                table = _read_toml(candidate).get("tool", {}).get("rewardkit")
            except ConfigError:
                return candidate  # let load_config report the broken file
            if table is not None:
                return candidate
    return None


def load_config(path: str | Path | None = None) -> CheckConfig:
    """The configuration that applies to ``path`` (a file or directory; default: the current directory).

    Raises :class:`ConfigError` for an invalid table or task schema file.
    """
    config_file = find_config_file(path if path is not None else Path.cwd())
    if config_file is None:
        return CheckConfig()
    return load_config_file(config_file)


def load_config_file(config_file: str | Path) -> CheckConfig:
    """Read a configuration file: a ``pyproject.toml`` (its ``[tool.rewardkit]``) or a TOML file of the same keys."""
    config_file = Path(config_file)
    document = _read_toml(config_file)
    table = document.get("tool", {}).get("rewardkit")
    if table is None:
        table = {} if config_file.name == "pyproject.toml" else document
    if not isinstance(table, dict):
        raise ConfigError(f"{config_file}: [tool.rewardkit] must be a table")
    return _config_from_table(table, config_file)


def _read_toml(config_file: Path) -> dict[str, Any]:
    try:
        with config_file.open("rb") as stream:
            return tomllib.load(stream)
    except OSError as exc:
        raise ConfigError(f"{config_file}: cannot read the configuration: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{config_file}: invalid TOML: {exc}") from exc
    except (RecursionError, MemoryError):  # tomllib recurses into nested arrays and tables
        raise ConfigError(f"{config_file}: TOML nested too deeply to read") from None


def _string_list(table: Mapping[str, Any], key: str, config_file: Path) -> tuple[str, ...]:
    value = table.get(key, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{config_file}: [tool.rewardkit] {key} must be a list of strings")
    return tuple(value)


def _refuse_unknown_keys(table: Mapping[str, Any], config_file: Path) -> None:
    """A misspelt key (``task_feilds``) would silently turn its checks off: it is an error instead."""
    for key in table:
        if key not in KNOWN_KEYS:
            import difflib  # only on this error path: the CLI's start-up stays lean

            close = difflib.get_close_matches(str(key), sorted(KNOWN_KEYS), n=1, cutoff=0.6)
            hint = (
                f"did you mean {close[0]!r}?"
                if close
                else f"known keys: {', '.join(sorted(KNOWN_KEYS))}"
            )
            raise ConfigError(f"{config_file}: [tool.rewardkit] has an unknown key {key!r}; {hint}")


def _config_from_table(table: Mapping[str, Any], config_file: Path) -> CheckConfig:
    _refuse_unknown_keys(table, config_file)
    task_fields: dict[str, TaskField] = {}
    for name in _string_list(table, "task_fields", config_file):
        task_fields[name] = TaskField(name, "pyproject", str(config_file))
    schema = table.get("task_schema")
    schema_path = None
    if schema is not None:
        if not isinstance(schema, str):
            raise ConfigError(f"{config_file}: [tool.rewardkit] task_schema must be a path string")
        schema_path = (config_file.parent / schema).resolve()
        if schema_path.suffix.lower() in (".json", ".jsonl") and not schema_path.is_file():
            raise ConfigError(
                f"{config_file}: task_schema {schema!r} does not exist (looked for {schema_path})"
            )
        for name, dataset_field in read_task_schema(schema_path).items():
            declared = task_fields.get(name)
            if declared is None:
                task_fields[name] = dataset_field
            else:  # declared in pyproject: keep that source, borrow the dataset's example
                task_fields[name] = TaskField(
                    name,
                    declared.source,
                    declared.source_path,
                    dataset_field.example,
                    dataset_field.has_example,
                )
    injected: dict[str, str] = {}
    preset = table.get("preset")
    if preset is not None:
        if preset not in PRESETS:
            raise ConfigError(
                f"{config_file}: [tool.rewardkit] preset {preset!r} is unknown "
                f"(known: {', '.join(sorted(PRESETS))})"
            )
        injected.update(PRESETS[preset])
    for name in _string_list(table, "injected_fields", config_file):
        injected.setdefault(name, f"injected by the framework (`injected_fields` in {config_file})")
    codes = {key: _string_list(table, key, config_file) for key in ("select", "ignore")}
    for key, prefixes in codes.items():
        unknown = unknown_code_prefixes(prefixes)
        if unknown:
            raise ConfigError(
                f"{config_file}: [tool.rewardkit] {key}: no rule code starts with "
                f"{', '.join(map(repr, unknown))}"
            )
    max_file_size = table.get("max_file_size", DEFAULT_MAX_FILE_SIZE)
    if isinstance(max_file_size, bool) or not isinstance(max_file_size, int) or max_file_size < 1:
        raise ConfigError(
            f"{config_file}: [tool.rewardkit] max_file_size must be a positive integer (characters)"
        )
    return CheckConfig(
        framework_rewards=_framework_rewards(table, config_file),
        task_fields=task_fields,
        injected_fields=injected,
        reward_decorators=_string_list(table, "reward_decorators", config_file),
        select=codes["select"],
        ignore=codes["ignore"],
        exclude=_string_list(table, "exclude", config_file),
        preset=preset,
        config_path=str(config_file),
        max_file_size=max_file_size,
        task_schema_path=str(schema_path) if schema_path is not None else None,
    )


FRAMEWORK_KEYS = ("trl", "verl")
"""The frameworks ``[tool.rewardkit.framework_rewards]`` knows."""


def _framework_rewards(table: Mapping[str, Any], config_file: Path) -> tuple[tuple[str, str], ...]:
    """``framework_rewards = {trl = [...], verl = [...]}``, validated."""
    value = table.get("framework_rewards", {})
    if not isinstance(value, dict):
        raise ConfigError(
            f"{config_file}: [tool.rewardkit] framework_rewards must be a table "
            '(e.g. framework_rewards = {trl = ["accuracy_reward"], verl = ["compute_score"]})'
        )
    found = []
    for framework in value:
        if framework not in FRAMEWORK_KEYS:
            raise ConfigError(
                f"{config_file}: [tool.rewardkit.framework_rewards] has an unknown framework "
                f"{framework!r} (known: {', '.join(FRAMEWORK_KEYS)})"
            )
        for entry in _string_list(value, framework, config_file):
            if not entry.rpartition(":")[2].isidentifier():
                raise ConfigError(
                    f"{config_file}: [tool.rewardkit.framework_rewards] {framework}: {entry!r} "
                    "is not a function name (or `glob:name`)"
                )
            found.append((framework, entry))
    return tuple(found)


def read_task_schema(schema_path: Path) -> dict[str, TaskField]:
    """Field names (and an example of each) from the first rows of a ``.jsonl`` or ``.json`` dataset."""
    suffix = schema_path.suffix.lower()
    if suffix not in (".jsonl", ".json"):
        raise ConfigError(
            f"{schema_path}: task_schema must be a .json or .jsonl file (got {suffix or 'no suffix'!r})"
        )
    rows: list[tuple[int, Any]] = []
    try:
        with schema_path.open(encoding="utf-8") as stream:
            if suffix == ".jsonl":
                for line_number, line in enumerate(stream, start=1):
                    if not line.strip():
                        continue
                    try:
                        rows.append((line_number, json.loads(line)))
                    except json.JSONDecodeError as exc:
                        raise ConfigError(
                            f"{schema_path}:{line_number}: invalid JSON: {exc.msg}"
                        ) from exc
                    except RecursionError:
                        raise ConfigError(
                            f"{schema_path}:{line_number}: JSON nested too deeply to read"
                        ) from None
                    if len(rows) >= SCHEMA_ROWS_READ:
                        break
            else:
                text = stream.read()
                try:
                    document = json.loads(text)
                except json.JSONDecodeError as exc:
                    raise ConfigError(
                        f"{schema_path}:{exc.lineno}: invalid JSON: {exc.msg}"
                    ) from exc
                except RecursionError:
                    raise ConfigError(
                        f"{schema_path}:{_deepest_line(text)}: JSON nested too deeply to read"
                    ) from None
                if isinstance(document, dict) and isinstance(document.get("data"), list):
                    document = document["data"]
                if not isinstance(document, list):
                    raise ConfigError(
                        f"{schema_path}: a .json task schema must be a list of objects"
                    )
                rows = [(0, row) for row in document[:SCHEMA_ROWS_READ]]
    except OSError as exc:
        raise ConfigError(f"{schema_path}: cannot read the task schema: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{schema_path}: the task schema is not UTF-8: {exc}") from exc
    fields: dict[str, TaskField] = {}
    for line_number, row in rows:
        if not isinstance(row, dict):
            place = f"{schema_path}:{line_number}" if line_number else str(schema_path)
            raise ConfigError(f"{place}: each row of a task schema must be a JSON object")
        for key, value in row.items():
            if key not in fields:
                fields[key] = TaskField(key, "dataset", str(schema_path), value, True)
    return fields


_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[{]|[\]}]|\n')


def _deepest_line(text: str) -> int:
    """The line where a JSON document's nesting is deepest (where a too-deep document fails)."""
    depth = deepest = 0
    line = deepest_line = 1
    for token in _JSON_TOKEN.finditer(text):
        kind = token.group()[0]
        if kind == "\n":
            line += 1
        elif kind in "[{":
            depth += 1
            if depth > deepest:
                deepest, deepest_line = depth, line
        elif kind in "]}":
            depth -= 1
        else:
            line += token.group().count("\n")  # (a string cannot hold a raw newline; be safe)
    return deepest_line
