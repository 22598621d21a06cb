"""`bash-policy run`: a read-only shell for harnesses with no permission gate.

The command is checked first and runs only if the policy allows it, under
`bash --norc --noprofile -c` with the hardened environment (so config a
repository ships cannot turn an allowed read into a program run), stdin
closed, in a new session (no controlling terminal, so nothing can prompt),
with a timeout and a cap on captured output.
"""

from __future__ import annotations

import os
import selectors
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..judge.verdict import Verdict

DEFAULT_TIMEOUT = 60.0
DEFAULT_MAX_OUTPUT = 1 << 20  # bytes per stream
# Exit statuses of `bash-policy run` that are not the command's own, as
# timeout(1), env(1) and nice(1) use them: 124 timed out, 126 not run.
TIMEOUT_EXIT = 124
DENIED_EXIT = 126


@dataclass(frozen=True)
class RunResult:
    verdict: Verdict  # the verdict that allowed or refused the command
    ran: bool
    returncode: int | None = None
    stdout: bytes = b""
    stderr: bytes = b""
    timed_out: bool = False
    truncated: bool = False


def run(command: str, *, cwd: str | None = None, policy=None, timeout: float = DEFAULT_TIMEOUT,
        max_output: int = DEFAULT_MAX_OUTPUT, env: Mapping[str, str] | None = None) -> RunResult:
    """Check `command`; run it only if allowed.  `env` is the base the
    hardened environment is derived from (default: this process's)."""
    from dataclasses import replace

    from ..judge.engine import check
    from ..judge.policy import Policy
    from ..repo.hardening import hardened_env

    # The command runs without CDPATH (hardened_env unsets it): `cd NAME` searches nothing.
    verdict = check(command, replace(policy or Policy.default(), cdpath=""), cwd=cwd)
    if not verdict.allowed:
        return RunResult(verdict, ran=False)
    run_env = hardened_env(dict(env) if env is not None else None, cwd=cwd or os.getcwd())
    bash = shutil.which("bash", path=run_env.get("PATH", os.defpath))
    if bash is None:
        raise FileNotFoundError("bash not found on the hardened PATH")
    proc = subprocess.Popen(
        [bash, "--norc", "--noprofile", "-c", command],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        cwd=cwd, env=run_env, start_new_session=True, close_fds=True,
    )
    pipes = (proc.stdout, proc.stderr)
    assert pipes[0] is not None and pipes[1] is not None  # both were asked for
    deadline = time.monotonic() + timeout
    try:
        out, err, timed_out, truncated = _collect(pipes[0].fileno(), pipes[1].fileno(), timeout,
                                                  max_output)
        if not (timed_out or truncated):
            # Both pipes closed: let bash exit by itself before anything is killed.
            try:
                proc.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                timed_out = True
    finally:
        _kill_group(proc)
        pipes[0].close()
        pipes[1].close()
    code = proc.wait()
    return RunResult(verdict, True, code, out, err, timed_out, truncated)


def _collect(stdout: int, stderr: int, timeout: float, cap: int):
    """Read both pipes until EOF, the deadline, or `cap` bytes on either."""
    buffers = {stdout: bytearray(), stderr: bytearray()}
    deadline = time.monotonic() + timeout
    timed_out = truncated = False
    with selectors.DefaultSelector() as selector:
        for fd in buffers:
            selector.register(fd, selectors.EVENT_READ)
        while selector.get_map() and not truncated:
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                break
            for key, _ in selector.select(left):
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    selector.unregister(key.fd)
                    continue
                buffer = buffers[key.fd]
                buffer += chunk
                if len(buffer) > cap:
                    del buffer[cap:]
                    truncated = True
    return bytes(buffers[stdout]), bytes(buffers[stderr]), timed_out, truncated


def _kill_group(proc: subprocess.Popen) -> None:
    """End the command and anything it left behind in its session."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
