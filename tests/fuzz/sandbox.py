"""The fuzzer's sandbox: built once per worker process and reused for
hundreds of thousands of commands: a private, read-only view of the whole
file system with one writable tmpfs, argv-logging stubs for every
whitelisted program, bash started with posix_spawn, and a snapshot of the
tmpfs compared after every run."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

from oracle_support import BASH, LOG_VAR, StubBin, bash_names

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
    crashed: bool = False  # bash itself died of a signal it did not send (SIGSEGV, SIGABRT)


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
        status: list[int] = []
        timed_out = not _wait_session(pid, timeout, status)
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
        crashed = bool(status) and os.WIFSIGNALED(status[0]) and \
            os.WTERMSIG(status[0]) in (signal.SIGSEGV, signal.SIGABRT, signal.SIGBUS)
        return FuzzRun(records, stderr, changes, timed_out, crashed)

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


def _wait_session(pid: int, timeout: float, status: list[int]) -> bool:
    """Wait for bash and then for every process left in its session (this
    process is their subreaper); False, after killing them all, on timeout.
    bash's own wait status goes into `status`."""
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
            while True:
                reaped, code = os.waitpid(-1, os.WNOHANG)
                if not reaped:
                    break
                if reaped == pid:
                    status.append(code)
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


