"""Every ```python block of README.md runs as written, and the values its comments claim hold.

Each block runs as a script in a fresh interpreter, in a folder that holds what a reader
following the README has: the blocks that are example files (``my_rewards.py``,
``portable_reward.py``, ...: the README embeds ``examples/`` verbatim), saved under their names,
and a ``responses.jsonl`` (the shipped sample) for ``run_math_eval("responses.jsonl")``.
A block whose expression statement ends in a comment holding a Python literal
(``verdict.reason   # 'rational'``) must evaluate to that literal.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Blocks that cannot run here, by a phrase of theirs, with the reason. None so far: a block
# that needs a server, a model or a file gets it from the folder above instead.
NOT_RUN: dict[str, str] = {}

# Runs one block statement by statement, as a script would (compiled whole first, so a
# SyntaxError such as a top-level `await` fails it as it fails `python block.py`), and checks
# each expression statement against the literal its trailing comment holds, if any.
RUNNER = r"""
import ast, io, sys, tokenize, types

path = sys.argv[1]
source = open(path, encoding="utf-8").read()
compile(source, path, "exec")
lines = source.splitlines()


def claim(line):
    comments = [t.string for t in tokenize.generate_tokens(io.StringIO(line).readline)
                if t.type == tokenize.COMMENT]
    if not comments:
        return ()
    text = comments[-1].lstrip("#").strip()
    for candidate in (text, text.split(": ", 1)[0], text.split(" (", 1)[0]):
        try:
            return (ast.literal_eval(candidate),)
        except (ValueError, SyntaxError):
            continue
    return ()


main = types.ModuleType("__main__")
main.__file__ = path
sys.modules["__main__"] = main  # what the block defines pickles as a script's would
namespace = main.__dict__
for node in ast.parse(source).body:
    if isinstance(node, ast.Expr):
        value = eval(compile(ast.Expression(node.value), path, "eval"), namespace)
        claimed = claim(lines[node.end_lineno - 1])
        if claimed and value != claimed[0]:
            sys.exit(f"{path}:{node.end_lineno}: evaluates to {value!r}, the comment says {claimed[0]!r}")
        if claimed:
            print(f"checked line {node.end_lineno}: {value!r}")
    else:
        exec(compile(ast.Module(body=[node], type_ignores=[]), path, "exec"), namespace)
"""


def readme_python_blocks() -> list[tuple[int, str]]:
    """(line in README.md, code) of every ```python block."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return [
        (text[: match.start()].count("\n") + 2, match.group(1))
        for match in re.finditer(r"^```python\n(.*?)^```", text, flags=re.DOTALL | re.MULTILINE)
    ]


def example_files() -> dict[str, Path]:
    """README blocks that are example files, by the file name a reader saves them under."""
    examples = {
        path.read_text(encoding="utf-8"): path for path in (ROOT / "examples").rglob("*.py")
    }
    return {
        examples[code].name: examples[code]
        for _, code in readme_python_blocks()
        if code in examples
    }


@pytest.fixture(scope="module")
def reader_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from rewardkit.evaluation.runner import sample_path

    folder = tmp_path_factory.mktemp("readme")
    for name, path in example_files().items():
        shutil.copy(path, folder / name)
    shutil.copy(sample_path(), folder / "responses.jsonl")
    return folder


def test_the_readme_has_python_blocks_and_the_examples_among_them() -> None:
    assert len(readme_python_blocks()) >= 7
    assert {"my_rewards.py", "portable_reward.py"} <= set(example_files())


@pytest.mark.parametrize(
    ("line", "code"),
    readme_python_blocks(),
    ids=[f"README.md:{line}" for line, _ in readme_python_blocks()],
)
def test_the_readme_python_block_runs_as_written(line: int, code: str, reader_folder: Path) -> None:
    skipped = [reason for phrase, reason in NOT_RUN.items() if phrase in code]
    if skipped:
        pytest.skip(skipped[0])
    script = reader_folder / f"readme_block_{line}.py"
    script.write_text(code, encoding="utf-8")
    runner = reader_folder / "run_readme_block.py"
    runner.write_text(RUNNER, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, str(runner), str(script)],
        cwd=reader_folder,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, f"README.md:{line}\n{result.stdout}\n{result.stderr}"
