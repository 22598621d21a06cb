"""One confined run: what the parent prepares, what the child applies
between fork and exec (`Sandbox.enter`, given to subprocess as preexec_fn),
and the watchdog that ends the run if the parent dies.

The parent builds the Landlock ruleset and the seccomp program, so that the
child, a copy of a possibly large and threaded process, only makes a few
system calls.  A step that fails in the child writes why to a pipe and
raises, so the command never runs half-confined.

The command leads its own session and process group and cannot leave them
(seccomp refuses setsid and setpgid), so killing the group ends everything
it started; the runner does that when the command ends, at the timeout and
at the output cap (launch.py).  If the runner itself dies, even by SIGKILL,
the watchdog (started before the command, so that a command that uses up
the process limit cannot keep it from starting) kills the group; it removes
the private TMPDIR in every case.  The command's own process also has
PR_SET_PDEATHSIG.
"""

from __future__ import annotations

import fcntl
import os
import select
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Mapping

from . import landlock, privileges, seccomp

_FILTERS: dict[str, seccomp.Filter] = {}
_PR_SET_PDEATHSIG = 1


class ConfinementError(OSError):
    """Confinement could not be set up as asked; the command did not run.
    `step` names the set-up step that failed in the child, if one did."""

    def __init__(self, message: str, step: str = ""):
        super().__init__(message)
        self.step = step


# The watchdog, a shell in a session of its own and orphaned at once (so that
# nobody has to reap it): it learns the command's group from the runner, and
# when the runner's pipe ends without "reaped" (the runner died, even by
# SIGKILL) it kills that group; then it removes TMPDIR unless the runner said
# "removed", so that a runner killed while cleaning up leaves nothing either.
# Every process of the group is dead by then, so nothing in TMPDIR moves
# (chmod -R and rm -rf follow no link).  The runner removes a TMPDIR it can
# remove at once itself: two programs started for an empty directory were
# most of what confinement added to a run.
# (A background list gets /dev/null as stdin, so the pipe is read as fd 3.)
_WATCHDOG = (
    'exec 3<&0; ( read -r group <&3 || group=; '
    'if read -r state <&3 && [ "$state" = reaped ]; then :; elif [ -n "$group" ]; then kill -KILL "-$group"; fi; '
    'if read -r state <&3 && [ "$state" = removed ]; then exit 0; fi; '
    'chmod -R u+rwx -- "$1" 2>/dev/null; rm -rf -- "$1" ) &'
)
# Watchdogs' groups still to be reaped where they are this process's orphans.
_WATCHDOGS: set[int] = set()
_CLEANUP_WAIT = 5.0  # seconds close() waits for TMPDIR's removal before leaving it to the watchdog


class Sandbox:
    """The kernel set-up of one run, its private temporary directory (given
    as TMPDIR) and the watchdog that ends the run and removes TMPDIR."""

    def __init__(self, landlock_abi: int, arch: str | None, netns: bool):
        self._ruleset: int | None = None
        self._errors: tuple[int, int] | None = None
        self._watch: int | None = None  # the write end of the watchdog's pipe
        self._removed: int | None = None  # end of file when the watchdog is done
        self._starter: subprocess.Popen | None = None
        self._told = ""  # what the watchdog was told: "", "guarded" or "reaped"
        self.tmpdir = ""
        try:
            self.tmpdir = tempfile.mkdtemp(prefix="bash-policy-")
            self._ruleset = _high(landlock.ruleset(landlock_abi, (self.tmpdir,))) if landlock_abi else None
            if arch is not None and arch not in _FILTERS:
                _FILTERS[arch] = seccomp.Filter(arch)
            self._filter = _FILTERS.get(arch) if arch is not None else None
            self._errors = _high_pipe()
            self._start_watchdog()
        except OSError as error:
            self.close()
            raise ConfinementError(f"cannot prepare the sandbox: {error}") from None
        self._netns = netns
        self._last_cap = privileges.last_capability()

    def _start_watchdog(self) -> None:
        watch_r, self._watch = _high_pipe()
        self._removed, removed_w = _high_pipe()
        try:  # the shell backgrounds the watchdog and exits; close() reaps it
            self._starter = subprocess.Popen(["/bin/sh", "-c", _WATCHDOG, "watchdog", self.tmpdir],
                                             stdin=watch_r, stdout=removed_w, stderr=subprocess.DEVNULL,
                                             start_new_session=True, close_fds=True)
        finally:
            os.close(watch_r)
            os.close(removed_w)

    def environment(self, base: Mapping[str, str]) -> dict[str, str]:
        """`base` with the private directory as every name programs look up."""
        return {**base, **dict.fromkeys(("TMPDIR", "TMP", "TEMP", "TEMPDIR"), self.tmpdir)}

    def guard(self, group: int) -> None:
        """Tell the watchdog the command's process group (in the parent, right
        after the command started)."""
        assert self._watch is not None
        os.write(self._watch, f"{group}\n".encode())
        self._told = "guarded"

    def reaped(self) -> None:
        """The runner killed the group and reaped its leader: the watchdog must
        not kill that number again (it may be reused), only clean up."""
        if self._watch is not None:
            try:
                os.write(self._watch, b"reaped\n")
                self._told = "reaped"
            except OSError:
                pass

    def enter(self) -> None:
        """Confine this process for good (runs in the child)."""
        step = "start"
        try:
            privileges.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            if self._netns:
                step = "network namespace"
                privileges.new_network_namespace()
            step = "core dumps"
            privileges.no_core_dumps()
            privileges.first_to_go_out_of_memory()
            step = "capabilities"
            privileges.drop_capabilities(self._last_cap)
            step = "no_new_privs"
            privileges.no_new_privs()
            if self._ruleset is not None:
                step = "landlock"
                landlock.restrict_self(self._ruleset)
            if self._filter is not None:
                step = "seccomp"
                self._filter.install(privileges.prctl)
        except BaseException as error:
            if self._errors is not None:
                os.write(self._errors[1], f"{step}\0{error}".encode(errors="replace")[:512])
            raise

    def failure(self) -> ConfinementError:
        """Why the child could not confine itself."""
        said = b""
        if self._errors is not None:
            os.set_blocking(self._errors[0], False)
            try:
                said = os.read(self._errors[0], 512)
            except BlockingIOError:
                pass
        step, _, why = said.decode(errors="replace").partition("\0")
        return ConfinementError(f"{step}: {why}" if why else "the sandbox could not be entered", step)

    def close(self) -> None:
        """Release the parent's descriptors, which lets the watchdog remove
        TMPDIR; wait a little for that, and leave the rest to it.  Never raises."""
        if self._watch is not None and self._told != "guarded":
            self._remove_at_once()
        for fd in (self._ruleset, *(self._errors or ()), self._watch):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._ruleset = self._errors = self._watch = None
        starter = self._starter
        if starter is not None:
            starter.wait()
            self._starter = None
        done = False
        if self._removed is not None:
            try:  # told "removed", the watchdog just exits; else it removes TMPDIR first
                done = bool(select.select([self._removed], [], [], _CLEANUP_WAIT)[0])
                os.close(self._removed)
            except OSError:
                pass
            self._removed = None
        elif self.tmpdir:  # no watchdog ever started
            shutil.rmtree(self.tmpdir, ignore_errors=True)
        if starter is not None and privileges.inherits_orphans():
            # The watchdog is this process's orphan: reap it now if it is done
            # (its group is the starter's), else at a later close.
            if done:
                try:
                    os.waitid(os.P_PGID, starter.pid, os.WEXITED)
                except OSError:
                    pass
            else:
                _WATCHDOGS.add(starter.pid)
        _reap_watchdogs()

    def _remove_at_once(self) -> None:
        """Remove TMPDIR here, where nothing of the command is left to move
        in it (its group was never started or is reaped), and tell the
        watchdog; when anything fails (a directory without permissions, a
        tree too deep for rmtree) it is told nothing and removes what is left
        as ever."""
        assert self._watch is not None
        try:
            shutil.rmtree(self.tmpdir)
            told = {"": "\nreaped\n", "reaped": ""}[self._told]
            os.write(self._watch, f"{told}removed\n".encode())
        except Exception:  # RecursionError included: never raise, leave it to the watchdog
            pass

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _reap_watchdogs() -> None:
    """Where this process inherits orphans, reap the watchdogs that are done."""
    if not _WATCHDOGS or not privileges.inherits_orphans():
        _WATCHDOGS.clear()
        return
    for group in list(_WATCHDOGS):
        try:
            while os.waitid(os.P_PGID, group, os.WEXITED | os.WNOHANG) is not None:
                pass
            os.killpg(group, 0)  # still running (cleaning up): reaped by a later close
        except (ChildProcessError, ProcessLookupError):
            _WATCHDOGS.discard(group)
        except OSError:
            _WATCHDOGS.discard(group)


def _high(fd: int) -> int:
    """`fd` moved to 3 or above: a caller with a standard descriptor closed
    would otherwise give it number 0, 1 or 2, which the child's own standard
    streams then replace."""
    if fd > 2:
        return fd
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    os.close(fd)
    return moved


def _high_pipe() -> tuple[int, int]:
    read, write = os.pipe()
    return _high(read), _high(write)
