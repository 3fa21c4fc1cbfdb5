"""Hostile programs for the sandbox tests, and a driver that runs them and reports what happened.

``python tests/code/sandbox_fixtures.py BACKEND`` runs every program on BACKEND and prints one JSON
object of facts per program: the test module runs it as an unprivileged user this way, and calls
`run_hostile` in-process for root.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
import uuid
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from rewardkit.code.sandbox import Job, Limits, Sandbox  # noqa: E402

MARKER = "rkhostile"
SECRET_NAME = "REWARDKIT_FAKE_SECRET"
SECRET_VALUE = "sk-fake-0123456789abcdef"
PRELUDE = f"""
try:
    import ctypes
    ctypes.CDLL(None).prctl(15, b"{MARKER}", 0, 0, 0)
except Exception:
    pass
"""

HOSTILE: dict[str, tuple[str, Limits]] = {
    "fork_bomb": (
        "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n",
        Limits(timeout=3, processes=16),
    ),
    "nproc_binds": (
        "import os, time\nn = 0\ntry:\n    for _ in range(200):\n        if os.fork() == 0:\n"
        "            time.sleep(30)\n            os._exit(0)\n        n += 1\nexcept OSError:\n    pass\nprint(n)\n",
        Limits(timeout=20, processes=16),
    ),
    "memory_bomb": (
        "chunks = []\nwhile True:\n    chunks.append(bytearray(16 << 20))\n",
        Limits(timeout=30, memory=256 << 20),
    ),
    "big_output": (
        "import sys\nblock = b'x' * (1 << 20)\nfor _ in range(2048):\n    sys.stdout.buffer.write(block)\n",
        Limits(timeout=60, output=1 << 20),
    ),
    "big_stderr": (
        "import sys\nblock = 'e' * (1 << 20)\nfor _ in range(64):\n    sys.stderr.write(block)\n",
        Limits(timeout=60),
    ),
    "network": (
        "import socket\nfor address in [('127.0.0.1', {port}), ('1.1.1.1', 53), ('8.8.8.8', 443)]:\n"
        "    try:\n        socket.create_connection(address, timeout=3).close()\n        print('connected', address)\n"
        "    except Exception as error:\n        print('refused', address, type(error).__name__)\n"
        "try:\n    print('resolved', socket.gethostbyname('example.com'))\nexcept Exception as error:\n"
        "    print('unresolved', type(error).__name__)\n",
        Limits(timeout=30),
    ),
    "write_outside": (
        "import os\nfor path in {targets!r}:\n    try:\n        with open(path, 'w') as f:\n            f.write('x')\n"
        "        print('wrote', path)\n    except Exception as error:\n        print('denied', path, type(error).__name__)\n",
        Limits(timeout=30),
    ),
    "read_host_files": (
        "import os\nfor path in {targets!r}:\n    try:\n        with open(path, 'rb') as f:\n            data = f.read(64)\n"
        "        print('read', path, len(data))\n    except Exception as error:\n        print('denied', path, type(error).__name__)\n",
        Limits(timeout=30),
    ),
    "env_secret": (
        "import os\nfound = [k for k, v in os.environ.items() if {secret!r} in v or k == {name!r}]\n"
        "try:\n    for pid in os.listdir('/proc'):\n        try:\n"
        "            if {secret!r}.encode() in open(f'/proc/{{pid}}/environ', 'rb').read():\n"
        "                found.append(pid)\n        except Exception:\n            pass\nexcept Exception:\n    pass\n"
        "print('found' if found else 'clean', sorted(os.environ))\n",
        Limits(timeout=30),
    ),
    "kill_parent": (
        "import os, signal\nfor pid in (os.getppid(), 1, -1):\n    try:\n        os.kill(pid, signal.SIGKILL)\n"
        "    except Exception as error:\n        print('cannot kill', pid, type(error).__name__)\nprint('still here')\n",
        Limits(timeout=10),
    ),
    "stop_parent": (
        "import os, signal, time\ntry:\n    os.kill(os.getppid(), signal.SIGSTOP)\nexcept Exception as error:\n"
        "    print('cannot stop', type(error).__name__)\ntime.sleep(1)\n",
        Limits(timeout=3),
    ),
    "leave_processes": (
        "import os\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
        f"        os.execv('/bin/sleep', ['{MARKER}-sleeper', '1000'])\n    os._exit(0)\nprint('parent done')\n",
        Limits(timeout=10),
    ),
    "forge_sandbox_error": (
        "import os\nfor fd in range(3, 64):\n    try:\n        os.write(fd, b'Eforged by the program')\n"
        "    except OSError:\n        pass\nraise SystemExit(0)\n",
        Limits(timeout=10),
    ),
    "infinite_loop": ("while True:\n    pass\n", Limits(timeout=2)),
    "sleep_past_wall": ("import time\ntime.sleep(600)\n", Limits(timeout=2)),
}


def rss() -> int:
    """This process's resident set size, bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def leftovers() -> list[str]:
    """Processes carrying the hostile marker (in their name or argv)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            comm = (entry / "comm").read_text().strip()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if comm.startswith(MARKER) or MARKER.encode() in cmdline:
            found.append(f"{entry.name} {comm}")
    return found


def wait_for_no_leftovers(bound: float = 15.0) -> list[str]:
    """The marked processes still there after up to `bound` seconds (a SIGKILL takes a moment)."""
    deadline = time.monotonic() + bound
    while (found := leftovers()) and time.monotonic() < deadline:
        time.sleep(0.1)
    return found


def source_of(name: str, port: int, nonce: str) -> str:
    """The hostile program `name` with its placeholders filled in."""
    source, _ = HOSTILE[name]
    outside = [
        "/usr/" + nonce,
        "/etc/" + nonce,
        "/root/" + nonce,
        str(ROOT / nonce),
        "/" + nonce,
        "/proc/sys/kernel/hostname",
    ]
    readable = [
        "/etc/shadow",
        "/root/.bashrc",
        str(ROOT / "pyproject.toml"),
        "/proc/1/root/etc/shadow",
        "/etc/passwd",
    ]
    filled = source.format(
        port=port,
        targets=outside if name == "write_outside" else readable,
        secret=SECRET_VALUE,
        name=SECRET_NAME,
    )
    return PRELUDE + filled


def run_hostile(sandbox: Sandbox, name: str) -> dict:
    """Run hostile program `name`; the outcome and what is left afterwards, as plain data."""
    nonce = f"rk-escape-{uuid.uuid4().hex}"
    listener = socket.create_server(("127.0.0.1", 0))
    try:
        before = rss()
        outcome = sandbox.run(
            Job(
                {"main.py": source_of(name, listener.getsockname()[1], nonce).encode()},
                "main.py",
                limits=HOSTILE[name][1],
            )
        )
        after = rss()
    finally:
        listener.close()
    facts = asdict(outcome)
    facts["stdout_length"] = len(outcome.stdout)
    facts["stderr_length"] = len(outcome.stderr)
    facts["stdout"] = outcome.stdout[:4000].decode("utf-8", "replace")
    facts["stderr"] = outcome.stderr[-4000:].decode("utf-8", "replace")
    facts["rss_growth"] = after - before
    facts["leftovers"] = wait_for_no_leftovers()
    facts["escaped_files"] = [
        str(p)
        for p in (
            Path("/usr", nonce),
            Path("/etc", nonce),
            Path("/root", nonce),
            ROOT / nonce,
            Path("/", nonce),
        )
        if p.exists()
    ]
    facts["next_job"] = asdict(
        sandbox.run(Job({"main.py": b"print('next')"}, "main.py", limits=Limits(timeout=60)))
    )
    facts["next_job"]["stdout"] = facts["next_job"]["stdout"].decode("utf-8", "replace")
    facts["next_job"]["stderr"] = facts["next_job"]["stderr"].decode("utf-8", "replace")
    return facts


DAEMON = (
    PRELUDE
    + "import os, sys\nif hasattr(os, 'fork') and os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
    + f"        os.execv('/bin/sleep', ['{MARKER}-daemon', '1000'])\n    os._exit(0)\n"
    + "print('started', flush=True)\nsys.stdin.readline()\n"
)
FIRST_JOB = (
    "import os\nopen('/tmp/left-by-first', 'w').write('secret of job 1')\nopen('left.txt', 'w').write('x')\n"
    "os.environ['LEFT'] = '1'\n"
    "for path in ('/dev/shm/left', '/dev/left', '/var/tmp/left', '/left'):\n"
    "    try:\n        open(path, 'w').write('x')\n    except OSError:\n        pass\n"
    "print(os.getpid())\n"
)
SECOND_JOB = (
    "import os\nshm = sorted(os.listdir('/dev/shm')) if os.path.isdir('/dev/shm') else []\n"
    "left = [p for p in ('/dev/left', '/var/tmp/left', '/left') if os.path.exists(p)]\n"
    "print(sorted(os.listdir('/tmp')), sorted(os.listdir('.')), 'LEFT' in os.environ, shm, left)\n"
)


def run_daemon_session(sandbox: Sandbox) -> dict:
    """A program that leaves a daemon and waits: the daemon is seen while it runs, gone after."""
    job = Job({"main.py": DAEMON.encode()}, "main.py", limits=Limits(timeout=60))
    with sandbox.open(job) as session:
        started = session.receive(60)
        deadline = time.monotonic() + 15
        while (
            not (during := leftovers()) and time.monotonic() < deadline and sandbox.name != "wasm"
        ):
            time.sleep(0.05)
        session.send(b"stop")
        outcome = session.finish()
    return {
        "started": started and started.decode(),
        "during": during,
        "after": wait_for_no_leftovers(),
        "exit_code": outcome.exit_code,
        "sandbox_error": outcome.sandbox_error,
    }


def run_two_jobs(sandbox: Sandbox) -> dict:
    """What a second job on the same worker sees of the first (files, environment)."""
    limits = Limits(timeout=60)
    first = sandbox.run(Job({"main.py": FIRST_JOB.encode()}, "main.py", limits=limits))
    second = sandbox.run(
        Job({"main.py": SECOND_JOB.encode(), "data/x.txt": b"1"}, "main.py", limits=limits)
    )
    return {
        "first": first.stdout.decode("utf-8", "replace") + first.stderr.decode("utf-8", "replace"),
        "second": second.stdout.decode("utf-8", "replace")
        + second.stderr.decode("utf-8", "replace"),
    }


def main(argv: list[str]) -> int:
    """Run every hostile program on backend argv[0]; print {name: facts} as JSON."""
    import threading

    from rewardkit.code.sandbox import get_sandbox

    stop = threading.Event()  # a trainer's threads: a normal user's RLIMIT_NPROC counts them too
    for _ in range(40):
        threading.Thread(target=stop.wait, daemon=True).start()
    sandbox = get_sandbox(argv[0], workers=1)
    try:
        results = {
            "uid": os.getuid(),
            "programs": {name: run_hostile(sandbox, name) for name in HOSTILE},
            "session": run_daemon_session(sandbox),
            "two_jobs": run_two_jobs(sandbox),
        }
    finally:
        sandbox.close()
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
