"""Read-only work must still work confined (issue 17, point 5): every allowed
corpus command run through `bash_policy.run()` unconfined twice and confined
once, in a throwaway clone of this repository, outputs and exit statuses
compared.

    python benchmarks/confine_corpus.py [--json FILE] [--limit N]

A command whose two unconfined runs differ (dates, process lists, timings)
is nondeterministic and not compared.  Every other difference is printed
with the confined run's first line of stderr, for its cause to be named in
docs/threat-model.md.  Cases with an `@cwd` run there, as the corpus says.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _lines(result) -> tuple:
    status, out, err, timed_out = result
    return status, timed_out, sorted(out.splitlines()), sorted(err.splitlines())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", metavar="FILE")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--timeout", type=float, default=10)
    args = parser.parse_args()
    from bash_policy import run
    from bash_policy.confine import support
    from bash_policy.corpus import corpus_files, read_cases

    if not support().available:
        print(f"no confinement here: {support().gaps()}")
        return 1
    cases = [c for f in corpus_files([ROOT / "corpora"]) for c in read_cases(f) if c.expect == "allow"]
    cases = cases[:args.limit] if args.limit else cases
    scratch = Path(tempfile.mkdtemp(prefix="bp-confine-corpus-"))
    repo, home = scratch / "repo", scratch / "home"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(repo)], check=True)
    home.mkdir()
    env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(home), "LANG": "C.UTF-8",
           "USER": os.environ.get("USER", "root")}
    same = reordered = nondeterministic = 0
    differences = []
    start = time.monotonic()
    for number, case in enumerate(cases, 1):
        cwd = case.cwd or str(repo)
        results = [run(case.command, cwd=cwd, env=env, confine=mode, timeout=args.timeout)
                   for mode in ("off", "off", "auto")]
        a, b, confined = ((r.returncode, r.stdout, r.stderr, r.timed_out) for r in results)
        if a != b:
            nondeterministic += 1
        elif a == confined:
            same += 1
        elif _lines(a) == _lines(confined):
            reordered += 1  # rg's parallel output, stderr and stdout interleaved
        else:
            differences.append({
                "command": case.command, "where": f"{case.path}:{case.line}",
                "status": [a[0], confined[0]], "stdout_same": a[1] == confined[1],
                "stderr": confined[2].decode(errors="replace").strip().splitlines()[:1],
                "timed_out": [a[3], confined[3]],
            })
        if number % 200 == 0:
            print(f"  {number}/{len(cases)} ({time.monotonic() - start:.0f} s)", file=sys.stderr)
    compared = same + reordered + len(differences)
    print(f"{len(cases)} allowed corpus commands in {time.monotonic() - start:.0f} s: "
          f"{same + reordered} the same confined ({(same + reordered) / max(compared, 1):.1%} of "
          f"{compared} compared; {reordered} of them up to the order of lines), "
          f"{len(differences)} different, {nondeterministic} nondeterministic (not compared)")
    for d in differences:
        print(f"- {d['command']!r} ({d['where']}): status {d['status'][0]} -> {d['status'][1]}"
              f"{'' if d['stdout_same'] else ', stdout differs'}; {' '.join(d['stderr'])[:160]}")
    if args.json:
        Path(args.json).write_text(json.dumps({"same": same, "reordered": reordered,
                                               "nondeterministic": nondeterministic,
                                               "differences": differences}, indent=1))
    subprocess.run(["rm", "-rf", str(scratch)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
