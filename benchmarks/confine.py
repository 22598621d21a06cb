"""What confinement adds to `bash-policy run` (issue 17's target: at most
5 ms per command), measured against an unconfined run of the same command
in the same process and the same run, the two interleaved.

    python benchmarks/confine.py [--rounds N] [--enforce]

For each command: the median wall time of `bash_policy.run()` with
confine="off" and with confine="auto", their difference and ratio; the
same for whole `bash-policy run` processes (what a hook that wraps commands
costs); and the parent's own share (building the Landlock ruleset, the
private TMPDIR and removing it).  `--enforce` exits 1 when a difference is
above 5 ms.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = ["true", "wc -l README.md", "git log --oneline -5", "rg -c def bash_policy/confine"]
TARGET_MS = 5.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--enforce", action="store_true")
    args = parser.parse_args()
    from bash_policy import run
    from bash_policy.confine import Sandbox, support

    found = support()
    if not found.available:
        print(f"no confinement here: {found.gaps()}")
        return 1
    print(f"confinement: {found.describe()}; {args.rounds} interleaved rounds a command")
    missed = False
    for command in COMMANDS:
        times: dict[str, list[float]] = {"off": [], "auto": []}
        for mode in ("off", "auto"):  # warm both paths
            run(command, cwd=str(ROOT), confine=mode)
        for _ in range(args.rounds):
            for mode in ("off", "auto"):
                start = time.perf_counter()
                result = run(command, cwd=str(ROOT), confine=mode)
                times[mode].append(time.perf_counter() - start)
                assert result.ran and result.confined == (mode == "auto"), result
        off, auto = (statistics.median(times[m]) * 1000 for m in ("off", "auto"))
        extra = auto - off
        missed |= extra > TARGET_MS
        print(f"{command:32} unconfined {off:6.2f} ms  confined {auto:6.2f} ms  "
              f"+{extra:5.2f} ms  x{auto / off:4.2f}  {'met' if extra <= TARGET_MS else 'MISSED'}")
    cli = [os.path.join(os.path.dirname(sys.executable), "bash-policy"), "run", "--cwd", str(ROOT)]
    if os.access(cli[0], os.X_OK):
        times = {"off": [], "auto": []}
        for _ in range(max(args.rounds // 2, 5)):
            for mode in ("off", "auto"):
                start = time.perf_counter()
                subprocess.run([*cli, "--confine", mode, "--", "git log --oneline -5"],
                               stdout=subprocess.DEVNULL, check=True)
                times[mode].append(time.perf_counter() - start)
        off, auto = (statistics.median(times[m]) * 1000 for m in ("off", "auto"))
        missed |= auto - off > TARGET_MS
        print(f"{'bash-policy run (a process)':32} unconfined {off:6.2f} ms  confined {auto:6.2f} ms  "
              f"+{auto - off:5.2f} ms  x{auto / off:4.2f}  {'met' if auto - off <= TARGET_MS else 'MISSED'}")
    prepare = []
    for _ in range(args.rounds):
        start = time.perf_counter()
        Sandbox(found.landlock_abi, found.arch, found.netns).close()
        prepare.append(time.perf_counter() - start)
    print(f"parent's share (ruleset, TMPDIR made and removed): {statistics.median(prepare) * 1000:.2f} ms")
    return 1 if missed and args.enforce else 0


if __name__ == "__main__":
    sys.exit(main())
