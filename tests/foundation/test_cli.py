"""The ``rewardkit`` command line dispatcher: version, help, unknown subcommands."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

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


def _typed_options() -> list[tuple[tuple[str, ...], argparse.Action]]:
    """Every option with a `type` function in the subcommands' parsers (the task's for eval)."""
    from rewardkit_lsp.cli import _parser as lsp_parser

    from rewardkit.checks.command import build_parser as check_parser
    from rewardkit.evaluation.cli import build_parser as eval_parser

    (tasks,) = (a for a in eval_parser()._actions if isinstance(a, argparse._SubParsersAction))
    parsers = {
        ("eval", "math"): tasks.choices["math"],
        ("check",): check_parser(),
        ("lsp",): lsp_parser(),
    }
    return [
        (prefix, action)
        for prefix, parser in parsers.items()
        for action in parser._actions
        if action.option_strings and action.type is not None
    ]


@pytest.mark.parametrize(
    ("prefix", "action"),
    _typed_options(),
    ids=lambda value: (
        value.option_strings[0] if isinstance(value, argparse.Action) else " ".join(value)
    ),
)
def test_a_bad_option_value_names_the_option_and_no_internal_function(
    prefix: tuple[str, ...], action: argparse.Action, capsys
) -> None:
    """Issue 26 item 6: `--max-file-size abc` said `invalid _positive value`."""
    assert main([*prefix, action.option_strings[0], "abc"]) == 2
    error = capsys.readouterr().err.splitlines()[-1]
    assert f"error: argument {'/'.join(action.option_strings)}: " in error
    assert f"invalid {action.type.__name__} value" not in error  # argparse's text for a ValueError
    assert "abc" in error


def test_check_max_file_size_says_what_it_wants(capsys) -> None:
    assert main(["check", "--max-file-size", "abc"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "rewardkit check: error: argument --max-file-size: "
        "must be a positive number of characters, not abc"
    )
