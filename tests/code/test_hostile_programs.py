"""Hostile programs (issue 35, item 5) at the sandbox level: each is contained, its outcome says so,
nothing is left running, the caller's memory stays bounded; on both backends, as root and as a
normal user (the driver of tests/code/sandbox_fixtures.py dropped to uid 65534 by setpriv, in a
private mount namespace where /root holds only the Python prefix, since root's /root is 0700).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import sandbox_fixtures as fixtures
from grader_backends import require_backend

from rewardkit.code.sandbox import get_sandbox

BACKENDS = ("bwrap", "wasm")
USERS = ("root", "user")
NOBODY = 65534
MEMORY_BOUND = 64 << 20
AS_USER = """
set -e
d=$(mktemp -d)
mount --bind /root/.pyenv "$d" 2>/dev/null || true
mount -t tmpfs -o mode=0755 tmpfs /root
mkdir -p /root/.pyenv
mountpoint -q "$d" && mount --move "$d" /root/.pyenv
exec setpriv --reuid={uid} --regid={uid} --clear-groups --inh-caps=-all --bounding-set=-all "$@"
"""


def _in_process(backend: str) -> dict:
    """Every hostile program run by this (root) process, with a fake secret in its environment."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(fixtures.SECRET_NAME, fixtures.SECRET_VALUE)
        sandbox = get_sandbox(backend, workers=1)
        try:
            return {
                "uid": os.getuid(),
                "programs": {
                    name: fixtures.run_hostile(sandbox, name) for name in fixtures.HOSTILE
                },
                "session": fixtures.run_daemon_session(sandbox),
                "two_jobs": fixtures.run_two_jobs(sandbox),
            }
        finally:
            sandbox.close()


def _as_normal_user(backend: str) -> dict:
    """The driver run as uid 65534 with a fake secret in its environment; its JSON facts."""
    tmp = Path(tempfile.mkdtemp(prefix="rewardkit-user-test-"))  # pytest's tmp is root's 0700 dir
    try:
        return _run_driver_as_user(backend, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _run_driver_as_user(backend: str, tmp: Path) -> dict:
    tmp.chmod(0o755)
    cache = tmp / "cache"
    cache.mkdir()
    if backend == "wasm":  # the compiled module, so the user's driver need not compile it again
        from rewardkit.code.sandbox.wasm import _cache_path

        if _cache_path().exists():
            target = cache / "rewardkit" / "wasm" / _cache_path().name
            target.parent.mkdir(parents=True)
            shutil.copy(_cache_path(), target)
    for path in (tmp, *tmp.rglob("*")):
        os.chown(path, NOBODY, NOBODY)
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp),
        "XDG_CACHE_HOME": str(cache),
        "TMPDIR": str(tmp),
        fixtures.SECRET_NAME: fixtures.SECRET_VALUE,
    }
    command = [
        "unshare", "--mount", "--propagation", "private", "sh", "-c", AS_USER.format(uid=NOBODY), "as-user",
        sys.executable, str(Path(fixtures.__file__)), backend,
    ]  # fmt: skip
    done = subprocess.run(command, env=env, capture_output=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")[-3000:]
    return json.loads(done.stdout)


_facts: dict[tuple[str, str], dict] = {}


@pytest.fixture
def facts(request: pytest.FixtureRequest) -> dict:
    """The facts of every hostile program on (backend, user), computed once per module."""
    backend, user = request.param
    require_backend(backend)
    if os.geteuid() != 0:
        if user == "root":
            pytest.skip("not root here: the in-process run below is the normal-user run")
        user = "root"  # this process is already a normal user: run in-process
    elif user == "user":
        for tool in ("unshare", "setpriv"):
            if shutil.which(tool) is None:
                if os.environ.get("CI") == "true":
                    pytest.fail(f"{tool} (util-linux) is needed to run the driver as a normal user")
                pytest.skip(f"{tool} (util-linux) is needed to run the driver as a normal user")
    key = (backend, user)
    if key not in _facts:
        _facts[key] = _in_process(backend) if user == "root" else _as_normal_user(backend)
    return _facts[key]


CASES = [
    pytest.param((backend, user), id=f"{backend}-{user}") for backend in BACKENDS for user in USERS
]


def _common(program: dict) -> None:
    """Every hostile program: no failure on our side, nothing left, nothing escaped, memory bounded,
    and the worker serves the next job normally."""
    assert program["sandbox_error"] is None, program
    assert program["leftovers"] == [], program
    assert program["escaped_files"] == [], program
    assert program["rss_growth"] < MEMORY_BOUND, program
    assert program["next_job"]["stdout"] == "next\n", program["next_job"]
    assert program["next_job"]["exit_code"] == 0


@pytest.mark.parametrize("facts", CASES, indirect=True)
def test_every_hostile_program_is_contained(facts: dict) -> None:
    for name, program in facts["programs"].items():
        try:
            _common(program)
        except AssertionError as error:
            raise AssertionError(f"{name}: {error}") from None


@pytest.mark.parametrize("facts", CASES, indirect=True)
def test_the_driver_ran_as_the_user_it_says(facts: dict) -> None:
    assert (facts["uid"] == 0) == (
        os.geteuid() == 0 and facts is _facts.get((_backend_of(facts), "root"))
    )


def _backend_of(facts: dict) -> str:
    return next(key[0] for key, value in _facts.items() if value is facts)


@pytest.mark.parametrize("facts", CASES, indirect=True)
def test_fork_bombs_are_contained(facts: dict) -> None:
    bomb, counted = facts["programs"]["fork_bomb"], facts["programs"]["nproc_binds"]
    if _backend_of(facts) == "wasm":  # no fork in WASI
        assert bomb["exit_code"] == 1
        assert "fork" in bomb["stderr"]
        assert counted["exit_code"] == 1
        assert "fork" in counted["stderr"]
        return
    assert bomb["timed_out"] or bomb["exit_code"] not in (0, None)
    # RLIMIT_NPROC binds (as root too: the program runs as an unprivileged uid): fewer than 16 forks
    assert counted["exit_code"] == 0, counted
    assert 0 < int(counted["stdout"]) < 16  # (as a normal user, beside 40 threads of the driver)


@pytest.mark.parametrize("facts", CASES, indirect=True)
def test_a_memory_bomb_is_memory_exceeded(facts: dict) -> None:
    program = facts["programs"]["memory_bomb"]
    assert program["memory_exceeded"] is True
    assert program["exit_code"] != 0
    assert "MemoryError" in program["stderr"]


@pytest.mark.parametrize("facts", CASES, indirect=True)
def test_two_gigabytes_of_output_are_cut_and_stopped(facts: dict) -> None:
    program = facts["programs"]["big_output"]
    assert program["output_exceeded"] is True
    assert program["stdout_length"] == 1 << 20
    assert program["exit_code"] is None
    assert program["timed_out"] is False
    assert facts["programs"]["big_stderr"]["stderr_length"] == 64 << 10


@pytest.mark.parametrize("facts", CASES, indirect=True)
def test_no_network(facts: dict) -> None:
    lines = facts["programs"]["network"]["stdout"].splitlines()
    assert sum(line.startswith("refused") for line in lines) == 3, lines
    assert not any(line.startswith(("connected", "resolved")) for line in lines)


@pytest.mark.parametrize("facts", CASES, indirect=True)
def test_no_writes_outside_and_no_host_files(facts: dict) -> None:
    written = facts["programs"]["write_outside"]["stdout"].splitlines()
    assert len(written) == 6, written
    if _backend_of(facts) == "wasm":  # the guest's / is its own work dir: "/<name>" lands there
        written = [line for line in written if not line.startswith("wrote /rk-escape-")]
        assert len(written) == 5, written
    assert all(line.startswith("denied") for line in written), written
    read = facts["programs"]["read_host_files"]["stdout"].splitlines()
    assert len(read) == 5, read
    assert all(line.startswith("denied") for line in read), read


@pytest.mark.parametrize("facts", CASES, indirect=True)
def test_the_callers_secrets_are_not_visible(facts: dict) -> None:
    assert facts["programs"]["env_secret"]["stdout"].startswith("clean"), facts["programs"][
        "env_secret"
    ]


@pytest.mark.parametrize("facts", CASES, indirect=True)
def test_killing_or_stopping_the_parent_is_the_programs_failure_only(facts: dict) -> None:
    for name in ("kill_parent", "stop_parent"):
        program = facts["programs"][name]
        assert program["sandbox_error"] is None, program
        assert program["next_job"]["stdout"] == "next\n"


@pytest.mark.parametrize("facts", CASES, indirect=True)
def test_loops_and_sleeps_time_out(facts: dict) -> None:
    for name in ("infinite_loop", "sleep_past_wall"):
        program = facts["programs"][name]
        assert program["timed_out"] is True, program
        assert program["exit_code"] is None


@pytest.mark.parametrize("facts", CASES, indirect=True)
def test_processes_left_behind_are_killed(facts: dict) -> None:
    session = facts["session"]
    assert session["started"] == "started"
    assert session["sandbox_error"] is None
    if _backend_of(facts) == "bwrap":
        assert session["during"], "the daemon should be visible while the program runs"
        assert facts["programs"]["leave_processes"]["stdout"] == "parent done\n"
    assert session["after"] == []


@pytest.mark.parametrize("facts", CASES, indirect=True)
def test_nothing_of_one_job_is_visible_to_the_next(facts: dict) -> None:
    assert facts["two_jobs"]["second"] == "[] ['data', 'main.py'] False [] []\n", facts["two_jobs"]
