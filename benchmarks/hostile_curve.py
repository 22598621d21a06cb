"""Worst-case check time per KB of hostile input, for growing sizes.

    python3 benchmarks/hostile_curve.py [MAX_KB]

The default policy denies anything over its length cap (16 KB) before
parsing; this runs with the caps lifted so the parser and engine face every
size.  Linear growth shows as a flat ms/KB column; a column that grows with
the size is superlinear work.  Each cell is the slowest of three runs.
"""

from __future__ import annotations

import sys
import time

from bash_policy.judge.engine import check
from bash_policy.judge.policy import Policy

UNCAPPED = Policy.from_mapping({"limits": {"max_length": 10**9, "max_segments": 10**8}})


def _repeat(unit: str, size: int, head: str = "", tail: str = "") -> str:
    return head + unit * max(1, (size - len(head) - len(tail)) // len(unit)) + tail


SHAPES = {
    "long word": lambda n: _repeat("x", n, "rg "),
    "adjacent quotes": lambda n: _repeat("'a'\"b\"", n, "rg "),
    "many words": lambda n: _repeat(" -n", n, "rg x"),
    "segments a;a": lambda n: _repeat(";a", n, "a"),
    "allowed segments": lambda n: _repeat(";rg x", n, "rg x"),
    "pipes": lambda n: _repeat(" | head", n, "rg x"),
    "nested ( )": lambda n: "(" * (n // 2) + ")" * (n // 2),
    "nested $( )": lambda n: "rg " + "$(" * (n // 3) + ")" * (n // 3),
    "nested { }": lambda n: "{ " * (n // 5) + "}; " * (n // 5),
    "unterminated quote": lambda n: _repeat("a", n, "rg '"),
    "here-document": lambda n: _repeat("line\n", n, "rg x <<'EOF'\n", "EOF"),
}


def worst_seconds(command: str, runs: int = 3) -> float:
    worst = 0.0
    for _ in range(runs):
        start = time.perf_counter()
        check(command, UNCAPPED)
        worst = max(worst, time.perf_counter() - start)
    return worst


def main() -> None:
    max_kb = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
    sizes = [kb for kb in (1, 4, 16, 64, 256, 1024) if kb <= max_kb]
    worst_seconds("rg x | head")  # load the parser and the specs before timing
    print(f"{'shape':20}" + "".join(f"{f'{kb} KB':>11}" for kb in sizes) + "   (ms per KB)")
    for name, make in SHAPES.items():
        cells = []
        for kb in sizes:
            seconds = worst_seconds(make(kb * 1024))
            cells.append(f"{seconds * 1000 / kb:11.3f}")
            if seconds > 60:  # superlinear: larger sizes would take too long
                break
        print(f"{name:20}" + "".join(cells), flush=True)


if __name__ == "__main__":
    main()
