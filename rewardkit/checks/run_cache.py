"""The cache of whole ``rewardkit check`` runs: unchanged files print their report without parsing.

Like ruff's cache, it lives in ``.rewardkit_cache/`` (at the nearest directory above the
current one that has a ``pyproject.toml`` or is a git checkout's root, else the current
directory), holds its own
``.gitignore`` and is safe to delete. A run is found again by a key over rewardkit's version and
code, the Python version, the command's options and working directory, the files it considers
and every ``pyproject.toml`` that may configure them; the entry then lists the files checked
with a hash of their bytes and the task schema files read with their size and modification
time, all compared before the stored report is printed.

This module imports only :mod:`os`, :mod:`sys` and CPython's built-in BLAKE2 (no parser, no
TOML, no dataclasses, not even OpenSSL's hashlib): a cache hit costs little more than starting
Python.
"""

from __future__ import annotations

import os
import sys

try:  # CPython's built-in BLAKE2: hashlib would first load OpenSSL (milliseconds per start)
    from _blake2 import blake2b as _blake2b
except ImportError:  # pragma: no cover - other interpreters
    from hashlib import blake2b as _blake2b

from rewardkit._version import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:  # no runtime import: the cached fast path stays light
    from collections.abc import Iterable, Sequence

CACHE_DIRECTORY = ".rewardkit_cache"
GITIGNORE = "# Written by `rewardkit check`: its cache, safe to delete at any time.\n*\n"
CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by rewardkit (https://bford.info/cachedir/).\n"
)
HASH_LIMIT = 64 * 1024 * 1024
"""Files larger than this (never reward modules) are compared by size and modification time."""
RUNS_KEPT = 256
"""Run entries kept; the oldest are removed beyond this."""
RUN_ENTRY_LIMIT = 512 * 1024 * 1024
"""A run entry larger than this is damaged or foreign (a miss): never read whole into memory."""
STORED_STATUSES = (0, 1)
"""The exit statuses a run entry may hold (a run that could not check a file is never stored)."""
_FORMAT = b"rewardkit-run-cache 2\n"
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cache_root(cwd: str | None = None) -> str:
    """``.rewardkit_cache`` of the project: at the nearest directory with a ``pyproject.toml``
    above ``cwd`` (included) within its git checkout (never above the checkout's root), else in
    ``cwd``."""
    start = os.path.abspath(cwd or os.getcwd())
    directory = start
    while True:
        if os.path.isfile(os.path.join(directory, "pyproject.toml")) or os.path.exists(
            os.path.join(directory, ".git")
        ):
            return os.path.join(directory, CACHE_DIRECTORY)
        parent = os.path.dirname(directory)
        if parent == directory:
            return os.path.join(start, CACHE_DIRECTORY)
        directory = parent


def engine_fingerprint() -> bytes:
    """rewardkit's version, the Python that parses, and the size and modification time of the
    checker's own modules (an edited checker never reuses stale reports)."""
    parts = [__version__, sys.version, sys.implementation.name]
    for directory in ("checks", os.path.join("checks", "rules")):
        try:
            entries = sorted(os.scandir(os.path.join(_PACKAGE, directory)), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.name.endswith(".py"):
                info = entry.stat()
                parts.append(f"{directory}/{entry.name}:{info.st_size}:{info.st_mtime_ns}")
    for name in ("fields.py", "_version.py"):
        try:
            info = os.stat(os.path.join(_PACKAGE, name))
        except OSError:
            continue
        parts.append(f"{name}:{info.st_size}:{info.st_mtime_ns}")
    return "\n".join(parts).encode("utf-8", "surrogateescape")


def hasher(data: bytes = b"") -> _blake2b:
    """A new hash (BLAKE2b, 256 bits) fed ``data``: what every cache key and file hash uses."""
    return _blake2b(data, digest_size=32)


def digest(data: bytes) -> str:
    """The hash that identifies a file's bytes."""
    return hasher(data).hexdigest()


def file_digest(path: str) -> str | None:
    """The hash of a file's bytes (size and modification time beyond :data:`HASH_LIMIT`);
    ``None`` when it cannot be read."""
    try:
        info = os.stat(path)
        if info.st_size > HASH_LIMIT:
            return f"stat:{info.st_size}:{info.st_mtime_ns}"
        with open(path, "rb") as stream:
            return digest(stream.read())
    except OSError:
        return None


def read_entry(path: str, limit: int) -> bytes | None:
    """A cache entry's bytes, if it is a regular file of at most ``limit`` bytes; else ``None``
    (a miss). A named pipe, socket, device or directory planted in the cache is never waited on:
    it is opened without blocking and checked before reading."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        descriptor = os.open(path, flags)
    except OSError:
        return None
    try:
        info = os.fstat(descriptor)
        if not os.st.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        chunks = []
        total = 0
        while True:
            chunk = os.read(descriptor, min(1 << 20, limit + 1 - total))
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:  # grew since fstat
                return None
    except OSError:
        return None
    finally:
        os.close(descriptor)


def seal(body: bytes) -> bytes:
    """A cache entry: the hash of ``body`` on the first line, then ``body``."""
    return hasher(body).hexdigest().encode() + b"\n" + body


def unseal(entry: bytes) -> bytes | None:
    """The body of a :func:`seal` entry whose hash matches (``None``: truncated or damaged)."""
    checksum, newline, body = entry.partition(b"\n")
    if not newline or checksum != hasher(body).hexdigest().encode():
        return None
    return body


def large_file_digest(size: int, mtime_ns: int) -> str:
    """The identity of a file over :data:`HASH_LIMIT` (see :func:`file_digest`)."""
    return f"stat:{size}:{mtime_ns}"


def config_inputs(paths: Iterable[str], config_file: str | None) -> list[tuple[str, str | None]]:
    """(path, hash) of every configuration file that may apply to ``paths``: ``config_file``
    when given, else each ``pyproject.toml`` above their directories that mentions rewardkit
    (the nearest one with a ``[tool.rewardkit]`` table is among them)."""
    if config_file is not None:
        return [(os.path.abspath(config_file), file_digest(config_file))]
    seen: dict[str, str | None] = {}
    visited: set[str] = set()
    for path in paths:
        directory = os.path.dirname(os.path.realpath(path))
        while directory not in visited:
            visited.add(directory)
            candidate = os.path.join(directory, "pyproject.toml")
            try:
                with open(candidate, "rb") as stream:
                    data = stream.read()
            except OSError:
                data = None
            if data is not None and b"rewardkit" in data:
                seen[candidate] = digest(data)
            parent = os.path.dirname(directory)
            if parent == directory:
                break
            directory = parent
    return sorted(seen.items())


def run_key(
    options: Sequence[str],
    targets: Sequence[tuple[str, str]],
    configs: Sequence[tuple[str, str | None]],
) -> str:
    """The key of a run: everything its report depends on except the files' bytes and the task
    schemas (which its entry verifies)."""
    key = hasher(engine_fingerprint())
    for part in (os.getcwd(), *options, "\0targets", *(shown for shown, _ in targets), "\0configs"):
        key.update(b"\0" + part.encode("utf-8", "surrogateescape"))
    for path, config_digest in configs:
        key.update(f"\0{path}\0{config_digest}".encode("utf-8", "surrogateescape"))
    return key.hexdigest()


def _runs_directory(root: str) -> str:
    return os.path.join(root, __version__, "runs")


def load_run(root: str, key: str, targets: Sequence[tuple[str, str]]) -> tuple[int, str] | None:
    """The exit status and output stored under ``key``, if every file it checked still has the
    same bytes and every dependency the same size and modification time; else ``None``.

    An entry that is not a regular file, is too large, fails its checksum or holds an exit
    status no run stores is a miss: the run checks again and rewrites it."""
    entry = read_entry(os.path.join(_runs_directory(root), key), RUN_ENTRY_LIMIT)
    if entry is None or not entry.startswith(_FORMAT):
        return None
    data = unseal(entry[len(_FORMAT) :])
    if data is None:
        return None
    try:
        lines = data.split(b"\n", 2)
        status = int(lines[0])
        if status not in STORED_STATUSES:
            return None
        checked = int(lines[1])
        rest = lines[2].split(b"\n", checked)
        paths = dict(targets)
        for line in rest[:checked]:
            expected, shown = line.decode("utf-8", "surrogateescape").split(" ", 1)
            path = paths.get(shown)
            if path is None or file_digest(path) != expected:
                return None
        dependencies, _, body = rest[checked].partition(b"\n")
        count = int(dependencies)
        parts = body.split(b"\n", count)
        for line in parts[:count]:
            size, mtime, path = line.decode("utf-8", "surrogateescape").split(" ", 2)
            info = os.stat(path)
            if (info.st_size, info.st_mtime_ns) != (int(size), int(mtime)):
                return None
        return status, parts[count].decode("utf-8", "surrogateescape")
    except (ValueError, IndexError, OSError):
        return None  # a damaged or foreign entry: check again


def store_run(
    root: str,
    key: str,
    status: int,
    output: str,
    checked: Sequence[tuple[str, str]],
    dependencies: Iterable[str],
) -> None:
    """Store a run (``checked``: (display, hash) of each file checked). Never raises: a cache
    that cannot be written (read-only checkout, full disk) only makes the next run slower."""
    if status not in STORED_STATUSES or any("\n" in shown or "\r" in shown for shown, _ in checked):
        return
    lines = [str(status), str(len(checked))]
    lines += [f"{file_hash} {shown}" for shown, file_hash in checked]
    stats = []
    try:
        for path in sorted(set(dependencies)):
            info = os.stat(path)
            stats.append(f"{info.st_size} {info.st_mtime_ns} {os.path.abspath(path)}")
    except OSError:
        return
    if any("\n" in line for line in stats):
        return
    lines.append(str(len(stats)))
    lines += stats
    body = "\n".join(lines).encode("utf-8", "surrogateescape") + b"\n"
    body += output.encode("utf-8", "surrogateescape")
    payload = _FORMAT + seal(body)
    directory = _runs_directory(root)
    if not ensure_directory(root, directory):
        return
    write_atomically(os.path.join(directory, key), payload)
    prune(directory, RUNS_KEPT)


def ensure_directory(root: str, directory: str) -> bool:
    """Create ``directory`` inside the cache ``root`` (with its ``.gitignore`` and
    ``CACHEDIR.TAG``); ``False`` when it cannot be created."""
    try:
        if not os.path.isdir(root):
            os.makedirs(root, exist_ok=True)
            for name, text in ((".gitignore", GITIGNORE), ("CACHEDIR.TAG", CACHEDIR_TAG)):
                with open(os.path.join(root, name), "w", encoding="utf-8") as stream:
                    stream.write(text)
        os.makedirs(directory, exist_ok=True)
    except OSError:
        return False
    return True


def write_atomically(path: str, payload: bytes) -> None:
    """Write a cache entry through a temporary file and a rename (never half an entry)."""
    temporary = f"{path}.{os.getpid()}.tmp"
    try:
        with open(temporary, "wb") as stream:
            stream.write(payload)
        os.replace(temporary, path)
    except OSError:
        try:  # noqa: SIM105 (contextlib would cost the fast path an import)
            os.unlink(temporary)
        except OSError:
            pass


def prune(directory: str, keep: int) -> None:
    """Remove the oldest entries of a cache directory beyond ``keep`` (down to half of it)."""
    try:
        entries = list(os.scandir(directory))
        if len(entries) <= keep:
            return
        entries.sort(key=lambda entry: entry.stat().st_mtime_ns)
        for entry in entries[: len(entries) - keep // 2]:
            os.unlink(entry.path)
    except OSError:
        pass
