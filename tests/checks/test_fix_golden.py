"""Golden files: real-looking reward modules (verl's, open-r1's and AgentFly's naming, comments,
multi-line dicts, nested scopes) and what fixing them must give, byte for byte.

``fix_golden/before/`` holds the modules, ``fixed/`` what the safe fixes make of them (what
``rewardkit check --fix`` and the editor's fix-all write), ``fixed_unsafe/`` what
``--unsafe-fixes`` adds. The CLI's results are compared with the same files in
``test_fix_cli.py``, the language server's in ``tests/lsp/test_fixes.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rewardkit.checks import check_source, fix_module, load_config

GOLDEN = Path(__file__).parent / "fix_golden"
MODULES = sorted(path.name for path in (GOLDEN / "before").glob("*.py"))
CONFIG = load_config(GOLDEN)


def _read(folder: str, name: str) -> str:
    return (GOLDEN / folder / name).read_text(encoding="utf-8")


@pytest.mark.parametrize("name", MODULES)
@pytest.mark.parametrize(("unsafe", "folder"), [(False, "fixed"), (True, "fixed_unsafe")])
def test_fixing_gives_the_golden_file_and_fixing_again_changes_nothing(
    name: str, unsafe: bool, folder: str
) -> None:
    before, expected = _read("before", name), _read(folder, name)
    fixed = fix_module(before, name, CONFIG, unsafe=unsafe)
    assert fixed.source == expected
    assert fixed.refused == []
    again = fix_module(fixed.source, name, CONFIG, unsafe=unsafe)
    assert (again.source, again.applied) == (expected, [])


@pytest.mark.parametrize("name", MODULES)
def test_the_golden_files_keep_every_comment_and_fix_what_they_claim(name: str) -> None:
    before, fixed = _read("before", name), _read("fixed", name)
    comments = [line.split("#", 1)[1] for line in before.splitlines() if "#" in line]
    assert comments == [line.split("#", 1)[1] for line in fixed.splitlines() if "#" in line]
    left = {d.code for d in check_source(fixed, name, CONFIG)}
    assert left < {d.code for d in check_source(before, name, CONFIG)}
    assert left <= {"RK101", "RK104", "RK201"}  # the findings whose fixes are unsafe


def test_the_verl_module_keeps_its_response_parameter_apart_from_the_gold() -> None:
    """verl's `solution_str` is the response; renaming it to open-r1's gold column `solution`
    (the did-you-mean) would compare the gold with itself: only --unsafe-fixes does it, and a
    rename to a name the function already uses (`ground_truth` -> `answer`) never happens."""
    fixed, unsafe = _read("fixed", "verl_gsm8k.py"), _read("fixed_unsafe", "verl_gsm8k.py")
    assert "def gsm8k_strict(solution_str, ground_truth," in fixed
    assert "def gsm8k_strict(solution, ground_truth," in unsafe
    assert "answer == ground_truth" in unsafe


def test_renames_leave_nested_scopes_that_bind_the_name_alone() -> None:
    fixed = _read("fixed", "open_r1_accuracy.py")
    assert "def accuracy(completion: str, solution: str) -> float:" in fixed
    assert "def answer_block(completions: str) -> str:" in fixed
    assert 'match = re.search(r"<answer>(.*?)</answer>", completions, re.DOTALL)' in fixed
    assert "[answer_block(completions) for completions in (completion,)]" in fixed
    assert 'print(f"scored {completion[:20]!r}")' in fixed


def test_a_multi_line_dict_gets_its_key_on_a_line_of_its_own() -> None:
    """After the entry it copies, the comment ending that entry's line left where it was; a
    value that would run twice (`float(...)`) is left to --unsafe-fixes."""
    fixed, unsafe = _read("fixed", "verl_gsm8k.py"), _read("fixed_unsafe", "verl_gsm8k.py")
    assert (
        '        return {\n            "score": 0.0,  # no `####` line\n'
        '            "reward": 0.0,\n            "formatted": False,\n        }\n'
    ) in fixed
    assert '    return {\n        "score": float(answer == ground_truth),\n        "formatted"' in fixed
    assert (
        '    return {\n        "score": float(answer == ground_truth),\n'
        '        "reward": float(answer == ground_truth),\n        "formatted": True,\n'
    ) in unsafe
