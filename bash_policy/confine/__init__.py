"""The second line of defence: run a command so that the kernel refuses,
for it and every child, for good, every change it could make.

The static check decides what may run; this layer makes a misreading cost
a failed command instead of a change.  It is independent of the check and
is tested alone (`bash-policy confine`, tests/test_confine.py).  On Linux:

- Landlock (landlock.py): read and execute everywhere; write, create,
  delete, rename, link or truncate only /dev/null and a private TMPDIR
  removed afterwards; no TCP connect or bind; no abstract Unix socket, signal
  or ptrace reaching a process outside (ABI 6 scopes).
- seccomp (seccomp.py): what Landlock does not mediate (metadata, file
  ioctls, other socket families, IPC objects, keyrings, io_uring, leaving
  the session, scheduling other processes).
- privileges.py: no capabilities, no_new_privs, no core dumps, and a new
  network namespace where the process may make one (as root).
- the runner keeps the command in its own session and process group, gives
  it no terminal, and kills the whole group at the end.

What it does not cover: reading is reading (secrets the user can read stay
readable), and CPU, memory and disk in TMPDIR are bounded only by the run's
timeout.  docs/threat-model.md has the guarantees and the gaps.
"""

from __future__ import annotations

import functools
import os
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from . import landlock, seccomp
from .launch import Outcome, launch
from .sandbox import ConfinementError, Sandbox

__all__ = ["MODES", "ConfinementError", "Sandbox", "Support", "launch_confined", "probe", "run", "support"]

MODES = ("auto", "required", "off")


@dataclass(frozen=True)
class Support:
    """What this kernel and process offer (`support()`, `probe()`)."""

    landlock_abi: int
    arch: str | None  # the seccomp filter's architecture, None if it has none
    netns: bool  # a new network namespace is made (the process may unshare)
    error: str = ""  # why the set-up failed in the probe, if it did

    @property
    def available(self) -> bool:
        """Files are protected: the run can be confined at all."""
        return self.landlock_abi >= 1 and not self.error

    def gaps(self) -> tuple[str, ...]:
        """What is not enforced here, each with the reason."""
        if not self.available:
            why = self.error or "this kernel has no Landlock (Linux 5.13+, enabled with lsm=landlock)"
            return (f"nothing is confined: {why}",)
        gaps = []
        if self.arch is None:
            gaps.append("metadata changes (chmod, chown, utimes, xattrs), file ioctls, UDP and Unix "
                        "sockets, IPC objects and scheduling of other processes: no seccomp filter "
                        f"for this architecture ({os.uname().machine})")
        if self.landlock_abi < 6:
            gaps.append(f"signals and ptrace-free kills of processes outside the sandbox: Landlock ABI "
                        f"{self.landlock_abi} has no scoping (ABI 6, Linux 6.12)")
        return tuple(gaps)

    @property
    def complete(self) -> bool:
        return not self.gaps()

    def describe(self) -> str:
        parts = [f"Landlock ABI {self.landlock_abi}" if self.landlock_abi else "no Landlock",
                 f"seccomp ({self.arch})" if self.arch else "no seccomp filter",
                 "network namespace" if self.netns else "no network namespace (not root)"]
        return ", ".join(parts)

    def to_dict(self) -> dict:
        return {"available": self.available, "complete": self.complete,
                "landlock_abi": self.landlock_abi, "seccomp": self.arch, "network_namespace": self.netns,
                "gaps": list(self.gaps()), "error": self.error or None}


# A run found that this process may not make a network namespace (root in a
# container without CAP_SYS_ADMIN): later runs do without one.
_netns_refused = False


def support() -> Support:
    """What this kernel offers, read without starting a process: the Landlock
    ABI, the filter's architecture, and whether a network namespace will be
    made (as root, unless a run found it refused).  `probe()` proves it by
    confining a child; a run that finds a step refused never runs the
    command half-confined (`launch_confined`)."""
    return Support(_landlock_abi(), seccomp.arch(), os.geteuid() == 0 and not _netns_refused)


@functools.cache
def _landlock_abi() -> int:
    return landlock.abi()


@functools.cache
def probe() -> Support:
    """Set it all up once in a throwaway child running `true`, exactly as a
    run would (`bash-policy doctor`).  Without CAP_SYS_ADMIN (or where a
    container forbids it) the network namespace is left out; seccomp's socket
    allowlist blocks every IP socket either way."""
    predicted = support()
    if predicted.landlock_abi < 1:
        return predicted
    error = ""
    for netns in ((True, False) if predicted.netns else (False,)):
        error = _probe(predicted.landlock_abi, predicted.arch, netns)
        if not error:
            return Support(predicted.landlock_abi, predicted.arch, netns)
    return Support(predicted.landlock_abi, predicted.arch, False, error)


def _probe(abi: int, arch: str | None, netns: bool) -> str:
    true = "/bin/true" if os.path.exists("/bin/true") else "/usr/bin/true"
    try:
        with Sandbox(abi, arch, netns) as sandbox:
            try:
                done = subprocess.run([true], preexec_fn=sandbox.enter, stdin=subprocess.DEVNULL,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                      close_fds=True, timeout=10)
            except subprocess.SubprocessError:
                return str(sandbox.failure())
            return "" if done.returncode == 0 else f"{true} exited {done.returncode} when confined"
    except OSError as error:
        return str(error)


def launch_confined(argv: Sequence[str], found: Support, *, env: Mapping[str, str], **kwargs) -> Outcome:
    """`launch` under `found`'s confinement (kwargs as for `launch`).  When
    the network namespace is refused, the command has not started: remember
    it and start it once more without one; any other refused step raises
    ConfinementError, and nothing ran."""
    global _netns_refused
    netns = found.netns
    while True:
        with Sandbox(found.landlock_abi, found.arch, netns) as sandbox:
            try:
                return launch(argv, env=sandbox.environment(env), sandbox=sandbox, **kwargs)
            except ConfinementError as error:
                if error.step != "network namespace" or not netns:
                    raise
                _netns_refused, netns = True, False


def run(argv: Sequence[str], *, cwd: str | None = None, env: Mapping[str, str] | None = None,
        timeout: float | None = None, max_output: int | None = None, stdin=subprocess.DEVNULL,
        relay: tuple[int, int] | None = None, feed: int | None = None,
        shown: Callable[[int, bytes], bytes] | None = None) -> Outcome:
    """The layer alone, as a library call: run `argv` (no shell, no check)
    fully confined, or raise ConfinementError and run nothing.  Output is
    captured (`max_output` bytes a stream at most) or relayed to two file
    descriptors (through `shown`); `feed` is copied into its stdin (see
    `launch`); everything it started is killed at the end or at the timeout.
    Not a plan-mode gate by itself: it judges nothing."""
    found = support()
    if not found.complete:
        raise ConfinementError("not fully confined here: " + "; ".join(found.gaps()))
    return launch_confined(argv, found, env=os.environ if env is None else env, cwd=cwd, timeout=timeout,
                           max_output=max_output, stdin=stdin, relay=relay, feed=feed, shown=shown)
