"""`EvalOptions`: `run_math_eval`'s options written once. The same run is asked for by keywords,
by an `EvalOptions`, or by both (keywords win); the CLI's defaults are its defaults; an
unknown keyword is refused as Python refuses one; bad values are refused before any file opens."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from eval_helpers import write_jsonl

from rewardkit.evaluation import EvalConfigError, EvalOptions, FieldNames, run_math_eval
from rewardkit.evaluation.cli import build_parser

ROWS = [
    {"id": "a", "response": "so \\boxed{4}", "gold": "4"},
    {"id": "b", "response": "\\boxed{5}", "gold": "4"},
    {"id": "c", "response": "no box", "gold": "4"},
]


def _outcomes(run: object) -> list[tuple[str, str]]:
    return [(result.id, result.outcome) for result in run.results]  # type: ignore[attr-defined]


def test_keywords_and_options_ask_for_the_same_run(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "cases.jsonl", ROWS)
    by_keywords = run_math_eval(data, workers=0, timeout=2.0)
    by_options = run_math_eval(data, options=EvalOptions(workers=0, timeout=2.0))
    assert _outcomes(by_keywords) == _outcomes(by_options)
    assert by_keywords.report["config"] == by_options.report["config"]
    assert by_keywords.summary.passed == 1


def test_keywords_replace_fields_of_the_options(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "cases.jsonl", [{**row, "gold": "5"} for row in ROWS])
    base = EvalOptions(workers=0, limit=1)
    run = run_math_eval(data, options=base, limit=2, report=tmp_path / "r.json")
    assert run.summary.n == 2
    assert run.summary.passed == 1  # "b" answers 5
    assert (tmp_path / "r.json").exists()
    assert base.limit == 1  # frozen: the caller's options are not changed


def test_fields_none_is_the_default_field_names(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "cases.jsonl", ROWS)
    run = run_math_eval(data, workers=0, fields=None)
    assert run.summary.n == 3


def test_an_unknown_keyword_is_a_type_error_naming_it() -> None:
    with pytest.raises(
        TypeError, match=r"run_math_eval\(\) got an unexpected keyword argument 'wokers'"
    ):
        run_math_eval(None, wokers=0)


def test_bad_options_are_refused_before_any_file_is_opened(tmp_path: Path) -> None:
    missing = tmp_path / "missing.jsonl"
    with pytest.raises(EvalConfigError, match="policy must be one of lenient, strict"):
        run_math_eval(missing, options=EvalOptions(policy="loose"))
    with pytest.raises(EvalConfigError, match=r"resume=True needs output=\.\.\."):
        run_math_eval(missing, options=EvalOptions(resume=True))


def test_options_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        EvalOptions().workers = 3  # type: ignore[misc]


def test_the_cli_defaults_are_the_options_defaults() -> None:
    args = build_parser().parse_args(["math"])
    defaults = EvalOptions()
    for name in ("policy", "extract", "timeout", "executor", "concurrency", "worker_memory"):
        assert getattr(args, name) == getattr(defaults, name), name
    assert args.max_line_size == defaults.max_line_bytes
    assert defaults.fields == FieldNames()


def test_the_cli_offers_each_task_of_the_registry_and_runs_name_theirs(tmp_path: Path) -> None:
    from rewardkit.evaluation.tasks import MATH, TASKS

    parser = build_parser()
    for name, task in TASKS.items():
        assert parser.parse_args([name]).task == name
        if task.policies:  # (the code task has none)
            assert (
                parser.parse_args([name, "--policy", task.policies[-1]]).policy
                == (task.policies[-1])
            )
    assert (EvalOptions().policy, EvalOptions().extract) == (
        MATH.policies[0],
        MATH.extract_modes[0],
    )
    data = write_jsonl(tmp_path / "cases.jsonl", ROWS)
    run = run_math_eval(data, workers=0)
    assert run.report["config"]["task"] == MATH.name
    assert run_math_eval(None, workers=0, limit=1).report["config"]["input"] == (
        f"<sample {MATH.sample}>"
    )


def test_the_signature_shows_each_option_as_a_keyword_with_its_default() -> None:
    import inspect

    parameters = inspect.signature(run_math_eval).parameters
    defaults = EvalOptions()
    for item in dataclasses.fields(EvalOptions):
        assert parameters[item.name].kind is inspect.Parameter.KEYWORD_ONLY
        assert parameters[item.name].default == getattr(defaults, item.name)
    assert list(parameters)[:2] == ["data", "options"]
