"""Throughput of `bash-policy serve`: checks per second through the pipe.

Runs one server process and feeds it typical plan-mode commands from a
writer thread (so neither side blocks on a full pipe), then prints the
figure, once with the default policy (the bashlex cross-check runs on
every allowed command when bashlex is installed) and once with
`crosscheck = "off"`.  Target: at least 10,000 checks/s on one core.

    python3 benchmarks/serve_throughput.py [N]
"""

import json
import os
import subprocess
import sys
import tempfile
import threading
import time

COMMANDS = [
    'rg -n "TODO" src',
    "rg -l --glob '*.ts' useState",
    'rg -n "foo bar" src | head -20',
    "fd -e py",
    "head -n 40 README.md",
    "git status",
    "git log --oneline -20",
    "ls -la src",
    "rg --pre cat x",
    "cat package.json | jq .scripts",
]


def measure(n: int, config: str | None = None) -> float:
    argv = [sys.executable, "-m", "bash_policy", "serve", *(["--config", config] if config else [])]
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, bufsize=1 << 16)
    lines = [json.dumps({"id": i, "command": COMMANDS[i % len(COMMANDS)]}) + "\n" for i in range(n)]

    def write():
        proc.stdin.writelines(lines)
        proc.stdin.close()

    proc.stdin.write(json.dumps({"id": "warm", "command": "ls"}) + "\n")  # load specs and parser
    proc.stdin.flush()
    proc.stdout.readline()
    start = time.perf_counter()
    writer = threading.Thread(target=write)
    writer.start()
    answered = sum(1 for _ in proc.stdout)
    elapsed = time.perf_counter() - start
    writer.join()
    proc.wait()
    assert answered == n, f"{answered} responses for {n} requests"
    return n / elapsed


def main(n: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        no_crosscheck = os.path.join(tmp, "bash-policy.toml")
        with open(no_crosscheck, "w") as fh:
            fh.write('crosscheck = "off"\n')
        for label, config in (("default policy", None), ('crosscheck = "off"', no_crosscheck)):
            print(f"{label}: {measure(n, config):,.0f} checks/s ({n} checks)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20000)
