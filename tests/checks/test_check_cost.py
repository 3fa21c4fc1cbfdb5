"""``rewardkit check`` stays cheap in every output format (issue 36 item 5): the fix edits JSON
shows are resolved in forked workers when there are many files, with the same bytes as in one
process, and the formats that show no edits never load libcst."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .cli_helpers import BAD

HELPER = '''

def helper_{n}(text: str) -> str:
    """Padding, so that the files are enough to resolve their fixes in workers."""
    words = [word.strip(".,;:") for word in text.lower().split()]
    return " ".join(word for word in words if word not in ("a", "an", "the"))
'''

FILES = 40


@pytest.fixture
def many_fixable(tmp_path: Path) -> Path:
    """A project of ``FILES`` modules, each with findings that have fixes, together more
    source than ``FIX_PARALLEL_MIN_CHARACTERS`` (so ``--format json`` resolves in workers)."""
    package = tmp_path / "rewards"
    package.mkdir()
    for index in range(FILES):
        text = BAD + "".join(HELPER.format(n=k) for k in range(8))
        (package / f"task_{index:02d}.py").write_text(text, encoding="utf-8")
    from rewardkit.checks.fix_command import FIX_PARALLEL_MIN_CHARACTERS

    total = sum(len(path.read_text(encoding="utf-8")) for path in package.iterdir())
    assert total >= FIX_PARALLEL_MIN_CHARACTERS
    return tmp_path


def _check(cwd: Path, *args: str, in_one_process: bool = False) -> dict[str, object]:
    """Run the command line's ``run_command`` in a fresh process: its output, exit status and
    whether libcst was imported (``in_one_process``: never resolve fixes in workers)."""
    code = (
        "import json, sys, io, contextlib\n"
        "import rewardkit.checks.fix_command as fix_command\n"
        f"if {in_one_process!r}: fix_command.FIX_PARALLEL_MIN_CHARACTERS = 10**12\n"
        "from rewardkit.checks.command import run_command\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        "    status = run_command(sys.argv[1:])\n"
        "print(json.dumps({'out': out.getvalue(), 'status': status,\n"
        "                  'libcst': 'libcst' in sys.modules}))\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code, "--no-cache", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(completed.stdout)


def test_json_fix_edits_resolved_in_workers_are_the_same_bytes(many_fixable: Path):
    in_workers = _check(many_fixable, "--format", "json", "rewards")
    in_one = _check(many_fixable, "--format", "json", "rewards", in_one_process=True)
    assert in_workers["out"] == in_one["out"]
    assert in_workers["status"] == in_one["status"] == 1
    items = json.loads(str(in_workers["out"]))
    fixes = [fix for item in items for fix in item["fixes"] if fix["applicability"] == "safe"]
    assert len({item["path"] for item in items}) == FILES
    assert fixes
    assert all(fix["edits"] for fix in fixes)


@pytest.mark.parametrize("output_format", ["text", "sarif", "github"])
def test_formats_that_show_no_edits_never_load_libcst(many_fixable: Path, output_format: str):
    checked = _check(many_fixable, "--format", output_format, "rewards")
    assert checked["status"] == 1
    assert "task_00.py" in str(checked["out"])
    assert checked["libcst"] is False
