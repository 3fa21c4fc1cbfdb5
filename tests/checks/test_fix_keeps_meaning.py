"""``rewardkit check --fix`` never makes a safe fix that changes what a reward computes (issue 33,
items 1-3, 5, 6), run as a user runs it: the real CLI in a subprocess on files, the fixed
module then executed."""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .cli_helpers import run_check
from .fix_programs import isolated_registry

CONFIG = '[tool.rewardkit]\ntask_fields = ["answer", "solution", "question"]\n'

HEADER = "from rewardkit import reward\n\n"


def _project(tmp_path: Path, source: str, name: str = "r.py") -> Path:
    (tmp_path / "pyproject.toml").write_text(CONFIG, encoding="utf-8")
    path = tmp_path / name
    path.write_text(source, encoding="utf-8")
    return path


def _raw(path: Path, function: str) -> Any:
    """The undecorated function ``function`` of the module at ``path``, freshly executed."""
    namespace: dict[str, Any] = {"__name__": f"fixed_{function}"}
    with isolated_registry():
        exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), namespace)
    return namespace[function].__wrapped__


def _fix(path: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return run_check("--no-cache", "--fix", *options, path.name, cwd=path.parent)


# -- 1. a stale reward key ------------------------------------------------------------------


STALE = HEADER + (
    "@reward\n"
    "def qa(final_response, answer):\n"
    '    result = {"score": 0.0, "n": len(final_response)}\n'
    "    if final_response == answer:\n"
    '        result["score"] = 1.0\n'
    "    return result\n"
)
WALRUS = HEADER + (
    "@reward\n"
    "def qa(final_response, answer):\n"
    '    return {"acc": (s := float(final_response == answer)), "score": s}\n'
)


@pytest.mark.parametrize("source", [STALE, WALRUS], ids=["mutated", "walrus"])
def test_a_reward_key_is_never_copied_from_a_value_the_dict_may_not_return(
    tmp_path: Path, source: str
) -> None:
    """A ``reward`` written into the display would be the first score (every sample 0.0) or a
    name bound by another entry: the safe fix is refused, the problem stays, exit 1."""
    path = _project(tmp_path, source)
    result = _fix(path)
    assert path.read_text(encoding="utf-8") == source
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout.startswith("No fixes applied.\n")
    assert "1 more problem has an unsafe fix, not applied" in result.stdout
    assert ": RK201 this dict has no `reward` key" in result.stdout
    as_json = run_check("--no-cache", "--format", "json", path.name, cwd=tmp_path)
    [fix] = json.loads(as_json.stdout)[0]["fixes"]
    assert fix["applicability"] == "unsafe"


def test_a_reward_key_goes_right_after_the_entry_it_copies(tmp_path: Path) -> None:
    source = HEADER + (
        "@reward\n"
        "def qa(final_response, answer):\n"
        "    ok = float(final_response == answer)\n"
        '    return {"n": len(final_response), "score": ok, "first": final_response[:1]}\n'
    )
    path = _project(tmp_path, source)
    result = _fix(path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert path.read_text(encoding="utf-8") == source.replace(
        '"score": ok,', '"score": ok, "reward": ok,'
    )
    for response in ("4", "5"):
        returned = _raw(path, "qa")(response, "4")
        assert returned["reward"] == returned["score"] == float(response == "4")


# -- 2. double evaluation ----------------------------------------------------------------------


JUDGED = HEADER + (
    "CALLS = []\n\n\n"
    "class Judge:\n"
    "    @property\n"
    "    def verdict(self):\n"
    "        CALLS.append(1)\n"
    "        return len(CALLS) / 10\n\n\n"
    "JUDGE = Judge()\n\n\n"
    "@reward\n"
    "def qa(final_response, answer):\n"
    '    return {"score": VALUE, "calls": tuple(CALLS)}\n'
)


@pytest.mark.parametrize(
    "value",
    ["JUDGE.verdict", "float(JUDGE.verdict)", "JUDGE.verdict * 1", "[JUDGE.verdict][0]"],
)
def test_a_value_that_would_run_twice_is_never_copied_by_a_safe_fix(
    tmp_path: Path, value: str
) -> None:
    source = JUDGED.replace("VALUE", value)
    path = _project(tmp_path, source)
    result = _fix(path)
    assert path.read_text(encoding="utf-8") == source
    assert result.stdout.startswith("No fixes applied.\n"), result.stdout
    [item] = json.loads(run_check("--no-cache", "--format", "json", path.name, cwd=tmp_path).stdout)
    [fix] = item["fixes"]
    assert (fix["title"], fix["applicability"]) == (f"Add a `reward` key with `{value}`", "unsafe")


def test_a_method_of_a_local_named_math_is_not_cheap(tmp_path: Path) -> None:
    source = (
        "import math\n\n"
        + HEADER
        + (
            "class Judge:\n"
            "    def judge(self, text):\n"
            "        return float(bool(text))\n\n\n"
            "@reward\n"
            "def qa(final_response, answer):\n"
            "    math = Judge()\n"
            '    return {"score": math.judge(final_response)}\n'
        )
    )
    path = _project(tmp_path, source)
    result = _fix(path)
    assert path.read_text(encoding="utf-8") == source
    assert result.stdout.startswith("No fixes applied.\n"), result.stdout


@pytest.mark.parametrize("value", ["s", "0.5", "-1"])
def test_a_name_or_a_literal_is_copied(tmp_path: Path, value: str) -> None:
    source = HEADER + (
        "@reward\n"
        "def qa(final_response, answer):\n"
        "    s = float(final_response == answer)\n"
        f'    return {{"score": {value}}}\n'
    )
    path = _project(tmp_path, source)
    assert _fix(path).returncode == 0
    assert f'{{"score": {value}, "reward": {value}}}' in path.read_text(encoding="utf-8")


# -- 3. dynamic uses of a renamed parameter ----------------------------------------------------


DYNAMIC = {
    "locals": '    return {"reward": float(locals()["answr"] == final_response)}\n',
    "eval": '    return {"reward": float(eval("answr") == final_response)}\n',
    "vars": '    return {"reward": float(vars()["answr"] == final_response)}\n',
    "self_call": (
        "    if depth:\n"
        "        return qa(final_response=final_response, answr=answr.strip(), depth=0)\n"
        '    return {"reward": float(answr == final_response)}\n'
    ),
    "f_string": '    return {"reward": float(answr == final_response), "why": f"{answr=}"}\n',
    "nonlocal": (
        "    def strip():\n"
        "        nonlocal answr\n"
        "        answr = answr.strip()\n"
        "    strip()\n"
        '    return {"reward": float(answr == final_response)}\n'
    ),
}


@pytest.mark.parametrize("use", sorted(DYNAMIC))
def test_a_parameter_used_by_its_text_is_not_renamed_by_a_safe_fix(
    tmp_path: Path, use: str
) -> None:
    """Renamed, ``locals()["answr"]`` raises KeyError, the self-call a TypeError, and
    ``f"{answr=}"`` prints another text: the rename is unsafe, the file untouched."""
    depth = ", depth=1" if use == "self_call" else ""
    source = HEADER + f"@reward\ndef qa(final_response, answr{depth}):\n" + DYNAMIC[use]
    path = _project(tmp_path, source)
    before = _raw(path, "qa")(" 4 ", " 4 ")
    result = _fix(path)
    assert path.read_text(encoding="utf-8") == source
    assert result.returncode == 1
    assert result.stdout.startswith("No fixes applied.\n"), result.stdout
    assert "RK101 `answr` is not a field" in result.stdout
    items = json.loads(run_check("--no-cache", "--format", "json", path.name, cwd=tmp_path).stdout)
    [item] = [item for item in items if item["code"] == "RK101"]
    for fix in item["fixes"]:  # none when it cannot even be applied (`nonlocal`)
        assert (fix["title"], fix["applicability"]) == ("Rename `answr` to `answer`", "unsafe")
    assert _raw(path, "qa")(" 4 ", " 4 ") == before


def test_an_unsafe_rename_that_would_not_compile_is_refused(tmp_path: Path) -> None:
    """libcst's scope analysis leaves `nonlocal answr` and its assignment: renamed, the module
    parses but no longer compiles (no binding for nonlocal). Even --unsafe-fixes refuses it."""
    source = HEADER + "@reward\ndef qa(final_response, answr):\n" + DYNAMIC["nonlocal"]
    path = _project(tmp_path, source)
    result = _fix(path, "--unsafe-fixes")
    assert path.read_text(encoding="utf-8") == source
    refused = "not fixed: r.py:4:24: RK101: Rename `answr` to `answer`: the fixed module would"
    assert f"{refused} not compile" in result.stdout


def test_a_parameter_used_only_by_name_is_still_renamed(tmp_path: Path) -> None:
    source = HEADER + (
        "@reward\ndef qa(final_response, answr):\n"
        '    return {"reward": float(answr == final_response), "why": f"{answr}"}\n'
    )
    path = _project(tmp_path, source)
    assert _fix(path).returncode == 0
    assert path.read_text(encoding="utf-8") == source.replace("answr", "answer")


# -- 5. a file that cannot be written; CR-only line ends ---------------------------------------

FIXABLE = HEADER + (
    "@reward\ndef qa(final_respone, answer):\n    return float(final_respone == answer)\n"
)


def _limit_file_size(size: int) -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))


def _assert_nothing_fixed(result: subprocess.CompletedProcess[str], display: str) -> None:
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout.startswith("No fixes applied.\n"), result.stdout
    assert f"  not fixed: {display}:4:8: RK102: cannot write the file (" in result.stdout
    assert f"{display}:4:8: RK102 `final_respone` looks like a misspelling" in result.stdout
    assert f"rewardkit check: cannot write {display}: " in result.stderr
    assert "Fixed" not in result.stdout + result.stderr


def test_a_write_that_fails_midway_leaves_the_file_intact_and_says_nothing_was_fixed(
    tmp_path: Path,
) -> None:
    """A file-size limit (as root too) makes the write of the longer fixed text fail after it
    began: the file keeps its bytes (never truncated) and nothing counts as fixed."""
    path = _project(tmp_path, FIXABLE)
    size = len(FIXABLE.encode())
    completed = subprocess.run(
        [sys.executable, "-m", "rewardkit", "check", "--no-cache", "--fix", path.name],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        preexec_fn=lambda: _limit_file_size(size),
    )
    _assert_nothing_fixed(completed, path.name)
    assert "File too large" in completed.stderr
    assert path.read_bytes() == FIXABLE.encode()


def _unwritable(path: Path) -> tuple[list[str], str]:
    """Make ``path`` unwritable for the checker: (a command prefix, how). Root writes any
    read-only file, so as root the file is made immutable (``chattr +i``); otherwise it is
    made read-only."""
    if os.geteuid() != 0:
        path.chmod(0o444)
        return [], "read-only"
    chattr = shutil.which("chattr")
    assert chattr, "root without chattr (e2fsprogs): an unwritable file cannot be made"
    made = subprocess.run([chattr, "+i", str(path)], capture_output=True, text=True, check=False)
    if made.returncode != 0:  # no CAP_LINUX_IMMUTABLE or a filesystem without the flag
        path.chmod(0o444)
        setpriv = shutil.which("setpriv")
        assert setpriv, f"cannot make {path} unwritable: {made.stderr.strip()}; no setpriv"
        return [setpriv, "--bounding-set=-dac_override,-fowner", "--inh-caps=-all", "--"], (
            "read-only, without the capability to override it"
        )
    return [], "immutable"


def test_fix_on_a_file_it_cannot_write_says_nothing_was_fixed(tmp_path: Path) -> None:
    path = _project(tmp_path, FIXABLE)
    prefix, how = _unwritable(path)
    try:
        result = run_check("--no-cache", "--fix", path.name, cwd=tmp_path, prefix=prefix)
    finally:
        if how == "immutable":
            subprocess.run(["chattr", "-i", str(path)], check=True)
    _assert_nothing_fixed(result, path.name)
    assert path.read_bytes() == FIXABLE.encode()


def test_a_cr_only_file_keeps_its_last_line_end(tmp_path: Path) -> None:
    source = FIXABLE.replace("\n", "\r")
    path = tmp_path / "r.py"
    (tmp_path / "pyproject.toml").write_text(CONFIG, encoding="utf-8")
    path.write_bytes(source.encode())
    result = run_check("--no-cache", "--fix", "r.py", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    expected = source.replace("final_respone", "final_response").encode()
    assert path.read_bytes() == expected
    again = run_check("--no-cache", "--fix", "r.py", cwd=tmp_path)
    assert again.stdout.startswith("No fixes applied.\n") or "Fixed" not in again.stdout
    assert path.read_bytes() == expected


def test_fix_is_idempotent_and_byte_exact_on_bom_crlf_tabs_and_latin_1(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(CONFIG, encoding="utf-8")
    body = (
        "from rewardkit import reward\r\n\r\n@reward\r\ndef qa(final_respone, answer):\r\n"
        "\t# réponse attendue\r\n\tok = float(final_respone == answer)\r\n"
        "\treturn {\r\n\t\t'score': ok,  # gardé\r\n\t\t'n': 1,\r\n\t}\r\n"
    )
    fixed = body.replace("final_respone", "final_response").replace(
        "# gardé\r\n", "# gardé\r\n\t\t'reward': ok,\r\n"
    )
    files = {
        "latin.py": (b"# -*- coding: latin-1 -*-\r\n", "latin-1"),
        "bom.py": (b"\xef\xbb\xbf", "utf-8"),
    }
    for name, (prefix, encoding) in files.items():
        source = body.replace("qa", name[:-3])
        (tmp_path / name).write_bytes(prefix + source.encode(encoding))
    first = run_check("--no-cache", "--fix", *files, cwd=tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr
    for name, (prefix, encoding) in files.items():
        expected = prefix + fixed.replace("qa", name[:-3]).encode(encoding)
        assert (tmp_path / name).read_bytes() == expected
    second = run_check("--no-cache", "--fix", *files, cwd=tmp_path)
    assert second.stdout.startswith("No fixes applied.\n") or "Fixed" not in second.stdout
    for name, (prefix, encoding) in files.items():
        expected = prefix + fixed.replace("qa", name[:-3]).encode(encoding)
        assert (tmp_path / name).read_bytes() == expected


# -- 6. verl's misspelled `solution_str` is never renamed to the gold ----------------------------


@pytest.mark.parametrize("misspelled", ["solution_sr", "soluton_str", "solution_strr"])
def test_a_misspelled_solution_str_is_never_offered_the_gold_field(
    tmp_path: Path, misspelled: str
) -> None:
    source = HEADER + (
        "@reward\n"
        f"def acc({misspelled}, answer):\n"
        f"    return float({misspelled}.strip() == answer.strip())\n"
    )
    path = _project(tmp_path, source)
    [item] = json.loads(run_check("--no-cache", "--format", "json", path.name, cwd=tmp_path).stdout)
    assert "did you mean `solution`" not in item["message"]
    assert f"`{misspelled}` looks like `solution_str`" in item["message"]
    edits = [edit["new_text"] for fix in item["fixes"] for edit in fix["edits"]]
    assert "solution" not in edits
    assert [fix["title"] for fix in item["fixes"]] == [f"Rename `{misspelled}` to `final_response`"]
    result = _fix(path, "--unsafe-fixes")
    assert result.returncode == 0, result.stdout + result.stderr
    assert path.read_text(encoding="utf-8") == source.replace(misspelled, "final_response")
    assert _raw(path, "acc")(" 4", "4 ") == 1.0
    assert _raw(path, "acc")("4", "5") == 0.0
