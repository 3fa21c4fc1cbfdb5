"""The `--output` file loads anywhere (issue 26 item 1): pandas and Hugging Face `datasets`
read exactly one row per case, with the documented columns and dtypes, and their means equal
the report's. The run's metadata (what `--resume` checks) lives in a hidden file beside it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from eval_helpers import cli_command, cli_env, read_jsonl, read_metadata, require_module

from rewardkit.evaluation import EvalConfigError, run_math_eval, sample_path

COLUMNS = ["id", "passed", "tag", "detail", "line", "seconds"]
"""The documented columns of a results file (docs/eval.md), in order."""
EXCLUDED = {"ADAPTER_ERROR", "HARNESS_ERROR"}


@pytest.fixture(scope="module")
def sample_results(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """The shipped sample graded by the CLI: its 55 cases include every outcome."""
    folder = tmp_path_factory.mktemp("results")
    out, report = folder / "out" / "results.jsonl", folder / "report.json"
    proc = subprocess.run(
        cli_command("--workers", "2", "-o", str(out), "--report", str(report)),
        capture_output=True,
        text=True,
        timeout=300,
        env=cli_env(),
    )
    assert proc.returncode == 0, proc.stderr
    return out, json.loads(report.read_text(encoding="utf-8"))


def test_pandas_reads_one_row_per_case_with_the_reports_means(sample_results) -> None:
    """A first line of metadata once gave 801 rows for 800 cases, a NaN row, four extra
    columns and `passed` as float64 (mean 0.9112 for a run whose score was 0.9205)."""
    pandas = require_module("pandas", "results files must load in pandas")
    out, report = sample_results
    frame = pandas.read_json(out, lines=True)
    assert len(frame) == report["n"] == 55
    assert list(frame.columns) == COLUMNS
    assert str(frame["passed"].dtype) == "bool"
    assert str(frame["line"].dtype) == "int64"
    assert str(frame["seconds"].dtype) == "float64"
    assert frame["id"].map(type).eq(str).all()
    assert frame["passed"].sum() == report["passed"]
    assert frame["passed"].mean() == pytest.approx(report["passed"] / report["n"])
    scored = frame[~frame["tag"].isin(EXCLUDED)]
    assert len(scored) == report["scored"]
    assert scored["passed"].mean() == pytest.approx(report["score"])
    assert frame["detail"].map(lambda detail: detail["reason"]).notna().all()


def test_datasets_loads_one_row_per_case_and_never_the_metadata(
    sample_results, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    datasets = require_module("datasets", "results files must load in Hugging Face datasets")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    out, report = sample_results
    assert (out.parent / ".results.jsonl.rewardkit.json").exists()
    cache = str(tmp_path / "hf-cache")
    by_file = datasets.load_dataset("json", data_files=str(out), split="train", cache_dir=cache)
    # the whole folder, as `data_dir` users load it: the hidden metadata file is not data
    by_folder = datasets.load_dataset(
        "json", data_dir=str(out.parent), split="train", cache_dir=cache
    )
    for loaded in (by_file, by_folder):
        assert loaded.num_rows == report["n"]
        assert loaded.column_names == COLUMNS
        assert loaded.features["passed"].dtype == "bool"
        assert loaded.features["line"].dtype == "int64"
        assert loaded.features["seconds"].dtype == "float64"
        assert loaded.features["id"].dtype == "string"
        assert sum(loaded["passed"]) == report["passed"]
        scored = [row["passed"] for row in loaded if row["tag"] not in EXCLUDED]
        assert sum(scored) / len(scored) == pytest.approx(report["score"])


def test_the_metadata_beside_the_results_says_what_was_graded(tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    run_math_eval(sample_path(), workers=0, output=out, limit=5)
    metadata = read_metadata(out)
    assert metadata["rewardkit_results"] == 2
    assert metadata["input"]["name"] == "<sample math_sample.jsonl>"
    assert len(read_jsonl(out)) == 5
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".results.jsonl.rewardkit.json",
        "results.jsonl",
    ]
    # through a symlink, the metadata sits beside the file the link names
    link = tmp_path / "link.jsonl"
    link.symlink_to(out)
    run = run_math_eval(sample_path(), workers=0, output=link, resume=True)
    assert run.summary.n == 55
    assert not (tmp_path / ".link.jsonl.rewardkit.json").exists()


def test_a_results_file_with_its_metadata_as_first_line_is_moved_on_resume(
    tmp_path: Path,
) -> None:
    """rewardkit 0.1 wrote the metadata as the file's first line: such a file still resumes
    (never a different run), and the line moves beside the file."""
    out = tmp_path / "results.jsonl"
    run_math_eval(sample_path(), workers=0, output=out, limit=10)
    metadata_file = tmp_path / ".results.jsonl.rewardkit.json"
    header = json.loads(metadata_file.read_text(encoding="utf-8"))
    header["rewardkit_results"] = 1
    out.write_text(json.dumps(header) + "\n" + out.read_text(encoding="utf-8"), encoding="utf-8")
    os.unlink(metadata_file)
    with pytest.raises(EvalConfigError, match="graded with other options"):
        run_math_eval(sample_path(), workers=0, output=out, resume=True, policy="strict")
    run = run_math_eval(sample_path(), workers=0, output=out, resume=True)
    assert (run.summary.n, run.timings.resumed_cases) == (55, 10)
    assert len(read_jsonl(out)) == 55
    assert read_metadata(out)["input"] == header["input"]
