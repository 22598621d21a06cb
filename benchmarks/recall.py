"""Recall on documentation examples, measured (never asserted in a test).

    python benchmarks/recall.py [FILE] [--denied]

FILE (default benchmarks/recall_docs.txt) holds one read-only command a line,
as program documentation shows them (tldr pages, man-page EXAMPLES).  Each
is checked in a scratch git repository; the script prints the fraction
allowed and, with --denied, every denied command with its first denial's
code and message, grouped by program.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bash_policy import check  # noqa: E402


def commands(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines()
            if line.strip() and not line.startswith("#")]


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    path = Path(args[0]) if args else ROOT / "benchmarks" / "recall_docs.txt"
    cmds = commands(path)
    denied: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["git", "init", "-q", tmp], check=True)
        for name in ("README.md", "a.txt", "b.txt", "names.txt"):
            (Path(tmp) / name).write_text("x\n")
        (Path(tmp) / "src").mkdir()
        for cmd in cmds:
            v = check(cmd, cwd=tmp)
            if not v.allowed:
                d = v.denials[0]
                denied[cmd.split()[0]].append((cmd, str(d.code), d.message))
    n_denied = sum(len(v) for v in denied.values())
    allowed = len(cmds) - n_denied
    print(f"{path.name}: {allowed}/{len(cmds)} allowed ({100 * allowed / len(cmds):.1f}%)")
    if "--denied" in sys.argv:
        for prog in sorted(denied):
            for cmd, code, message in denied[prog]:
                print(f"{code}  {cmd}\n        {message}")


if __name__ == "__main__":
    main()
