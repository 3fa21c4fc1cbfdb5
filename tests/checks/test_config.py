"""``[tool.rewardkit]``: discovery walking up, task fields with provenance, presets, clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rewardkit.checks import CheckConfig, ConfigError, check_source, load_config

MODULE = "from rewardkit import reward\n\n@reward\ndef r(final_response, chain_id, question):\n    return 1.0\n"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_nearest_pyproject_with_a_rewardkit_table_walking_up(tmp_path: Path) -> None:
    write(
        tmp_path / "pyproject.toml",
        '[tool.rewardkit]\ntask_fields = ["question"]\npreset = "agentfly"\n',
    )
    write(
        tmp_path / "pkg" / "pyproject.toml", "[project]\nname = 'inner'\n"
    )  # no table: keep walking
    module = write(tmp_path / "pkg" / "sub" / "rewards.py", MODULE)
    config = load_config(module)
    assert config.config_path == str(tmp_path / "pyproject.toml")
    assert config.task_fields["question"].source == "pyproject"
    assert "chain_id" in config.injected_fields
    assert "finish_reason" in config.injected_fields
    assert check_source(MODULE, str(module), config) == []
    assert [
        d.code for d in check_source(MODULE, None, CheckConfig(task_fields=config.task_fields))
    ] == ["RK101"]


def test_task_schema_jsonl_gives_fields_with_examples(tmp_path: Path) -> None:
    rows = [{"question": "2+2?", "answer": "4"}, {"question": "x", "answer": "y", "difficulty": 3}]
    write(tmp_path / "data" / "train.jsonl", "\n".join(json.dumps(r) for r in rows) + "\n")
    write(
        tmp_path / "pyproject.toml",
        '[tool.rewardkit]\ntask_fields = ["answer"]\ntask_schema = "data/train.jsonl"\ninjected_fields = ["step"]\n',
    )
    config = load_config(tmp_path)
    question = config.task_fields["question"]
    assert question.source == "dataset"
    assert question.example == "2+2?"
    assert question.source_path == str((tmp_path / "data" / "train.jsonl").resolve())
    assert config.task_fields["difficulty"].example_text == "3"
    answer = config.task_fields["answer"]  # declared in pyproject, example borrowed from the data
    assert answer.source == "pyproject"
    assert answer.example == "4"
    assert "dataset" in config.describe_field("question")
    assert "2+2?" in config.describe_field("question")
    assert config.describe_field("final_response").startswith("The agent's final answer")
    assert "step" in config.known_fields()


def test_task_schema_json_list(tmp_path: Path) -> None:
    write(tmp_path / "rows.json", json.dumps([{"prompt": "p", "gold": 1}]))
    write(tmp_path / "pyproject.toml", '[tool.rewardkit]\ntask_schema = "rows.json"\n')
    assert set(load_config(tmp_path).task_fields) == {"prompt", "gold"}


@pytest.mark.parametrize(
    ("table", "files", "message"),
    [
        ('task_schema = "data.csv"', {"data.csv": "a,b\n"}, "must be a .json or .jsonl file"),
        (
            'task_schema = "rows.jsonl"',
            {"rows.jsonl": '{"a": 1}\n{broken\n'},
            "rows.jsonl:2: invalid JSON",
        ),
        ('task_schema = "rows.jsonl"', {"rows.jsonl": "[1, 2]\n"}, "rows.jsonl:1: each row"),
        ('task_schema = "missing.jsonl"', {}, "task_schema 'missing.jsonl' does not exist"),
        ("task_fields = 3", {}, "task_fields must be a list of strings"),
        ('preset = "verl"', {}, "preset 'verl' is unknown"),
        ("task_fields = [", {}, "invalid TOML"),
        # A misspelt key would silently turn its checks off (RK101 with no task fields).
        ('task_feilds = ["answer"]', {}, "unknown key 'task_feilds'; did you mean 'task_fields'?"),
        ("colour = 1", {}, "unknown key 'colour'; known keys: exclude, framework_rewards, ignore"),
    ],
)
def test_bad_configuration_names_the_file(
    tmp_path: Path, table: str, files: dict[str, str], message: str
) -> None:
    for name, text in files.items():
        write(tmp_path / name, text)
    write(tmp_path / "pyproject.toml", f"[tool.rewardkit]\n{table}\n")
    with pytest.raises(ConfigError) as error:
        load_config(tmp_path)
    assert message in str(error.value)
    assert "pyproject.toml" in str(error.value) or files


def test_select_and_ignore_are_prefixes() -> None:
    config = CheckConfig(select=("RK1", "RK201"), ignore=("RK102",))
    assert config.is_selected("RK101")
    assert config.is_selected("RK201")
    assert not config.is_selected("RK102")
    assert not config.is_selected("RK202")


def test_task_fields_declared_by_an_editor_keep_the_projects_provenance() -> None:
    from rewardkit.checks import TaskField

    project = CheckConfig(
        task_fields={"answer": TaskField("answer", "pyproject", "pyproject.toml")}
    )
    merged = project.with_task_fields(
        TaskField(name, "editor", "rewardkit.taskFields") for name in ("answer", "question")
    )
    assert merged.task_fields["answer"].source == "pyproject"
    assert merged.task_fields["question"].source == "editor"
    assert merged.describe_field("question") == (
        "task field declared in the editor settings (rewardkit.taskFields)"
    )
    assert project.with_task_fields([]) is project
