"""RK506 (issue 35.8): reward code that runs the model's text outside a sandbox, every way the
issue names, through the engine and the real ``rewardkit check``; what it must leave alone,
the real-world modules the suite checks included."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from rewardkit.checks import CheckConfig, check_source
from rewardkit.checks.config import PRESETS, TaskField
from rewardkit.checks.rules import RULES, ModelTextExecuted, rule_for_code

from .cli_helpers import run_check
from .good_modules import GOOD_MODULES, GOOD_TASK_FIELDS
from .seed_examples import SEEDS

HEADER = (
    "import asyncio\nimport os\nimport subprocess\nimport sys\nfrom rewardkit import reward\n\n"
)
REWARD = "@reward\ndef runs(final_response, tests):\n"

FLAGGED = {
    "eval": "    return float(eval(final_response) == 4)\n",
    "exec of an extracted block": (
        '    code = final_response.split("```python")[-1].split("```")[0]\n'
        "    namespace = {}\n    exec(code, namespace)\n    return 1.0\n"
    ),
    "compile then exec, restricted builtins": (
        '    program = compile(final_response, "<response>", "exec")\n'
        '    exec(program, {"__builtins__": {}})\n    return 1.0\n'
    ),
    "python -c in a list": (
        '    done = subprocess.run([sys.executable, "-c", final_response], timeout=5)\n'
        "    return float(done.returncode == 0)\n"
    ),
    "python -c in a shell string": (
        "    status = os.system(f\"python3 -c '{final_response}'\")\n    return float(status == 0)\n"
    ),
    "shell=True": (
        "    done = subprocess.run(final_response, shell=True)\n    return float(done.returncode == 0)\n"
    ),
    "os.popen": (
        '    out = os.popen("echo " + final_response).read()\n    return float(bool(out))\n'
    ),
    "stdin of an interpreter with no script": (
        '    done = subprocess.run(["python3", "-"], input=final_response, text=True)\n'
        "    return float(done.returncode == 0)\n"
    ),
    "communicate to an interpreter": (
        "    proc = subprocess.Popen([sys.executable], stdin=subprocess.PIPE, text=True)\n"
        "    proc.communicate(final_response)\n    return float(proc.returncode == 0)\n"
    ),
    "written to an interpreter's stdin": (
        '    with subprocess.Popen(["python3", "-"], stdin=subprocess.PIPE, text=True) as proc:\n'
        "        proc.stdin.write(final_response)\n    return float(proc.returncode == 0)\n"
    ),
    "written with open then run": (
        '    path = os.path.join("/tmp", "solution.py")\n'
        '    with open(path, "w") as f:\n        f.write(final_response)\n'
        "    done = subprocess.run([sys.executable, path])\n    return float(done.returncode == 0)\n"
    ),
    "write_text then runpy": (
        "    import pathlib\n    import runpy\n\n"
        '    pathlib.Path("sol.py").write_text(final_response)\n'
        '    runpy.run_path("sol.py")\n    return 1.0\n'
    ),
    "write then importlib": (
        "    import importlib.util\n\n"
        '    with open("sol.py", "w") as f:\n        print(final_response, file=f)\n'
        '    spec = importlib.util.spec_from_file_location("sol", "sol.py")\n'
        "    return float(spec is not None)\n"
    ),
    "multiprocessing target=exec": (
        "    import multiprocessing\n\n"
        "    worker = multiprocessing.Process(target=exec, args=(final_response,))\n"
        "    worker.start()\n    worker.join(5)\n    return float(worker.exitcode == 0)\n"
    ),
    "a pool applies exec": (
        "    from multiprocessing import Pool\n\n"
        "    with Pool(1) as pool:\n        pool.apply(exec, (final_response,))\n    return 1.0\n"
    ),
    "a thread's lambda": (
        "    import threading\n\n"
        "    thread = threading.Thread(target=lambda: exec(final_response))\n"
        "    thread.start()\n    return 1.0\n"
    ),
    "a loop over the trajectory": (
        '    for message in trajectory:\n        exec(message["content"])\n    return 1.0\n'
    ),
    "grade_code without a sandbox": (
        "    from rewardkit.code import grade_code\n\n"
        '    return grade_code(final_response, tests, sandbox="none").fraction\n'
    ),
}


def _reward(body: str, signature: str = REWARD) -> str:
    return (
        HEADER
        + signature.replace("(final_response, tests)", "(final_response, tests, trajectory)")
        + body
    )


@pytest.mark.parametrize("name", sorted(FLAGGED))
def test_each_way_of_running_the_model_text_is_flagged(name: str) -> None:
    source = _reward(FLAGGED[name])
    found = [d for d in check_source(source) if d.code == "RK506"]
    assert len(found) == 1, (name, check_source(source))
    [diagnostic] = found
    assert "outside a sandbox" in diagnostic.message
    assert "the model's text" in diagnostic.message
    assert diagnostic.fixes == ()  # no rewrite keeps the reward's meaning and makes it safe
    assert diagnostic.data is not None
    assert diagnostic.data["reward"] == "runs"
    if name == "grade_code without a sandbox":
        assert 'leave `sandbox="auto"`' in diagnostic.message
    else:
        assert "`rewardkit.code`" in diagnostic.message
        assert "grade_code" in diagnostic.message
        assert "code_reward" in diagnostic.message


LEFT_ALONE = {
    "grade_code": (
        "    from rewardkit.code import grade_code\n\n"
        "    return grade_code(final_response, tests).fraction\n"
    ),
    "ast.literal_eval": "    import ast\n\n    return float(ast.literal_eval(tests) == 4)\n",
    "eval of the dataset's text": "    return float(eval(tests) == len(final_response))\n",
    "exec of the tests with the response as data": (
        '    scope = {"candidate": final_response}\n    exec(tests, scope)\n'
        '    return float(scope.get("ok", False))\n'
    ),
    "a script reading the response on stdin": (
        '    done = subprocess.run([sys.executable, "grader.py"], input=final_response, text=True)\n'
        "    return float(done.returncode == 0)\n"
    ),
    "communicate to a script": (
        '    proc = subprocess.Popen([sys.executable, "grader.py"], stdin=subprocess.PIPE, text=True)\n'
        "    proc.communicate(final_response)\n    return float(proc.returncode == 0)\n"
    ),
    "the response as a script's argument": (
        '    done = subprocess.run(["python3", "score.py", "--text", final_response])\n'
        "    return float(done.returncode == 0)\n"
    ),
    "the response written as data, another script run": (
        '    with open("response.txt", "w") as f:\n        f.write(final_response)\n'
        '    done = subprocess.run([sys.executable, "judge.py", "response.txt"])\n'
        "    return float(done.returncode == 0)\n"
    ),
    "a program that is not an interpreter": (
        '    done = subprocess.run(["grep", "-c", final_response, "words.txt"])\n'
        "    return float(done.returncode == 0)\n"
    ),
    "its length in a command line": (
        '    done = subprocess.run([sys.executable, "-c", f"print({len(final_response)})"])\n'
        "    return float(done.returncode == 0)\n"
    ),
    "a subprocess of fixed text": (
        '    done = subprocess.run([sys.executable, "-c", "print(1)"])\n'
        "    return float(done.returncode == 0 and bool(final_response))\n"
    ),
    "an async subprocess of fixed text": (
        "    return float(bool(final_response))\n\n"
        "async def helper():\n"
        '    await asyncio.create_subprocess_exec(sys.executable, "-c", "pass")\n'
    ),
}


@pytest.mark.parametrize("name", sorted(LEFT_ALONE))
def test_model_text_used_as_data_is_left_alone(name: str) -> None:
    source = _reward(LEFT_ALONE[name])
    assert [d for d in check_source(source) if d.code == "RK506"] == []


def test_every_kind_of_reward_and_framework_function_is_checked() -> None:
    """A ``BaseReward``'s ``call``, an async reward, a ``@group_reward``, a function given to an
    adapter, and verl's and TRL's own functions (model text by their names: ``solution_str``,
    ``completions``)."""
    sources = {
        "class": (
            "from rewardkit import BaseReward\n\nclass Runs(BaseReward):\n    name = 'runs'\n\n"
            "    def call(self, final_response):\n        exec(final_response)\n        return 1.0\n"
        ),
        "async": (
            "import asyncio\nimport sys\nfrom rewardkit import reward\n\n@reward\n"
            "async def runs(final_response):\n"
            '    proc = await asyncio.create_subprocess_exec(sys.executable, "-c", final_response)\n'
            "    return float(await proc.wait() == 0)\n"
        ),
        "group": (
            "from rewardkit import group_reward\n\n@group_reward\ndef runs(final_response):\n"
            "    return [float(eval(r) == 4) for r in final_response]\n"
        ),
        "adapter": (
            "from rewardkit.adapters import to_trl\n\ndef runs(final_response):\n"
            "    return float(eval(final_response) == 4)\n\nscorer = to_trl(runs)\n"
        ),
        "verl": (
            "def compute_score(data_source, solution_str, ground_truth, extra_info=None):\n"
            "    return float(eval(solution_str) == ground_truth)\n"
        ),
        "trl": (
            "def accuracy(completions, solution, **kwargs):\n"
            '    contents = [c[0]["content"] for c in completions]\n'
            "    return [float(eval(c) == s) for c, s in zip(contents, solution)]\n"
        ),
    }
    config = CheckConfig(framework_rewards=(("verl", "compute_score"), ("trl", "accuracy")))
    for kind, source in sources.items():
        codes = [d.code for d in check_source(source, None, config)]
        assert codes == ["RK506"], (kind, check_source(source, None, config))


def test_the_real_world_modules_the_suite_checks_give_no_rk506() -> None:
    """The seed rewards, the good modules (AgentFly's sandboxed code reward among them), the
    fix goldens (open-r1, verl's gsm8k, AgentFly's search), the rule examples of every other
    rule, the examples and the adapters' reward modules (TinyZero, search-r1, verl-style), and
    verl's own reward_score modules as framework functions."""
    config = CheckConfig(
        task_fields={name: TaskField(name, "pyproject") for name in GOOD_TASK_FIELDS},
        injected_fields=PRESETS["agentfly"],
        preset="agentfly",
    )
    modules = {**SEEDS, **GOOD_MODULES}
    golden = Path(__file__).parent / "fix_golden" / "before"
    modules.update({path.name: path.read_text(encoding="utf-8") for path in golden.glob("*.py")})
    for name, source in modules.items():
        assert [d for d in check_source(source, None, config) if d.code == "RK506"] == [], name
    for rule in RULES:
        for example in (*rule.VALID, *rule.INVALID) if rule.code != "RK506" else ():
            source = example if isinstance(example, str) else example.code
            found = check_source(source, None, rule.example_config(example))
            assert [d for d in found if d.code == "RK506"] == [], (rule.code, source)
    root = Path(__file__).resolve().parents[2]
    files = [
        *root.joinpath("examples").rglob("*.py"),
        *root.joinpath("tests", "adapters").glob("*reward*.py"),
    ]
    assert len(files) > 5
    for path in files:
        source = path.read_text(encoding="utf-8")
        assert [d for d in check_source(source, str(path)) if d.code == "RK506"] == [], path
    verl = importlib.util.find_spec("verl")  # found, not imported (torch would load)
    assert verl is not None, (
        "the test extra installs verl, whose reward_score modules are read here"
    )
    framework = CheckConfig(framework_rewards=(("verl", "compute_score"),))
    checked = 0
    scores = Path(next(iter(verl.submodule_search_locations or ()))) / "utils" / "reward_score"
    for path in scores.rglob("*.py"):
        source = path.read_text(encoding="utf-8")
        assert [d for d in check_source(source, str(path), framework) if d.code == "RK506"] == [], (
            path
        )
        checked += 1
    assert checked > 10


def test_the_command_reports_it_and_explains_it(tmp_path: Path) -> None:
    (tmp_path / "rewards.py").write_text(_reward(FLAGGED["python -c in a list"]), encoding="utf-8")
    result = run_check("--format", "json", "--no-cache", "rewards.py", cwd=tmp_path)
    assert result.returncode == 1, result.stderr  # an error
    [row] = [r for r in json.loads(result.stdout) if r["code"] == "RK506"]
    assert row["line"] == 9
    assert row["severity"] == "error"
    assert row["fixes"] == []
    explained = run_check("--explain", "RK506", cwd=tmp_path)
    assert explained.returncode == 0, explained.stderr
    assert explained.stdout.startswith("RK506: ")
    assert "no automatic fix" in explained.stdout
    selected = run_check("--select", "RK506", "--no-cache", "rewards.py", cwd=tmp_path)
    assert selected.returncode == 1, selected.stderr
    assert "RK506" in selected.stdout


def test_the_rule_is_registered_in_its_family() -> None:
    assert rule_for_code("RK506") is ModelTextExecuted
    assert ModelTextExecuted.TRANSFORM is None
