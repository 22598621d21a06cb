"""The client process a hook runs under, found through /proc.

Both clients start a hook through a shell (`/bin/sh -c "<hook> || exit
2"`), so the client is the nearest ancestor that is not a shell.  Claude
Code 2.1.332 also names itself in CLAUDE_PID; 2.1.197 does not.  Its
command line holds settings a hook must know (`--settings`, `--policy`),
and its descriptors say what the client's own terminal is.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

# Programs that stand between a client and its hook (or a command it runs).
SHELLS = frozenset({"sh", "dash", "bash", "zsh", "ksh", "mksh", "busybox", "env", "timeout"})


def _stat_fields(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except OSError:
        return None
    # comm may hold spaces and parentheses: the fields start after the last ')'.
    return [text[text.index("(") + 1:text.rindex(")")], *text[text.rindex(")") + 2:].split()]


def parent(pid: int) -> int | None:
    fields = _stat_fields(pid)
    return int(fields[2]) if fields and len(fields) > 2 else None


def start_ticks(pid: int) -> int | None:
    """When the process started, in clock ticks since boot (proc(5) field 22)."""
    fields = _stat_fields(pid)
    return int(fields[20]) if fields and len(fields) > 20 else None


def executable_name(pid: int) -> str | None:
    try:
        return os.path.basename(os.readlink(f"/proc/{pid}/exe"))
    except OSError:
        fields = _stat_fields(pid)
        return fields[0] if fields else None


def client_process(env: Mapping[str, str], pid_variable: str | None) -> int | None:
    """The client's process id: `pid_variable` when the client sets it to
    an ancestor of this process, else the nearest ancestor that is not a shell."""
    ancestors: list[int] = []
    pid: int | None = os.getppid()
    while pid and pid > 1 and len(ancestors) < 16:
        ancestors.append(pid)
        pid = parent(pid)
    named = env.get(pid_variable or "", "")
    if named.isdigit() and int(named) in ancestors:
        return int(named)
    return next((p for p in ancestors if executable_name(p) not in SHELLS), None)


def client_argv(pid: int | None) -> list[str] | None:
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            raw = handle.read()
    except OSError:
        return None
    return [w.decode("utf-8", "surrogateescape") for w in raw.split(b"\0")[:-1]]


def clock_ticks() -> int:
    return os.sysconf("SC_CLK_TCK")


def boot_time() -> float | None:
    try:
        with open("/proc/stat", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("btime "):
                    return float(line.split()[1])
    except OSError:
        return None
    return None


def started_at(pid: int) -> float | None:
    """The process's start as a Unix time (to the clock tick), or None."""
    ticks, boot = start_ticks(pid), boot_time()
    return None if ticks is None or boot is None else boot + ticks / clock_ticks()


def descriptor_target(pid: int, fd: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/fd/{fd}")
    except OSError:
        return None
