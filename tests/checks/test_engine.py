"""The engine on realistic modules: seed examples, a corpus of bad modules, discovery, incrementality."""

from __future__ import annotations

import random

import pytest

from rewardkit.checks import (
    CheckConfig,
    ModuleAnalysis,
    ModuleAnalyzer,
    TaskField,
    apply_edits,
    apply_fix,
    check_source,
    duplicate_reward_diagnostics,
    suppression_fix,
)
from rewardkit.checks.config import PRESETS
from rewardkit.checks.scopes import CONTEXT_COROUTINE_METHODS

from .good_modules import GOOD_MODULES, GOOD_TASK_FIELDS
from .seed_examples import SEEDS, TASK_FIELDS

TASK_CONFIG = CheckConfig(task_fields={name: TaskField(name, "pyproject") for name in TASK_FIELDS})


@pytest.mark.parametrize("name", sorted(SEEDS))
def test_seed_examples_produce_no_diagnostics(name: str) -> None:
    analysis = ModuleAnalyzer().analyze(SEEDS[name], f"{name}.py", TASK_CONFIG)
    assert analysis.diagnostics == ()
    assert [r.name for r in analysis.rewards] == [name]
    # Without task fields declared, RK101/RK104 stay quiet too.
    assert check_source(SEEDS[name], None, CheckConfig()) == []


def test_seed_reward_definitions_carry_spans_for_hover_and_completion() -> None:
    source = SEEDS["webshop_reward"]
    [definition] = ModuleAnalyzer().analyze(source, None, TASK_CONFIG).rewards
    assert definition.is_async
    assert definition.kind == "function"
    assert definition.function_name == "webshop_reward"
    lines = source.splitlines()
    assert [p.name for p in definition.parameters] == ["final_response", "context", "data"]
    assert [p.kind for p in definition.parameters][-1] == "var_keyword"
    for parameter in definition.parameters:
        line = lines[parameter.span.line - 1]
        assert line[parameter.span.column : parameter.span.end_column] == parameter.name
    params = definition.parameters_span
    assert lines[params.line - 1][params.column : params.end_column].startswith(
        "final_response: str"
    )
    assert lines[params.line - 1][params.end_column] == ")"
    [api] = ModuleAnalyzer().analyze(SEEDS["api_reward"], None, TASK_CONFIG).rewards
    assert api.kind == "class"
    assert api.class_name == "APIReward"
    assert api.name == "api_reward"
    assert [p.name for p in api.parameters] == ["final_response", "answer"]  # no self


# Each corpus module: (source, {(code, line), ...}); checked with task fields declared.
CORPUS = {
    "misspellings": (
        "from rewardkit import reward\n"  # 1
        "\n"
        "@reward(name='qa')\n"
        "def qa(final_respone, answr, trajectroy=None):\n"  # 4
        "    return float(final_respone == answr)\n",
        {("RK102", 4), ("RK101", 4)},
    ),
    "shapes": (
        "import rewardkit as rk\n"  # 1
        "\n"
        "@rk.reward\n"
        "def shape(final_response, answer):\n"  # 4
        "    if not final_response:\n"
        "        return\n"  # 6
        "    if answer == 'x':\n"
        "        return {'reward': 1.0, 'f1': 1.0}\n"  # 8
        "    if answer == 'y':\n"
        "        return {'f1': 0.5}\n"  # 10
        "    if answer == 'z':\n"
        "        return {'reward': 0.5}\n"  # 12
        "    return 'wrong'\n",  # 13
        {("RK203", 6), ("RK201", 10), ("RK204", 12), ("RK202", 13)},
    ),
    "async_misuse": (
        "import time\n"  # 1
        "import requests\n"
        "from agentfly.rewards import reward as r\n"
        "\n"
        "@r()\n"
        "async def fetch(final_response, context):\n"  # 6
        "    sandbox = context.acquire_resource('sandbox')\n"  # 7
        "    time.sleep(1)\n"  # 8
        "    body = requests.get('http://judge').json()\n"  # 9
        "    return float(body['ok'])\n"
        "\n"
        "@r\n"
        "def sync_fetch(final_response, context):\n"  # 13
        "    context.acquire_resource('sandbox')\n"  # 14
        "    return 1.0\n",
        {("RK301", 7), ("RK303", 8), ("RK303", 9), ("RK302", 14)},
    ),
    "classes_and_duplicates": (
        "from rewardkit import BaseReward, reward\n"  # 1
        "\n"
        "class Judge(BaseReward):\n"  # 3
        "    def call(self, final_response, *args):\n"  # 4
        "        return 1.0\n"
        "\n"
        "class NoCall(BaseReward):\n"  # 7
        "    name = 'judge'\n"
        "\n"
        "@reward(name='dup')\n"
        "def first(final_response, /):\n"  # 11
        "    return 1.0\n"
        "\n"
        "@reward(name='dup')\n"
        "def second(final_response, max_len=3):\n"  # 15
        "    return 0.0\n",
        {
            ("RK402", 3),
            ("RK103", 4),
            ("RK402", 7),
            ("RK401", 11),
            ("RK103", 11),
            ("RK401", 15),
            ("RK104", 15),
        },
    ),
    "suppressed_and_helpers": (
        "from rewardkit import reward\n"  # 1
        "\n"
        "def helper(final_respone):\n"  # 3: not a reward, not checked
        "    return final_respone\n"
        "\n"
        "@reward\n"
        "def ok(final_respone):  # rewardkit: ignore[RK102]\n"  # 7
        "    return 1.0\n"
        "\n"
        "@reward\n"
        "def all_off(answr):  # rewardkit: ignore\n"  # 11
        "    return [answr]\n"  # 12
        "\n"
        "@reward\n"
        "def not_quite(answr):  # rewardkit: ignore[RK999]\n"  # 15
        "    return 1.0\n",
        {("RK202", 12), ("RK101", 15)},
    ),
    "syntax_error": (
        "from rewardkit import reward\n"
        "\n"
        "@reward\n"
        "def broken(final_respone):\n"
        "    return {'reward': 1.0\n"  # 5: never closed
        "\n"
        "@reward\n"
        "def other(answr):\n"
        "    return 1.0\n",
        {("RK900", 5)},
    ),
}


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_corpus_reports_exact_codes_and_lines(name: str) -> None:
    source, expected = CORPUS[name]
    found = {(d.code, d.line) for d in check_source(source, f"{name}.py", TASK_CONFIG)}
    assert found == expected


def test_no_task_fields_means_no_rk101_but_rk102_still() -> None:
    source, _ = CORPUS["misspellings"]
    found = {(d.code, d.data["parameter"]) for d in check_source(source)}  # type: ignore[index]
    # without task fields only a likely typo of a common dataset column is RK101
    assert found == {("RK102", "final_respone"), ("RK102", "trajectroy"), ("RK101", "answr")}
    assert check_source(source.replace("answr", "rubric")) == check_source(
        source.replace("answr", "rubric"), None, CheckConfig()
    )
    assert {d.code for d in check_source(source.replace("answr", "rubric"))} == {"RK102"}


@pytest.mark.parametrize(
    ("header", "decorator"),
    [
        ("from rewardkit import reward", "@reward"),
        ("from rewardkit import reward", "@reward()"),
        ("from rewardkit import reward as r", "@r(name='x')"),
        ("import rewardkit as rk", "@rk.reward(name='x')"),
        ("import rewardkit", "@rewardkit.reward"),
        ("from rewardkit.runtime.define.rewards import reward", "@reward"),
        ("from agentfly.rewards import reward", "@reward(name='x')"),
        ("import agentfly.rewards", "@agentfly.rewards.reward"),
        ("from .reward_base import reward", "@reward"),
        ("from rewardkit import *", "@reward"),
        (
            "try:\n    from agentfly.rewards import reward\nexcept ImportError:\n    from rewardkit import reward",
            "@reward",
        ),
    ],
)
def test_reward_definitions_are_found_however_spelled(header: str, decorator: str) -> None:
    source = f"{header}\n\n{decorator}\ndef f(final_respone):\n    return 1.0\n"
    assert [d.code for d in check_source(source)] == ["RK102"]


def test_configured_decorators_and_unrelated_decorators() -> None:
    source = "from mylib import scorer\nimport rewardkit\n\n@scorer\ndef f(final_respone):\n    return 1.0\n"
    assert check_source(source) == []
    assert [
        d.code for d in check_source(source, None, CheckConfig(reward_decorators=("scorer",)))
    ] == ["RK102"]
    assert [
        d.code for d in check_source(source, None, CheckConfig(reward_decorators=("mylib.scorer",)))
    ] == ["RK102"]
    other = "from functools import cache\nimport rewardkit\n\n@cache\ndef f(final_respone):\n    return None\n"
    assert check_source(other) == []


def test_modules_without_rewards_are_skipped_unparsed() -> None:
    analysis = ModuleAnalyzer().analyze("def broken(:\n", "plain.py", CheckConfig())
    assert analysis.skipped
    assert analysis.diagnostics == ()


def test_fixes_rename_add_key_await_and_suppress() -> None:
    source, _ = CORPUS["misspellings"]
    diagnostics = check_source(source, None, TASK_CONFIG)
    rk102 = next(d for d in diagnostics if d.code == "RK102")
    assert rk102.data
    assert rk102.data["suggestion"] == "final_response"
    assert rk102.data["reward"] == "qa"
    renamed = apply_fix(source, rk102.fixes[0])
    assert "final_respone" not in renamed
    assert renamed.count("final_response") == 2
    suppressed = apply_edits(source, suppression_fix(rk102, source).edits)
    assert "# rewardkit: ignore[RK102]" in suppressed.splitlines()[3]
    assert all(d.code != "RK102" for d in check_source(suppressed, None, TASK_CONFIG))
    # A second suppression on the same line extends the code list.
    rk101 = next(d for d in check_source(suppressed, None, TASK_CONFIG) if d.code == "RK101")
    both = apply_edits(suppressed, suppression_fix(rk101, suppressed).edits)
    assert "# rewardkit: ignore[RK102, RK101]" in both
    assert check_source(both, None, TASK_CONFIG) == []


def test_add_reward_key_on_multiline_dict_and_dict_call() -> None:
    source = (
        "from rewardkit import reward\n\n@reward\ndef qa(final_response):\n"
        "    return {\n        'accuracy': 0.5,\n        'label': 'x',\n    }\n"
    )
    [diagnostic] = check_source(source)
    fixed = apply_fix(source, diagnostic.fixes[0])
    assert "        'accuracy': 0.5,\n        'reward': 0.5," in fixed  # after the entry it copies
    assert check_source(fixed) == []
    call = "from rewardkit import reward\n\n@reward\ndef qa(final_response):\n    return dict(label='x')\n"
    [diagnostic] = check_source(call)
    fixed = apply_fix(call, diagnostic.fixes[0])
    assert "dict(reward=0.0, label='x')" in fixed


def test_await_fix_parenthesises_when_the_result_is_used() -> None:
    source = (
        "from rewardkit import reward\n\n@reward\nasync def r(final_response, context):\n"
        "    return context.acquire_resource('x').score\n"
    )
    [diagnostic] = check_source(source)
    fixed = apply_fix(source, diagnostic.fixes[0])
    assert "return (await context.acquire_resource('x')).score" in fixed
    assert check_source(fixed) == []


def test_context_coroutine_methods_match_the_runtime() -> None:
    import inspect

    from rewardkit.runtime.run.context import Context

    runtime = {
        name
        for name, member in vars(Context).items()
        if inspect.iscoroutinefunction(member) and not name.startswith("_")
    }
    assert runtime == set(CONTEXT_COROUTINE_METHODS)


def _big_module(rewards: int = 60) -> str:
    parts = ["from rewardkit import reward, BaseReward\nimport time\n"]
    for index in range(rewards):
        parts.append(
            f"\n\n@reward(name='r{index}')\ndef r{index}(final_response, answer):\n"
            f"    value = len(final_response) / (1 + len(answer))\n"
            f"    if value > 1:\n        return {{'reward': 1.0, 'ratio': value}}\n"
            f"    return {{'reward': value, 'ratio': value}}\n"
        )
    return "".join(parts)


def test_incremental_analysis_equals_a_fresh_check_and_reparses_only_the_edit() -> None:
    rng = random.Random(7)
    analyzer = ModuleAnalyzer()
    source = _big_module()
    analyzer.analyze(source, "big.py", TASK_CONFIG)
    snippets = [
        "answr",
        "\n",
        "return\n",
        "(",
        "'",
        "    x = 1\n",
        "@reward\ndef z(final_respone):\n    pass\n",
        "#",
        '"""',
    ]
    for step in range(60):
        position = rng.randrange(len(source))
        source = source[:position] + rng.choice(snippets) + source[position + rng.randrange(3) :]
        incremental = analyzer.analyze(source, "big.py", TASK_CONFIG)
        fresh = ModuleAnalyzer().analyze(source, "big.py", TASK_CONFIG)
        assert incremental == fresh, step
    # A one-line edit inside one reward re-parses one chunk.
    source = _big_module()
    analyzer.analyze(source, "big.py", TASK_CONFIG)
    edited = source.replace("def r30(final_response, answer)", "def r30(final_response, answr)")
    analysis = analyzer.analyze(edited, "big.py", TASK_CONFIG)
    assert analyzer.last_reparsed == 1
    assert [(d.code, d.data["reward"]) for d in analysis.diagnostics] == [("RK101", "r30")]


def test_cache_stays_bounded_over_many_edits() -> None:
    analyzer = ModuleAnalyzer()
    source = _big_module(20)
    for step in range(200):
        edited = source.replace(
            "def r7(final_response, answer):", f"def r7(final_response, answer):  # {step}"
        )
        analyzer.analyze(edited, "doc.py", TASK_CONFIG)
        analyzer.analyze(source.replace("value > 1", f"value > {step}", 1), "other.py", TASK_CONFIG)
    # Only what the latest version of each document uses stays cached.
    assert len(analyzer._parsed) <= 2 * 22
    assert len(analyzer._analysed) <= 2 * 21
    analyzer.forget("doc.py")
    analyzer.forget("other.py")
    assert not analyzer._parsed
    assert not analyzer._analysed


def test_rewards_defined_inside_functions_are_checked_but_not_compared_for_rk401() -> None:
    source = (
        "from rewardkit import reward\n\n"
        "@reward(name='shared')\ndef top(final_response):\n    return 1.0\n\n"
        "def make():\n"
        "    @reward(name='shared')\n"
        "    def inner(final_respone):\n"  # 9
        "        return 0.0\n"
        "    return inner\n"
    )
    analysis = ModuleAnalyzer().analyze(source)
    assert [(d.code, d.line) for d in analysis.diagnostics] == [("RK102", 9)]
    assert [(r.name, r.module_level) for r in analysis.rewards] == [
        ("shared", True),
        ("shared", False),
    ]


def test_a_syntax_error_keeps_the_rewards_that_parsed_and_reports_only_rk900() -> None:
    """While one definition does not parse, the others' rewards stay known (hover, completion)
    but their diagnostics wait: the file's other checks are skipped, as for ``rewardkit check``."""
    source, _ = CORPUS["syntax_error"]
    analyzer = ModuleAnalyzer()
    analysis = analyzer.analyze(source, "doc.py", TASK_CONFIG)
    assert [(d.code, d.line) for d in analysis.diagnostics] == [("RK900", 5)]
    assert analysis.syntax_error == analysis.diagnostics[0]
    assert [(r.name, r.span.line) for r in analysis.rewards] == [("other", 8)]
    # RK900 deselected: the analysis still says the module does not parse.
    quiet = ModuleAnalyzer().analyze(source, "doc.py", CheckConfig(ignore=("RK900",)))
    assert quiet.diagnostics == ()
    assert quiet.syntax_error is not None
    # Fixed: the cached analyses of the other definitions come back at once.
    fixed = source.replace("{'reward': 1.0\n", "{'reward': 1.0}\n")
    analysis = analyzer.analyze(fixed, "doc.py", TASK_CONFIG)
    assert analyzer.last_reparsed == 1
    assert analysis.syntax_error is None
    assert {(d.code, d.line) for d in analysis.diagnostics} == {("RK102", 4), ("RK101", 8)}


def test_line_numbers_in_a_syntax_error_message_are_the_modules() -> None:
    source = (
        "from rewardkit import reward\n\n\n"
        "@reward\ndef f(final_response):\n    text = '''never closed\n    return 1.0\n"
    )
    [diagnostic] = check_source(source)
    assert diagnostic.line == 6
    assert diagnostic.message == (
        "syntax error: unterminated triple-quoted string literal (detected at line 7)"
    )


def test_duplicate_names_differing_only_in_case_clash_like_in_the_registry() -> None:
    source = (
        "from rewardkit import reward\n\n@reward(name='Exact')\ndef a(final_response):\n"
        "    return 1.0\n\n@reward(name='exact')\ndef b(final_response):\n    return 0.0\n"
    )
    assert [(d.code, d.line, d.message) for d in check_source(source)] == [
        ("RK401", 4, "reward name 'Exact' is also defined at line 8 (as 'exact')"),
        ("RK401", 8, "reward name 'exact' is also defined at line 4 (as 'Exact')"),
    ]


def test_agentfly_env_cls_fills_env() -> None:
    source = (
        "from agentfly.rewards import reward\nfrom agentfly.envs import CodeEnv\n\n"
        "@reward(name='code', env_cls=CodeEnv, pool_size=8)\n"
        "async def code(final_response, answer, env):\n"
        "    return float(await env.step(final_response) == answer)\n\n"
        "@reward(name='plain')\nasync def plain(final_response, env):\n    return 1.0\n"
    )
    analysis = ModuleAnalyzer().analyze(source, None, TASK_CONFIG)
    assert [(d.code, d.line, d.data["parameter"]) for d in analysis.diagnostics] == [
        ("RK101", 9, "env")
    ]
    code, plain = analysis.rewards
    assert dict(code.own_fields)["env"].startswith(
        "AgentFly: an instance of the decorator's `env_cls`"
    )
    assert plain.own_fields == ()


@pytest.mark.parametrize(
    ("parameter", "suggestion"),
    [
        ("solution_str", "final_response"),  # verl
        ("response", "final_response"),
        ("messages", "trajectory"),
        ("ground_truth", "answer"),
        ("answers", "answer"),  # close spelling
    ],
)
def test_unknown_fields_suggest_what_other_frameworks_call_them(
    parameter: str, suggestion: str
) -> None:
    source = (
        f"from rewardkit import reward\n\n@reward\ndef r({parameter}, answer=''):\n    return 1.0\n"
    )
    [diagnostic] = check_source(source, None, TASK_CONFIG)
    assert diagnostic.code == "RK101"
    assert diagnostic.message.endswith(f"; did you mean `{suggestion}`?")
    assert diagnostic.fixes[0].title == f"Rename `{parameter}` to `{suggestion}`"


def test_an_unknown_field_without_suggestion_says_how_to_declare_it() -> None:
    source = "from rewardkit import reward\n\n@reward\ndef r(final_response, difficulty):\n    return 1.0\n"
    [diagnostic] = check_source(source, None, TASK_CONFIG)
    assert diagnostic.message == (
        "`difficulty` is not a field: no predefined, injected or task field fills it "
        "(if the dataset has it, add it to `task_fields` in [tool.rewardkit])"
    )
    assert diagnostic.fixes == ()


@pytest.mark.parametrize("name", sorted(GOOD_MODULES))
@pytest.mark.parametrize("configured", [False, True], ids=["zero-config", "preset"])
def test_realistic_correct_modules_produce_no_diagnostics_even_without_configuration(
    name: str, configured: bool
) -> None:
    """AgentFly's reward modules: no false positive with their fields declared, nor with no
    configuration at all (the zero-config RK101 of likely typos stays silent on real names)."""
    config = CheckConfig(
        task_fields={field: TaskField(field, "pyproject") for field in GOOD_TASK_FIELDS},
        injected_fields=PRESETS["agentfly"],
    )
    analysis = ModuleAnalyzer().analyze(
        GOOD_MODULES[name], f"{name}.py", config if configured else CheckConfig()
    )
    assert analysis.diagnostics == ()
    assert len(analysis.rewards) >= 6


# Names real datasets and AgentFly's rewards use as parameters.
REAL_COLUMN_NAMES = (  # noqa: SIM905
    "answers labels golden_answers gold_actions test_cases question questions task_id env_args "
    "level image images choices choice preference solutions ground_truths gt target_text "
    "reference_answer tools metadata rubric answer_type problem_id query queries prompts "
    "targets expected inputs output gold goal label_ids answer_key answer_text final_answers "
    "problems prompt_id difficulty category domain tests responses completion references "
    "instructions question_id passage title unique_id expected_output test_list entry_point "
    "canonical_solution input_output starter_code fn_name hints subject uid examples"
).split()
TYPOS = {
    "answr": "answer", "anwser": "answer", "solutoin": "solution", "groundtruth": "ground_truth",
    "grond_truth": "ground_truth", "qustion": "question", "lable": "label",
    "refrence": "reference", "gold_anwser": "gold_answer", "glod": "gold",
    "extra_ifo": "extra_info", "data_sorce": "data_source", "problm": "problem",
}  # fmt: skip


def _one_parameter(name: str) -> str:
    return (
        f"from rewardkit import reward\n\n@reward\ndef r(final_response, {name}):\n"
        f"    return float(final_response == {name})\n"
    )


@pytest.mark.parametrize("name", REAL_COLUMN_NAMES)
def test_zero_config_leaves_real_dataset_column_names_alone(name: str) -> None:
    assert check_source(_one_parameter(name)) == []


@pytest.mark.parametrize(("typo", "column"), sorted(TYPOS.items()))
def test_zero_config_reports_likely_typos_of_common_columns(typo: str, column: str) -> None:
    """The README's own example (`answr` with no [tool.rewardkit]) is found: the runtime would
    raise MissingFieldError on every sample."""
    [diagnostic] = check_source(_one_parameter(typo))
    assert (diagnostic.code, diagnostic.line) == ("RK101", 4)
    assert diagnostic.data == {"reward": "r", "parameter": typo, "suggestion": column}
    fixed = apply_fix(_one_parameter(typo), diagnostic.fixes[0])
    assert fixed == _one_parameter(column)
    assert check_source(fixed) == []


def test_async_with_on_a_context_coroutine_is_not_an_await() -> None:
    source = (
        "from rewardkit import reward\n\n@reward\nasync def r(final_response, context):\n"
        "    async with context.acquire_resource('sandbox') as box:\n"
        "        return float(await box.run(final_response))\n"
    )
    [diagnostic] = check_source(source)
    assert (diagnostic.code, diagnostic.line) == ("RK301", 5)
    fixed = apply_fix(source, diagnostic.fixes[0])
    assert "async with await context.acquire_resource('sandbox') as box:" in fixed


# ----------------------------------------------------------------------------- real reward code


def test_prediction_is_flagged_without_any_configuration() -> None:
    source = (
        "from agentfly.rewards import reward\n\n@reward(name='exact')\n"
        "def exact(prediction, answer):\n    return float(prediction.strip() == answer)\n\n"
        "@reward(name='short')\ndef short(final_response, prediction=''):\n"
        "    return float(len(prediction or final_response) < 100)\n"
    )
    first, second = check_source(source)  # no task fields declared: `answer` is not reported
    assert (first.code, first.line, first.data["parameter"]) == ("RK101", 4, "prediction")
    assert first.message == (
        "`prediction` is not a field: no predefined, injected or task field fills it "
        "(`prediction` is AgentFly's older name for the model's answer); did you mean "
        "`final_response`?"
    )
    fixed = apply_fix(source, first.fixes[0])
    assert "def exact(final_response, answer):\n    return float(final_response.strip()" in fixed
    assert (second.code, second.line, second.data["suggestion"]) == ("RK104", 8, "final_response")
    # With task fields declared the usual rules apply, `prediction` included.
    assert {d.code for d in check_source(source, None, TASK_CONFIG)} == {"RK101", "RK104"}
    # A project that declares it (its framework fills it) is not told otherwise.
    declared = CheckConfig(injected_fields={"prediction": "filled by our runner"})
    assert check_source(source, None, declared) == []


AGENTFLY_CONFIG = CheckConfig(preset="agentfly", injected_fields=PRESETS["agentfly"])


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        ("return final_response == answer", "bool"),
        ("return int(final_response == answer)", "int"),
        ("return 1 if final_response == answer else 0", "int"),
        ("return 1.0 if final_response == answer else 0", "int"),  # the else branch
        ("return not final_response", "bool"),
        ("return len(final_response)", "int"),
        ("return round(len(final_response) / 3)", "int"),
        ("return answer in final_response", "bool"),
        ("score = 0\n    if answer in final_response:\n        score = 1\n    return score", "int"),
        ("return isinstance(final_response, str) and bool(answer)", "bool"),
    ],
)
def test_int_and_bool_returns_are_flagged_where_agentfly_runs_the_reward(
    body: str, kind: str
) -> None:
    agentfly = (
        "from agentfly.rewards import reward\n\n@reward(name='r')\n"
        f"def r(final_response, answer):\n    {body}\n"
    )
    [diagnostic] = check_source(agentfly, None, TASK_CONFIG)
    assert (diagnostic.code, diagnostic.data["returned"]) == ("RK205", kind)
    fixed = apply_fix(agentfly, diagnostic.fixes[0])
    assert check_source(fixed, None, TASK_CONFIG) == [], fixed
    rewardkit_reward = agentfly.replace("agentfly.rewards", "rewardkit")
    assert check_source(rewardkit_reward, None, TASK_CONFIG) == []  # rewardkit accepts both
    config = CheckConfig(task_fields=TASK_CONFIG.task_fields, preset="agentfly")
    assert [d.code for d in check_source(rewardkit_reward, None, config)] == ["RK205"]


@pytest.mark.parametrize(
    "body",
    [
        "return float(final_response == answer)",
        "return (final_response == answer) * 1.0",
        "return {'reward': final_response == answer}",  # AgentFly converts a dict's reward
        "score = 0\n    score += 0.5\n    return score",  # an augmented float
        "int = lambda x: x / 2\n    return int(3)",  # not the builtin
        "return sum(len(x) for x in answer) / 2",
        "return max(0.0, len(final_response) - 1)",  # max of a float: not certain
    ],
)
def test_float_returns_are_fine_under_agentfly(body: str) -> None:
    source = (
        "from agentfly.rewards import reward\n\n@reward(name='r')\n"
        f"def r(final_response, answer):\n    {body}\n"
    )
    assert check_source(source, None, TASK_CONFIG) == []


def test_agentflys_own_relative_imports_and_classes_count_as_agentfly() -> None:
    source = (
        "from ..reward_base import BaseReward, reward\n\n"
        "@reward(name='exact')\ndef exact(final_response, answer):\n"
        "    return final_response == answer\n\n"
        "class Judge(BaseReward):\n    name = 'judge'\n\n"
        "    def call(self, final_response, answer):\n        return 1\n"
    )
    assert [(d.code, d.line) for d in check_source(source, None, TASK_CONFIG)] == [
        ("RK205", 5),
        ("RK205", 11),
    ]


def test_a_decorator_imported_inside_a_function_body_still_makes_a_reward() -> None:
    source = (
        "def main():\n"
        "    from agentfly.rewards import reward\n"
        "\n"
        "    @reward(name='inner')\n"
        "    def inner(prediction, answer):\n"  # 5
        "        return prediction == answer\n"  # 6
        "\n"
        "    return inner\n"
        "\n"
        "def other():\n"
        "    import rewardkit as rk\n"
        "    if True:\n"
        "        @rk.reward\n"
        "        def nested(final_respone):\n"  # 14
        "            return 1.0\n"
        "\n"
        "class Holder:\n"
        "    from rewardkit import reward as r\n"
        "\n"
        "    @r\n"
        "    def method(self, trajectroy):\n"  # 21
        "        return 1.0\n"
        "\n"
        "@reward\n"  # not imported at module level: not a reward here
        "def unrelated(final_respone):\n"
        "    return 1.0\n"
    )
    analysis = ModuleAnalyzer().analyze(source, "nested.py", CheckConfig())
    assert [(d.code, d.line) for d in analysis.diagnostics] == [
        ("RK101", 5),
        ("RK205", 6),
        ("RK102", 14),
        ("RK102", 21),
    ]
    assert [(r.name, r.module_level) for r in analysis.rewards] == [
        ("inner", False),
        ("nested", False),
        ("method", True),
    ]
    assert list(analysis.diagnostics) == check_source(source)


COROUTINES = (
    "import asyncio\n"  # 1
    "from asyncio import sleep\n"
    "from rewardkit import BaseReward, reward\n"
    "\n"
    "async def judge(text):\n"  # 5
    "    return float(len(text) > 3)\n"
    "\n"
    "@reward\n"
    "async def graded(final_response):\n"
    "    return 1.0\n"  # 10
    "\n"
    "def sync_helper(text):\n"
    "    return 0.5\n"
    "\n"
)


@pytest.mark.parametrize(
    ("body", "flagged"),
    [
        ("score = judge(final_response)\n    return score", True),
        ("return judge(final_response)", True),
        ("return float(judge(final_response))", True),
        ("return 1.0 if judge(final_response) else 0.0", True),
        ("judge(final_response)\n    return 1.0", True),
        ("result = graded(final_response=final_response)\n    return result.reward", True),
        ("sleep(1)\n    return 1.0", True),
        ("asyncio.sleep(1)\n    return 1.0", True),
        ("return await judge(final_response)", False),
        ("score = await judge(final_response)\n    return score", False),
        ("pending = judge(final_response)\n    return await pending", False),
        (
            "scores = await asyncio.gather(*[judge(t) for t in final_response.split()])\n"
            "    return sum(scores)",
            False,
        ),
        ("task = asyncio.create_task(judge(final_response))\n    return await task", False),
        ("return sync_helper(final_response)", False),
        ("judge = sync_helper\n    return judge(final_response)", False),  # shadowed locally
        (
            "async def local(text):\n        return 1.0\n    return await local(final_response)",
            False,
        ),
        ("async def local(text):\n        return 1.0\n    return local(final_response)", True),
    ],
)
def test_unawaited_coroutine_functions_the_module_defines_or_imports(
    body: str, flagged: bool
) -> None:
    source = COROUTINES + f"@reward\nasync def checked(final_response):\n    {body}\n"
    diagnostics = check_source(source)
    assert [d.code for d in diagnostics] == (["RK301"] if flagged else []), diagnostics
    if flagged:
        fixed = apply_fix(source, diagnostics[0].fixes[0])
        assert "await " in fixed
        assert check_source(fixed) == [], fixed


def test_coroutines_in_sync_rewards_and_methods_of_reward_classes() -> None:
    source = COROUTINES + (
        "@reward\ndef blocking(final_response):\n"  # 15-16
        "    return asyncio.run(judge(final_response))\n"  # run to completion: fine
        "\n"
        "@reward\ndef forgot(final_response):\n"  # 19-20
        "    return judge(final_response)\n"  # 21
        "\n"
        "class Api(BaseReward):\n"
        "    name = 'api'\n"
        "\n"
        "    async def score(self, text):\n"
        "        return 1.0\n"
        "\n"
        "    async def call(self, final_response):\n"
        "        value = self.score(final_response)\n"  # 30
        "        return value\n"
    )
    assert [(d.code, d.line) for d in check_source(source)] == [("RK302", 21), ("RK301", 30)]


def test_coroutine_functions_that_cannot_be_resolved_are_left_alone() -> None:
    source = (
        "import functools\nfrom rewardkit import reward\nfrom judges import remote_judge\n\n"
        "def to_sync(f):\n    return f\n\n"
        "@to_sync\nasync def wrapped(text):\n    return 1.0\n\n"  # an unknown decorator
        "async def twice(text):\n    return 1.0\n\ntwice = functools.partial(twice)\n\n"
        "@reward\nasync def r(final_response, judge):\n"
        "    a = wrapped(final_response)\n"
        "    b = twice(final_response)\n"
        "    c = remote_judge(final_response)\n"  # imported from a module not read
        "    d = judge(final_response)\n"  # a parameter
        "    return a + b + c + d\n"
    )
    assert check_source(source) == []


def test_the_known_coroutine_functions_of_rewardkit_are_coroutine_functions() -> None:
    import importlib
    import inspect

    from rewardkit.checks.scopes import KNOWN_COROUTINE_FUNCTIONS

    for name in KNOWN_COROUTINE_FUNCTIONS:
        if name.startswith(("rewardkit.", "asyncio.")):
            module, _, attribute = name.rpartition(".")
            function = getattr(importlib.import_module(module), attribute)
            assert inspect.iscoroutinefunction(function), name


@pytest.mark.parametrize(
    "header",
    [
        "from rewardkit import reward",
        "import rewardkit as rk\nreward = rk.reward",
        "from agentfly.rewards import reward",
        "from .reward_base import reward",
        "from ..reward_base import reward",
        "from . import reward_base\nreward = reward_base.reward",
        "from .. import rewards\nreward = rewards.reward",
        "from.reward_base import reward",
        "from \\\n    .reward_base import reward",
        "def make():\n    from agentfly.rewards import reward",
    ],
)
def test_the_textual_prefilter_never_skips_a_module_that_defines_a_reward(header: str) -> None:
    from rewardkit.checks.engine import may_define_rewards

    source = f"{header}\n\n@reward\ndef f(final_respone):\n    return 1.0\n"
    assert may_define_rewards(source, CheckConfig())


@pytest.mark.parametrize(
    "source",
    [
        "import os\n\ndef f():\n    return os.sep\n",
        "from . import utils\n\ndef f():\n    return utils.x\n",  # relative, no reward named
        "# a comment about rewards\nx = 1\n",
    ],
)
def test_modules_that_cannot_define_a_reward_are_skipped(source: str) -> None:
    assert ModuleAnalyzer().analyze(source, "plain.py", CheckConfig()).skipped


def test_duplicate_names_are_linear_in_time_memory_and_output() -> None:
    from rewardkit.checks import RewardDefinition, Span

    span = Span(4, 4, 4, 6)
    definitions = [
        (
            f"m{index}.py",
            RewardDefinition("qa", "qa", False, "function", None, span, span, (), span),
        )
        for index in range(20_000)
    ]
    by_path = duplicate_reward_diagnostics(
        [(path, ModuleAnalysis(rewards=(d,))) for path, d in definitions]
    )
    assert len(by_path) == 20_000
    [first] = by_path["m0.py"]
    assert first.message == (
        "reward name 'qa' is also defined at m1.py:4, m2.py:4, m3.py:4 and 19,996 other definitions"
    )
    assert first.data == {
        "reward": "qa",
        "others": ["m1.py:4", "m2.py:4", "m3.py:4"],
        "count": 19_999,
    }
    assert sum(len(d.message) for found in by_path.values() for d in found) < 20_000 * 120
