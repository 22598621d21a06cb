"""Every verdict on the corpora, dumped and compared: a refactoring changes none.

    python benchmarks/verdicts.py dump OUT.jsonl [--rev REV]
    python benchmarks/verdicts.py compare BEFORE.jsonl AFTER.jsonl [--text] [--renamed R] [--once D]
    python benchmarks/verdicts.py diff REV [--text] [--renamed R] [--once D]

`dump` checks every case of corpora/ (with its `@cwd`), every spec's and
every rule's examples and every code's example and fixed form with the
default policy, and writes one JSON line per command: allowed, and for each
denial its code, span, rule, effect, segment and fix, and its message and
hint.  With `--rev`, the package is the one of git revision REV (a
temporary worktree), while the commands and fixture directories are this
tree's, so a case added since is judged by the old code too.  `compare`
prints each command whose verdict differs (codes, spans, rules, effects,
fixes; with `--text` messages and hints too) and exits 1 if any does.
`diff REV` dumps REV and this tree and compares them.  `--renamed
OLD=NEW@RULE[,RULE…]` reads BEFORE's denials of code OLD by those rules as
NEW (a code given a meaning of its own: BP601=BP603@special_operand,project_files).
`--once GONE:KEPT[,…]` drops BEFORE's denials by rule GONE on a span where
AFTER has one by rule KEPT (one denial per cause: special_operand:special_files).
"""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _commands() -> list[tuple[str, str | None]]:
    """(command, cwd relative to the root or None), in a stable order, each once."""
    from bash_policy.corpus import parse
    from bash_policy.judge.codes import CODES
    from bash_policy.judge.policy import Policy
    from bash_policy.judge.rules import load_all

    seen: dict[tuple[str, str | None], None] = {}
    for path in sorted((ROOT / "corpora").rglob("*.txt")):
        cases, _ = parse(path)
        for case in cases:
            cwd = os.path.relpath(case.cwd, ROOT) if case.cwd is not None else None
            seen[(case.command, cwd)] = None
    policy = Policy.default()
    stack = [policy.spec(name) for name in sorted(policy.program_names())]
    while stack:
        spec = stack.pop()
        if spec is None:
            continue
        for command in (*spec.examples_allow, *(cmd for cmd, _ in spec.examples_deny)):
            seen[(command, None)] = None
        stack.extend(spec.subcommands[k] for k in sorted(spec.subcommands))
    for rule in sorted(load_all().values(), key=lambda r: r.name):
        for command in (*rule.deny, *rule.allow):
            seen[(command, None)] = None
    for info in CODES.values():
        for command in ((info.example,) if info.runnable else ()) + (info.passes,):
            seen[(command, None)] = None
    return list(seen)


def _record(command: str, cwd: str | None) -> dict:
    from bash_policy import check

    verdict = check(command, cwd=None if cwd is None else str(ROOT / cwd))
    data = verdict.to_dict()
    return {
        "command": command,
        "cwd": cwd,
        "allowed": verdict.allowed,
        "denials": [{key: d[key] for key in ("code", "span", "rule", "effect", "segment", "fix",
                                             "message", "hint")} for d in data["denials"]],
        "fix": data["fix"],
    }


def dump(out: Path) -> int:
    import bash_policy

    print(f"verdicts of {Path(bash_policy.__file__).parent} -> {out}", file=sys.stderr)
    with out.open("w", encoding="utf-8") as stream:
        for command, cwd in _commands():
            stream.write(json.dumps(_record(command, cwd), ensure_ascii=False) + "\n")
    return 0


def _dump_at(rev: str, out: Path) -> None:
    """Dump with the package of revision `rev` and this tree's commands and fixtures."""
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(tree), rev],
                       check=True)
        try:
            # -S: no site hooks, so an editable install of this tree cannot shadow REV's package.
            path = os.pathsep.join([str(tree), *site.getsitepackages()])
            env = {**os.environ, "PYTHONPATH": path, "BP_VERDICTS_ROOT": str(ROOT)}
            subprocess.run([sys.executable, "-S", str(Path(__file__).resolve()), "dump", str(out)],
                           check=True, env=env, cwd=tmp)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)],
                           check=True)


_VERDICT_KEYS = ("code", "span", "rule", "effect", "segment", "fix")
_TEXT_KEYS = ("message", "hint")


def _shown(record: dict, keys: tuple[str, ...]) -> tuple:
    return (record["allowed"], [tuple(json.dumps(d[k], sort_keys=True) for k in keys)
                                for d in record["denials"]],
            json.dumps(record["fix"], sort_keys=True) if "fix" in keys else None)


def compare(before: Path, after: Path, text: bool, renamed: str = "", once: str = "") -> int:
    def load(path: Path) -> dict:
        records = {}
        for line in path.read_text(encoding="utf-8").split("\n")[:-1]:
            record = json.loads(line)
            records[(record["command"], record["cwd"])] = record
        return records

    old, new = load(before), load(after)
    if renamed:
        codes, _, by = renamed.partition("@")
        was, _, now = codes.partition("=")
        for record in old.values():
            for d in record["denials"]:
                if d["code"] == was and d["rule"] in by.split(","):
                    d["code"] = now
    for pair in once.split(",") if once else ():
        gone, _, kept = pair.partition(":")
        for key, record in old.items():
            spans = {tuple(d["span"]) for d in new.get(key, {"denials": []})["denials"] if d["rule"] == kept}
            record["denials"] = [d for d in record["denials"]
                                 if not (d["rule"] == gone and tuple(d["span"]) in spans)]
    keys = _VERDICT_KEYS + (_TEXT_KEYS if text else ())
    changed = 0
    for key in sorted(set(old) & set(new), key=lambda k: (k[0], k[1] or "")):
        if _shown(old[key], keys) != _shown(new[key], keys):
            changed += 1
            print(f"--- {key[0]!r}" + (f" (cwd {key[1]})" if key[1] else ""))
            for label, record in (("before", old[key]), ("after", new[key])):
                print(f"  {label}: allowed={record['allowed']}")
                for d in record["denials"]:
                    print("    " + " ".join(f"{k}={d[k]!r}" for k in keys))
    only = len(set(old) ^ set(new))
    print(f"{len(set(old) & set(new))} commands compared, {changed} differ"
          + (f" ({'with' if text else 'without'} messages and hints)")
          + (f"; {only} in one dump only" if only else ""))
    return 1 if changed else 0


def main(argv: list[str]) -> int:
    text = "--text" in argv
    argv = [a for a in argv if a != "--text"]
    options = {"--renamed": "", "--once": ""}
    for option in options:
        if option in argv[:-1]:
            at = argv.index(option)
            options[option] = argv[at + 1]
            del argv[at:at + 2]
    renamed, once = options["--renamed"], options["--once"]
    if len(argv) == 2 and argv[0] == "dump":
        return dump(Path(argv[1]).resolve())
    if len(argv) == 4 and argv[0] == "dump" and argv[2] == "--rev":
        _dump_at(argv[3], Path(argv[1]).resolve())
        return 0
    if len(argv) == 3 and argv[0] == "compare":
        return compare(Path(argv[1]), Path(argv[2]), text, renamed, once)
    if len(argv) == 2 and argv[0] == "diff":
        with tempfile.TemporaryDirectory() as tmp:
            before, after = Path(tmp) / "before.jsonl", Path(tmp) / "after.jsonl"
            _dump_at(argv[1], before)
            dump(after)
            return compare(before, after, text, renamed, once)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    ROOT = Path(os.environ.get("BP_VERDICTS_ROOT", ROOT))
    if "BP_VERDICTS_ROOT" not in os.environ:
        sys.path.insert(0, str(ROOT))
    sys.exit(main(sys.argv[1:]))
