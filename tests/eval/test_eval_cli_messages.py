"""What `rewardkit eval math` says (issue 26 items 5, 6, 9 and 11): errors name the subcommand
that failed and the option, texts are shown as written (one backslash where the input has one),
and output into a pipe carries no padding."""

from __future__ import annotations

import json
import os
import pty
import subprocess
from pathlib import Path

import pytest
from eval_helpers import cli_command, cli_env, read_jsonl, write_jsonl

from rewardkit.evaluation import sample_path


def test_an_unknown_option_is_refused_by_the_task_that_got_it(run_cli) -> None:
    """Item 5: `rewardkit eval math x.jsonl --bogus` printed `rewardkit eval [-h] {math}`."""
    proc = run_cli(str(sample_path()), "--bogus")
    assert proc.returncode == 2
    lines = proc.stderr.splitlines()
    assert lines[0].startswith("usage: rewardkit eval math [-h]")
    assert lines[-1] == "rewardkit eval math: error: unrecognized arguments: --bogus"
    assert "{math}" not in proc.stderr


def test_a_misspelt_option_gets_the_nearest_one(run_cli) -> None:
    proc = run_cli(str(sample_path()), "--ouptut", "out.jsonl")
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[-1] == (
        "rewardkit eval math: error: unrecognized arguments: --ouptut out.jsonl "
        "(did you mean --output?)"
    )


def test_a_missing_task_is_still_the_parent_parsers_error(run_cli) -> None:
    proc = subprocess.run(
        [*cli_command()[:-1], "mth"], capture_output=True, text=True, env=cli_env(), timeout=120
    )
    assert proc.returncode == 2
    assert "rewardkit eval: error: argument {math,code}: invalid choice: 'mth'" in proc.stderr


@pytest.mark.parametrize(
    ("option", "value", "said"),
    [
        ("--timeout", "abc", "not a number: 'abc'"),
        ("--timeout", "0", "must be > 0: '0'"),
        ("--temperature", "warm", "not a number: 'warm'"),
        ("--limit", "-1", "must be >= 0: '-1'"),
        ("--workers", "two", "not an integer: 'two'"),
        ("--max-line-size", "big", "not a size: 'big' (e.g. 2G, 512M, 0 for no cap)"),
        ("--grader", "nothing", "expected MODULE:FUNCTION, got 'nothing'"),
        ("--timeout", r"\frac{1}{2}", r"not a number: '\frac{1}{2}'"),  # item 9: as written
    ],
)
def test_a_bad_option_value_names_the_option_and_the_value_as_written(
    run_cli, option: str, value: str, said: str
) -> None:
    """Item 6: no `invalid _positive value`; item 9: no doubled backslashes."""
    proc = run_cli(option, value)
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[-1] == f"rewardkit eval math: error: argument {option}: {said}"


def test_input_errors_quote_ids_as_written(run_cli, tmp_path: Path) -> None:
    """Item 9: `duplicate id 'q\\\\1'` said the id with its backslash doubled."""
    case = {"id": r"q\1", "response": r"\boxed{1}", "gold": "1"}
    data = write_jsonl(tmp_path / "in.jsonl", [case, case])
    proc = run_cli(str(data))
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[-1] == (
        rf"rewardkit eval math: error: {data}:2: duplicate id 'q\1' (first on line 1)"
    )


def test_a_graders_error_text_reaches_the_results_and_the_html_as_written(
    run_cli, tmp_path: Path
) -> None:
    """Item 9, the eval side: an error text with LaTeX in it is stored and shown unchanged (the
    grader's own texts are the math grader's part of the item)."""
    data = write_jsonl(
        tmp_path / "in.jsonl",
        [{"id": "raises", "response": r"LATEX-ERROR \boxed{1}", "gold": "1"}],
    )
    proc = run_cli(
        str(data), "--grader", "eval_test_graders:grade_or_crash", "--workers", "1",
        "--output", "out.jsonl", "--html", "report.html",
    )  # fmt: skip
    assert proc.returncode == 3, proc.stderr  # its one case is a HARNESS_ERROR
    (result,) = read_jsonl(tmp_path / "out.jsonl")
    assert result["detail"]["error"] == r"grader raised ValueError: gold '\frac{1}{' does not parse"
    assert r"\\frac" not in json.loads(json.dumps(result))["detail"]["error"]
    from eval_helpers import decoded_report_data

    html_data = json.loads(decoded_report_data((tmp_path / "report.html").read_text()))
    assert result["detail"]["error"] in html_data["strings"]


def test_piped_output_has_no_trailing_spaces(run_cli) -> None:
    """Item 11: rich padded each line of the summary to about 100 columns in a pipe."""
    proc = run_cli("--workers", "0")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert any("score" in line for line in lines)
    padded = [line for line in lines if line != line.rstrip()]
    assert padded == []
    assert "\x1b[" not in proc.stdout  # nor colour codes


def test_a_terminal_still_gets_the_table_at_its_width(tmp_path: Path) -> None:
    """In a terminal the table is rich's, at the terminal's width (at least 100 columns)."""
    leader, follower = pty.openpty()
    env = {**cli_env(), "COLUMNS": "140", "LINES": "40", "TERM": "xterm"}
    proc = subprocess.Popen(
        cli_command("--workers", "0"), stdout=follower, stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL, cwd=tmp_path, env=env,
    )  # fmt: skip
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert proc.wait(timeout=600) == 0
    screen = b"".join(chunks).decode("utf-8", "replace")
    assert "score" in screen
    assert "┏" in screen  # rich's table, drawn for a terminal
