"""Differential fuzzing against real bash, at scale (issue 8, item 2).

    python benchmarks/fuzz.py -n 1000000 --seed 1 --findings findings.txt

Runs N examples of the shell grammar in tests/fuzz/grammar_oracle.py on every
core (one process and one sandbox each): every command `check()` allows is
run with bash both as `bash -c` and as a script on stdin, and must do exactly
what the checker read.  Prints examples per second (the bash runs dominate),
how many commands were allowed, and each finding after hypothesis has shrunk
it; `--findings` writes them as `deny` corpus cases (the format of corpora/),
`--json` as JSON lines with everything needed to replay them.  The same seed,
N and chunk size give the same examples.  Exit status 1 if anything was found.

The sandbox needs a private mount namespace (root, or unprivileged user
namespaces): see tests/fuzz/sandbox.py, isolate_filesystem.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from fuzz import grammar_oracle  # noqa: E402  (tests/fuzz, before this script's directory)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--examples", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=os.cpu_count())
    parser.add_argument("--chunk", type=int, default=500,
                        help="examples per hypothesis run (a unit of work and of replay)")
    parser.add_argument("--max-shrinks", type=int, default=100)
    parser.add_argument("--skip", action="append", default=sorted(grammar_oracle.DEFAULT_SKIP),
                        choices=grammar_oracle.ALL_CATEGORIES,
                        help="a category of problem not to report (repeatable; bash-crash "
                             "always, unless --report-all)")
    parser.add_argument("--report-all", action="store_true",
                        help="report every category, bash's own crashes too")
    parser.add_argument("--findings", type=Path, help="write findings as deny corpus cases")
    parser.add_argument("--json", type=Path, help="write findings as JSON lines")
    parser.add_argument("--raw", type=Path,
                        help="append each raw finding as a JSON line as soon as it is found "
                             "(a long run stopped early keeps them)")
    args = parser.parse_args(argv)

    last = [0.0]

    def progress(done: int, allowed: int, raw: int, seconds: float) -> None:
        if seconds - last[0] >= 10 or done == args.examples:
            last[0] = seconds
            print(f"  {done:>9} examples  {done / seconds:7.1f}/s  {allowed} allowed  "
                  f"{raw} raw findings", file=sys.stderr, flush=True)

    def found(finding: grammar_oracle.Finding) -> None:
        if args.raw:
            with args.raw.open("a", encoding="utf-8") as out:
                out.write(json.dumps(finding.to_json()) + "\n")

    started = time.monotonic()
    report = grammar_oracle.fuzz(args.examples, args.seed, args.workers, args.chunk,
                                 args.max_shrinks,
                                 frozenset() if args.report_all else frozenset(args.skip),
                                 progress, found)
    total = time.monotonic() - started
    install = "crosscheck (bashlex)" if _has_bashlex() else "default (no bashlex)"
    print(f"install: {install}; seed {args.seed}; {args.workers} workers; chunk {args.chunk}")
    print(f"{report.examples} examples in {report.seconds:.1f} s: "
          f"{report.examples / report.seconds:.1f} examples/s; "
          f"{report.allowed} allowed ({100 * report.allowed / max(report.examples, 1):.1f}%)")
    # Other processes on the machine slow the wall clock down; CPU time does not lie.
    print(f"{1000 * report.cpu / max(report.examples, 1):.2f} ms of CPU per example: "
          f"{args.workers * report.examples / max(report.cpu, 1e-9):.1f} examples/s "
          f"on {args.workers} idle cores")
    print(f"{len(report.raw)} raw findings, {len(report.findings)} after shrinking "
          f"({total - report.seconds:.1f} s): {dict(Counter(f.category for f in report.findings))}")
    for finding in report.findings:
        e = finding.example
        print(f"- {finding.category} ({finding.mode}, LC_ALL={e.locale}"
              f"{', evil cwd' if e.evil_cwd else ''}, {finding.raw} raw): {e.command!r}\n"
              f"    {finding.detail[:300]}")
    if args.findings:
        args.findings.write_text(grammar_oracle.corpus_text(report.findings), encoding="utf-8")
    if args.json:
        args.json.write_text("".join(json.dumps(f.to_json()) + "\n" for f in report.findings),
                             encoding="utf-8")
    return 1 if report.findings else 0


def _has_bashlex() -> bool:
    import importlib.util

    return importlib.util.find_spec("bashlex") is not None


if __name__ == "__main__":
    sys.exit(main())
