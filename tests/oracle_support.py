"""Harnesses that run commands for real, to prove the checker's verdicts.

Three oracles share this module:

- the argv oracle runs a command with bash in an empty directory where every
  whitelisted program is a stub that logs its argv, and compares what bash
  really passed with what the checker read (`Verdict.segments[i].argv`);
- the effect oracle runs a command under strace and reports every write,
  mutation, program start and network connection it saw;
- the differential fuzzer's sandbox (`FuzzSandbox`, used by
  tests/grammar_oracle.py) does what the argv oracle does at scale and more
  strictly: order of programs, bash reading the script on stdin, canary files,
  and what bash must do for a verdict (`expected_runs`, `run_problems`).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import signal
import subprocess
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from bash_policy.judge.verdict import Verdict
from bash_policy.read.model import (
    PROCESS_SUB,
    Arith,
    Case,
    Command,
    Cond,
    For,
    Group,
    If,
    List,
    Pipeline,
    Subshell,
    While,
    Word,
    children,
)

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
        elif call in ("connect", "sendto", "sendmsg") and re.search(r"AF_INET6?\b", args):
            effects.network.append(line)


# -- differential fuzzing sandbox -------------------------------------------
#
# The grammar fuzzer (tests/grammar_oracle.py) runs hundreds of thousands of
# commands, so its sandbox is built once per worker process and reused: a
# private, read-only view of the whole file system with one writable tmpfs,
# bash started with posix_spawn, and a snapshot of the tmpfs compared after
# every run.

ORDER_LOG = "order"
SCRIPT_VAR = "BP_ORACLE_SCRIPT"
# argc, where the stub's stdin stands in the script (`-` unless its stdin is the
# script bash is reading), $0, arguments; then the PID in the shared order log
# (a short O_APPEND write: the order in which programs started).
FUZZ_STUB = f"""#!/bin/sh
p=-
if [ -n "${SCRIPT_VAR}" ] && [ /proc/self/fd/0 -ef "${SCRIPT_VAR}" ]; then
  p=$(/bin/cat "/proc/$$/fdinfo/0")
fi
printf '%s\\0' "$#" "$p" "$0" "$@" >> "${LOG_VAR}/$$"
printf '%s\\n' $$ >> "${LOG_VAR}/{ORDER_LOG}"
"""
# The same stub as a C program, used when a compiler is at hand: it starts in
# a third of the time, and reads the offset of its stdin without a helper.
FUZZ_STUB_C = r"""
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char buf[1 << 20];
static size_t len;

static void add(const char *s) {
    size_t n = strlen(s) + 1;
    if (len + n > sizeof buf) exit(3);
    memcpy(buf + len, s, n);
    len += n;
}

static void append(const char *log, const char *name, const char *data, size_t n) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", log, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0 || write(fd, data, n) != (ssize_t)n) exit(3);
    close(fd);
}

int main(int argc, char **argv) {
    const char *log = getenv("@LOG@"), *script = getenv("@SCRIPT@");
    char text[64] = "-", pid[32];
    struct stat in, sc;
    if (!log) return 3;
    if (script && *script && fstat(0, &in) == 0 && stat(script, &sc) == 0
        && in.st_dev == sc.st_dev && in.st_ino == sc.st_ino)
        snprintf(text, sizeof text, "pos:\t%lld", (long long)lseek(0, 0, SEEK_CUR));
    char count[32];
    snprintf(count, sizeof count, "%d", argc - 1);
    add(count);
    add(text);
    for (int i = 0; i < argc; i++) add(argv[i]);
    snprintf(pid, sizeof pid, "%d", (int)getpid());
    append(log, pid, buf, len);
    snprintf(text, sizeof text, "%s\n", pid);
    append(log, "@ORDER@", text, strlen(text));
    return 0;
}
""".replace("@LOG@", LOG_VAR).replace("@SCRIPT@", SCRIPT_VAR).replace("@ORDER@", ORDER_LOG)


def fuzz_stub(build: Path) -> str | bytes:
    """The compiled stub if `cc` can build it in `build`, else the shell one."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        return FUZZ_STUB
    source, program = build / "stub.c", build / "stub"
    source.write_text(FUZZ_STUB_C)
    done = subprocess.run([compiler, "-O2", "-o", str(program), str(source)],
                          env=dict(os.environ, TMPDIR=str(build)), capture_output=True)
    return program.read_bytes() if done.returncode == 0 else FUZZ_STUB


# Whitelisted builtins become shell functions that log their argv the same way
# (cheaper than a stub and still exactly what bash passed); `test` and `[` also
# evaluate their arguments, silently, since their danger is in evaluation (an
# array subscript in `-v`); every command bash cannot find is logged too.
_LOGGER = f"""__bp_log() {{
  builtin printf '%s\\0' "$(($# - 1))" - "$@" >> "${LOG_VAR}/$BASHPID"
  builtin printf '%s\\n' "$BASHPID" >> "${LOG_VAR}/{ORDER_LOG}"
}}
command_not_found_handle() {{ __bp_log "$@"; return 127; }}
"""
_EVALUATED = ("test", "[")


def fuzz_bash_env(builtins: list[str]) -> str:
    lines = [_LOGGER]
    for name in builtins:
        evaluate = f' builtin {name} "$@" >/dev/null 2>&1;' if name in _EVALUATED else ""
        lines.append(f'{name}() {{ __bp_log {name} "$@";{evaluate} return 0; }}\n')
    return "".join(lines)


# Files of the two run directories: canaries, and names a glob can turn into
# flags; in the second, `test -- *` evaluates `-a -v 'a[$(touch pwned)]'`.
RUN_FILES = {
    "x": "canary x\n", "y": "canary y\n", "in.txt": "input\n", "-v": "", "-e": "",
    "--pre=sh": "", "-delete": "", "a[$(touch pwned)]": "", ".hidden": "", "sub/-n": "",
    "sub/z": "canary z\n",
}
EVIL_FILES = {"-a": "", "-v": "", "a[$(touch pwned)]": "", "in.txt": "input\n"}
INPUT_FILE = "in.txt"
MISSING_FILE = "missing.txt"

CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
_MOUNT_FLAGS = {"nosuid": MS_NOSUID, "nodev": MS_NODEV, "noexec": MS_NOEXEC}


def isolate_filesystem(writable: Path) -> None:
    """Give this process a private mount namespace where every file system is
    read-only and `writable` is a fresh tmpfs, so a command the checker wrongly
    allowed cannot change anything but the sandbox (as root it could otherwise
    overwrite /bin/bash), and keep its other descriptors from the programs it
    starts.  Unprivileged, it goes through a user namespace."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)

    def call(result: int, what: str) -> None:
        if result != 0:
            error = ctypes.get_errno()
            raise OSError(error, f"{what}: {os.strerror(error)}")

    uid, gid = os.getuid(), os.getgid()
    call(libc.unshare(CLONE_NEWNS | (0 if uid == 0 else CLONE_NEWUSER)), "unshare")
    if uid != 0:
        Path("/proc/self/setgroups").write_text("deny")
        Path("/proc/self/uid_map").write_text(f"{uid} {uid} 1")
        Path("/proc/self/gid_map").write_text(f"{gid} {gid} 1")
    call(libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "mount --make-rprivate /")
    for line in Path("/proc/self/mounts").read_text().splitlines():
        target, options = line.split()[1], line.split()[3].split(",")
        if "ro" in options:
            continue
        target = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m[1], 8)), target).encode()
        flags = MS_REMOUNT | MS_BIND | MS_RDONLY
        flags |= sum(f for name, f in _MOUNT_FLAGS.items() if name in options)
        call(libc.mount(None, target, None, flags, None), f"remount {target!r} read-only")
    call(libc.mount(b"tmpfs", str(writable).encode(), b"tmpfs", 0, b"mode=0755"),
         "mount tmpfs")
    # Descriptors inherited from whoever started us must not reach bash (`>&9`).
    for name in os.listdir("/proc/self/fd"):
        if int(name) > 2:
            try:
                os.set_inheritable(int(name), False)
            except OSError:  # the directory listing's own descriptor, now closed
                pass


@dataclass
class FuzzRun:
    """What one bash run did: records are (stdin offset or None, argv) in start order."""

    records: list[tuple[int | None, tuple[str, ...]]]
    stderr: str
    changes: list[str]
    timed_out: bool


class FuzzSandbox:
    """One worker's sandbox, reused for every run; call `isolate_filesystem`
    on `root` first.  Runs bash exactly as a harness would, with nothing but
    the stubs on PATH, HOME and TMPDIR inside, and a clean environment."""

    def __init__(self, root: Path, programs: list[str]):
        self.root = root
        builtins = sorted(set(programs) & bash_names("b"))
        self.io = root / "io"
        self.log = self.io / "log"
        self.log.mkdir(parents=True)
        stub = fuzz_stub(self.io)
        self.stubs = StubBin(root / "stubs", [p for p in programs if p not in builtins],
                             stub=stub, bash_env=fuzz_bash_env(builtins))
        # The `time` keyword is not a program, but `\\time` or `a | time b` runs one.
        (self.stubs.bin / "time").write_bytes(stub if isinstance(stub, bytes) else stub.encode())
        (self.stubs.bin / "time").chmod(0o755)
        self.stderr_path = self.io / "stderr"
        self.script_path = self.io / "script"
        # `..` from a run directory stays in the sandbox, and is watched.
        self.cwd = root / "d1" / "d2" / "d3" / "run"
        self.evil_cwd = root / "d1" / "d2" / "d3" / "evil"
        self._unwatched = str(self.io)
        self._stub_dir = str(self.stubs.bin)
        self.reset()
        self.env = {"PATH": str(self.stubs.bin), "BASH_ENV": str(self.stubs.bash_env),
                    LOG_VAR: str(self.log), "HOME": str(root / "home"),
                    "TMPDIR": str(root / "tmp"), "TIMEFORMAT": ""}

    def reset(self) -> None:
        """(Re)create the watched tree: run directory, home, temp directory."""
        for name in ("d1", "home", "tmp"):
            shutil.rmtree(self.root / name, ignore_errors=True)
        (self.root / "home").mkdir()
        (self.root / "tmp").mkdir()
        for cwd, files in ((self.cwd, RUN_FILES), (self.evil_cwd, EVIL_FILES)):
            for name, text in files.items():
                path = cwd / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
        self.baseline = self.snapshot()

    def snapshot(self) -> dict[str, tuple[int, int, int, int]]:
        """Every path of the sandbox but the harness's own (the stub directory
        itself, not each stub), with its mode, size, inode and modification time."""
        found = {}
        pending = [str(self.root)]
        while pending:
            top = pending.pop()
            for entry in os.scandir(top):
                if entry.path == self._unwatched:
                    continue
                st = entry.stat(follow_symlinks=False)
                found[entry.path] = (st.st_mode, st.st_size, st.st_ino, st.st_mtime_ns)
                if entry.is_dir(follow_symlinks=False) and entry.path != self._stub_dir:
                    pending.append(entry.path)
        return found

    def run(self, command: str, stdin_script: bool, locale: str, timeout: float,
            cwd: Path) -> FuzzRun:
        """Run `command` once in `cwd`: `bash -c COMMAND` with stdin from
        /dev/null, or (`stdin_script`) `bash -s` reading the command as a script
        file on stdin.  Waits for every process bash left behind (`&`)."""
        os.chdir(cwd)  # posix_spawn starts bash in the current directory
        env = dict(self.env, LC_ALL=locale)
        if stdin_script:
            self.script_path.write_bytes(command.encode("utf-8", "surrogateescape"))
            env[SCRIPT_VAR] = str(self.script_path)
            argv, stdin = [BASH, "--norc", "--noprofile", "-s"], str(self.script_path)
        else:
            # `--`: a command starting with `-` or `+` is not read as bash's options.
            argv, stdin = [BASH, "--norc", "--noprofile", "-c", "--", command], os.devnull
        actions = [(os.POSIX_SPAWN_OPEN, 0, stdin, os.O_RDONLY, 0),
                   (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                   (os.POSIX_SPAWN_OPEN, 2, str(self.stderr_path),
                    os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)]
        pid = os.posix_spawn(BASH, argv, env, file_actions=actions, setsid=True)
        timed_out = not _wait_session(pid, timeout)
        records = self._records()
        stderr = self.stderr_path.read_bytes().decode("utf-8", "replace")
        changes = []
        now = self.snapshot()
        if now != self.baseline:
            changes = sorted(
                f"{'new' if p not in self.baseline else 'gone' if p not in now else 'changed'} "
                f"{os.path.relpath(p, self.root)}"
                for p in set(now) | set(self.baseline) if now.get(p) != self.baseline.get(p))
            self.reset()
        return FuzzRun(records, stderr, changes, timed_out)

    def _records(self) -> list[tuple[int | None, tuple[str, ...]]]:
        by_pid: dict[str, list[tuple[int | None, tuple[str, ...]]]] = {}
        order: list[str] = []
        for entry in os.scandir(self.log):
            data = Path(entry.path).read_bytes()
            os.unlink(entry.path)
            if entry.name == ORDER_LOG:
                order = data.decode().split()
            else:
                by_pid[entry.name] = _fuzz_records(data)
        records = []
        for pid in order:
            if by_pid.get(pid):
                records.append(by_pid[pid].pop(0))
        for rest in by_pid.values():  # a record whose order line was lost (never seen)
            records.extend(rest)
        return records


def _fuzz_records(data: bytes) -> list[tuple[int | None, tuple[str, ...]]]:
    fields = data.split(b"\0")
    assert fields[-1] == b"", "a stub record was cut short"
    fields.pop()
    records = []
    i = 0
    while i < len(fields):
        argc = int(fields[i])
        pos = re.search(rb"pos:\s*(\d+)", fields[i + 1])
        argv = [f.decode("utf-8", "surrogateescape") for f in fields[i + 2:i + 3 + argc]]
        argv[0] = argv[0].rpartition("/")[2]
        records.append((int(pos[1]) if pos else None, tuple(argv)))
        i += 3 + argc
    return records


def _wait_session(pid: int, timeout: float) -> bool:
    """Wait for bash and then for every process left in its session (this
    process is their subreaper); False, after killing them all, on timeout."""
    import select
    import time

    deadline = time.monotonic() + timeout
    fd = os.pidfd_open(pid)
    try:
        done = bool(select.select([fd], [], [], timeout)[0])
    finally:
        os.close(fd)
    while done:
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            pass
        try:
            os.killpg(pid, 0)
        except ProcessLookupError:
            return True
        if time.monotonic() > deadline:
            break
        time.sleep(0.001)
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        while True:
            os.waitpid(-1, 0)
    except ChildProcessError:
        pass
    return False


def become_subreaper() -> None:
    """Orphans of the commands (`a & b`) are reparented here and can be awaited."""
    import ctypes

    PR_SET_CHILD_SUBREAPER = 36
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


# -- what bash must do for an allowed verdict ---------------------------------


class OracleGap(Exception):
    """The checker reported something this oracle cannot predict bash's effect of."""


@dataclass
class Expected:
    """What bash must do for an allowed command when every program exits 0.

    `steps` in order; each a group of commands that may start in any order (a
    pipeline's members, or everything from a `&` or a process substitution
    on), each as the checker's words; `failures`: redirection errors bash
    reports on stderr.
    """

    steps: list[list[tuple]]
    failures: int
    source: str = ""  # the command (names of expansions are read from it)


_STD = {0: "stdin", 1: "stdout", 2: "stderr"}


class _Walk:
    """Walks the checker's tree (bash_policy.read.model) as bash runs it, every
    program exiting 0: `&&`/`||` look at the last pipeline's status (1 when a
    redirection failed, flipped by `!`); substitutions run before their
    command; groups and subshells run their lists; `if` takes the first branch
    whose test succeeds; `for` runs its body once per literal word; `case` the
    first arm whose literal pattern equals the word.  What the oracle cannot
    foretell raises OracleGap."""

    def __init__(self, cwd: Path):
        self.cwd = cwd
        self.expected = Expected([], 0)
        self.group: list[tuple] | None = None  # inside a pipeline: commands start in any order
        self.concurrent = False  # after a `&`: everything starts in any order

    def emit(self, words: tuple) -> None:
        steps = self.expected.steps
        if self.group is not None:
            self.group.append(words)
        elif self.concurrent and steps:
            steps[-1].append(words)
        else:
            steps.append([words])

    def background_from(self, start: int) -> None:
        steps = self.expected.steps
        if self.group is None:
            steps[start:] = [sum(steps[start:], [])] if steps[start:] else []
        self.concurrent = True

    def run_list(self, node: List, fds: dict) -> int:
        status = 0
        start = len(self.expected.steps)  # where the current and-or list began
        for k, item in enumerate(node.items):
            op = node.ops[k - 1] if k else ";"
            if op in (";", "\n", "&"):
                start = len(self.expected.steps)
            if not (op == "&&" and status != 0 or op == "||" and status == 0):
                status = self.pipeline(item, fds)
            if k < len(node.ops) and node.ops[k] == "&":
                self.background_from(start)
                status = 0
        return status

    def pipeline(self, node: Pipeline, fds: dict) -> int:
        status = 0
        if len(node.commands) == 1:
            status = self.unit(node.commands[0], fds, False)
        else:
            outer = self.group
            if outer is None:
                self.group = []
            for i, member in enumerate(node.commands):
                piped_stderr = i < len(node.stderr) and node.stderr[i]
                member_fds = dict(fds)
                if i + 1 < len(node.commands):
                    member_fds[1] = "pipe"
                if i:
                    member_fds[0] = "pipe"
                status = self.unit(member, member_fds, piped_stderr)
            if outer is None:
                group, self.group = self.group, None
                if group:
                    if self.concurrent and self.expected.steps:
                        self.expected.steps[-1].extend(group)
                    else:
                        self.expected.steps.append(group)
        return 1 - status if node.negated else status

    def substitutions(self, node, fds: dict) -> None:
        for child in children(node):
            if isinstance(child, List):
                self.run_list(child, {**fds, 1: "pipe"})

    def redirected(self, node, fds: dict, piped_stderr: bool) -> dict | None:
        """The descriptors after the node's redirections, or None if one fails."""
        failed, reported, after = _redirect_failure(node.redirects, self.cwd, piped_stderr, fds)
        self.expected.failures += reported
        return None if failed else after

    def unit(self, node, fds: dict, piped_stderr: bool) -> int:
        if any(e.kind == PROCESS_SUB for w in _words_of(node) for e in w.expansions):
            # <(…) runs alongside its command and may start after it
            self.background_from(len(self.expected.steps))
        if isinstance(node, Command):
            self.substitutions(node, fds)
            if self.redirected(node, fds, piped_stderr) is None:
                return 1
            words = _timed_command(node.words)
            if words:
                self.emit(words)
            return 0
        if isinstance(node, Cond):
            return 0 if self.redirected(node, fds, piped_stderr) is not None else 1
        if isinstance(node, Arith):
            raise OracleGap("(( )) whose status the oracle does not compute")
        inner = self.redirected(node, fds, piped_stderr)
        if inner is None:
            return 1
        if isinstance(node, (Group, Subshell)):
            return self.run_list(node.body, inner)
        if isinstance(node, If):
            for test, body in node.branches:
                if self.run_list(test, inner) == 0:
                    return self.run_list(body, inner)
            return self.run_list(node.orelse, inner) if node.orelse is not None else 0
        if isinstance(node, For):
            if node.words is None or any(w.value is None for w in node.words):
                raise OracleGap("for loop over words the oracle cannot count")
            status = 0
            for _ in node.words:
                status = self.run_list(node.body, inner)
            return status
        if isinstance(node, Case):
            if node.word.value is None:
                raise OracleGap("case of an unknown word")
            for arm in node.arms:
                for pattern in arm.patterns:
                    if pattern.value is None:
                        raise OracleGap("case with a pattern the oracle does not match")
                    if pattern.value == node.word.value:
                        if arm.terminator not in (";;", ""):
                            raise OracleGap(f"case arm ending in {arm.terminator}")
                        return self.run_list(arm.body, inner) if arm.body is not None else 0
            return 0
        if isinstance(node, While):
            if self.run_list(node.test, inner) ^ node.until == 0:
                raise OracleGap("a loop whose test succeeds runs forever with the stubs")
            return 0
        raise OracleGap(f"unknown node {type(node).__name__}")


def _words_of(node) -> tuple[Word, ...]:
    words = tuple(getattr(node, "words", None) or ())
    words += tuple(r.target for r in getattr(node, "redirects", ()) if r.target is not None)
    return words + tuple(a.value for a in getattr(node, "assignments", ()))


def expected_runs(verdict: Verdict, cwd: Path) -> Expected:
    """What bash must run for an allowed verdict, from the exact reader's tree."""
    if verdict.script is None or verdict.script.body is None:
        if verdict.segments:
            raise OracleGap("an allowed verdict with segments and no tree")
        return Expected([], 0)
    walk = _Walk(cwd)
    walk.expected.source = verdict.command
    walk.run_list(verdict.script.body, dict(_STD))
    return walk.expected


def _timed_command(words: tuple) -> tuple:
    """The command the checker takes the `time` program to run: its operand
    after `-p` and `--` (bash's keyword is `Pipeline.timed`; /usr/bin/time
    runs its operand too)."""
    if not words or words[0].value != "time":
        return words
    rest = words[1:]
    while rest and rest[0].value is not None and re.fullmatch(r"-p+", rest[0].value):
        rest = rest[1:]
    if rest and rest[0].value == "--":
        rest = rest[1:]
    return rest


def _redirect_failure(redirects, cwd: Path, piped_stderr: bool,
                      fds: dict | None = None) -> tuple[bool, bool, dict]:
    """Whether a redirection fails (input from a missing file, a copy of a
    descriptor that is not open, `N>&FILE`), whether bash's message about it
    reaches the original stderr, and the descriptors after them, following
    each descriptor left to right; `|&` adds a `2>&1` after the command's own
    redirections."""
    fds = dict(_STD if fds is None else fds)

    def fail() -> tuple[bool, bool, dict]:
        return True, fds.get(2) == "stderr", fds

    for r in sorted(redirects, key=lambda r: r.span.start):  # bash's order
        op = r.op
        target = r.target.value if r.target is not None else None
        fd = r.fd if r.fd is not None else (0 if op.startswith("<") else 1)
        if op == "<":
            if target is None:
                raise OracleGap(f"input redirection from an unknown word: {r!r}")
            if not target or not (cwd / target).exists():
                return fail()
            fds[fd] = "file"
        elif op in (">", ">>", ">|", "<>", "<<", "<<-", "<<<"):
            fds[fd] = "file"
        elif op in ("&>", "&>>") or op == ">&" and fd == 1 and target is not None \
                and not re.fullmatch(r"\d+-?|-", target):
            fds[1] = fds[2] = "file"  # `>&FILE` and `1>&FILE` are `&>FILE`
        elif op in (">&-", "<&-") or op in (">&", "<&") and target == "-":
            fds.pop(fd, None)
        elif op in (">&", "<&") and target is not None and re.fullmatch(r"\d+-?", target):
            source = int(target.rstrip("-"))  # `N>&M-` moves M to N; `N>&N` does nothing
            if source == fd:
                continue
            if source not in fds:
                return fail()
            fds[fd] = fds[source]
            if target.endswith("-") and source != fd:
                del fds[source]
        elif op in (">&", "<&") and target is not None:  # "ambiguous redirect"
            return fail()
        else:
            raise OracleGap(f"unknown redirection {r!r}")
    if piped_stderr:
        if 1 not in fds:
            return fail()
        fds[2] = fds[1]
    return False, False, fds


# -- comparing a run with the expectation --------------------------------------

# Order of severity: a finding is named after its first problem.  "bash-crash" is
# bash's own bug, not the checker's: bash 5.2.15 reading a script on stdin
# crashes in the child for `cat <&- 5<in.txt`, before the program starts.
CATEGORIES = ("hang", "changed", "extra-program", "missing-program", "argv", "stderr",
              "stdin-script", "bash-crash")
_BASH_CRASH = re.compile(r"^/bin/bash: line \d+: +\d+ Segmentation fault", re.M)
_FAILURE = re.compile(
    r"^/bin/bash: line \d+: (?:(?!\n/bin/bash: ).)*?: "
    r"(?:No such file or directory|Bad file descriptor|ambiguous redirect)\n", re.M | re.S)
# The `time` keyword's report: TIMEFORMAT is empty, but `-p` and `--` print it.
_TIMING = re.compile(r"^real \d+\.\d+\nuser \d+\.\d+\nsys \d+\.\d+\n", re.M)


@dataclass
class Problem:
    category: str
    message: str


def run_problems(expected: Expected, run: FuzzRun, cwd: Path,
                 script: str | None = None, reads_stdin=None) -> list[Problem]:
    """How a run differs from what the checker's reading says bash must do
    ([] if it does not).  With `script` (bash read it on stdin), a program
    whose stdin was the script while code was left in it is a problem too: a
    program that reads its input would swallow the rest of the script;
    `reads_stdin(argv)`, if given, says whether the program may read it (the
    checker's own judgement: a program that never reads stdin is harmless
    there, and the stubs cannot tell)."""
    if _BASH_CRASH.search(run.stderr):  # what bash then did is not the checker's to foresee
        return [Problem("bash-crash", f"bash said {run.stderr!r}")]
    problems = []
    if run.timed_out:
        problems.append(Problem("hang", "bash did not finish"))
    if run.changes:
        problems.append(Problem("changed", "; ".join(run.changes)))
    argvs = [_timed_run(argv) for _, argv in run.records]
    want = sum(len(group) for group in expected.steps)
    start = 0
    for group in expected.steps:
        if not _group_fits(group, argvs[start:start + len(group)], cwd, expected.source):
            break
        start += len(group)
    if start != len(argvs) or start != want:
        category = ("extra-program" if len(argvs) > want else
                    "missing-program" if len(argvs) < want else "argv")
        checker = [[w.value if w.value is not None else w.text for w in words]
                   for group in expected.steps for words in group]
        problems.append(Problem(category, f"checker read {checker!r}, bash ran {argvs!r}"))
    rest, failures = _FAILURE.subn("", _TIMING.sub("", run.stderr))
    if rest or failures != expected.failures:
        problems.append(Problem("stderr", f"bash said {run.stderr!r} (expected "
                                          f"{expected.failures} redirection errors)"))
    if script is not None:
        data = script.encode("utf-8", "surrogateescape")
        for pos, argv in run.records:
            if pos is not None and _holds_code(data[pos:]) and (
                    reads_stdin is None or reads_stdin(argv)):
                problems.append(Problem(
                    "stdin-script", f"{argv!r} ran with the rest of the script on stdin: "
                                    f"{data[pos:].decode('utf-8', 'replace')!r}"))
                break
    problems.sort(key=lambda p: CATEGORIES.index(p.category))
    return problems


def _timed_run(argv: tuple[str, ...]) -> tuple[str, ...]:
    """What the `time` program (GNU time, whose stub logged this) runs: its
    operand after `-p`/`--portability` and `--`; any other option stays, to
    differ from what the checker read."""
    if argv[:1] != ("time",):
        return argv
    rest = argv[1:]
    while rest[:1] in (("-p",), ("--portability",)):
        rest = rest[1:]
    return rest[1:] if rest[:1] == ("--",) else rest


def _holds_code(rest: bytes) -> bool:
    return any(line.strip() and not line.strip().startswith(b"#") for line in rest.split(b"\n"))


def _group_fits(group: list[tuple], argvs: list[tuple[str, ...]], cwd: Path,
               source: str = "") -> bool:
    """Whether the programs bash started match the group's commands, in any order."""
    if len(argvs) != len(group):
        return False
    fit = [[_argv_fits(words, argv, cwd, source) for argv in argvs] for words in group]
    owner: dict[int, int] = {}  # argv index -> command index (a bipartite matching)

    def place(i: int, seen: set[int]) -> bool:
        for j, ok in enumerate(fit[i]):
            if ok and j not in seen:
                seen.add(j)
                if j not in owner or place(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    return all(place(i, set()) for i in range(len(group)))


def _argv_fits(words: tuple, argv: tuple[str, ...], cwd: Path, source: str = "") -> bool:
    """Whether bash's argv is what the words give.  A word the checker knows
    must be exactly that argument.  A glob or `~` must become one argument
    starting with the word's literal prefix (the glob unexpanded, or `~`
    replaced), or several existing paths that each do; another word that
    stays one word (a quoted expansion) one argument with its prefix; a word
    bash may split (`$x`, `$(…)`, braces) any number of arguments."""

    from bash_policy.judge.shapes import single

    @functools.cache
    def fits(w: int, a: int) -> bool:
        if w == len(words):
            return a == len(argv)
        word = words[w]
        if word.value is not None:
            return a < len(argv) and argv[a] == word.value and fits(w + 1, a + 1)
        if word.pathname_only:
            for end in range(a + 1, len(argv) + 1):
                arg = argv[end - 1]
                if not arg.startswith(word.prefix):
                    return False
                if end - a > 1 and not all(os.path.lexists(cwd / x) for x in argv[a:end]):
                    return False
                if fits(w + 1, end):
                    return True
            return False
        if single(word, source, {}):
            return a < len(argv) and argv[a].startswith(word.prefix) and fits(w + 1, a + 1)
        return any(fits(w + 1, end) for end in range(a, len(argv) + 1))

    return fits(0, 0)
