"""Reward names across the workspace's files, for RK401 (duplicate reward names) as the CLI gives it.

``rewardkit check .`` run at a workspace folder reports a reward name defined in two checked
files at both definitions. The server does the same: open documents count with their live
text, every other file with its text on disk. The files are those the CLI would check from the
folder (the same walk: skipped directories, ``exclude``), read in the server's idle
time (:class:`WorkspaceScan`), one file at a time so edits never wait long. Display paths are
relative to the folder, as the CLI prints them when run there, so messages are the CLI's bytes.
"""

from __future__ import annotations

import bisect
import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rewardkit.checks import (
    SHOWN_OTHERS,
    SKIPPED_DIRECTORIES,
    CheckConfig,
    ConfigError,
    Diagnostic,
    DuplicateRewardName,
    ModuleAnalysis,
    ModuleAnalyzer,
    RewardDefinition,
    decode_source,
    may_define_rewards,
    walk_python_files,
)
from rewardkit.checks import is_excluded as is_excluded_by_config
from rewardkit_lsp.project_config import ProjectConfigs, Signature, signature

MAX_FILE_BYTES = 1_000_000
"""Files on disk larger than this are not read for reward names (as documents over ``maxFileSize``)."""


def normal_path(path: str) -> str:
    """A path's canonical spelling, the key of every map here (interned: a document opened and
    closed again leaves the scan's string in the indexes, not one allocated among its own
    objects, which would keep the allocator from returning their memory)."""
    return sys.intern(os.path.normcase(os.path.abspath(path)))


@dataclass(frozen=True)
class FileRewards:
    """The registered module-level rewards of one file, as RK401 across files sees them."""

    display: str
    analysis: ModuleAnalysis
    names: frozenset[str]
    """Casefolded registered names (the registry ignores case)."""
    _by_name: dict[str, list[RewardDefinition]] = field(
        init=False, repr=False, compare=False, default_factory=dict
    )
    """Casefolded name -> its definitions, in file order (an edit looks up every name of the
    file: a scan of all its rewards per name made that quadratic, 20 ms per edit at 100 rewards)."""

    def __post_init__(self) -> None:
        for reward in self.analysis.rewards:
            if reward.name:
                self._by_name.setdefault(reward.name.casefold(), []).append(reward)

    def definitions(self, name: str) -> list[RewardDefinition]:
        """Its definitions of the casefolded ``name``, in file order."""
        return self._by_name.get(name, [])


def _same_shape(before: FileRewards | None, after: FileRewards | None) -> bool:
    """Whether two versions of a file sit at the same places in the per-name indexes."""
    if before is None or after is None:
        return before is after
    return (
        before.display == after.display
        and before.names == after.names
        and all(len(before.definitions(n)) == len(after.definitions(n)) for n in before.names)
    )


def file_rewards(display: str, analysis: ModuleAnalysis) -> FileRewards:
    """What of ``analysis`` counts across files (nothing while it has a syntax error, as in the CLI)."""
    if analysis.syntax_error is not None:
        return FileRewards(display, ModuleAnalysis(), frozenset())
    kept = tuple(r for r in analysis.rewards if r.registered and r.module_level and r.name)
    names = frozenset(r.name.casefold() for r in kept if r.name)
    return FileRewards(display, ModuleAnalysis(rewards=kept), names)


class WorkspaceRewards:
    """The workspace's rewards by file: live documents over files on disk.

    For each name: the files defining it in the CLI's order (by display path) and how many
    definitions it has, so that one file's RK401 costs a few entries whatever the number of
    files sharing the name (3,000 modules defining ``qa`` cost 3,000 small findings, not
    3,000 x 3,000 places)."""

    def __init__(self) -> None:
        self.roots: tuple[str, ...] = ()
        self._disk: dict[str, FileRewards] = {}
        self._live: dict[str, FileRewards] = {}
        self._paths_by_name: dict[str, set[str]] = {}
        self._ordered_by_name: dict[str, list[tuple[str, str]]] = {}
        """Casefolded name -> (display, path) of the files defining it, sorted."""
        self._count_by_name: dict[str, int] = {}
        """Casefolded name -> its definitions across the workspace's files."""
        self._changed: set[str] = set()
        """Names whose RK401 in other files changed (a count, or a file they name) since
        :meth:`take_changed`."""

    def set_roots(self, roots: Sequence[str]) -> None:
        """The workspace folders (innermost first when nested)."""
        self.roots = tuple(sorted({normal_path(r) for r in roots}, key=len, reverse=True))

    def root_of(self, path: str) -> str | None:
        """The workspace folder holding ``path`` (normalised), if any."""
        for root in self.roots:
            if path == root or path.startswith(root.rstrip(os.sep) + os.sep):
                return root
        return None

    def display(self, path: str) -> str:
        """How the CLI, run at the path's workspace folder, names the file."""
        root = self.root_of(path)
        if root is None:
            return Path(path).as_posix()
        return Path(os.path.relpath(path, root)).as_posix()

    def entry(self, path: str) -> FileRewards | None:
        """The file's rewards: its live document's, else those on disk."""
        return self._live.get(path) or self._disk.get(path)

    def _replace(self, table: dict[str, FileRewards], path: str, new: FileRewards | None) -> None:
        before = self.entry(path)
        if new is None:
            table.pop(path, None)
        else:
            table[path] = new
        after = self.entry(path)
        if before is after:
            return
        names = [
            name
            for name in (before.names if before is not None else frozenset())
            | (after.names if after is not None else frozenset())
            if self._elsewhere(name, path)
        ]  # a name no other file defines is in no other file's RK401, whatever this file does
        summaries = {name: self._summary(name) for name in names}
        if not _same_shape(before, after):  # (a document opened as it is on disk: no change)
            if before is not None:
                self._index(path, before, -1)
            if after is not None:
                self._index(path, after, +1)
        self._changed.update(name for name in names if self._summary(name) != summaries[name])

    def _elsewhere(self, name: str, path: str) -> bool:
        """Whether a file other than ``path`` defines ``name``."""
        paths = self._paths_by_name.get(name)
        return bool(paths) and (len(paths) > 1 or path not in paths)

    def _summary(self, name: str) -> tuple[object, ...]:
        """What other files' RK401 of ``name`` says: the count and the files it can name."""
        head = []
        for display, path in self._ordered_by_name.get(name, ())[: SHOWN_OTHERS + 1]:
            entry = self.entry(path)
            if entry is not None:
                definitions = entry.definitions(name)
                head.append((display, tuple((d.span.line, d.name) for d in definitions)))
        return self._count_by_name.get(name, 0), tuple(head)

    def take_changed(self) -> frozenset[str]:
        """The names whose RK401 in other files changed since the last call (an edit that
        moves nothing others name, or reopens a file as it is on disk, changes none)."""
        changed, self._changed = frozenset(self._changed), set()
        return changed

    def _index(self, path: str, entry: FileRewards, sign: int) -> None:
        """Add (``sign`` 1) or remove (-1) a file's names in the per-name indexes."""
        for name in entry.names:
            paths = self._paths_by_name.setdefault(name, set())
            ordered = self._ordered_by_name.setdefault(name, [])
            key = (entry.display, path)
            count = self._count_by_name.get(name, 0) + sign * len(entry.definitions(name))
            if sign > 0:
                paths.add(path)
                bisect.insort(ordered, key)
            else:
                paths.discard(path)
                position = bisect.bisect_left(ordered, key)
                if position < len(ordered) and ordered[position] == key:
                    del ordered[position]
            if paths:
                self._count_by_name[name] = count
            else:
                del self._paths_by_name[name], self._ordered_by_name[name]
                self._count_by_name.pop(name, None)

    def set_live(self, path: str, analysis: ModuleAnalysis | None) -> None:
        """An open document's latest analysis (``None``: closed, the file on disk counts again)."""
        self._replace(
            self._live,
            path,
            None if analysis is None else file_rewards(self.display(path), analysis),
        )

    def set_disk(self, path: str, analysis: ModuleAnalysis | None) -> None:
        """A file's rewards on disk (``None``: gone or unreadable)."""
        self._replace(
            self._disk,
            path,
            None if analysis is None else file_rewards(self.display(path), analysis),
        )

    def is_live(self, path: str) -> bool:
        return path in self._live

    def has_disk(self, path: str) -> bool:
        return path in self._disk

    def disk_paths(self) -> set[str]:
        return set(self._disk)

    def sharing(self, path: str, names: frozenset[str] = frozenset()) -> set[str]:
        """Other files that define one of ``path``'s reward names (or of ``names``)."""
        entry = self.entry(path)
        wanted = (entry.names if entry is not None else frozenset()) | names
        found: set[str] = set()
        for name in wanted:
            if self._elsewhere(name, path):
                found |= self._paths_by_name[name]
        found.discard(path)
        return found

    def cross_file(self, path: str) -> list[Diagnostic]:
        """RK401 of ``path`` against the other files, exactly as ``rewardkit check`` gives it:
        each definition names the first other definitions in the CLI's order (files by display
        path, then by line) and counts the rest."""
        entry = self.entry(path)
        if entry is None:
            return []
        found: list[Diagnostic] = []
        for name in entry.names:
            ordered = self._ordered_by_name.get(name, ())
            if len(ordered) < 2:
                continue
            own = entry.definitions(name)
            head: list[tuple[str, RewardDefinition]] = []
            for _, other_path in ordered:
                other = self.entry(other_path)
                if other is not None:
                    head += [(other.display, d) for d in other.definitions(name)]
                if len(head) >= SHOWN_OTHERS + len(own):
                    break
            count = self._count_by_name[name] - 1
            for definition in own:
                others = [(shown, d) for shown, d in head if d is not definition][:SHOWN_OTHERS]
                found.append(
                    DuplicateRewardName.finding((entry.display, definition), others, count)
                )
        return found


def _config(configs: ProjectConfigs, path: Path) -> CheckConfig:
    result = configs.for_directory(str(path.parent))
    return CheckConfig() if isinstance(result, ConfigError) else result


def included(path: str, root: str, configs: ProjectConfigs) -> bool:
    """Whether ``rewardkit check`` run at ``root`` would check ``path`` (a Python file under it)."""
    relative = Path(os.path.relpath(path, root))
    if relative.parts[:1] == ("..",) or not path.endswith((".py", ".pyi")):
        return False
    folders = relative.parts[:-1]
    if any(p in SKIPPED_DIRECTORIES or p.endswith(".egg-info") for p in folders):
        return False
    return not is_excluded_by_config(path, _config(configs, Path(path)))


def read_rewards(path: str, display: str, configs: ProjectConfigs) -> ModuleAnalysis | None:
    """The rewards of a file on disk (``None`` when unreadable, undecodable or too large)."""
    try:
        if os.path.getsize(path) > MAX_FILE_BYTES:
            return None
        with open(path, "rb") as stream:
            data = stream.read()
        source = decode_source(data)
    except (OSError, UnicodeDecodeError, SyntaxError, LookupError):
        return None
    config = _config(configs, Path(path))
    if not may_define_rewards(source, config):
        return ModuleAnalysis(skipped=True)
    return ModuleAnalyzer().analyze(source, display, config)


class WorkspaceScan:
    """Walks the workspace folders and reads each changed file's rewards, one file per step."""

    def __init__(self, rewards: WorkspaceRewards, configs: ProjectConfigs) -> None:
        self.rewards = rewards
        self.configs = configs
        self._seen: dict[str, Signature] = {}
        self._steps: Iterator[set[str]] | None = None
        self.changed_names: set[str] = set()
        """Names whose definitions changed since the caller last cleared this."""

    @property
    def busy(self) -> bool:
        return self._steps is not None

    def start(self, *, fresh: bool = False) -> None:
        """(Re)walk the folders: new, changed and deleted files are read in later steps
        (``fresh``: every file, as when the folders changed and with them the display paths)."""
        if fresh:
            for path in self.rewards.disk_paths():
                self.rewards.set_disk(path, None)
            self._seen.clear()
        self._steps = self._walk()

    def step(self) -> None:
        """Do one file's work (or finish)."""
        if self._steps is None:
            return
        try:
            self.changed_names |= next(self._steps)
        except StopIteration:
            self._steps = None

    def update(self, paths: Sequence[str]) -> None:
        """Files reported changed, created or deleted (watched-file events): re-read them now."""
        for raw in paths:
            path = normal_path(raw)
            root = self.rewards.root_of(path)
            if root is not None:
                self.changed_names |= self._read(path, root)

    def _read(self, path: str, root: str) -> set[str]:
        now = signature(path)
        before = self.rewards.entry(path)
        old = before.names if before is not None else frozenset()
        if now is None or not included(path, root, self.configs):
            self._seen.pop(path, None)
            self.rewards.set_disk(path, None)
        elif self.rewards.is_live(path):
            if self._seen.get(path) != now:  # open: its live text counts; read once closed
                self._seen.pop(path, None)
        elif self._seen.get(path) == now and self.rewards.has_disk(path):
            pass  # unchanged on disk (a document closed as it was read): nothing to read again
        else:
            self._seen[path] = now
            analysis = read_rewards(path, self.rewards.display(path), self.configs)
            self.rewards.set_disk(path, analysis)
        after = self.rewards.entry(path)
        if after == before:
            return set()
        return set(old | (after.names if after is not None else frozenset()))

    def _walk(self) -> Iterator[set[str]]:
        found: set[str] = set()
        for root in self.rewards.roots:
            for file in walk_python_files(root):
                path = normal_path(str(file))
                if self.rewards.root_of(path) != root or path in found:
                    continue  # a nested folder's files belong to it
                found.add(path)
                if self._seen.get(path) == signature(path) and path in self._seen:
                    continue
                yield self._read(path, root)
        for path in self.rewards.disk_paths() - found:  # deleted, or no longer checked
            before = self.rewards.entry(path)
            self._seen.pop(path, None)
            self.rewards.set_disk(path, None)
            yield set(before.names) if before is not None else set()
