"""`bash-policy run`: a read-only shell for harnesses with no permission gate.

The command is checked first and runs only if the policy allows it, under
`bash --norc --noprofile -c` with the hardened environment (so config a
repository ships cannot turn an allowed read into a program run), stdin
closed, in a new session with no controlling terminal, with a timeout and a
cap on captured output, and, by default, confined by the kernel
(bash_policy/confine): the static check is the first line of defence, the
confinement the second, so that a misreading costs a failed command instead
of a change.  `confine` (or the policy's `confine` key) chooses: "auto"
confines wherever the kernel offers it and says in the verdict's notes what
it could not; "required" refuses to run (exit 126) without full
confinement; "off" runs unconfined.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping

from ..records import dataclass, replace

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
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
    verdict: Verdict  # the verdict that allowed or refused the command (notes: its confinement)
    ran: bool
    returncode: int | None = None
    stdout: bytes = b""
    stderr: bytes = b""
    timed_out: bool = False
    truncated: bool = False
    confined: bool = False  # it ran inside the kernel sandbox
    refused: str = ""  # why an allowed command did not run (confinement required but missing)


def run(command: str, *, cwd: str | None = None, policy=None, timeout: float = DEFAULT_TIMEOUT,
        max_output: int = DEFAULT_MAX_OUTPUT, env: Mapping[str, str] | None = None,
        confine: str | None = None) -> RunResult:
    """Check `command`; run it only if allowed.  `env` is the base the
    hardened environment is derived from (default: this process's);
    `confine` overrides the policy's mode."""
    from ..confine import ConfinementError, launch_confined, support
    from ..confine.launch import launch
    from ..judge.engine import check
    from ..judge.policy import Policy
    from ..repo.hardening import OFFLINE_ENV, hardened_env

    # The command runs without CDPATH (hardened_env unsets it): `cd NAME` searches nothing.
    verdict = check(command, replace(policy or Policy.default(), cdpath=""), cwd=cwd)
    if not verdict.allowed:
        return RunResult(verdict, ran=False)
    mode = confine or (policy.confine if policy is not None else "auto")
    if mode not in ("auto", "required", "off"):
        raise ValueError(f"confine: expected auto, required or off, not {mode!r}")
    run_env = hardened_env(dict(env) if env is not None else None, cwd=cwd or os.getcwd())
    bash = shutil.which("bash", path=run_env.get("PATH", os.defpath))
    if bash is None:
        raise FileNotFoundError("bash not found on the hardened PATH")

    def noted(note: str) -> Verdict:
        return replace(verdict, notes=(*verdict.notes, note))

    found = None
    if mode != "off":
        found = support()
        gaps = found.gaps()
        if gaps and mode == "required":
            why = "; ".join(gaps)
            return RunResult(noted(f"not run: confinement is required: {why}"), ran=False, refused=why)
        if not found.available:
            verdict, found = noted(f"ran unconfined: {gaps[0]}"), None
        elif gaps:
            verdict = noted("confined, except: " + "; ".join(gaps))
    argv = [bash, "--norc", "--noprofile", "-c", command]
    try:
        if found is None:
            outcome = launch(argv, cwd=cwd, env=run_env, sandbox=None, timeout=timeout, max_output=max_output)
        else:
            outcome = launch_confined(argv, found, env={**run_env, **OFFLINE_ENV}, cwd=cwd, timeout=timeout,
                                      max_output=max_output)
    except ConfinementError as error:  # never run a command half-confined
        return RunResult(noted(f"not run: confinement failed: {error}"), ran=False, refused=str(error))
    return RunResult(verdict, True, outcome.returncode, outcome.stdout, outcome.stderr,
                     outcome.timed_out, outcome.truncated, confined=found is not None)
