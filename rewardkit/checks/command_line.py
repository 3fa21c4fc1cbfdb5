"""What a ``rewardkit check`` command line asks for, as the run cache keys it.

Shared by the light front (:mod:`rewardkit.checks.cli`, which answers cached runs) and the full
command (:mod:`rewardkit.checks.command`), so that neither imports the other's module at load
time. Imports only :mod:`rewardkit.checks.run_cache` (no parser, no argparse).
"""

from __future__ import annotations

from rewardkit.checks import run_cache

TYPE_CHECKING = False
if TYPE_CHECKING:  # no runtime import: the cached fast path stays light
    from collections.abc import Sequence

OPTIONS_WITH_VALUE = (
    "--format",
    "--output-format",
    "--select",
    "--ignore",
    "--config",
    "--max-file-size",
)
"""Options taking a value (``--output-format`` is ruff's name of ``--format``)."""
FLAGS = ("--quiet", "--exit-zero", "--statistics")


class CommandLine:
    """What a ``rewardkit check`` command line asks for (what its report depends on)."""

    __slots__ = (
        "config",
        "exit_zero",
        "ignore",
        "max_file_size",
        "output_format",
        "paths",
        "quiet",
        "select",
        "statistics",
    )

    def __init__(
        self,
        paths: Sequence[str],
        output_format: str = "text",
        select: str | None = None,
        ignore: str | None = None,
        config: str | None = None,
        max_file_size: int | None = None,
        quiet: bool = False,
        exit_zero: bool = False,
        statistics: bool = False,
    ) -> None:
        self.paths = list(paths) or ["."]
        self.output_format = output_format
        self.select = select
        self.ignore = ignore
        self.config = config
        self.max_file_size = max_file_size
        self.quiet = quiet
        self.exit_zero = exit_zero
        """Exit 0 even when error-severity problems are found (ruff's ``--exit-zero``)."""
        self.statistics = statistics
        """Print how many problems each rule found instead of the problems (ruff's ``--statistics``)."""

    def cache_options(self) -> list[str]:
        """The command line, normalised, as part of the run cache's key."""
        return [
            f"format={self.output_format}",
            f"select={self.select}",
            f"ignore={self.ignore}",
            f"config={self.config}",
            f"max-file-size={self.max_file_size}",
            f"quiet={self.quiet}",
            f"exit-zero={self.exit_zero}",
            f"statistics={self.statistics}",
            "paths",
            *self.paths,
        ]


def simple_command_line(argv: Sequence[str]) -> CommandLine | None:
    """The :class:`CommandLine` of a command line the cache can answer (paths, options with
    values, ``--quiet``, ``--exit-zero``, ``--statistics``); ``None`` for anything else (``-``, ``--no-cache``, ``--help``,
    abbreviations, a value that looks like an option...), which the full command handles."""
    paths: list[str] = []
    values: dict[str, str] = {}
    flags: set[str] = set()
    index = 0
    while index < len(argv):
        argument = argv[index]
        name, equals, value = argument.partition("=")
        if argument in FLAGS:
            flags.add(argument)
        elif equals and name in OPTIONS_WITH_VALUE:
            values["--format" if name == "--output-format" else name] = value
        elif argument in OPTIONS_WITH_VALUE:
            if index + 1 == len(argv) or argv[index + 1].startswith("-"):
                return None
            values["--format" if argument == "--output-format" else argument] = argv[index + 1]
            index += 1
        elif argument.startswith("-"):
            return None
        else:
            paths.append(argument)
        index += 1
    max_file_size = values.get("--max-file-size")
    if max_file_size is not None and not (max_file_size.isascii() and max_file_size.isdigit()):
        return None
    return CommandLine(
        paths,
        values.get("--format", "text"),
        values.get("--select"),
        values.get("--ignore"),
        values.get("--config"),
        int(max_file_size) if max_file_size is not None else None,
        "--quiet" in flags,
        "--exit-zero" in flags,
        "--statistics" in flags,
    )


def run_key(command: CommandLine, targets: Sequence[tuple[str, str]]) -> str:
    """The run cache's key of ``command`` over ``targets`` (see :mod:`run_cache`)."""
    configs = run_cache.config_inputs([path for _, path in targets], command.config)
    return run_cache.run_key(command.cache_options(), targets, configs)
