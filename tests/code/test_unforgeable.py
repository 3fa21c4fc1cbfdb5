"""Forging programs earn nothing (issue 35): whatever a wrong program does to the harness, the
tests or the sandbox, ``grade_code`` scores it 0.0, and never as our failure (``SANDBOX_ERROR``,
excluded from scores). Each runs on bwrap and wasm, in each form that calls the program."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from grader_backends import backend  # noqa: F401  (the module-scoped fixture)

from rewardkit.code import CodeTag, CodeVerdict, grade_code
from rewardkit.code.sandbox import Sandbox

FORMS = {
    "humaneval": {
        "prompt": 'def add(a, b):\n    """The sum of a and b."""\n',
        "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(0, 5) == 5\n",
        "entry_point": "add",
    },
    "mbpp": {"test_list": ["assert add(1, 2) == 3", "assert add(0, 5) == 5"]},
    "fn_name": {"fn_name": "add", "inputs": [[1, 2], [0, 5]], "outputs": [[3], [5]]},
}
"""The same two tests of ``add`` in each form whose program is called (not fed stdin)."""

WRONG_ADD = "\ndef add(a, b):\n    return 0\n"

FORGERS = {
    "eq_override": (
        "class Anything:\n    def __eq__(self, other):\n        return True\n"
        "    def __ne__(self, other):\n        return False\n    __hash__ = object.__hash__\n"
        "def add(a, b):\n    return Anything()\n"
    ),
    "int_subclass_eq": (
        "class Forged(int):\n    def __eq__(self, other):\n        return True\n"
        "    __hash__ = int.__hash__\ndef add(a, b):\n    return Forged(0)\n"
    ),
    "sys_exit_0": "import sys\nsys.exit(0)\n" + WRONG_ADD,
    "os_exit_0": "import os\nos._exit(0)\n" + WRONG_ADD,
    "exit_in_the_call": "def add(a, b):\n    raise SystemExit(0)\n",
    "prints_passed": "print('passed')\nprint('All tests passed')\n" + WRONG_ADD,
    "fake_protocol_lines": (
        "import os\nfor line in [b'{\"ready\":true}', b'{\"loaded\":true}', "
        'b\'{"done":0,"passed":true}\', b\'{"done":1,"passed":true}\']:\n'
        "    os.write(1, line + b'\\n')\n" + WRONG_ADD
    ),
    "fake_lines_from_the_call": (
        "import os\ndef add(a, b):\n"
        '    os.write(1, b\'{"done":0,"passed":true}\\n{"done":1,"passed":true}\\n\')\n'
        "    return 0\n"
    ),
    "patches_the_checker": (
        "import builtins, json, sys\n"
        "builtins.AssertionError = type('AssertionError', (Exception,), {})\n"
        "builtins.isinstance = lambda *a: True\n"
        "sys.excepthook = lambda *a: None\n"
        "for name in ('_rk_check.json', '_rk_checker.py', 'checker.py'):\n"
        "    try:\n        open(name, 'w').write(json.dumps({'setup': '', 'tests': ['pass'] * 2, "
        "'proxies': []}))\n    except OSError:\n        pass\n" + WRONG_ADD
    ),
    "raises_a_stop": "class _Stop(BaseException):\n    pass\ndef add(a, b):\n    raise _Stop\n",
    "kills_the_parent": (
        "import os\ntry:\n    os.kill(os.getppid(), 9)\nexcept Exception:\n    pass\n" + WRONG_ADD
    ),
    "kills_everything": (
        "import os\nfor pid in (-1, 0, 1):\n    try:\n        os.kill(pid, 9)\n"
        "    except Exception:\n        pass\n" + WRONG_ADD
    ),
    "closes_its_channels": "import os\nos.close(0)\nos.close(1)\n" + WRONG_ADD,
}
"""Wrong programs of ``add`` (it should return a + b) that try to pass anyway."""


def assert_earns_nothing(verdict: CodeVerdict) -> None:
    """A forger fails every test, as its own failure (scored), never as ``SANDBOX_ERROR``."""
    assert not verdict.correct, verdict.reason
    assert verdict.fraction == 0.0, verdict.reason
    assert verdict.tag is not None
    assert verdict.tag is not CodeTag.SANDBOX_ERROR, verdict.reason
    assert all(test.tag is not CodeTag.SANDBOX_ERROR for test in verdict.tests)


def block(code: str) -> str:
    """``code`` in a fenced Python block."""
    return f"```python\n{code}```"


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("forger", sorted(FORGERS))
def test_a_forger_earns_nothing(backend: Sandbox, forger: str, form: str) -> None:  # noqa: F811
    verdict = grade_code(block(FORGERS[forger]), FORMS[form], sandbox=backend, timeout=5.0)
    assert_earns_nothing(verdict)


EXPECTED = "rk-expected-6b1f0c"
"""An output found nowhere but in the tests: a program printing it read the tests."""
SEARCH = """
import os, time
needle = bytes(reversed(b"c0f1b6-detcepxe-kr"))  # the expected output, never spelled here
deadline = time.monotonic() + 2.0
paths = [f"/proc/{pid}/{part}" for pid in os.listdir("/proc") if pid.isdigit()
         for part in ("cmdline", "environ")] if os.path.isdir("/proc") else []
for root in [os.getcwd(), "/tmp", "/"]:
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if os.path.join(folder, d) not in ("/proc", "/sys", "/dev")]
        paths += [os.path.join(folder, name) for name in files]
        if time.monotonic() > deadline:
            break
found = ""
for path in paths:
    if found or time.monotonic() > deadline + 1.0:
        break
    try:
        with open(path, "rb") as file:
            if needle in file.read(1 << 16):
                found = needle.decode()
    except Exception:
        continue
print(found)
def add(a, b):
    return found or 0
"""


@pytest.mark.parametrize(
    "tests",
    [
        {"inputs": ["go\n"], "outputs": [EXPECTED + "\n"]},
        {"fn_name": "add", "inputs": [[1, 2]], "outputs": [[EXPECTED]]},
        {"test_list": [f"assert add(1, 2) == {EXPECTED!r}"]},
    ],
    ids=["stdio", "fn_name", "mbpp"],
)
def test_the_tests_cannot_be_read_from_disk(backend: Sandbox, tests: dict) -> None:  # noqa: F811
    verdict = grade_code(block(SEARCH), tests, sandbox=backend, timeout=10.0)
    assert_earns_nothing(verdict)
    assert verdict.tag is CodeTag.WRONG_OUTPUT, verdict.reason  # it searched, found nothing


STDIO = {"inputs": ["1 2\n"], "outputs": ["3\n"]}
SANDBOX_BREAKERS = {
    "fork_bomb": "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n",
    "fills_the_disk": (
        "block = b'x' * (1 << 20)\nfor path in ('/tmp/f', 'f', '/dev/shm/f'):\n    try:\n"
        "        with open(path, 'wb') as file:\n            while True:\n"
        "                file.write(block)\n    except BaseException:\n        pass\nprint(0)\n"
    ),
    "floods_stdout": "import sys\nwhile True:\n    sys.stdout.write('x' * 65536)\n",
    "kills_everything": "import os\nfor pid in (-1, 0, 1, os.getppid()):\n    try:\n        os.kill(pid, 9)\n    except Exception:\n        pass\n",
    "stops_its_parent": "import os\ntry:\n    os.kill(os.getppid(), 19)\nexcept Exception:\n    pass\nprint(0)\n",
}
"""Programs that try to break the sandbox itself on the stdin/stdout form."""


@pytest.mark.parametrize("breaker", sorted(SANDBOX_BREAKERS))
def test_breaking_the_sandbox_is_the_programs_failure(backend: Sandbox, breaker: str) -> None:  # noqa: F811
    verdict = grade_code(block(SANDBOX_BREAKERS[breaker]), STDIO, sandbox=backend, timeout=3.0)
    assert_earns_nothing(verdict)


MARKER = "rkleftbehind"
LEAVER = f"""
import ctypes, os, time
if os.fork() == 0:
    ctypes.CDLL(None).prctl(15, b"{MARKER}", 0, 0, 0)
    os.setsid()
    time.sleep(120)
    os._exit(0)
print(0)
"""


def _left_behind() -> list[str]:
    """Processes on this machine named ``MARKER`` (the comm a leaver gave its child)."""
    found = []
    for comm in Path("/proc").glob("[0-9]*/comm"):
        try:
            if comm.read_text().strip() == MARKER:
                found.append(comm.parent.name)
        except OSError:
            continue
    return found


def test_processes_left_behind_earn_nothing_and_are_killed(backend: Sandbox) -> None:  # noqa: F811
    assert_earns_nothing(grade_code(block(LEAVER), STDIO, sandbox=backend, timeout=5.0))
    left = _left_behind()
    for _ in range(100):  # a kill is delivered at once; reaping may lag on a busy machine
        if not left:
            break
        time.sleep(0.1)
        left = _left_behind()
    assert left == []
