"""The ``rewardkit`` command line dispatcher: version, help, unknown subcommands."""

from __future__ import annotations

import subprocess
import sys

from rewardkit import __version__
from rewardkit.cli import SUBCOMMANDS, main


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rewardkit", *args], capture_output=True, text=True, check=False
    )


def test_version_through_python_dash_m() -> None:
    result = run_cli("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"rewardkit {__version__}"


def test_help_lists_every_subcommand(capsys) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for name in SUBCOMMANDS:
        assert name in out


def test_unknown_subcommand_is_a_usage_error() -> None:
    result = run_cli("frobnicate")
    assert result.returncode == 2
    assert "unknown subcommand 'frobnicate'" in result.stderr


def test_a_misspelt_subcommand_gets_a_did_you_mean() -> None:
    """Issue 26 item 7: `rewardkit chek` named no candidate, unlike every other message."""
    result = run_cli("chek")
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == (
        "rewardkit: error: unknown subcommand 'chek'; did you mean 'check'?"
    )


def test_a_misspelt_option_gets_a_did_you_mean(capsys) -> None:
    assert main(["--verison"]) == 2
    assert "unknown option '--verison'; did you mean '--version'?" in capsys.readouterr().err


def test_a_command_like_no_other_lists_the_subcommands(capsys) -> None:
    assert main(["frobnicate"]) == 2
    assert f"(choose from {', '.join(SUBCOMMANDS)})" in capsys.readouterr().err


def test_no_arguments_prints_help_and_exits_2(capsys) -> None:
    assert main([]) == 2
    assert "usage: rewardkit" in capsys.readouterr().out


def test_every_subcommand_module_answers_help() -> None:
    for name in SUBCOMMANDS:
        result = run_cli(name, "--help")
        assert result.returncode == 0, (name, result.stderr)
        assert "usage" in result.stdout.lower()
