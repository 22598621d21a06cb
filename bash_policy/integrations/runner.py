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
import sys
import time
from dataclasses import dataclass
from typing import Mapping

DEFAULT_TIMEOUT = 60.0
DEFAULT_MAX_OUTPUT = 1 << 20  # bytes per stream
TIMEOUT_EXIT = 124  # what timeout(1) returns

USAGE = """\
usage: bash-policy run [--config FILE] [--cwd DIR] [--timeout SECONDS] [--max-output BYTES] -- COMMAND

Runs COMMAND only if the plan-mode policy allows it (exit 1 with the verdict
if not), in a hardened, non-interactive bash.  Exits with the command's
status, or 124 when it timed out.
"""


@dataclass(frozen=True)
class RunResult:
    verdict: object  # the Verdict that allowed or refused the command
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
    from ..judge.engine import check
    from ..repo.hardening import hardened_env

    verdict = check(command, policy, cwd=cwd)
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
    deadline = time.monotonic() + timeout
    try:
        out, err, timed_out, truncated = _collect(proc, timeout, max_output)
        if not (timed_out or truncated):
            # Both pipes closed: let bash exit by itself before anything is killed.
            try:
                proc.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                timed_out = True
    finally:
        _kill_group(proc)
        proc.stdout.close()
        proc.stderr.close()
    code = proc.wait()
    return RunResult(verdict, True, code, out, err, timed_out, truncated)


def _collect(proc: subprocess.Popen, timeout: float, cap: int):
    """Read both pipes until EOF, the deadline, or `cap` bytes on either."""
    buffers = {proc.stdout.fileno(): bytearray(), proc.stderr.fileno(): bytearray()}
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
    out, err = (bytes(buffers[f.fileno()]) for f in (proc.stdout, proc.stderr))
    return out, err, timed_out, truncated


def _kill_group(proc: subprocess.Popen) -> None:
    """End the command and anything it left behind in its session."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def main(argv: list[str]) -> int:
    from ..judge.policy import Policy
    from ..render import text

    opts: dict[str, str] = {}
    rest = list(argv)
    while rest and rest[0] != "--" and rest[0].startswith("--"):
        name = rest.pop(0)
        if name == "--help":
            print(USAGE, end="")
            return 0
        if name not in ("--config", "--cwd", "--timeout", "--max-output") or not rest:
            return _usage(f"bad option {name}")
        opts[name] = rest.pop(0)
    if rest and rest[0] == "--":
        rest.pop(0)
    if len(rest) != 1:
        return _usage("give exactly one COMMAND, quoted")
    try:
        timeout = float(opts.get("--timeout", DEFAULT_TIMEOUT))
        max_output = int(opts.get("--max-output", DEFAULT_MAX_OUTPUT))
    except ValueError as error:
        return _usage(str(error))
    cwd = opts.get("--cwd")
    policy = Policy.from_file(opts["--config"]) if "--config" in opts else Policy.discover(cwd or ".")
    result = run(rest[0], cwd=cwd, policy=policy, timeout=timeout, max_output=max_output)
    if not result.ran:
        print(f"bash-policy: not run: {text(result.verdict)}", file=sys.stderr)
        return 1
    sys.stdout.buffer.write(result.stdout)
    sys.stdout.flush()
    sys.stderr.buffer.write(result.stderr)
    if result.truncated:
        print(f"\nbash-policy: output cut at {max_output} bytes; the command was stopped",
              file=sys.stderr)
    if result.timed_out:
        print(f"\nbash-policy: stopped after {timeout:g}s", file=sys.stderr)
        return TIMEOUT_EXIT
    code = result.returncode or 0
    return 128 - code if code < 0 else code


def _usage(problem: str) -> int:
    print(f"bash-policy run: {problem}\n\n{USAGE}", end="", file=sys.stderr)
    return 2
