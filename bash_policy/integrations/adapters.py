"""`bash-policy hook HARNESS`: the plan-mode gate as a harness's tool hook.

Claude Code (PreToolUse) and Gemini CLI (BeforeTool) both run a command
hook with the tool call as JSON on stdin and read a decision from stdout;
both treat exit code 2 as "block, with stderr as the reason", which is
what malformed input gets, so a broken event never lets a call through.
Contracts: https://code.claude.com/docs/en/hooks (PreToolUse decision
control) and https://geminicli.com/docs/hooks/reference (BeforeTool).
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from dataclasses import dataclass, field
from typing import Any

from .gate import ALLOW, DENY, PLANNING, PlanGate

USAGE = """\
usage: bash-policy hook (claude-code | gemini) [options] < EVENT.json
       bash-policy hook (claude-code | gemini) --print-config [options]

Reads one tool-call event on stdin and answers in the harness's hook format.
In plan mode, shell commands the policy denies are denied with its message,
and file writes outside the plan files are denied.

Options:
  --always           enforce plan mode whatever the event's permission_mode
                     (Gemini CLI's events carry no mode, so it always applies)
  --allow-readonly   answer "allow" for commands the policy allows (no prompt);
                     otherwise give no opinion and let the harness decide
  --plan-file GLOB   a file the plan may be written to (repeatable; replaces
                     the default: ~/.claude/plans/*.md for Claude Code,
                     .plans/*.md for Gemini CLI)
  --way-out TEXT     how the user leaves plan mode, named in every denial
  --config FILE      a bash-policy.toml (default: discovered in the event's cwd)
  --print-config     print the settings.json snippet that installs this hook
"""


class HookError(Exception):
    """The event or the options are unusable: block and say why."""


@dataclass
class Options:
    always: bool = False
    allow_readonly: bool = False
    plan_files: list[str] = field(default_factory=list)
    way_out: str | None = None
    config: str | None = None
    print_config: bool = False


@dataclass(frozen=True)
class Harness:
    name: str
    event: str  # hook_event_name it answers
    shell_tools: frozenset[str]
    edit_tools: dict[str, str]  # tool -> tool_input key of the path
    plan_files: tuple[str, ...]
    way_out: str
    has_mode: bool  # whether events say if plan mode is on


CLAUDE_CODE = Harness(
    "claude-code", "PreToolUse", frozenset({"Bash"}),
    {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path",
     "NotebookEdit": "notebook_path"},
    ("~/.claude/plans/*.md",),
    "approve the plan via ExitPlanMode, or press Shift+Tab to switch out of plan mode",
    has_mode=True,
)
GEMINI = Harness(
    "gemini", "BeforeTool", frozenset({"run_shell_command"}),
    {"write_file": "file_path", "replace": "file_path"},
    (".plans/*.md",),
    "remove or disable the bash-policy BeforeTool hook in .gemini/settings.json",
    has_mode=False,
)
HARNESSES = {h.name: h for h in (CLAUDE_CODE, GEMINI)}


@dataclass(frozen=True)
class Outcome:
    exit_code: int
    stdout: str = ""
    stderr: str = ""


def parse_options(argv: list[str]) -> Options:
    opts = Options()
    args = iter(argv)
    for arg in args:
        if arg in ("--always", "--allow-readonly", "--print-config"):
            setattr(opts, arg[2:].replace("-", "_"), True)
        elif arg in ("--plan-file", "--way-out", "--config"):
            value = next(args, None)
            if value is None:
                raise HookError(f"{arg} needs a value")
            if arg == "--plan-file":
                opts.plan_files.append(value)
            else:
                setattr(opts, arg[2:].replace("-", "_"), value)
        else:
            raise HookError(f"unknown option {arg}")
    return opts


def handle(harness: Harness, raw: str, opts: Options) -> Outcome:
    """Answer one event.  Never raises: problems become a blocking exit 2."""
    try:
        return _decide(harness, _parse_event(harness, raw), opts)
    except HookError as error:
        return Outcome(2, "", f"bash-policy hook {harness.name}: {error}; the tool call is blocked\n")


def _parse_event(harness: Harness, raw: str) -> dict[str, Any]:
    try:
        event = json.loads(raw)
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
    if not isinstance(event.get("cwd", ""), str):
        raise HookError("the event's cwd is not a string")
    return event


def _subject(event: dict, key: str) -> str:
    value = event["tool_input"].get(key)
    if not isinstance(value, str):
        raise HookError(f"{event['tool_name']}: tool_input.{key} is not a string")
    return value


def _decide(harness: Harness, event: dict, opts: Options) -> Outcome:
    tool = event["tool_name"]
    in_plan_mode = opts.always or not harness.has_mode or event.get("permission_mode") == "plan"
    if not in_plan_mode or (tool not in harness.shell_tools and tool not in harness.edit_tools):
        return _no_opinion(harness)
    cwd = event.get("cwd") or os.getcwd()
    gate = PlanGate(
        plan_files=tuple(opts.plan_files or harness.plan_files),
        way_out=opts.way_out or harness.way_out,
        root=cwd,
        policy=_policy(opts, cwd),
        state=PLANNING,
    )
    if tool in harness.shell_tools:
        directory = event["tool_input"].get("directory") or event["tool_input"].get("dir_path")
        where = os.path.join(cwd, directory) if isinstance(directory, str) else cwd
        decision = gate.decide("shell", _subject(event, "command"), cwd=where)
        if decision.action == ALLOW and opts.allow_readonly:
            return _answer(harness, ALLOW, "read-only command (bash-policy)")
    else:
        decision = gate.decide("edit", _subject(event, harness.edit_tools[tool]), cwd=cwd)
    if decision.action == DENY:
        return _answer(harness, DENY, decision.reason)
    return _no_opinion(harness)


def _policy(opts: Options, cwd: str):
    from ..judge.policy import ConfigError, Policy

    try:
        if opts.config:
            return Policy.from_file(opts.config)
        return Policy.discover(cwd) if os.path.isdir(cwd) else Policy.default()
    except ConfigError as error:
        raise HookError(str(error)) from None


def _no_opinion(harness: Harness) -> Outcome:
    """Leave the call to the harness's own permission flow.  Claude Code
    reads exit 0 with no output so; Gemini CLI wants JSON, so `{}`."""
    return Outcome(0, "{}\n" if harness is GEMINI else "")


def _answer(harness: Harness, action: str, reason: str) -> Outcome:
    if harness is CLAUDE_CODE:
        body = {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                       "permissionDecision": action,
                                       "permissionDecisionReason": reason}}
    else:
        body = {"decision": action, "reason": reason}
    return Outcome(0, json.dumps(body, ensure_ascii=False) + "\n")


def settings_snippet(harness: Harness, argv: list[str]) -> str:
    """The settings.json fragment that installs the hook with these options."""
    passed = [a for a in argv if a != "--print-config"]
    command = shlex.join(["bash-policy", "hook", harness.name, *passed])
    matcher = "|".join(sorted(harness.shell_tools) + sorted(harness.edit_tools))
    hook: dict[str, Any] = {"type": "command", "command": command}
    if harness is GEMINI:
        hook = {"name": "bash-policy", **hook, "timeout": 10000}
    entry = {harness.event: [{"matcher": matcher, "hooks": [hook]}]}
    return json.dumps({"hooks": entry}, indent=2)


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, end="")
        return 0 if argv else 2
    harness = HARNESSES.get(argv[0])
    try:
        if harness is None:
            raise HookError(f"unknown harness {argv[0]!r} (known: {', '.join(HARNESSES)})")
        opts = parse_options(argv[1:])
    except HookError as error:
        print(f"bash-policy hook: {error}\n\n{USAGE}", end="", file=sys.stderr)
        return 2
    if opts.print_config:
        print(settings_snippet(harness, argv[1:]))
        return 0
    raw = sys.stdin.buffer.read().decode("utf-8", "replace")
    outcome = handle(harness, raw, opts)
    sys.stdout.write(outcome.stdout)
    sys.stderr.write(outcome.stderr)
    return outcome.exit_code
