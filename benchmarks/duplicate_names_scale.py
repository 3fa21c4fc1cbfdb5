"""RK401 (duplicate reward names) at scale: ``rewardkit check`` on N modules that all define the
reward ``qa``, against the same N modules with distinct names (no RK401), in the same run.

Each finding names three other definitions and counts the rest, so time, peak memory and
output grow linearly with N; before, each of N findings listed the N - 1 others (6,000 modules:
36 s, 7.3 GB, 1.04 GB of output). Prints, per N: wall time, peak RSS of the checking process
(``VmHWM``, polled) and output bytes, and the ratio to the distinct-names peer. The load
average is printed before and after (the machine may be busy).

Usage: ``python benchmarks/duplicate_names_scale.py [--sizes 1000 3000 6000]``
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MODULE = """from rewardkit import reward


@reward(name="{name}")
def qa_{index}(final_response: str) -> float:
    return 1.0
"""


def _peak_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def run_check(directory: Path) -> tuple[float, int, int]:
    """(seconds, peak RSS KiB, output bytes) of ``rewardkit check --no-cache`` there."""
    with tempfile.TemporaryFile() as output:
        start = time.perf_counter()
        process = subprocess.Popen(
            [sys.executable, "-m", "rewardkit", "check", "--no-cache", "--quiet", "."],
            cwd=directory,
            stdout=output,
            stderr=subprocess.DEVNULL,
        )
        peak = 0
        while process.poll() is None:
            peak = max(peak, _peak_kib(process.pid))
            time.sleep(0.02)
        elapsed = time.perf_counter() - start
        output.seek(0, os.SEEK_END)
        return elapsed, peak, output.tell()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 3000, 6000])
    arguments = parser.parse_args()
    print(f"before: load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for size in arguments.sizes:
        with tempfile.TemporaryDirectory() as shared, tempfile.TemporaryDirectory() as distinct:
            for index in range(size):
                Path(shared, f"m{index:05d}.py").write_text(MODULE.format(name="qa", index=index))
                Path(distinct, f"m{index:05d}.py").write_text(
                    MODULE.format(name=f"qa_{index}", index=index)
                )
            same = run_check(Path(shared))
            peer = run_check(Path(distinct))
        print(
            f"{size:>6,} modules  one name: {same[0]:6.2f} s {same[1] / 1024:7.1f} MB "
            f"{same[2] / 1e6:7.2f} MB out | distinct names: {peer[0]:6.2f} s "
            f"{peer[1] / 1024:7.1f} MB | time {same[0] / peer[0]:.2f}x, memory "
            f"{same[1] / max(peer[1], 1):.2f}x, {same[2] / size:.0f} bytes out per module"
        )
    print(f"after: load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
