"""Which fixes are safe (applied by ``--fix`` and fix-all) and which are not, with the naming
conventions of verl, TRL/open-r1 and AgentFly; and the libcst transforms behind them."""

from __future__ import annotations

import pytest

from rewardkit.checks import (
    CheckConfig,
    TaskField,
    apply_edits,
    apply_fix,
    check_source,
    fix_module,
    resolve_fix,
)
from rewardkit.checks.config import PRESETS
from rewardkit.checks.fix_safety import Role, field_role
from rewardkit.checks.fixer import text_edits


def _config(*task_fields: str, preset: str | None = None) -> CheckConfig:
    return CheckConfig(
        task_fields={name: TaskField(name, "pyproject") for name in task_fields},
        injected_fields=PRESETS[preset] if preset else {},
        preset=preset,
    )


def _rename(parameters: str, config: CheckConfig, body: str = "return 1.0"):
    source = f"from rewardkit import reward\n\n@reward\ndef r({parameters}):\n    {body}\n"
    renames = [
        (d.data["parameter"], fix)
        for d in check_source(source, None, config)
        for fix in d.fixes
        if fix.transform is not None and fix.transform.kind == "rename"
    ]
    return source, dict(renames)


@pytest.mark.parametrize(
    ("name", "role"),
    [
        # verl: the response is `solution_str`, the gold `ground_truth`
        ("solution_str", Role.OUTPUT),
        ("response_str", Role.OUTPUT),
        ("ground_truth", Role.REFERENCE),
        ("prompt_str", Role.INPUT),
        ("data_source", Role.OTHER),
        # TRL / open-r1: `completion(s)` against the dataset's `solution`
        ("completion", Role.OUTPUT),
        ("completions", Role.OUTPUT),
        ("solution", Role.REFERENCE),
        ("prompt", Role.INPUT),
        # AgentFly / rewardkit
        ("final_response", Role.OUTPUT),
        ("prediction", Role.OUTPUT),
        ("trajectory", Role.OUTPUT),
        ("answer", Role.REFERENCE),
        ("golden_answer", Role.REFERENCE),
        ("expected_output", Role.REFERENCE),
        ("model_answer", Role.OUTPUT),
        ("question", Role.INPUT),
        ("context", Role.OTHER),
        # misspellings say nothing
        ("answr", Role.OTHER),
        ("final_respone", Role.OTHER),
    ],
)
def test_what_a_parameter_name_says_it_receives(name: str, role: Role) -> None:
    assert field_role(name) is role


@pytest.mark.parametrize(
    ("parameters", "task_fields", "parameter", "suggestion", "safe"),
    [
        # verl's response parameter next to open-r1's gold column: the did-you-mean is the gold
        ("solution_str, ground_truth", ("solution",), "solution_str", "solution", False),
        ("answer_str, question", ("answer", "question"), "answer_str", "answer", False),
        # ... and without that column, rewardkit's own name for the response
        ("solution_str, answer", ("answer",), "solution_str", "final_response", True),
        ("solution_str, ground_truth", ("answer",), "ground_truth", "answer", True),
        # TRL / open-r1
        ("completions, solution", ("solution",), "completions", "completion", True),
        ("final_response, solutoin", ("solution",), "solutoin", "solution", True),
        # AgentFly
        ("prediction, answer", ("answer",), "prediction", "final_response", True),
        ("final_respone, answer", ("answer",), "final_respone", "final_response", True),
        ("final_response, answr", ("answer",), "answr", "answer", True),
        ("final_response, gold", ("answer",), "gold", "answer", True),
        # the reverse direction: a gold-marking name to the response
        ("final_answer, answer", ("answer",), "final_answer", "final_response", False),
    ],
)
def test_renames_across_kinds_of_input_are_unsafe(
    parameters: str, task_fields: tuple[str, ...], parameter: str, suggestion: str, safe: bool
) -> None:
    _, renames = _rename(parameters, _config(*task_fields))
    fix = renames[parameter]
    assert fix.transform.option("to") == suggestion
    assert fix.safe is safe
    assert fix.is_preferred is safe
    if not safe:
        assert fix.applicability == "unsafe"
        assert "reward would read another input" in fix.unsafe_reason


def test_fix_all_never_renames_the_response_to_the_gold() -> None:
    """The reported bug: `solution_str` renamed to `solution` makes every sample score 1.0."""
    source = (
        "from rewardkit import reward\n\n@reward\n"
        "def accuracy(solution_str, ground_truth):\n"
        "    return float(solution_str.strip() == ground_truth.strip())\n"
    )
    config = _config("solution", "answer")
    safe = fix_module(source, "r.py", config)
    assert "def accuracy(solution_str, answer):" in safe.source
    assert [d.data["parameter"] for d in safe.unsafe] == ["solution_str"]
    unsafe = fix_module(source, "r.py", config, unsafe=True)
    assert "def accuracy(solution, answer):" in unsafe.source


def test_a_rename_to_a_name_the_function_uses_is_shown_and_never_applied() -> None:
    source, renames = _rename(
        "final_response, ground_truth",
        _config("answer"),
        "answer = final_response.split()[-1]\n    return float(answer == ground_truth)",
    )
    fix = renames["ground_truth"]
    assert fix.applicability == "display"
    assert "already a name in this function" in fix.unsafe_reason
    for unsafe in (False, True):
        assert fix_module(source, "r.py", _config("answer"), unsafe=unsafe).source == source


@pytest.mark.parametrize(
    ("body", "returned", "safe"),
    [
        ("return 1", "return 1.0", True),
        ("return 1_000", "return 1_000.0", True),
        ("return 0x10", "return float(0x10)", True),
        ("return int(final_response == answer)", "return float(final_response == answer)", True),
        ("return int(len(final_response) > 3)", "return float(len(final_response) > 3)", True),
        (
            "return bool(answer and final_response)",
            "return float(answer and final_response)",
            False,
        ),
        ("return int(len(final_response) / 3)", "return float(len(final_response) / 3)", False),
        ("return len(final_response)", "return float(len(final_response))", True),
    ],
)
def test_float_fixes_are_safe_when_the_value_stays(body: str, returned: str, safe: bool) -> None:
    source = (
        "from agentfly.rewards import reward\n\n@reward(name='r')\n"
        f"def r(final_response, answer):\n    {body}\n"
    )
    [diagnostic] = check_source(source, None, _config("answer"))
    [fix] = diagnostic.fixes
    assert fix.safe is safe
    assert apply_fix(source, fix).splitlines()[-1] == f"    {returned}"


def test_making_a_reward_async_is_unsafe() -> None:
    source = (
        "from rewardkit import reward\n\nasync def judge(text):\n    return 1.0\n\n"
        "@reward\ndef judged(final_response):\n    return judge(final_response)\n"
    )
    [diagnostic] = check_source(source)
    [fix] = diagnostic.fixes
    assert (diagnostic.code, fix.applicability) == ("RK302", "unsafe")
    assert "async def judged(final_response):" in apply_fix(source, fix)
    # --unsafe-fixes still refuses it: the fixed module reports the call it did not await
    fixed = fix_module(source, "r.py", CheckConfig(), unsafe=True)
    assert fixed.source == source
    assert [(d.code, "RK301" in reason) for d, reason in fixed.refused] == [("RK302", True)]


@pytest.mark.parametrize(
    ("breakage", "reason"),
    [
        (
            "\n@reward\ndef other(final_respone):\n    return 1.0\n",
            "re-checking the fixed module finds new problems (RK102)",
        ),
        ("\ndef broken(:\n", "the fixed module would not parse"),
    ],
)
def test_a_fix_whose_result_parses_badly_or_adds_a_finding_is_refused(
    monkeypatch: pytest.MonkeyPatch, breakage: str, reason: str
) -> None:
    """Whatever a transform does, a fix is kept only when the module parses and re-checks
    with no new finding (a transform with a bug is simulated here)."""
    from rewardkit.checks import fixer

    fixed_text = fixer.fixed_text
    monkeypatch.setattr(
        fixer, "fixed_text", lambda source, fix: (fixed_text(source, fix)[0] + breakage, None)
    )
    source = (
        "from rewardkit import reward\n\n@reward\ndef r(final_response, answr):\n    return 1.0\n"
    )
    fixed = fix_module(source, "r.py", _config("answer"))
    assert fixed.source == source
    [(diagnostic, why)] = fixed.refused
    assert diagnostic.code == "RK101"
    assert reason in why


@pytest.mark.parametrize(
    ("value", "safe"),
    [
        ("f1", True),
        ("0.5", True),
        ("-1", True),
        # anything else may run code twice: a call, a property, a `__getitem__`
        ("float(final_response == 'x')", False),
        ("round(len(final_response) / 10, 2)", False),
        ("judge(final_response)", False),  # an LLM judge twice may not agree with itself
        ("random.random()", False),
        ("JUDGE.verdict", False),
        ("SCORES[final_response]", False),
        ("f1 + 0", False),
    ],
)
def test_a_reward_value_that_would_run_twice_is_unsafe(value: str, safe: bool) -> None:
    source = (
        "import random\n\nfrom rewardkit import reward\n\n\ndef judge(text):\n    return 0.5\n\n\n"
        "JUDGE = SCORES = None\n\n\n"
        "@reward\ndef r(final_response):\n    f1 = 0.5\n"
        f"    return {{'score': {value}, 'label': 'x'}}\n"
    )
    [diagnostic] = check_source(source)
    [fix] = diagnostic.fixes
    assert fix.title == f"Add a `reward` key with `{value}`"
    assert fix.safe is safe


# -- the transforms and their edits -------------------------------------------------------------


def _only_fix(source: str, config: CheckConfig | None = None):
    [diagnostic] = check_source(source, None, config or _config("answer"))
    return diagnostic.fixes[0]


def test_a_rename_edits_each_use_as_a_whole_name() -> None:
    source = (
        "from rewardkit import reward\n\n@reward\ndef r(final_response, answr):\n"
        "    def gold(answr):  # its own answr\n        return answr.strip()\n"
        "    hit = gold(answr) == final_response  # answr twice: answr\n"
        "    return float(hit or f'{answr}' in final_response)\n"
    )
    fix = resolve_fix(source, _only_fix(source))
    assert [(e.line, e.column, e.end_column, e.new_text) for e in fix.edits] == [
        (4, 22, 27, "answer"),
        (7, 15, 20, "answer"),
        (8, 27, 32, "answer"),
    ]
    fixed = apply_edits(source, fix.edits)
    assert "def gold(answr):  # its own answr\n        return answr.strip()" in fixed
    assert "# answr twice: answr" in fixed


@pytest.mark.parametrize(
    ("returned", "expected"),
    [
        # right after the entry it copies
        ("{'score': s}", "{'score': s, 'reward': s}"),
        ('{ "score": s }', '{ "score": s, "reward": s }'),
        ("{'score' : s}", "{'score' : s, 'reward' : s}"),
        ("{'n': 1, 'score': s, 'x': 2}", "{'n': 1, 'score': s, 'reward': s, 'x': 2}"),
        (
            "{  # metrics\n        'score': s,\n    }",
            "{  # metrics\n        'score': s,\n        'reward': s,\n    }",
        ),
        (
            "{\n        # the score\n        'score': s\n    }",
            "{\n        # the score\n        'score': s,\n        'reward': s\n    }",
        ),
        (
            "{\n        'score': s,  # kept here\n        'n': 1,\n    }",
            "{\n        'score': s,  # kept here\n        'reward': s,\n        'n': 1,\n    }",
        ),
        (
            "{\n        'n': 1,\n        'score': s\n    }",
            "{\n        'n': 1,\n        'score': s,\n        'reward': s\n    }",
        ),
        ("dict(score=s)", "dict(score=s, reward=s)"),
        ("dict(score = s)", "dict(score = s, reward = s)"),
        (
            "dict(\n        score=s,\n        n=1,\n    )",
            "dict(\n        score=s,\n        reward=s,\n        n=1,\n    )",
        ),
    ],
)
def test_the_reward_key_is_added_in_the_dict_s_own_style(returned: str, expected: str) -> None:
    source = f"from rewardkit import reward\n\n@reward\ndef r(final_response):\n    s = 0.5\n    return {returned}\n"
    fixed = apply_fix(source, _only_fix(source))
    assert fixed == source.replace(returned, expected)
    assert check_source(fixed) == []


def test_an_insertion_starts_where_a_token_does() -> None:
    assert text_edits("x = {'a': 1}\n", "x = {'reward': 1, 'a': 1}\n")[0].column == 5
    [edit] = text_edits("f(answr)\n", "f(answer)\n")
    assert (edit.column, edit.end_column, edit.new_text) == (2, 7, "answer")
    [edit] = text_edits("a\r\nb\r\n", "a\r\nx\r\nb\r\n")
    assert (edit.line, edit.column, edit.new_text) == (2, 0, "x\r\n")


def test_fixes_keep_line_endings_and_non_ascii_text() -> None:
    source = (
        "from rewardkit import reward\r\n\r\n@reward\r\ndef r(final_respone):\r\n"
        "    # café ☕\r\n    n = len('é' + final_respone)\r\n    return {'score': n}\r\n"
    )
    fixed = fix_module(source, "r.py", CheckConfig()).source
    assert fixed == source.replace("final_respone", "final_response").replace(
        "{'score': n}", "{'score': n, 'reward': n}"
    )
