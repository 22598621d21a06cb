"""`bash-policy hook HARNESS`: the plan-mode gate as a client's tool hook.

Claude Code (PreToolUse) and Gemini CLI (BeforeTool) run a command hook with
the tool call as JSON on stdin and read a decision from stdout.  For both,
exit 2 blocks the call with stderr as the reason, while exit 1 (and for
Claude Code any other failure, such as 127 for a missing executable) lets
the call go ahead.  So every failure here, whatever its cause, ends in exit
2, and the settings snippet adds `|| exit 2` for failures before Python runs.
What each client calls things comes from its record in harnesses.py.

An allowed shell command is rewritten, where the client lets a hook do it,
to the same command under `bash-policy run` (wrapping.py): it then runs in a
clean, hardened, confined bash whatever shell the client pastes it into.
Where it is not rewritten (--no-confine, a session whose own permission
rules the rewrite would hide, Claude Code's newer plan mode), it runs in the
client's own shell and is judged for that shell (profiles/).
Contracts: https://code.claude.com/docs/en/hooks (PreToolUse decision
control) and https://geminicli.com/docs/hooks/reference (BeforeTool).
"""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import IO, Any

from .gate import ALLOW, DENY, PLANNING, PlanGate
from .harnesses import Harness

# Claude Code 2.1.332 shows every hook denial to the model as
# "PreToolUse:Bash hook error: <reason>", whatever shape it is sent in (2.1.197
# shows the JSON deny's reason plainly), so the reason says first what it is.
DECISION_NOTE = ("Denied by the plan-mode policy (bash-policy): a decision, not a failure; "
                 "the same call is denied again.")


class HookError(Exception):
    """The event or the options are unusable: block and say why."""


@dataclass
class Options:
    always: bool = False
    allow_readonly: bool = False
    plan_files: list[str] = field(default_factory=list)
    way_out: str | None = None
    config: str | None = None
    confine: bool = True  # rewrite allowed commands to run under `bash-policy run`


@dataclass(frozen=True)
class Outcome:
    exit_code: int
    stdout: str = ""
    stderr: str = ""


def handle(harness: Harness, raw: bytes | str, opts: Options,
           env: Mapping[str, str] | None = None) -> Outcome:
    """Answer one event.  Never raises: every problem is a blocking exit 2."""
    try:
        return _decide(harness, _parse_event(harness, raw), opts, os.environ if env is None else env)
    except HookError as error:
        return _blocked(harness, str(error))
    except Exception as error:  # a bug must block too, never let the call through
        return _blocked(harness, f"internal error: {type(error).__name__}: {error}")


def _blocked(harness: Harness, why: str) -> Outcome:
    return Outcome(2, "", f"bash-policy hook {harness.name}: {why}; the tool call is blocked\n")


def _parse_event(harness: Harness, raw: bytes | str) -> dict[str, Any]:
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        event = json.loads(text)
    except ValueError as error:
        raise HookError(f"stdin is not a JSON event ({error})") from None
    if not isinstance(event, dict):
        raise HookError("the event must be a JSON object")
    name = event.get("hook_event_name", harness.event)
    if name != harness.event:
        raise HookError(f"expected a {harness.event} event, got {name!r}; "
                        f"install the hook under {harness.event}")
    if not isinstance(event.get("tool_name"), str):
        raise HookError("the event has no tool_name string")
    if not isinstance(event.get("tool_input"), dict):
        raise HookError("the event has no tool_input object")
    return event


def _text(value: Any, what: str, path: bool = True) -> str:
    if not isinstance(value, str):
        raise HookError(f"{what} is not a string")
    if path and "\0" in value:
        raise HookError(f"{what} holds a NUL byte")
    return value


def _decide(harness: Harness, event: dict, opts: Options, env: Mapping[str, str]) -> Outcome:
    tool = event["tool_name"]
    permission, key = harness.tools.get(tool, (None, None))
    own_plan_mode = harness.mode is not None and event.get(harness.mode[0]) == harness.mode[1]
    enforced = opts.always or own_plan_mode or harness.mode is None
    if permission not in ("shell", "edit") or not enforced:
        return _no_opinion(harness)
    cwd = os.path.abspath(_text(event.get("cwd") or os.getcwd(), "the event's cwd"))
    plan_files = tuple(opts.plan_files) or harness.plan_files(event, env)
    subject = _text(event["tool_input"].get(key), f"{tool}: tool_input.{key}", path=permission == "edit")
    # The session's own directory: the event's cwd follows the shell's `cd`
    # (both clients), which would let a repository below the project govern.
    project = env.get(harness.project_variable or "", "")
    policy = _policy(opts, project if os.path.isabs(project) and "\0" not in project else cwd)
    rewrite = opts.confine and harness.rewrite is not None and permission == "shell" \
        and harness.rewrite_refused(event, env, own_plan_mode) is None
    if permission == "shell" and not rewrite and harness.profile is not None:
        # It runs in the client's own shell: judge it for that shell.
        from .profiles import load_profile, shell_state

        state = shell_state(load_profile(harness.profile), event, env, subject)
        policy = dataclasses.replace(policy, shell=state)
    gate = PlanGate(
        plan_files=plan_files,
        way_out=opts.way_out or harness.way_out(env, own_plan_mode),
        root=cwd,
        policy=policy,
        state=PLANNING,
    )
    if permission == "shell":
        decision = gate.decide("shell", subject, cwd=_shell_directory(harness, event, cwd))
        if decision.action == ALLOW and rewrite:
            assert harness.rewrite is not None
            return Outcome(0, json.dumps(harness.rewrite(
                event["tool_input"], _wrapped(harness, event, env, subject, opts, policy),
                "read-only command (bash-policy); it runs under bash-policy run")) + "\n")
        if decision.action == ALLOW and opts.allow_readonly:
            return _answer(harness, ALLOW, "read-only command (bash-policy)")
    else:
        decision = gate.decide("edit", subject, cwd=cwd)
    if decision.action != DENY:
        return _no_opinion(harness)
    reason = decision.reason
    if permission == "edit" and not plan_files:
        reason += (f"\n(bash-policy knows no plan file for this {harness.client} session; "
                   "the hook's --plan-file GLOB names one)")
    return _answer(harness, DENY, f"{DECISION_NOTE}\n{reason}")


def _wrapped(harness: Harness, event: dict, env: Mapping[str, str], command: str,
             opts: Options, policy) -> str:
    """`command` under `bash-policy run`, with a timeout that ends before the
    client's own (which, for Claude Code, moves the command to the background
    instead of killing it), and the policy file the hook judged by: run would
    otherwise look for one in the directory the shell is in, which a
    repository below the project may hold (an empty file stands for the
    built-in policy)."""
    from .profiles import load_profile
    from .wrapping import run_command

    timeout = None
    rewrite = load_profile(harness.profile).rewrite if harness.profile else {}
    if "timeout_key" in rewrite:
        given = event["tool_input"].get(rewrite["timeout_key"])
        if not isinstance(given, (int, float)) or isinstance(given, bool) or given <= 0:
            given = _number(env.get(rewrite.get("timeout_env", ""), "")) or rewrite["timeout_default"]
        timeout = max(1.0, given * rewrite["timeout_unit"] - rewrite.get("timeout_margin", 0))
    config = opts.config or (policy.source if os.path.isabs(policy.source) else os.devnull)
    return run_command(command, executable=executable(), config=config, timeout=timeout)


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if value > 0 else None


def _shell_directory(harness: Harness, event: dict, cwd: str) -> str:
    """Where the shell runs: the event's cwd joined with the tool's directory
    argument.  Two spellings that disagree block: the check must read the
    directory the client will use."""
    given = {name: _text(event["tool_input"][name], f"tool_input.{name}")
             for name in harness.cwd_keys if event["tool_input"].get(name) is not None}
    if len({os.path.normpath(os.path.join(cwd, v)) for v in given.values()}) > 1:
        raise HookError(f"{' and '.join(given)} name different directories")
    return os.path.join(cwd, next(iter(given.values()))) if given else cwd


def _policy(opts: Options, cwd: str):
    """The policy of the session's directory (not of a directory a command
    names or the shell is in), or --config."""
    from ..judge.policy import ConfigError
    from .config import load_policy

    try:
        return load_policy(opts.config, cwd)
    except ConfigError as error:
        raise HookError(str(error)) from None


def _no_opinion(harness: Harness) -> Outcome:
    return Outcome(0, harness.no_opinion)


def _answer(harness: Harness, action: str, reason: str) -> Outcome:
    return Outcome(0, json.dumps(harness.answer(action, reason)) + "\n")


def executable() -> str:
    """The absolute path of the installed `bash-policy` beside this Python,
    or failing that `python -m bash_policy`: a hook must not depend on the
    client's PATH (a bare name that is not found exits 127, which Claude Code
    treats as a non-blocking error, so every call would go through)."""
    beside = os.path.join(os.path.dirname(os.path.abspath(sys.executable)), "bash-policy")
    if os.access(beside, os.X_OK):
        return shlex.quote(beside)
    return shlex.join([os.path.abspath(sys.executable), "-m", "bash_policy"])


def option_words(opts: Options) -> list[str]:
    """`opts` as command-line words, for the snippet."""
    words = [flag for flag, on in (("--always", opts.always),
                                   ("--allow-readonly", opts.allow_readonly),
                                   ("--no-confine", not opts.confine)) if on]
    for glob in opts.plan_files:
        words += ["--plan-file", glob]
    for flag, value in (("--way-out", opts.way_out), ("--config", opts.config)):
        if value is not None:
            words += [flag, value]
    return words


def settings_snippet(harness: Harness, opts: Options, command: str | None = None) -> str:
    """The settings fragment that installs the hook with these options.  The
    command ends in `|| exit 2` so that a hook that cannot even start (the
    executable moved, a broken interpreter) blocks instead of passing."""
    words = shlex.join([harness.name, *option_words(opts)])
    hook_command = f"{command or executable()} hook {words} || exit 2"
    hook = {"type": "command", "command": hook_command, **harness.hook_fields}
    entry = {harness.event: [{"matcher": "|".join(harness.gated), "hooks": [hook]}]}
    return json.dumps({"hooks": entry}, indent=2)


def main(harness: Harness, opts: Options, stdin: IO[bytes] | None = None,
         stdout: IO[str] | None = None, stderr: IO[str] | None = None) -> int:
    """Read one event, write the answer; any failure at all is exit 2."""
    try:
        raw = (stdin or sys.stdin.buffer).read()
        outcome = handle(harness, raw, opts)
        out, err = stdout or sys.stdout, stderr or sys.stderr
        out.write(outcome.stdout)
        out.flush()
        err.write(outcome.stderr)
        return outcome.exit_code
    except BaseException as error:  # even KeyboardInterrupt: exit 1 would let the call through
        try:
            (stderr or sys.stderr).write(_blocked(harness, f"{type(error).__name__}: {error}").stderr)
        except BaseException:
            pass
        return 2
