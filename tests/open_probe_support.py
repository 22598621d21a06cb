"""The open probe: which files a program opens for a value that names a path.

A flag value or an operand the spec leaves unread may still be a file the
program opens (`iconv -f ./cm` reads a charmap, `man -M ./mp` opens
mp/index.db, `7z l s.7z.001` opens s.7z.002).  For every allowed flag that
takes a value and every operand position of every installed program, the
probe runs the program under `strace -f` with a path-like value pointing at

- a FIFO (`bp-open/side/v.001`) among sibling FIFOs (`v.002`, `v.z01`, `v`),
  which tells whether it opens the file, and the files beside it; and
- a directory (`bp-open/tree`) of FIFOs and links to /dev/null under the
  names programs look for (`index.db`, `*.yaml`, `*.dist-info/METADATA`,
  `man1/ls.1`, a subdirectory), which tells whether it walks it,

and compares what it opened with what the spec marks as read: the shape
(`reads = true | "file-if-slash" | "directory" | "siblings"`, and
`positionals.files`), for every command the checker allows; and any run
that opened one of the FIFOs must be denied by the checker given the
sandbox as its working directory (it then looks at those files).  Each FIFO has a feeder thread that opens it for
writing and closes it again, so a program that opens one reads an empty file
instead of blocking, and the run goes on to show everything it opens.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from probe_support import NETWORKED, SKIP, UNSHARE, Sandbox, Target, _can_unshare, _snapshot

from bash_policy.judge.engine import check
from bash_policy.judge.policy import Policy
from bash_policy.judge.spec import READ_SHAPES, CommandSpec, Flag

AREA = "bp-open"
SIDE = f"{AREA}/side"
VALUE = f"{SIDE}/v.001"        # the FIFO a file probe names
TREE = f"{AREA}/tree"          # the directory a directory probe names
SIDE_FIFOS = ("v.001", "v.002", "v.z01", "v")
TREE_FIFOS = ("a", "a.txt", "a.yaml", "a.yml", "a.json", "index.db", "p-1.0.dist-info/METADATA",
              "sub/b.yaml", "sub/b.json", "man1/ls.1", "cat1/ls.1.gz")
TREE_LINKS = ("n.yaml", "n.txt", "n.json", "sub/n.yaml")   # each a link to /dev/null
TIMEOUT = 5.0
STRACE = ["strace", "-f", "-qq", "-y", "-e", "trace=open,openat,openat2,creat", "-e", "signal=none"]
# Words after a probed flag that make the program get as far as opening its
# value (man, apropos and whatis with no page name only say so and exit).
OPEN_AFTER = {("man",): ["-w", "ls"], ("apropos",): ["ls"], ("whatis",): ["ls"]}
# What a program needs to fail fast where it would ask the network (the probe
# looks at local files only): npm retries for ten seconds otherwise.
OPEN_ENV = {"npm": {"npm_config_offline": "true"}}
# Programs the argv probe skips for the cost of a run, probed here all the same
# when installed anywhere on PATH (a handful of value flags each).
PROBED_ANYWAY = {"pip", "pip3", "npm", "yq", "cargo", "rustc"}
_OPEN = re.compile(r'^(\d+) +(?:open|openat|openat2|creat)\((?:(?:AT_FDCWD|-?\d+)<([^>]*)>, )?'
                   r'"((?:[^"\\]|\\.)*)", ([^,)]*)(?:.*\) = (.*))?$')


class Feeders:
    """A thread per FIFO that opens it for writing and closes it again, so that a
    reader sees an empty file instead of waiting for a writer."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.threads: dict[str, threading.Thread] = {}

    def feed(self, path: str) -> None:
        if path in self.threads and self.threads[path].is_alive():
            return
        thread = threading.Thread(target=self._loop, args=(path,), daemon=True)
        self.threads[path] = thread
        thread.start()

    def _loop(self, path: str) -> None:
        while not self.stop.is_set():
            try:
                fd = os.open(path, os.O_WRONLY)   # returns once a reader opens it
            except OSError:
                return
            os.close(fd)

    def close(self) -> None:
        self.stop.set()
        for path in self.threads:
            try:  # a reader of our own releases a writer that waits
                os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))
            except OSError:
                pass


class OpenSandbox(Sandbox):
    """The probe oracle's sandbox with the FIFOs and links of the open probe,
    kept (and fed) across resets."""

    def __init__(self, root: Path):
        self.feeders = Feeders()
        root.mkdir(parents=True, exist_ok=True)
        self.log = Path(tempfile.mkstemp(prefix="bp-open-", suffix=".strace", dir=root)[1])
        super().__init__(root)

    def reset(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)
        shutil.copytree(self.template, self.dir, symlinks=True)
        for name in SIDE_FIFOS:
            self._fifo(f"{SIDE}/{name}")
        for name in TREE_FIFOS:
            self._fifo(f"{TREE}/{name}")
        for name in TREE_LINKS:
            link = self.dir / TREE / name
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to("/dev/null")
        self.before = _snapshot(self.dir)

    def _fifo(self, relative: str) -> None:
        path = self.dir / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(path)
        self.feeders.threads.pop(str(path), None)   # a new FIFO: a feeder of its own
        self.feeders.feed(str(path))

    def traced(self, argv: list[str]) -> tuple[list[tuple[str, str]], bool]:
        """Run `argv` under strace: the paths it opened (absolute, with the open's
        flags) and whether it ended.  The whole process group is killed at the
        timeout, so that no traced child outlives its run."""
        wrap = (UNSHARE if argv[0] in NETWORKED else []) + STRACE + ["-o", str(self.log), "--"]
        env = {**self.env(), **OPEN_ENV.get(argv[0], {})}
        proc = subprocess.Popen(wrap + argv, cwd=self.dir, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        try:
            proc.wait(timeout=TIMEOUT)
            ended = True
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            ended = False
        opened = []
        for line in self.log.read_text(errors="replace").splitlines():
            match = _OPEN.match(line)
            if match is None:
                continue
            base, path, flags, result = match.group(2, 3, 4, 5)
            if result is not None and result.startswith("-1 ") and "EAGAIN" not in result:
                continue  # the open failed: nothing was read
            full = os.path.normpath(os.path.join(base or str(self.dir), path))
            opened.append((full, flags))
        after = _snapshot(self.dir)
        if not ended or after != self.before:
            self.reset()
        return opened, ended


def observed_shape(opened: list[tuple[str, str]], root: Path, value: str) -> tuple[str, list[str]]:
    """What the run opened of the probe area, as a shape: "file" (the FIFO named),
    "siblings" (the files beside it), "directory" (files under the directory
    named; the directory itself is only listed) or "none"; and the paths."""
    area = str(root / AREA)
    named = str(root / value)
    # Opening a directory only lists it (or is a base for openat): harmless.
    seen = sorted({p for p, flags in opened if (p == area or p.startswith(area + "/"))
                   and "O_DIRECTORY" not in flags and not os.path.isdir(p)})
    if value == TREE:
        inside = [p for p in seen if p.startswith(named + "/")]
        return ("directory" if inside else "none"), inside
    beside = [p for p in seen if p != named]
    if beside:
        return "siblings", beside
    return ("file" if named in seen else "none"), seen


# The shapes a spec's mark covers: a value marked as a directory may be a file too.
COVERS = {
    None: {"none"},
    "file": {"none", "file"},
    "file-if-slash": {"none", "file"},
    "directory": {"none", "file", "directory"},
    "siblings": {"none", "file", "siblings", "directory"},
    # The names tried for a missing one: the probe's FIFO is there, so only it is opened.
    "suffixed": {"none", "file"},
}
assert set(COVERS) - {None} == set(READ_SHAPES)


@dataclass
class Finding:
    target: str
    where: str          # the flag, or `operand N`
    observed: str
    marked: str | None
    paths: list[str]
    command: str
    checker: str = ""   # why the checker's verdict is wrong, when it is

    def __str__(self) -> str:
        shown = ", ".join(p[p.index(AREA):] for p in self.paths[:3])
        return (f"{self.target} {self.where}: opens {self.observed} ({shown}), the spec marks "
                f"{self.marked or 'nothing read'}{'; ' + self.checker if self.checker else ''}"
                f"  [{self.command}]")


@dataclass
class OpenReport:
    programs: set[str] = field(default_factory=set)
    targets: int = 0
    flags: int = 0
    operands: int = 0
    runs: int = 0
    flag_uses: int = 0          # value-taking flags of all the specs, shared ones counted in each
    fifo_runs: int = 0          # runs that opened a FIFO of the probe (each then denied with the sandbox)
    seconds: float = 0.0
    skipped: list[str] = field(default_factory=list)
    hung: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    spent: dict[str, float] = field(default_factory=dict)   # seconds per program

    def slowest(self, count: int = 5) -> list[tuple[str, float]]:
        return sorted(self.spent.items(), key=lambda item: -item[1])[:count]

    def add(self, other: OpenReport) -> None:
        self.programs |= other.programs
        for program, seconds in other.spent.items():
            self.spent[program] = self.spent.get(program, 0.0) + seconds
        for key in ("targets", "flags", "operands", "runs", "flag_uses", "fifo_runs"):
            setattr(self, key, getattr(self, key) + getattr(other, key))
        self.hung += other.hung
        self.findings += other.findings


def open_targets(policy: Policy, report: OpenReport) -> list[Target]:
    """Every allowed spec and subcommand of an installed program (with flags or
    operands), including the ones the argv probe skips for their cost."""
    found: list[Target] = []

    def walk(spec: CommandSpec) -> None:
        if spec.denied is not None:
            return
        found.append(Target(spec.path, spec))
        for sub in spec.subcommands.values():
            walk(sub)

    only = set(filter(None, os.environ.get("BP_OPEN_ONLY", "").split(",")))  # to rerun a few
    for name in policy.program_names():
        spec = policy.spec(name)
        if spec is None or spec.denied is not None or "/" in name or (only and name not in only):
            continue
        on_path = "/usr/bin:/bin" + (f":{os.environ.get('PATH', '')}" if name in PROBED_ANYWAY else "")
        if name in SKIP and name not in PROBED_ANYWAY:
            report.skipped.append(f"{name}: {SKIP[name]}")
        elif name in NETWORKED and not _can_unshare():
            report.skipped.append(f"{name}: cannot run without a network here (unshare --net)")
        elif shutil.which(name, path=on_path) is None:
            report.skipped.append(f"{name}: not installed")
        else:
            walk(spec)
    return found


def value_probes(target: Target) -> list[tuple[Flag, list[str], str]]:
    """Each allowed flag that takes a free value, once as `FLAG VALUE` (or
    attached where only that form takes one), for the FIFO and the directory."""
    probes = []
    for flag in target.spec.unique_flags():
        if flag.denied is not None or flag.value == "none" or flag.choices is not None or flag.runs:
            continue
        name = next((n for n in flag.names if n.startswith("--")), flag.names[0])
        for value in (VALUE, TREE):
            if flag.value in ("required", "lastarg"):
                words = [name, value]
            elif name.startswith("--") and target.spec.style != "single":
                words = [f"{name}={value}"]
            else:
                words = [name + value]
            probes.append((flag, words, value))
    return probes


def operand_shape(spec: CommandSpec, position: int) -> str | None:
    """What the spec marks an operand at `position` as (None: never opened)."""
    p = spec.positionals
    if p.role != "read" or not p.files or (p.pattern is not None and position == 0):
        return None
    return p.shape


def operand_probes(target: Target) -> list[tuple[int, list[str], str]]:
    """The probe value as the first operand, and after one ordinary operand."""
    spec = target.spec
    if spec.positionals.role not in ("read", "hook") or spec.positionals.max == 0 or spec.subcommands \
            and spec.subcommand_required:
        return []
    first = "HEAD" if target.path[0] == "git" else "input.txt"
    positions = [[]] + ([[first]] if spec.positionals.max is None or spec.positionals.max > 1 else [])
    return [(len(before), before + [value], value) for before in positions for value in (VALUE, TREE)]


def probe_target(target: Target, box: OpenSandbox, known: dict[tuple[str, str], str],
                 probed: set[tuple]) -> OpenReport:
    """Every value-taking flag and operand position of one spec.  A flag the
    program's other subcommands share (the same names, value and marks, with
    the same words around it: git's diff options, gh's --repo, kubectl's
    global flags) is one option of the program's parser, probed once."""
    report = OpenReport(programs={target.path[0]}, targets=1)
    started = time.monotonic()
    root = box.dir
    runs: list[tuple[str, str | None, list[str], str]] = []
    after = OPEN_AFTER.get(target.path, target.after)
    report.flag_uses = len({flag.display for flag, _, _ in value_probes(target)})
    for flag, words, value in value_probes(target):
        key = (target.path[0], flag.names, flag.value, flag.reads, flag.separator, tuple(target.before),
               tuple(after), value)
        if key in probed:
            continue
        probed.add(key)
        argv = list(target.path) + target.before + words + after
        runs.append((flag.display, flag.reads or None, argv, value))
    for position, words, value in operand_probes(target):
        argv = list(target.path) + target.before + words
        runs.append((f"operand {position + 1}", operand_shape(target.spec, position), argv, value))
    report.flags = len({r[0] for r in runs if not r[0].startswith("operand")})
    report.operands = len({r[0] for r in runs if r[0].startswith("operand")})
    fifos = {str(root / SIDE / n) for n in SIDE_FIFOS} | {str(root / TREE / n) for n in TREE_FIFOS}
    for where, marked, argv, value in runs:
        hooked = where.startswith("operand") and target.spec.positionals.role == "hook"
        opened, ended = box.traced(argv)
        report.runs += 1
        if not ended:
            report.hung.append(f"{target.name} {where}: {shlex.join(argv)}")
        shape, paths = observed_shape(opened, root, value)
        command = shlex.join(argv)
        report.fifo_runs += any(p in fifos for p in paths)
        if (target.name, where) in known:
            continue
        if shape not in COVERS[marked] and not hooked and check(command).allowed:
            report.findings.append(Finding(target.name, where, shape, marked, paths, command))
        elif any(p in fifos for p in paths) and check(command, cwd=str(root)).allowed:
            report.findings.append(Finding(target.name, where, shape, marked, paths, command,
                                           "allowed in the sandbox, which holds FIFOs there"))
    report.spent[target.path[0]] = time.monotonic() - started
    return report


def run_open_probes(policy: Policy, root: Path, known: dict[tuple[str, str], str],
                    workers: int = 2) -> OpenReport:
    report = OpenReport()
    started = time.monotonic()
    found = open_targets(policy, report)
    boxes = [OpenSandbox(root / f"open{k}") for k in range(workers)]
    free = list(boxes)
    lock = threading.Lock()
    probed: set[tuple] = set()

    def job(target: Target) -> OpenReport:
        with lock:
            box = free.pop()
        try:
            return probe_target(target, box, known, probed)
        finally:
            with lock:
                free.append(box)

    found.sort(key=lambda t: -len(t.spec.flags))   # longest first, so the workers finish together
    try:
        with ThreadPoolExecutor(workers) as pool:
            for part in pool.map(job, found):
                report.add(part)
    finally:
        for box in boxes:
            box.feeders.close()
    report.findings.sort(key=str)
    report.seconds = time.monotonic() - started
    return report
