"""How long `bash-policy audit` takes for 10,000 commands.

    python benchmarks/audit.py [--commands N]

The commands are the corpora's (every case written on one line, cycled to N:
about half of them are first sights, the rest repeat, as in real sessions),
audited twice: as plain text, one command a line, and as a Claude Code
session JSONL of N `Bash` tool uses shaped like the records Claude Code
2.1.332 writes (tests/fixtures/transcripts).  Each run is the CLI as a user
runs it (`bash-policy audit --json --quiet FILE`, start-up included), best
of three; the floor is reading the same file without checking anything
(`audit.read`).  Nothing here is asserted by the test suite.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bash_policy.audit import read  # noqa: E402
from bash_policy.corpus import corpus_files, read_cases  # noqa: E402


def commands(n: int) -> list[str]:
    found = [c.command for f in corpus_files([ROOT / "corpora"]) for c in read_cases(f)
             if "\n" not in c.command and "\r" not in c.command and c.command.strip()
             and not c.command.lstrip().startswith("#")]
    return [found[k % len(found)] for k in range(n)]


def claude_session(texts: list[str]) -> str:
    template = next(json.loads(line) for line in
                    (ROOT / "tests/fixtures/transcripts/claude-code-2.1.332.jsonl").read_text().splitlines()
                    if '"tool_use"' in line and json.loads(line).get("type") == "assistant")
    lines = []
    for k, text in enumerate(texts):
        record = json.loads(json.dumps(template))
        record["uuid"] = f"00000000-0000-4000-8000-{k:012d}"
        block = record["message"]["content"][0]
        block["id"], block["input"] = f"toolu_{k:06d}", {"command": text, "description": "explore"}
        lines.append(json.dumps(record))
    return "\n".join(lines) + "\n"


def best(runs: int, action) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--commands", type=int, default=10_000)
    args = parser.parse_args()
    texts = commands(args.commands)
    with tempfile.TemporaryDirectory() as tmp:
        files = {"plain text": Path(tmp, "commands.txt"), "Claude Code JSONL": Path(tmp, "session.jsonl")}
        files["plain text"].write_text("\n".join(texts) + "\n")
        files["Claude Code JSONL"].write_text(claude_session(texts))
        print(f"{len(texts):,} commands ({len(set(texts)):,} distinct), from the corpora")
        for label, path in files.items():
            def audit(path: Path = path) -> None:
                proc = subprocess.run([sys.executable, "-m", "bash_policy", "audit", "--json", "--quiet",
                                       str(path)], capture_output=True, text=True, cwd=tmp)
                report = json.loads(proc.stdout)
                assert report["commands"] == len(texts), proc.stderr

            seconds = best(3, audit)
            floor = best(3, lambda path=path: read(path))
            size = path.stat().st_size / 1e6
            print(f"{label:18} {size:5.1f} MB  audit {seconds:6.2f} s  ({len(texts) / seconds:,.0f} commands/s)"
                  f"  reading alone {floor * 1000:6.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
