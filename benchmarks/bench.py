"""Speed targets of the core issue, measured (never asserted in a test).

    python benchmarks/bench.py

- in-process check latency over every corpus case: p50 and p99 in µs
  (target p50 <= 50 µs); each case is checked once to warm the spec cache,
  then timed over several rounds, with the bashlex cross-check off and on
  (bashlex re-parses every allowed command and is far slower than tree-sitter);
- CLI cold start (`bash-policy check 'rg -n foo src'`) as a ratio to
  `python -c pass` in the same run (target <= 4x), best of N runs each.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bash_policy import Policy, check  # noqa: E402
from bash_policy.corpus import corpus_files, read_cases  # noqa: E402


def latency(policy: Policy, rounds: int = 5) -> tuple[float, float, int]:
    commands = [c.command for f in corpus_files([ROOT / "corpora"]) for c in read_cases(f)
                if c.cwd is None]
    for command in commands:
        check(command, policy)
    samples = []
    for _ in range(rounds):
        for command in commands:
            start = time.perf_counter_ns()
            check(command, policy)
            samples.append(time.perf_counter_ns() - start)
    samples.sort()
    p50 = samples[len(samples) // 2] / 1000
    p99 = samples[int(len(samples) * 0.99)] / 1000
    return p50, p99, len(commands)


def best_of(argv: list[str], runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        best = min(best, time.perf_counter() - start)
    return best


def cold_start(runs: int = 15) -> tuple[float, float]:
    base = best_of([sys.executable, "-c", "pass"], runs)
    cli = best_of([sys.executable, "-m", "bash_policy", "check", "rg -n foo src | head -5"], runs)
    return base, cli


def main() -> None:
    for label, policy in (("cross-check off", Policy.from_mapping({"crosscheck": "off"})),
                          ("with bashlex cross-check (default)", Policy.default())):
        p50, p99, count = latency(policy)
        print(f"in-process latency over {count} corpus commands, {label}: p50 {p50:.1f} µs, "
              f"p99 {p99:.1f} µs  (target p50 <= 50 µs: {'met' if p50 <= 50 else 'MISSED'})")
    base, cli = cold_start()
    ratio = cli / base
    print(f"cold start: python -c pass {base * 1000:.1f} ms, bash-policy check {cli * 1000:.1f} ms, "
          f"ratio {ratio:.2f}x  (target <= 4x: {'met' if ratio <= 4 else 'MISSED'})")


if __name__ == "__main__":
    main()
