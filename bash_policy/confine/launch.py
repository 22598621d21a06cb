"""Start a command, confined or not, and see it through: its output
collected under a cap (or relayed), a wall-clock limit, and its whole
process group killed at the end, so that nothing it started outlives it.

The command leads a new session and process group with no controlling
terminal.  Confined, it cannot leave them (seccomp refuses setsid and
setpgid), so one SIGKILL to the group ends everything it started, even
programs that ignore SIGTERM (7z).  The group is killed while the command's
own process is still unreaped, so its number cannot have been reused.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .sandbox import ConfinementError, Sandbox

_CHUNK = 65536


@dataclass(frozen=True)
class Outcome:
    returncode: int  # negative: killed by that signal
    stdout: bytes = b""
    stderr: bytes = b""
    timed_out: bool = False
    truncated: bool = False  # a stream reached the cap and the command was stopped


def launch(argv: Sequence[str], *, cwd: str | None, env: Mapping[str, str], sandbox: Sandbox | None,
           timeout: float | None, max_output: int | None, stdin=subprocess.DEVNULL,
           relay: tuple[int, int] | None = None) -> Outcome:
    """Run `argv` to its end or its limit.  Output is captured (at most
    `max_output` bytes a stream), or written through to `relay`'s two file
    descriptors as it comes.  Raises ConfinementError if the sandbox could
    not be entered (the command did not run)."""
    try:
        proc = subprocess.Popen(
            list(argv), stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd,
            env=dict(env), start_new_session=True, close_fds=True,
            preexec_fn=sandbox.enter if sandbox is not None else None,
        )
    except subprocess.SubprocessError:
        raise (sandbox.failure() if sandbox is not None else ConfinementError(
            "the command could not be started")) from None
    assert proc.stdout is not None and proc.stderr is not None  # both were asked for
    pipes = (proc.stdout.fileno(), proc.stderr.fileno())
    try:
        result = _watch(proc.pid, pipes, timeout, max_output, relay)
    finally:
        _kill_group(proc.pid)
        proc.stdout.close()
        proc.stderr.close()
    return Outcome(proc.wait(), *result)


def _watch(pid: int, pipes: tuple[int, int], timeout: float | None, cap: int | None,
           relay: tuple[int, int] | None):
    """Read both pipes until the command exits (then what is left in them),
    the deadline, or the cap."""
    buffers = {fd: bytearray() for fd in pipes}
    sinks = dict(zip(pipes, relay)) if relay is not None else {}
    deadline = None if timeout is None else time.monotonic() + timeout
    timed_out = truncated = exited = False
    exit_fd = _pidfd(pid)
    with selectors.DefaultSelector() as selector:
        for fd in pipes:
            selector.register(fd, selectors.EVENT_READ)
        if exit_fd is not None:
            selector.register(exit_fd, selectors.EVENT_READ)
        while not (exited or truncated):
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                timed_out = True
                break
            if exit_fd is None:  # no pidfd: poll for the exit
                left = 0.01 if left is None else min(left, 0.01)
                exited = _has_exited(pid)
            for key, _ in selector.select(left):
                if key.fd == exit_fd:
                    exited = True
                    continue
                if not _read(key.fd, buffers, sinks, cap):
                    selector.unregister(key.fd)
            truncated = cap is not None and any(len(b) > cap for b in buffers.values())
        if exited:  # what the command wrote before it ended is still in the pipes
            for fd in pipes:
                os.set_blocking(fd, False)
                while not truncated and _read(fd, buffers, sinks, cap):
                    truncated = cap is not None and len(buffers[fd]) > cap
    if exit_fd is not None:
        os.close(exit_fd)
    out, err = (bytes(buffers[fd][:cap] if cap is not None else buffers[fd]) for fd in pipes)
    return out, err, timed_out, truncated


def _read(fd: int, buffers, sinks, cap: int | None) -> bool:
    """One chunk from `fd` into its buffer or sink; False at end of file (or,
    not blocking, when nothing is left)."""
    try:
        chunk = os.read(fd, _CHUNK)
    except OSError:  # BlockingIOError included: nothing left
        return False
    if not chunk:
        return False
    if fd in sinks:
        _write_all(sinks[fd], chunk)
        return True
    if cap is None or len(buffers[fd]) <= cap:
        buffers[fd] += chunk
    return True


def _write_all(fd: int, data: bytes) -> None:
    while data:
        try:
            data = data[os.write(fd, data):]
        except BrokenPipeError:
            return


def _pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):  # Python < 3.9 or Linux < 5.3
        return None


def _has_exited(pid: int) -> bool:
    """Whether `pid` has ended, without reaping it."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
