"""Harnesses that run commands for real, to prove the checker's verdicts.

Two oracles share this module (the differential fuzzer's sandbox, built on
the same stubs, is in tests/fuzz/):

- the argv oracle runs a command with bash in an empty directory where every
  whitelisted program is a stub that logs its argv, and compares what bash
  really passed with what the checker read (`Verdict.segments[i].argv`);
- the effect oracle runs a command under strace and reports every write,
  mutation, program start and network connection it saw.
"""

from __future__ import annotations

import os
import re
import signal
import string
import subprocess
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from bash_policy.judge.policy import Policy
from bash_policy.judge.verdict import Verdict
from bash_policy.read.model import Case, Command, For, Group, If, Subshell, children

BASH = "/bin/bash"
LOG_VAR = "BP_ORACLE_LOG"
# One record per invocation, NUL-separated: argc, the stub's path, its arguments.
# Each process writes its own file, so concurrent pipeline members never interleave.
STUB = '#!/bin/sh\nprintf \'%s\\0\' "$#" "$0" "$@" >> "$' + LOG_VAR + '/$$"\n'


def bash_names(kind: str) -> frozenset[str]:
    """bash's builtins (`kind="b"`) or reserved words (`kind="k"`), from bash itself."""
    out = subprocess.run([BASH, "--norc", "--noprofile", "-c", f"compgen -{kind}"],
                         capture_output=True, text=True, check=True).stdout
    return frozenset(out.split())


class StubBin:
    """A PATH directory of argv-logging stubs, one per program name.

    Builtins among the names are disabled with `enable -n` through BASH_ENV,
    so bash runs the stub instead and their argv is recorded like any other;
    reserved words (`time`, `[[`) cannot be stubbed and are left out.
    """

    def __init__(self, root: Path, names: list[str], stub: str | bytes = STUB,
                 bash_env: str | None = None):
        """`stub` is the stubs' script (or program); `bash_env`, if given,
        replaces the `enable -n` lines (the fuzzer shadows builtins with
        logging functions)."""
        self.root = root
        self.bin = root / "bin"
        self.bin.mkdir(parents=True)
        keywords = bash_names("k")
        builtins = bash_names("b")
        self.names = sorted(n for n in names if "/" not in n and n not in keywords)
        for name in self.names:
            path = self.bin / name
            path.write_bytes(stub if isinstance(stub, bytes) else stub.encode())
            path.chmod(0o755)
        disabled = [n for n in self.names if n in builtins]
        self.bash_env = root / "bash_env"
        if bash_env is None:
            bash_env = "".join(f"enable -n {_sh_quote(n)}\n" for n in disabled)
        self.bash_env.write_text(bash_env)

    def run(self, command: str, cwd: Path, log: Path, timeout: float = 10) -> Run:
        """Run `command` like `env -i PATH=stubs bash --norc --noprofile -c`."""
        log.mkdir()
        env = {"PATH": str(self.bin), "BASH_ENV": str(self.bash_env), LOG_VAR: str(log),
               "HOME": str(self.root / "home")}
        proc = subprocess.run([BASH, "--norc", "--noprofile", "-c", command], cwd=cwd, env=env,
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
        records = []
        for entry in sorted(log.iterdir()):
            records.extend(parse_records(entry.read_bytes()))
        return Run(proc.returncode, proc.stderr.decode("utf-8", "replace"), records, cwd)


def _sh_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def parse_records(data: bytes) -> list[tuple[str, ...]]:
    """Split a stub log into argv tuples (program base name first)."""
    fields = data.split(b"\0")
    assert fields[-1] == b"", "a stub record was cut short"
    fields.pop()
    records = []
    i = 0
    while i < len(fields):
        argc = int(fields[i])
        argv = [f.decode("utf-8", "surrogateescape") for f in fields[i + 1:i + 2 + argc]]
        argv[0] = argv[0].rpartition("/")[2]
        records.append(tuple(argv))
        i += 2 + argc
    return records


@dataclass
class Run:
    status: int
    stderr: str
    records: list[tuple[str, ...]]
    cwd: Path


def segments_that_run(verdict: Verdict, cwd: Path) -> tuple[list[int], int]:
    """Indices (into `verdict.segments`) of the simple commands bash runs when
    every program exits 0, and how many input redirections fail (their file
    does not exist in `cwd`).

    Walks the tree as bash does: `&&`/`||` look at the last pipeline's status
    (0, or 1 when a redirection of its last command failed, flipped by `!`);
    groups and subshells run their lists; `if` takes the first branch whose
    test succeeds; `for` runs its body once per (literal) word; `case` the
    first arm with a literal pattern equal to the word.
    """
    index = {id(c): k for k, c in enumerate(verdict.segments)}
    ran: list[int] = []
    failures = 0

    def command(node) -> int:
        nonlocal failures
        failed = _input_missing(node, cwd)
        failures += failed and _reports_failure(node, cwd)
        for child in children(node):  # substitutions run first
            run_list(child)
        if node.words and not failed:
            ran.append(index[id(node)])
        return 1 if failed else 0

    def run_list(node) -> int:
        status = 0
        for k, item in enumerate(node.items):
            op = node.ops[k - 1] if k else ";"
            if op == "&&" and status != 0 or op == "||" and status == 0:
                continue
            status = pipeline(item)
        return status

    def pipeline(node) -> int:
        status = 0
        for member in node.commands:
            status = unit(member)
        return 1 - status if node.negated else status

    def unit(node) -> int:
        if isinstance(node, Command):
            return command(node)
        if isinstance(node, (Group, Subshell)):
            return run_list(node.body)
        if isinstance(node, If):
            for test, body in node.branches:
                if run_list(test) == 0:
                    return run_list(body)
            return run_list(node.orelse) if node.orelse is not None else 0
        if isinstance(node, For):
            status = 0
            for _ in node.words or ():
                status = run_list(node.body)
            return status
        if isinstance(node, Case):
            for arm in node.arms:
                if any(p.value == node.word.value for p in arm.patterns):
                    return run_list(arm.body) if arm.body is not None else 0
            return 0
        raise NotImplementedError(type(node).__name__)

    if verdict.script is not None and verdict.script.body is not None:
        run_list(verdict.script.body)
    return sorted(ran), failures


_MISSING_INPUT = re.compile(
    r"/bin/bash: line \d+: .*?: (No such file or directory|Bad file descriptor)\n", re.DOTALL)


def _fails(redirect, cwd: Path) -> bool:
    """Whether bash fails this redirection: input from a missing file, or a
    copy of a descriptor that is not open (only 0, 1 and 2 are)."""
    target = redirect.target.value if redirect.target is not None else None
    if target is None:
        return False
    if redirect.op == "<":
        return not (cwd / target).exists()
    return redirect.op in (">&", "<&") and target.isdigit() and int(target) > 2


def _input_missing(segment, cwd: Path) -> bool:
    return any(_fails(r, cwd) for r in segment.redirects)


def _reports_failure(segment, cwd: Path) -> bool:
    """Whether bash's message about the first failing redirection reaches
    stderr: redirections apply left to right, so an earlier `2>…` or `&>…`
    sends it elsewhere."""
    for r in segment.redirects:
        if _fails(r, cwd):
            return True
        if r.op in ("&>", "&>>") or (r.fd == 2 and r.op in (">", ">>", ">|", ">&")):
            return False
    return True


def argv_mismatches(verdict: Verdict, run: Run) -> list[str]:
    """How what bash did differs from the checker's segments ([] if equal).

    bash's stderr may only hold the failures of redirections (input from a
    missing file, a copy of a closed descriptor), which the checker reads but
    cannot know will fail.

    A word the checker could not know (a glob or `~`) must become exactly one
    argument that starts with the word's literal prefix: the oracle runs in an
    empty directory, so a glob matches nothing and bash passes it unexpanded.
    """
    problems: list[str] = []
    ran, failures = segments_that_run(verdict, run.cwd)
    rest, errors = _MISSING_INPUT.subn("", run.stderr)
    if errors != failures or rest:
        problems.append(f"expected {failures} failed input redirections, bash said {run.stderr!r}")
    expected = [verdict.segments[i].words for i in ran]
    unmatched = Counter(run.records)
    pending = []
    for words in expected:
        argv = tuple(w.value for w in words)
        if None not in argv and unmatched[argv] > 0:
            unmatched[argv] -= 1
        else:
            pending.append(words)
    for words in pending:
        match = next((r for r, n in unmatched.items() if n > 0 and _fits(words, r, verdict.command)), None)
        if match is None:
            problems.append(f"checker read {[w.value for w in words]!r}, bash passed no such argv")
        else:
            unmatched[match] -= 1
    extra = [r for r, n in unmatched.items() for _ in range(n)]
    if extra:
        problems.append(f"bash ran programs the checker did not see: {extra!r}")
    return problems


def _fits(words, record: tuple[str, ...], source: str) -> bool:
    """Whether bash's argv `record` can be what the checker read: literal words
    equal, a word that stays one word (a glob with no match, `~`, a quoted
    expansion) one argument starting with its literal prefix, and a word that
    is split (an unquoted `$x`, `$(…)`) any number of arguments."""
    from bash_policy.judge.shapes import single

    def match(i: int, j: int) -> bool:
        if i == len(words):
            return j == len(record)
        word = words[i]
        if word.value is not None:
            return j < len(record) and record[j] == word.value and match(i + 1, j + 1)
        if word.pathname_only or single(word, source, {}):
            return j < len(record) and record[j].startswith(word.prefix) and match(i + 1, j + 1)
        return any(match(i + 1, k) for k in range(j, len(record) + 1))

    return match(0, 0)


# -- effect oracle --------------------------------------------------------

STRACE_SYSCALLS = "%file,%process,%network,ftruncate,fchmod,fchown"
_LINE = re.compile(r"(?P<call>\w+)\((?P<args>.*)\)\s+=\s+(?P<result>-?\d+|\?)")
_WRITE_FLAGS = re.compile(r"O_WRONLY|O_RDWR|O_CREAT|O_TRUNC|O_APPEND")
MUTATING_CALLS = frozenset({
    "unlink", "unlinkat", "rename", "renameat", "renameat2", "mkdir", "mkdirat", "rmdir",
    "chmod", "fchmod", "fchmodat", "chown", "fchown", "lchown", "fchownat", "truncate",
    "ftruncate", "link", "linkat", "symlink", "symlinkat", "mknod", "mknodat", "utime",
    "utimes", "utimensat", "futimesat", "setxattr", "lsetxattr", "removexattr",
    "lremovexattr",
})
# Files a read-only command may open for writing: the null device and terminals.
WRITABLE = re.compile(r'"(/dev/null|/dev/tty|/dev/pts/\d+|/dev/std(out|err))"')


@dataclass
class Effects:
    """What strace saw one command do."""

    writes: list[str] = field(default_factory=list)
    mutations: list[str] = field(default_factory=list)
    programs: list[str] = field(default_factory=list)
    network: list[str] = field(default_factory=list)
    timed_out: bool = False

    @property
    def categories(self) -> set[str]:
        found = set()
        if self.writes or self.mutations:
            found.add("write")
        if self.network:
            found.add("network")
        if self.timed_out:
            found.add("hang")
        return found


def strace_run(command: str, cwd: Path, env: dict[str, str], log_prefix: Path,
               timeout: float) -> Effects:
    """Run `command` with bash under `strace -f` and read what it did."""
    argv = ["strace", "-f", "-ff", "-qq", "-s", "4096", "-e", f"trace={STRACE_SYSCALLS}",
            "-o", str(log_prefix), BASH, "--norc", "--noprofile", "-c", command]
    effects = Effects()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        effects.timed_out = True
    finally:  # the whole session: killing strace alone would leave its tracees running
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
    for path in sorted(log_prefix.parent.glob(log_prefix.name + ".*")):
        read_strace(path.read_text("utf-8", "replace"), effects)
    return effects


def read_strace(text: str, effects: Effects) -> None:
    for line in text.splitlines():
        match = _LINE.match(line)
        if not match:
            continue
        call, args, result = match["call"], match["args"], match["result"]
        ok = result != "?" and int(result) >= 0
        if call in ("open", "openat", "openat2", "creat"):
            if ok and (call == "creat" or _WRITE_FLAGS.search(args)) and not WRITABLE.search(args):
                effects.writes.append(line)
        elif call in MUTATING_CALLS:
            if ok:
                effects.mutations.append(line)
        elif call in ("execve", "execveat"):
            if ok:
                effects.programs.append(args.split('"', 2)[1])
        elif call in ("connect", "sendto", "sendmsg") and re.search(r"sa_family=AF_INET6?\b", args):
            # The address it goes to, not a netlink request that names a family (ss's sock_diag).
            effects.network.append(line)


# -- rendering a known value as shell text, in the quote forms the oracles mix --

_BARE_SAFE = set(string.ascii_letters + string.digits + "-_./,:@%+=^")


def bare(value: str) -> str:
    """`value` unquoted, each other character escaped with a backslash."""
    out = []
    for ch in value:
        if ch in _BARE_SAFE or (ord(ch) > 127 and not ch.isspace()):
            out.append(ch)
        elif ch == "\n":
            out.append("'\n'")  # a backslash-newline would be a line continuation
        else:
            out.append("\\" + ch)
    return "".join(out)


def single(value: str) -> str:
    return "'" + value.replace("'", "'\\''") + "'"


def double(value: str) -> str:
    return '"' + "".join("\\" + c if c in '\\$`"' else c for c in value) + '"'


@cache
def flag_words(path: tuple[str, ...]):
    """Allowed flags of the default spec at `path` as (name, takes-value, choices), and its
    subcommands: the words the generators of the argv oracle and the fuzzer draw from."""
    spec = Policy.default().spec(path[0])
    for name in path[1:]:
        spec = spec.subcommands[name]
    flags = []
    for flag in spec.unique_flags():
        if flag.denied is None:
            for name in flag.names:
                flags.append((name, flag.value, tuple(sorted(flag.choices or ()))))
    subs = tuple(sorted(n for n, s in spec.subcommands.items() if s.denied is None))
    return tuple(flags), subs
