"""The probe oracle's machinery: ask the real programs how they read argv.

For each allowed flag of each spec whose program is installed, probes run
the program in a sandbox (a scratch directory with a small git repository,
input files and a stub program that leaves a file behind when it runs) and
read what the program did with the word after the flag:

- The canary (`--bp-probe-canary`, an option no program has) tells whether
  the flag took the next word as its value.  When it did not, the program
  names the canary as an unknown option exactly as it does for the canary
  alone (its "fingerprint"); when it refused the flag itself in that form
  (git's `--format` without `=`), it names the flag instead.
- A dangerous word (the spec's own denied flags that write or run, spelled
  with a canary file or the stub as their value, and git's `--output=FILE`)
  tells whether the program acted on it; the stub as the flag's own value
  tells whether the flag writes to its value or runs it.  Any file created, changed or
  removed in the sandbox, or a run that does not end, is an effect, and every
  command with an effect must be denied by the checker.
- The canary after an operand tells whether the program permutes (GNU) or
  ends its options at the first operand.

Programs that parse with Go's pflag (gh) are read from their own flag table
(`--help`), one run per subcommand, because each run costs 0.2 s.

Probes run with an empty HOME, no system git config and standard input
from /dev/null; programs that can reach the network run without one.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from bash_policy.judge.engine import check
from bash_policy.judge.policy import Policy
from bash_policy.judge.spec import CommandSpec, Flag

CANARY = "--bp-probe-canary"
CORE = "bp-probe-canary"    # how programs name it in messages (git's parse-options drops the dashes)
WRITTEN = "bp-written"      # the file a dangerous flag is told to write
STUB = "./bp-stub"          # the program a dangerous flag is told to run; it creates bp-ran
TIMEOUT = 3.0
UNSHARE = ["unshare", "--net"]  # 5 ms a run, so only for programs that may reach the network
NETWORKED = {"gh"}

# How to reach a spec's flags when `PROGRAM SUB... FLAG WORD` is not the way:
# words before the flag (after the program and subcommand path) and after the word.
BEFORE: dict[tuple[str, ...], list[str]] = {
    ("git", "stash"): ["show"],            # the flags of `git stash` are those of list and show
    ("git", "reflog"): ["show"],
}
AFTER: dict[tuple[str, ...], list[str]] = {
    ("git",): ["status"],                  # global options need a subcommand after them
    ("git", "config"): ["--get", "user.name"],
    ("git", "range-diff"): ["HEAD~1", "HEAD", "HEAD"],
    ("git", "blame"): ["a.txt"],
    ("git", "annotate"): ["a.txt"],
    ("git", "grep"): ["x"],
    ("git", "check-attr"): ["a", "a.txt"],
    ("awk",): ["1", "input.txt"], ("gawk",): ["1", "input.txt"], ("nawk",): ["1", "input.txt"],
    ("mawk",): ["1", "input.txt"],
    ("sed",): ["p", "input.txt"],
    ("jq",): [".", "input.json"],
    ("find",): ["-print"],
    ("cmp",): ["input.txt", "input.txt"],
    ("diff",): ["input.txt", "input.txt"],
    ("join",): ["input.txt", "input.txt"],
    ("comm",): ["input.txt", "input.txt"],
    ("timeout",): ["1", "true"], ("nice",): ["true"], ("stdbuf",): ["true"],
}
# A known option with a telling output, for programs that do not name an unknown one.
KNOWN_CANARY = {"awk": "--version", "gawk": "--version", "nawk": "--version"}
# Dangerous words beyond the spec's own denied flags: git's diff options deny
# --output, but rev-list and shortlog read it too.
EXTRA_DANGER = {"git": [f"--output={WRITTEN}"]}
# Programs not probed, and why.
SKIP = {
    "npm": "owned by the repository-config work; nopt reads any unknown flag as a config key",
    "pip": "a Python program (0.3 s a run); checked by hand",
    "pip3": "a Python program (0.3 s a run); checked by hand",
    "yq": "a Python wrapper around jq (0.6 s a run); checked by hand",
    "cargo": "needs a Cargo project; checked by hand",
    "rustc": "checked by hand",
    "gcc": "only --version is allowed",
    "java": "only -version is allowed",
}


# -- running in the sandbox --------------------------------------------------------

@dataclass
class Outcome:
    argv: list[str]
    status: int | None          # None: it did not end within TIMEOUT
    output: str
    changed: list[str]          # sandbox paths created, changed or removed

    @property
    def effect(self) -> str:
        if self.status is None:
            return "did not end"
        return "changed " + ", ".join(self.changed) if self.changed else ""

    @property
    def command(self) -> str:
        return shlex.join(self.argv)


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    state = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in filenames + dirnames:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            state[os.path.relpath(path, root)] = (st.st_mtime_ns, st.st_size)
    return state


def _noise(path: str) -> bool:
    """Files git rewrites on its own while reading (the index's stat cache)."""
    return path in (".git", ".git/index")


class Sandbox:
    """A scratch directory holding a git repository (two commits, a tag, a
    stash), input files and the stub; `run` reports what a command changed."""

    def __init__(self, root: Path):
        self.template = root / "template"
        self.dir = root / "work"
        self.home = root / "home"
        self.home.mkdir(parents=True)
        self._build(self.template)
        self.reset()

    def _build(self, where: Path) -> None:
        where.mkdir(parents=True)
        (where / "a.txt").write_text("alpha\nbeta\n")
        (where / "input.txt").write_text("one two\nthree four\n")
        (where / "input.json").write_text('{"a": 1}\n')
        stub = where / STUB[2:]
        stub.write_text('#!/bin/sh\n: > "$(dirname "$0")/bp-ran"\n')
        stub.chmod(0o755)
        git = ["git", "-c", "user.name=probe", "-c", "user.email=probe@example.com",
               "-c", "init.defaultBranch=main"]
        steps = [["init", "-q", "--template="], ["add", "a.txt"], ["commit", "-qm", "one"],
                 ["tag", "v1"], "gamma", ["commit", "-qam", "two"], "delta", ["stash", "-q"]]
        for step in steps:
            if isinstance(step, str):  # a change to commit or stash
                with open(where / "a.txt", "a") as f:
                    f.write(step + "\n")
            else:
                subprocess.run(git + step, cwd=where, env=self.env(), check=True,
                               capture_output=True)

    def env(self) -> dict[str, str]:
        return {"PATH": "/usr/bin:/bin", "HOME": str(self.home), "LC_ALL": "C",
                "GIT_CONFIG_NOSYSTEM": "1", "GIT_PAGER": "cat", "PAGER": "cat",
                "GH_TOKEN": "probe", "GH_CONFIG_DIR": str(self.home / "gh"),
                "GH_NO_UPDATE_NOTIFIER": "1", "GH_PROMPT_DISABLED": "1", "NO_COLOR": "1"}

    def reset(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)
        shutil.copytree(self.template, self.dir, symlinks=True)
        self.before = _snapshot(self.dir)

    def run(self, argv: list[str], timeout: float = TIMEOUT) -> Outcome:
        wrap = UNSHARE if argv[0] in NETWORKED else []
        try:
            proc = subprocess.run(wrap + argv, cwd=self.dir, env=self.env(),
                                  stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
            status, output = proc.returncode, (proc.stdout + proc.stderr).decode("utf-8", "replace")
        except subprocess.TimeoutExpired as expired:
            status = None
            output = ((expired.stdout or b"") + (expired.stderr or b"")).decode("utf-8", "replace")
        after = _snapshot(self.dir)
        changed = sorted(p for p in set(after) | set(self.before)
                         if after.get(p) != self.before.get(p) and not _noise(p))
        if changed or status is None:
            self.reset()
        return Outcome(argv, status, output, changed)


# -- what to probe -----------------------------------------------------------------

@dataclass
class Target:
    path: tuple[str, ...]
    spec: CommandSpec

    @property
    def name(self) -> str:
        return " ".join(self.path)

    @property
    def before(self) -> list[str]:
        return BEFORE.get(self.path, [])

    @property
    def after(self) -> list[str]:
        return AFTER.get(self.path, [])

    def argv(self, *words: str) -> list[str]:
        return list(self.path) + self.before + list(words) + self.after

    @property
    def canary(self) -> str:
        if self.path[0] in KNOWN_CANARY:
            return KNOWN_CANARY[self.path[0]]
        return CANARY[1:] if self.spec.style == "single" else CANARY

    def allowed_flags(self) -> list[tuple[Flag, str]]:
        """Each allowed flag with each of its names that reaches it here (a
        subcommand may give a fragment's name to another flag: shortlog's -n)."""
        return [(flag, name) for flag in self.spec.unique_flags() if flag.denied is None
                for name in flag.names if self.spec.flags.get(name) is flag]


def _can_unshare() -> bool:
    try:
        return subprocess.run(UNSHARE + ["true"], capture_output=True).returncode == 0
    except OSError:
        return False


def targets(policy: Policy, report: Report) -> list[Target]:
    """Every allowed spec (and subcommand) with flags, whose program is installed."""
    found = []

    def walk(spec: CommandSpec) -> None:
        if spec.denied is not None:
            return
        if spec.style != "text" and any(f.denied is None for f in spec.flags.values()):
            found.append(Target(spec.path, spec))
        for sub in spec.subcommands.values():
            walk(sub)

    for name in policy.program_names():
        spec = policy.spec(name)
        if spec.denied is not None or "/" in name:
            continue
        if name in SKIP:
            report.skipped.append(f"{name}: {SKIP[name]}")
        elif name in NETWORKED and not _can_unshare():
            report.skipped.append(f"{name}: cannot run without a network here (unshare --net)")
        elif shutil.which(name, path="/usr/bin:/bin") is None:
            report.skipped.append(f"{name}: not installed")
        else:
            walk(spec)
    return found


def danger_words(target: Target) -> list[str]:
    """The spec's own denied flags that write or run a program, as one word
    each with the canary file or the stub as their value."""
    words = list(EXTRA_DANGER.get(target.path[0], []))
    for flag in target.spec.unique_flags():
        reason = flag.denied
        if reason is None or reason.effect.value not in ("write", "exec"):
            continue
        value = WRITTEN if reason.effect.value == "write" else STUB
        long = next((n for n in flag.names if n.startswith("--")), None)
        if flag.value == "none":
            words.append(flag.names[0])
        elif long is not None:
            words.append(f"{long}={value}")
        elif target.spec.style != "single":
            words.append(f"{flag.names[0]}{value}")
    return list(dict.fromkeys(words))[:2]


# -- reading the program's answers ---------------------------------------------------

@dataclass
class Finding:
    """A place where the spec and the real program disagree."""

    target: str
    flag: str
    kind: str
    detail: str
    command: str

    def __str__(self) -> str:
        return f"{self.target} {self.flag}: {self.kind}: {self.detail}  [{self.command}]"


@dataclass
class Report:
    targets: int = 0
    flags: int = 0              # allowed flags read (each name of a flag counts once)
    names: int = 0              # flag names probed
    value_flags: int = 0        # flags the spec says take a separate value
    runs: int = 0
    effect_runs: int = 0
    unreadable: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)   # allowed flags this version does not have
    skipped: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    def add(self, other: Report) -> None:
        for key in ("targets", "flags", "names", "value_flags", "runs", "effect_runs"):
            setattr(self, key, getattr(self, key) + getattr(other, key))
        for key in ("unreadable", "unknown", "skipped", "findings"):
            getattr(self, key).extend(getattr(other, key))


def fingerprint(target: Target, box: Sandbox) -> set[str]:
    """The lines the program prints for the canary alone."""
    out = box.run(target.argv(target.canary)).output.splitlines()
    if target.path[0] in KNOWN_CANARY:
        return set(out[:1])
    return {line for line in out if CORE in line}


def reading(target: Target, name: str, lines: set[str], box: Sandbox, report: Report,
            words: list[str] | None = None, expect_value: bool = False) -> tuple[str, Outcome]:
    """How the program read `NAME CANARY` (or `words`):
    "option"  the canary was read as an option of its own: the flag took no value;
    "refused" the program refused the flag itself in this form;
    "value"   the flag took the canary as its value;
    "stops"   the flag ended the run before the canary was read (--help); not
              told apart from "value" when a value is expected (it costs a run)."""
    words = [name, target.canary] if words is None else words
    outcome = box.run(target.argv(*words))
    report.runs += 1
    seen = set(outcome.output.splitlines())
    if seen & lines:
        return "option", outcome
    spellings = {name, words[0]}
    refusals = {line.replace(target.canary, spelled).replace(CORE, spelled.lstrip("-"))
                for line in lines for spelled in spellings}
    if seen & refusals:
        return "refused", outcome
    if (not expect_value and CORE not in outcome.output
            and box.run(target.argv(*words[:-1])).output == outcome.output):
        return "stops", outcome
    return "value", outcome


def complains_when_last(target: Target, name: str, box: Sandbox, report: Report) -> bool:
    """Whether the program fails on `NAME` as the last word, as it must when the
    value is required (git's PARSE_OPT_LASTARG_DEFAULT flags run instead)."""
    report.runs += 1
    return box.run(target.argv(name)).status != 0


# The spec's value kinds that agree with each reading of `FLAG CANARY`.
# The canary starts with `-`, which an unless_flag flag leaves to be an option.
AGREES = {"value": {"required", "lastarg"}, "lastarg": {"lastarg"},
          "option": {"none", "optional", "attached", "unless_flag"},
          "attached": {"attached"},
          "stops": {"none", "optional", "attached", "required", "lastarg", "unless_flag"}}


def written_reading(target: Target, flag: Flag, name: str, word: str, box: Sandbox,
                    report: Report) -> tuple[str, Outcome]:
    """For a program that names no unknown option (git diff-tree prints its
    usage), the reading of `NAME --output=FILE`: "option" when FILE was written."""
    outcome = box.run(target.argv(name, word))
    report.runs += 1
    if WRITTEN in outcome.changed:
        return "option", outcome
    if flag.value != "required" and box.run(target.argv(name)).output == outcome.output:
        return "stops", outcome
    return "value", outcome


def program_kind(target: Target, flag: Flag, name: str, lines: set[str], box: Sandbox,
                 report: Report) -> tuple[str, Outcome]:
    """What the program does with the word after `name`: "value", "option",
    "attached" (refused alone, accepted as NAME=VALUE), "unknown" (refused in
    both forms: this version lacks the flag) or "stops"."""
    got, outcome = reading(target, name, lines, box, report,
                           expect_value=flag.value in ("required", "lastarg"))
    if got == "refused":
        again, _ = reading(target, name, lines, box, report,
                           [attached(name, "bp-probe-value"), target.canary])
        return ("unknown" if again == "refused" else "attached"), outcome
    if got == "option" and flag.value == "required" and target.spec.parser == "clap":
        return "value", outcome   # clap refuses a separate value starting with `-`: the run fails
    return got, outcome


def attached(name: str, value: str) -> str:
    return f"{name}={value}" if name.startswith("--") else name + value


def _effect(target: Target, outcome: Outcome, report: Report, flag: str = "") -> None:
    """A command that wrote, ran a program or did not end must be denied."""
    if outcome.effect and check(outcome.command).allowed:
        report.findings.append(Finding(target.name, flag, "effect",
                                       f"allowed, but it {outcome.effect}", outcome.command))


def probe_flags(target: Target, box: Sandbox, report: Report) -> None:
    """Every allowed flag: its value kind, then the dangerous words after it."""
    report.targets += 1
    lines = fingerprint(target, box)
    dangers = danger_words(target)
    own = [f for f in target.spec.unique_flags() if f.denied is not None]
    writer = next((w for w in dangers if w.endswith("=" + WRITTEN)
                   and any(w.partition("=")[0] in f.names for f in own)), None)
    if not lines and writer is None:
        report.unreadable.append(f"{target.name}: names no unknown option in its messages")
    seen_flags = set()
    for flag, name in target.allowed_flags():
        if id(flag) not in seen_flags:
            seen_flags.add(id(flag))
            report.flags += 1
            report.value_flags += flag.value in ("required", "attached")
        report.names += 1
        if lines or writer:
            if lines:
                got, outcome = program_kind(target, flag, name, lines, box, report)
            else:
                got, outcome = written_reading(target, flag, name, writer, box, report)
            _effect(target, outcome, report, name)
            if got == "value" and flag.value == "required" and not target.after \
                    and not complains_when_last(target, name, box, report):
                got = "lastarg"
            if got == "unknown":
                report.unknown.append(f"{target.name} {name}")
            elif flag.value not in AGREES[got]:
                report.findings.append(Finding(target.name, name, "value kind",
                                               f"the spec says {flag.value}, the program reads {got}",
                                               outcome.command))
        if flag.value != "none":
            # The stub as the value: a flag that writes to its value changes it,
            # one that runs its value leaves bp-ran.
            words = [name, STUB] if flag.value in ("required", "lastarg") else [attached(name, STUB)]
            report.effect_runs += 1
            _effect(target, box.run(target.argv(*words)), report, name)
        if flag.value in ("required", "attached", "lastarg"):
            for word in dangers:
                report.effect_runs += 1
                _effect(target, box.run(target.argv(name, word)), report, name)


def probe_permutation(target: Target, box: Sandbox, report: Report) -> None:
    """Whether an option after an operand is still an option (GNU permutation)
    or an operand (options end at the first operand), as the spec says; and,
    where a later operand is an output file (xxd IN OUT), that an allowed flag
    after the operands the spec allows is not written to."""
    spec = target.spec
    if (spec.subcommands or spec.positionals.role not in ("read", "command")
            or spec.positionals.max == 0):  # an operand would be run as a script (node x)
        return
    if spec.positionals.max is not None and spec.positionals.over_max is not None:
        flag = next((n for f, n in target.allowed_flags() if f.value == "none"), None)
        if flag is not None:
            report.effect_runs += 1
            argv = list(target.path) + target.before + ["input.txt"] * spec.positionals.max + [flag]
            _effect(target, box.run(argv), report, flag)
    lines = fingerprint(target, box)
    if not lines:
        return
    operands = target.after or (["HEAD"] if target.path[0] == "git" else ["input.txt"])
    argv = list(target.path) + target.before + operands + [target.canary]
    outcome = box.run(argv)
    report.runs += 1
    _effect(target, outcome, report)
    permutes = bool(set(outcome.output.splitlines()) & lines)
    if permutes != spec.permute:
        report.findings.append(Finding(
            target.name, "", "permutation",
            f"the spec says options {'may follow' if spec.permute else 'end at'} the first operand, "
            f"the program {'permutes' if permutes else 'ends them there'}", outcome.command))


# -- obsolete first words (tail -5f, head -5c) -----------------------------------------

OBSOLETE_TIMEOUT = 0.25   # a tail that reads once ends in milliseconds; one that follows never does


def obsolete_words(spec: CommandSpec) -> list[str]:
    """First words in the neighbourhood of the spec's obsolete form: each start
    character, with or without a count, and unit, option and follow letters."""
    letters = ["", "b", "c", "l", "k", "m", "q", "v", "z", "f", "cf", "lf", "bf", "x"]
    return [start + count + tail for start in spec.obsolete.starts for count in ("", "5")
            for tail in letters if start + count + tail != "-"]


def probe_obsolete(target: Target, box: Sandbox) -> Report:
    """Every obsolete-looking first word, before one file, two files and `-- FILE`:
    a run with an effect (follow mode never ends) must be denied, and a run that
    succeeds without one must be allowed."""
    report = Report()
    for word in obsolete_words(target.spec):
        for rest in (["input.txt"], ["--", "input.txt"], ["input.txt", "a.txt"]):
            outcome = box.run(list(target.path) + [word] + rest, timeout=OBSOLETE_TIMEOUT)
            report.effect_runs += 1
            _effect(target, outcome, report, word)
            if outcome.status == 0 and not outcome.effect and not check(outcome.command).allowed:
                report.findings.append(Finding(target.name, word, "needless denial",
                                               "the program reads it and ends", outcome.command))
    return report


# -- programs that declare their flags: Go's pflag (gh) ---------------------------------

_PFLAG_LINE = re.compile(r"^\s+(?:(-\w), )?(--[\w-]+)(?:(\[=\S*\])| (\S+))?(?:\s{2,}|$)")


def pflag_table(target: Target, box: Sandbox) -> dict[str, str]:
    """Each flag name in `PROGRAM SUB --help` with its value kind."""
    out = box.run(target.argv("--help")).output
    table = {}
    for line in out.splitlines():
        match = _PFLAG_LINE.match(line)
        if match:
            kind = "optional" if match[3] else "required" if match[4] else "none"
            for name in (match[1], match[2]):
                if name:
                    table[name] = kind
    return table


def probe_pflag(target: Target, box: Sandbox, report: Report) -> None:
    report.targets += 1
    report.runs += 1
    table = pflag_table(target, box)
    seen_flags = set()
    for flag, name in target.allowed_flags():
        if id(flag) not in seen_flags:
            seen_flags.add(id(flag))
            report.flags += 1
            report.value_flags += flag.value in ("required", "attached")
        report.names += 1
        got = table.get(name)
        if got is None:
            report.unknown.append(f"{target.name} {name}")
        elif got != flag.value:
            report.findings.append(Finding(target.name, name, "value kind",
                                           f"the spec says {flag.value}, --help says {got}",
                                           shlex.join(target.argv("--help"))))


def probe_target(target: Target, box: Sandbox) -> Report:
    report = Report()
    if target.spec.parser == "pflag":  # it lists its flags and their value kinds in --help
        probe_pflag(target, box, report)
    else:
        probe_flags(target, box, report)
        probe_permutation(target, box, report)
    return report


def run_probes(policy: Policy, root: Path, workers: int = 2) -> Report:
    report = Report()
    found = targets(policy, report)
    jobs = [(probe_target, t) for t in found]
    jobs += [(probe_obsolete, t) for t in found if t.spec.obsolete is not None]
    boxes = [Sandbox(root / f"box{k}") for k in range(workers)]
    free = list(boxes)
    lock = threading.Lock()

    def job(item) -> Report:
        probe, target = item
        with lock:
            box = free.pop()
        try:
            return probe(target, box)
        finally:
            with lock:
                free.append(box)

    # Longest first, so that the workers finish together.
    jobs.sort(key=lambda item: -(len(item[1].spec.flags) if item[0] is probe_target else 60))
    with ThreadPoolExecutor(workers) as pool:
        for part in pool.map(job, jobs):
            report.add(part)
    report.findings.sort(key=str)
    return report
