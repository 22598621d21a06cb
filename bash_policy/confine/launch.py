"""Start a command, confined or not, and see it through: its output
collected under a cap (or relayed), a wall-clock limit, and everything it
started killed at the end, so that nothing outlives it.

The command leads a new session and process group with no controlling
terminal.  When its own process ends, at the deadline or at the output cap,
the group is killed first (confined, nothing can have left it: sandbox.py)
and what is left in the pipes is read after, so it is bounded.  The group is
killed while the command's process is unreaped, so its number cannot have
been reused; confined, a watchdog kills it if this process dies.
"""

from __future__ import annotations

import os
import select
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from . import privileges
from .sandbox import ConfinementError, Sandbox

_CHUNK = 65536
_PIPE_BUF = 4096


@dataclass(frozen=True)
class Outcome:
    returncode: int  # negative: killed by that signal
    stdout: bytes = b""
    stderr: bytes = b""
    timed_out: bool = False
    truncated: bool = False  # a stream passed the cap and the command was stopped


def launch(argv: Sequence[str], *, cwd: str | None, env: Mapping[str, str], sandbox: Sandbox | None,
           timeout: float | None, max_output: int | None, stdin=subprocess.DEVNULL,
           relay: tuple[int, int] | None = None, feed: int | None = None,
           shown: Callable[[int, bytes], bytes] | None = None) -> Outcome:
    """Run `argv` to its end or its limit.  Output is captured (at most
    `max_output` bytes a stream), or written through to `relay`'s two file
    descriptors as it comes (through `shown(sink, data)` when given, e.g. to
    make it safe on a terminal).  `feed`, a descriptor, is copied into the
    command's stdin through a pipe of its own: the command never holds the
    caller's descriptor (a pipe it could reopen for writing through
    /proc/self/fd).  Raises ConfinementError if the sandbox could not be
    entered (the command did not run)."""
    feeding = _Feed(feed) if feed is not None else None
    try:
        proc = subprocess.Popen(
            list(argv), stdin=feeding.read_end if feeding else stdin, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, cwd=cwd, env=dict(env), start_new_session=True, close_fds=True,
            preexec_fn=sandbox.enter if sandbox is not None else None,
        )
    except subprocess.SubprocessError:
        if feeding:
            feeding.stop()
        raise (sandbox.failure() if sandbox is not None else ConfinementError(
            "the command could not be started")) from None
    except BaseException:
        if feeding:
            feeding.stop()
        raise
    assert proc.stdout is not None and proc.stderr is not None  # both were asked for
    pipes = (proc.stdout.fileno(), proc.stderr.fileno())
    deadline = None if timeout is None else time.monotonic() + timeout
    try:  # from here on, whatever fails, the group is killed
        if sandbox is not None:
            sandbox.guard(proc.pid)
        if feeding:
            feeding.start()
        result = _watch(proc.pid, pipes, deadline, max_output, relay, shown)
    finally:
        _kill_group(proc.pid)
        if feeding:
            feeding.stop()
        returncode = proc.wait()
        if sandbox is not None:
            sandbox.reaped()
        _reap_group(proc.pid)
        proc.stdout.close()
        proc.stderr.close()
    return Outcome(returncode, *result)


class _Feed:
    """Copies a descriptor into the command's stdin through a pipe the copy
    owns (so no descriptor number the caller may reuse is ever written), on
    a thread that `stop()` ends before the run returns."""

    def __init__(self, source: int):
        self.source = source
        self.read_end, self._write_end = os.pipe()
        self._wake_r, self._wake_w = os.pipe()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        os.close(self.read_end)  # the command has its copy
        self.read_end = -1
        self._thread = threading.Thread(target=self._copy, daemon=True)
        self._thread.start()

    def _copy(self) -> None:
        try:
            while True:
                ready = select.select([self.source, self._wake_r], [], [])[0]
                if self._wake_r in ready:
                    return
                chunk = os.read(self.source, _CHUNK)
                if not chunk:
                    return
                for start in range(0, len(chunk), _PIPE_BUF):  # PIPE_BUF at a time: a wake-up is seen
                    if self._wake_r in select.select([self._wake_r], [self._write_end], [])[0]:
                        return
                    os.write(self._write_end, chunk[start:start + _PIPE_BUF])
        except OSError:
            pass
        finally:
            os.close(self._write_end)

    def stop(self) -> None:
        os.write(self._wake_w, b"x")
        if self._thread is not None:
            self._thread.join()
        else:
            os.close(self._write_end)
        for fd in (self.read_end, self._wake_r, self._wake_w):
            if fd >= 0:
                os.close(fd)


def _watch(pid: int, pipes: tuple[int, int], deadline: float | None, cap: int | None,
           relay: tuple[int, int] | None, shown):
    """Read both pipes until the command's process exits, then, its group
    killed, what is left in them; or until the deadline or the cap."""
    buffers = {fd: bytearray() for fd in pipes}
    sinks = dict(zip(pipes, relay)) if relay is not None else {}
    timed_out = truncated = exited = False
    exit_fd = _pidfd(pid)

    def take(fd: int) -> bool:
        """One chunk into its buffer or sink; False at end of file or when
        nothing is left."""
        nonlocal timed_out
        try:
            chunk = os.read(fd, _CHUNK)
        except OSError:  # BlockingIOError included: nothing left
            return False
        if not chunk:
            return False
        if fd in sinks:
            if not _write_all(sinks[fd], shown(sinks[fd], chunk) if shown else chunk, deadline):
                timed_out = True
        elif cap is None or len(buffers[fd]) <= cap:
            buffers[fd] += chunk
        return True

    with selectors.DefaultSelector() as selector:
        for fd in pipes:
            selector.register(fd, selectors.EVENT_READ)
        if exit_fd is not None:
            selector.register(exit_fd, selectors.EVENT_READ)
        while not (exited or truncated or timed_out):
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
                elif not take(key.fd):
                    selector.unregister(key.fd)
            truncated = cap is not None and any(len(b) > cap for b in buffers.values())
        _kill_group(pid)  # what is left in the pipes is then all there will be
        for fd in pipes:
            os.set_blocking(fd, False)
            while not truncated and not timed_out and take(fd):
                truncated = cap is not None and len(buffers[fd]) > cap
    if exit_fd is not None:
        os.close(exit_fd)
    out, err = (bytes(buffers[fd][:cap] if cap is not None else buffers[fd]) for fd in pipes)
    return out, err, timed_out, truncated


def _write_all(fd: int, data: bytes, deadline: float | None) -> bool:
    """Write `data` to a relay sink, at most a pipe buffer at a time once it
    can take one, so that a slow reader cannot hold the run past its
    deadline.  False when the deadline passed."""
    poller = select.poll()  # not epoll: a regular file or a terminal may be the sink
    poller.register(fd, select.POLLOUT)
    while data:
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            return False
        if not poller.poll(None if left is None else left * 1000):
            continue
        try:
            data = data[os.write(fd, data[:_PIPE_BUF]):]
        except BrokenPipeError:
            return True
    return True


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


def _reap_group(pgid: int) -> None:
    """Where this process inherits orphans (it is PID 1 or a subreaper), reap
    the group's other members as they die, or they stay zombies for good."""
    if not privileges.inherits_orphans():
        return
    end = time.monotonic() + 1.0
    while time.monotonic() < end:
        try:
            if os.waitid(os.P_PGID, pgid, os.WEXITED | os.WNOHANG) is None:
                os.killpg(pgid, 0)  # members left that are not ours yet: wait for them
                time.sleep(0.005)
        except (ChildProcessError, ProcessLookupError):
            try:
                os.killpg(pgid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.005)
        except OSError:
            return


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
