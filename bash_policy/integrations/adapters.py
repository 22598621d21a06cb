"""`bash-policy hook HARNESS`: the plan-mode gate as a client's tool hook.

Claude Code (PreToolUse), Gemini CLI (BeforeTool), Codex CLI (PreToolUse)
and Copilot CLI (preToolUse) run a command hook with the tool call as JSON
on stdin and read a decision from stdout.  Each fails open somewhere: exit 1
lets the call through in Claude Code and Gemini CLI, Codex runs it on any
exit but 2-with-a-reason, Copilot CLI on output that is not JSON, and all
four on a hook that outlives its timeout.  So every failure here, whatever
its cause, is answered the client's blocking way (exit 2 with the reason on
stderr, or Copilot's JSON deny), a watchdog gives that answer itself before
the snippet's timeout, and the snippet's command blocks when Python cannot
even start.  What each client calls things comes from its record in
harnesses.py.  Contracts: https://code.claude.com/docs/en/hooks,
https://geminicli.com/docs/hooks/reference, codex-rs/hooks (pre_tool_use.rs)
and Copilot CLI's hooks reference, each checked with the real client
(tests/e2e).

An allowed shell command is rewritten, where the client lets a hook do it,
to the same command under `bash-policy run` (wrapping.py): it then runs in a
clean, hardened, confined bash whatever shell the client pastes it into.
Where it is not rewritten (--no-confine, a session whose own permission
rules the rewrite would hide, Claude Code's newer plan mode), Claude Code's
and Gemini CLI's calls run in the client's own shell and are judged for
that shell (profiles/).
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import threading
from collections.abc import Mapping

from ..records import dataclass, field, replace
from .config import directory_error
from .gate import ALLOW, DENY, PLANNING, PlanGate
from .harnesses import Harness

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import IO, Any

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
    rewrite: bool = False  # run a denied command's safe fix instead, where the client allows it
    confine: bool = True  # rewrite allowed commands to run under `bash-policy run`, where the client can


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
    message = f"bash-policy hook {harness.name}: {why}; the tool call is blocked"
    if harness.failure_answers:
        return Outcome(0, json.dumps(harness.answer(DENY, message)) + "\n", message + "\n")
    return Outcome(2, "", message + "\n")


def _parse_event(harness: Harness, raw: bytes | str) -> dict[str, Any]:
    """The event, with its tool under `tool_name` and `tool_input` whatever
    the client calls them (Copilot CLI: `toolName`, `toolArgs`)."""
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        event = json.loads(text)
    except ValueError as error:
        raise HookError(f"stdin is not a JSON event ({error})") from None
    if not isinstance(event, dict):
        raise HookError("the event must be a JSON object")
    event_key, tool_key, input_key = harness.keys
    name = event.get(event_key, harness.event) if event_key else harness.event
    if name != harness.event:
        raise HookError(f"expected a {harness.event} event, got {name!r}; "
                        f"install the hook under {harness.event}")
    tool, tool_input = event.get(tool_key), event.get(input_key)
    if isinstance(tool_input, str) and input_key != "tool_input":  # Copilot may send a JSON string
        try:
            tool_input = json.loads(tool_input)
        except ValueError:
            raise HookError(f"{input_key} is a string that is not JSON") from None
    if not isinstance(tool, str):
        raise HookError(f"the event has no {tool_key} string")
    if not isinstance(tool_input, dict):
        raise HookError(f"the event has no {input_key} object")
    return {**event, "tool_name": tool, "tool_input": tool_input}


def _text(value: Any, what: str, path: bool = True) -> str:
    if not isinstance(value, str):
        raise HookError(f"{what} is not a string")
    if path and "\0" in value:
        raise HookError(f"{what} holds a NUL byte")
    return value


def _decide(harness: Harness, event: dict, opts: Options, env: Mapping[str, str]) -> Outcome:
    tool = event["tool_name"]
    permission, key = harness.tools.get(tool, (None, None))
    mode = event.get(harness.mode[0]) if harness.mode else None
    own_plan_mode = harness.mode is not None and mode == harness.mode[1]
    # A gate installed for plan mode treats a mode it cannot classify as plan.
    unknown_mode = harness.mode is not None and not own_plan_mode and mode not in harness.known_modes
    enforced = opts.always or own_plan_mode or unknown_mode or harness.mode is None
    if permission not in ("shell", "edit", "patch", "shell_input", "foreign_shell") or not enforced:
        return _no_opinion(harness)
    cwd = os.path.abspath(_text(event.get("cwd") or os.getcwd(), "the event's cwd"))
    plan_files = tuple(opts.plan_files) or _plan_files(harness, event, env, permission)
    way_out = opts.way_out or (
        _unknown_mode_way_out(harness, mode) if unknown_mode and not opts.always
        else harness.way_out(env, own_plan_mode))
    # The session's own directory: the event's cwd follows the shell's `cd`
    # (Claude Code, Gemini CLI) or is the model's workdir (Codex), which
    # would let a repository below the project govern.
    session = harness.session_dir(event) if harness.session_dir else None
    project = env.get(harness.project_variable or "", "")
    if not session and os.path.isabs(project) and "\0" not in project:
        session = project
    policy = _policy(opts, session or cwd)
    subject = "*" if key is None else _text(event["tool_input"].get(key), f"{tool}: {harness.keys[2]}.{key}",
                                            path=permission == "edit")
    # A mode it cannot classify is plan mode here too (the client may hold rewritten calls there).
    rewriting = permission == "shell" and _rewrites(harness, event, env, opts,
                                                    own_plan_mode or unknown_mode)
    if permission == "shell" and not rewriting and harness.profile is not None:
        # It runs in the client's own shell: judge it for that shell.
        from .profiles import load_profile, shell_state

        state = shell_state(load_profile(harness.profile), event, env, subject)
        # `cd NAME` follows the client's CDPATH (the engine's own reading of it).
        cdpath = env.get("CDPATH", "") if policy.cdpath is None else policy.cdpath
        policy = replace(policy, shell=state, cdpath=cdpath)
    gate = PlanGate(plan_files=plan_files, way_out=way_out, root=cwd, policy=policy, state=PLANNING)
    if permission == "shell":
        directory = _shell_directory(harness, event, cwd)
        problem = directory_error(directory)
        if problem is not None:  # as serve answers it: nothing can be checked there
            raise HookError(problem)
        decision = gate.decide("shell", subject, cwd=directory)
        if decision.action == DENY and opts.rewrite and harness.name in INPUT_REWRITES:
            wrap = (lambda fixed: _wrapped(harness, event, env, fixed, opts, policy)) if rewriting else None
            rewritten = _rewrite(harness, gate, event, key, decision, directory, opts, wrap)
            if rewritten is not None:
                return rewritten
        if decision.action == ALLOW:
            if rewriting:
                assert harness.rewrite is not None
                wrapped = _wrapped(harness, event, env, subject, opts, policy)
                return Outcome(0, json.dumps(harness.rewrite(event["tool_input"], wrapped)) + "\n")
            return _allowed(harness, opts)
    else:
        decision = gate.decide(permission, subject, cwd=cwd)
    if decision.action != DENY:
        return _no_opinion(harness)
    reason = decision.reason
    if permission != "shell" and not plan_files:
        reason += (f"\n(bash-policy knows no plan file for this {harness.client} session; "
                   "the hook's --plan-file GLOB names one)")
    return _answer(harness, DENY, f"{DECISION_NOTE}\n{reason}")


# A write with no plan file known yet is looked for again this long: Claude Code
# writes the transcript line that names the plan file on its own time, and on a
# loaded machine 2.1.197 asked for the plan's first write before that line was
# there (its e2e test, in CI).  Shell calls are not held back.
PLAN_FILE_WAIT = 2.0


def _plan_files(harness: Harness, event: dict, env: Mapping[str, str], permission: str) -> tuple[str, ...]:
    found = harness.plan_files(event, env)
    if found or permission != "edit":
        return found
    import time

    deadline = time.monotonic() + PLAN_FILE_WAIT
    while not found and time.monotonic() < deadline:
        time.sleep(0.05)
        found = harness.plan_files(event, env)
    return found


def _unknown_mode_way_out(harness: Harness, mode: Any) -> str:
    return (f"this event's {harness.mode[0] if harness.mode else 'mode'} is {json.dumps(mode)}, which "
            f"this bash-policy does not know, so the hook treated the session as plan mode; if it "
            f"is not one, update bash-policy or remove the hook from the {harness.client} settings")


def _rewrites(harness: Harness, event: dict, env: Mapping[str, str], opts: Options,
              own_plan_mode: bool) -> bool:
    """Whether an allowed command is to run under `bash-policy run`: where the
    client can rewrite it (so that it runs in a clean bash, whatever shell the
    client would use), unless the rewrite would hide the user's own rules or
    never run (harness.rewrite_refused)."""
    return (harness.rewrite is not None and opts.confine
            and (opts.allow_readonly or not harness.rewrite_needs_allow_readonly)
            and harness.rewrite_refused(event, env, own_plan_mode) is None)


def _allowed(harness: Harness, opts: Options) -> Outcome:
    """An allowed command that is not rewritten: allow or no opinion."""
    if opts.allow_readonly and harness.answers_allow:
        return _answer(harness, ALLOW, "read-only command (bash-policy)")
    return _no_opinion(harness)


def _wrapped(harness: Harness, event: dict, env: Mapping[str, str], command: str,
             opts: Options, policy) -> str:
    """`command` under `bash-policy run`, with the policy file the hook judged
    by (run would otherwise look for one in the directory the shell is in,
    which a repository below the project may hold; an empty file stands for
    the built-in policy) and, where the client's profile says so, a timeout
    that ends before the client's own (Claude Code's moves a command to the
    background instead of killing it)."""
    from .wrapping import run_command

    timeout = None
    rewrite = _profile_rewrite(harness)
    if "timeout_key" in rewrite:
        given = event["tool_input"].get(rewrite["timeout_key"])
        if not isinstance(given, (int, float)) or isinstance(given, bool) or given <= 0:
            given = _number(env.get(rewrite.get("timeout_env", ""), "")) or rewrite["timeout_default"]
        timeout = max(1.0, given * rewrite["timeout_unit"] - rewrite.get("timeout_margin", 0))
    config = opts.config or (policy.source if os.path.isabs(policy.source) else os.devnull)
    return run_command(command, executable=executable(), config=config, timeout=timeout)


def _profile_rewrite(harness: Harness) -> Mapping[str, Any]:
    if harness.profile is None:
        return {}
    from .profiles import load_profile

    return load_profile(harness.profile).rewrite


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if value > 0 else None


def _rewrite(harness: Harness, gate: PlanGate, event: dict, key: str | None, decision, directory: str,
             opts: Options, wrap=None) -> Outcome | None:
    """--rewrite: run the denied command's safe fix instead (judge/fixes.py:
    the same programs with the same operands), when the gate allows the fix
    in full; the model is told what changed.  Allowed outright with
    --allow-readonly, else left to the client's own prompt, as an allowed
    command is.  `wrap`, when allowed commands are rewritten to run under
    `bash-policy run`, puts the fix there too."""
    fix = decision.verdict.fix if decision.verdict is not None else None
    if fix is None or fix.command is None or fix.applicability != "safe":
        return None
    if gate.decide("shell", fix.command, cwd=directory).action != ALLOW:
        return None
    codes = ", ".join(dict.fromkeys(f"{d.code} {d.name}" for d in decision.verdict.denials))
    note = (f"bash-policy rewrote this command for plan mode ({codes}): it ran `{fix.command}` instead "
            f"of `{decision.verdict.command}`, a safe fix that gives the same programs the same "
            "operands; write it that way next time.")
    tool_input = {**event["tool_input"], str(key): wrap(fix.command) if wrap else fix.command}
    answer = INPUT_REWRITES[harness.name](tool_input, note, ALLOW if opts.allow_readonly else None)
    return Outcome(0, json.dumps(answer) + "\n")


def _claude_code_rewrite(tool_input: dict, note: str, action: str | None) -> dict:
    """PreToolUse `updatedInput`, with `allow` or `ask` (the client prompts with
    the new input), and the note as `additionalContext`, which the model reads."""
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": action or "ask",
                                   "permissionDecisionReason": note, "updatedInput": tool_input,
                                   "additionalContext": note}}


def _gemini_rewrite(tool_input: dict, note: str, action: str | None) -> dict:
    """BeforeTool `hookSpecificOutput.tool_input`, merged into the call's
    parameters (Gemini CLI 0.61 then tells the model the input was modified)."""
    answer: dict[str, Any] = {"reason": note, "hookSpecificOutput": {"tool_input": tool_input}}
    if action is not None:
        answer["decision"] = action
    return answer


# The clients whose hooks --rewrite can change a denied call's input to its fix, and
# how they are told to: checked end to end (tests/e2e/test_clients.py).  Kept here, not
# in harnesses.py, while other branches reshape the records.
INPUT_REWRITES = {"claude-code": _claude_code_rewrite, "gemini": _gemini_rewrite}


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
    names or runs in: Codex's events carry the command's workdir, so its
    record reads the session's directory from the transcript), or --config."""
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
    return shlex.join(executable_argv())


def executable_argv() -> list[str]:
    """executable() as words, for clients that spawn it without a shell."""
    beside = os.path.join(os.path.dirname(os.path.abspath(sys.executable)), "bash-policy")
    if os.access(beside, os.X_OK):
        return [beside]
    return [os.path.abspath(sys.executable), "-m", "bash_policy"]


def option_words(opts: Options) -> list[str]:
    """`opts` as command-line words, for the snippet."""
    words = [flag for flag, on in (("--always", opts.always),
                                   ("--allow-readonly", opts.allow_readonly),
                                   ("--rewrite", opts.rewrite),
                                   ("--no-confine", not opts.confine)) if on]
    for glob in opts.plan_files:
        words += ["--plan-file", glob]
    for flag, value in (("--way-out", opts.way_out), ("--config", opts.config)):
        if value is not None:
            words += [flag, value]
    return words


def hook_command(harness: Harness, opts: Options, command: str | None = None) -> str:
    """The shell command the snippet installs: the hook, in the client's
    blocking form for a hook that cannot even start (the executable moved,
    a broken interpreter): `|| exit 2`, or more where the client needs it."""
    words = shlex.join([harness.name, *option_words(opts)])
    return harness.command_form.format(command=f"{command or executable()} hook {words}")


def snippet(harness: Harness, opts: Options, command: str | None = None) -> dict[str, Any]:
    """The settings fragment that installs the hook with these options."""
    hook = {"type": "command",
            ("bash" if harness.layout == "flat" else "command"): hook_command(harness, opts, command),
            **harness.hook_fields}
    if harness.layout == "flat":
        return {**harness.extra, "hooks": {harness.event: [hook]}}
    return {**harness.extra,
            "hooks": {harness.event: [{"matcher": "|".join(harness.gated), "hooks": [hook]}]}}


def settings_snippet(harness: Harness, opts: Options, command: str | None = None) -> str:
    return json.dumps(snippet(harness, opts, command), indent=2)


def main(harness: Harness, opts: Options, stdin: IO[bytes] | None = None,
         stdout: IO[str] | None = None, stderr: IO[str] | None = None,
         deadline: float | None = None) -> int:
    """Read one event, write the answer; any failure at all is the client's
    blocking answer, and so is taking longer than the harness's deadline."""
    answering = threading.Lock()
    timer = _watchdog(harness, harness.deadline if deadline is None else deadline, answering)
    try:
        raw = (stdin or sys.stdin.buffer).read()
        outcome = handle(harness, raw, opts)
    except BaseException as error:  # even KeyboardInterrupt: exit 1 would let the call through
        outcome = _blocked(harness, f"{type(error).__name__}: {error}")
    answering.acquire()  # from here on the watchdog stays quiet
    timer.cancel()
    try:
        out, err = stdout or sys.stdout, stderr or sys.stderr
        out.write(outcome.stdout)
        out.flush()
        err.write(outcome.stderr)
        return outcome.exit_code
    except BaseException as error:  # the answer did not get out: block, with a reason if possible
        try:
            (stderr or sys.stderr).write(_blocked(harness, f"{type(error).__name__}: {error}").stderr)
        except BaseException:
            pass
        return 2


def _watchdog(harness: Harness, seconds: float, answering: threading.Lock) -> threading.Timer:
    """After `seconds`, unless the answer is being written, answer the
    blocking way and end the process: every client lets a call through
    when its hook times out (Claude Code 2.1.x, Codex 0.171, Copilot 1.0.102)."""
    def fire() -> None:
        if not answering.acquire(blocking=False):
            return
        outcome = _blocked(harness, f"no decision within {seconds:g} s")
        try:
            os.write(1, outcome.stdout.encode())
            os.write(2, outcome.stderr.encode())
        finally:
            os._exit(outcome.exit_code)

    timer = threading.Timer(seconds, fire)
    timer.daemon = True
    timer.start()
    return timer
