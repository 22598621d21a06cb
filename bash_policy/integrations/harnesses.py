"""What bash-policy knows about each client whose hooks it answers, as data.

A `Harness` says which event it answers, what its tools are called and
which input names their subject, where a shell call's directory is, whether
events say that plan mode is on, how a decision and "no opinion" are
written, what the settings snippet holds, which files a plan may be written
to and how the user leaves plan mode.  The hook adapter and the gate's tool
table both read these records; nothing branches on which client it is.

A harness that can rewrite a call also says how (`rewrite`) and when it
must not (`rewrite_refused`); `profile` names how the client runs a shell
command (profiles/NAME.toml), for calls that run in the client's own shell.

Facts checked against the clients' hook references and by running them
(tests/e2e): Claude Code 2.1.197 and 2.1.332, Gemini CLI 0.61.0.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from . import client_rules
from .profiles import client_version, load_profile

# tool name -> (gate permission, the tool_input key naming its subject)
ToolTable = Mapping[str, tuple[str, "str | None"]]


@dataclass(frozen=True)
class Harness:
    name: str  # as in `bash-policy hook NAME`
    client: str  # the product, for messages
    event: str  # the hook_event_name it answers
    tools: ToolTable
    mode: tuple[str, str] | None  # (event key, value) meaning plan mode; None: events carry no mode
    cwd_keys: tuple[str, ...]  # tool_input keys naming the shell's directory, relative to cwd
    answer: Callable[[str, str], dict[str, Any]]  # (action, reason) -> the JSON answer
    no_opinion: str  # stdout that leaves the call to the client's own permission flow
    hook_fields: Mapping[str, Any]  # extra keys of the snippet's hook entry
    plan_files: Callable[[Mapping[str, Any], Mapping[str, str]], tuple[str, ...]]  # (event, env)
    way_out: Callable[[Mapping[str, str], bool], str]  # (env, plan mode is the client's own)
    # (tool_input, new command, reason) -> the answer that runs the new command instead
    rewrite: Callable[[Mapping[str, Any], str, str], dict[str, Any]] | None = None
    # (event, env, plan mode is the client's own) -> why this call must not be rewritten, or None
    rewrite_refused: Callable[[Mapping[str, Any], Mapping[str, str], bool], str | None] = \
        lambda event, env, own: None
    profile: str | None = None  # its execution profile: profiles/NAME.toml
    project_variable: str | None = None  # the variable naming the session's directory for hooks

    @property
    def gated(self) -> tuple[str, ...]:
        """The tools the hook decides on: shell commands and file writes."""
        return tuple(sorted(t for t, (perm, _) in self.tools.items() if perm in ("shell", "edit")))


def _claude_plan_file(event: Mapping[str, Any], env: Mapping[str, str]) -> tuple[str, ...]:
    """The plan file Claude Code gave this session.  Plan mode names it to
    the model in a `plan_mode` attachment that the session's transcript
    records (`planFilePath`); another session's plan has another name, so
    it stays unwritable.  Unknown (no transcript, no plan mode yet): none."""
    path = event.get("transcript_path")
    if not isinstance(path, str) or not path or "\0" in path:
        return ()
    found = None
    try:
        with open(path, encoding="utf-8", errors="replace") as transcript:
            for line in transcript:
                if '"planFilePath"' not in line:
                    continue
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                attachment = record.get("attachment") if isinstance(record, dict) else None
                if (record.get("type") == "attachment" and isinstance(attachment, dict)
                        and str(attachment.get("type", "")).startswith("plan_mode")
                        and isinstance(attachment.get("planFilePath"), str)):
                    found = attachment["planFilePath"]
    except OSError:
        return ()
    return (found,) if found and os.path.isabs(found) and "\0" not in found else ()


def _claude_way_out(env: Mapping[str, str], own_plan_mode: bool) -> str:
    if not own_plan_mode:
        return ("the bash-policy hook enforces plan mode in every session (--always); "
                "the user can remove it from the Claude Code settings")
    if env.get("CLAUDE_CODE_ENTRYPOINT", "").startswith("sdk"):
        # `claude -p` and the Agent SDK offer no ExitPlanMode tool and no Shift+Tab.
        return ("this non-interactive session runs in plan mode; finish the plan in your reply, "
                "and the user can run again without --permission-mode plan")
    return "approve the plan via ExitPlanMode, or press Shift+Tab to switch out of plan mode"


def _claude_rewrite(tool_input: Mapping[str, Any], command: str, reason: str) -> dict[str, Any]:
    """`allow` with updatedInput: updatedInput alone sends the rewritten text
    through Claude Code's own permission check, which knows nothing of
    bash-policy and asks for every call ("This command requires approval"
    in -p), and `ask` prompts for every call (tests/e2e)."""
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow",
                                   "permissionDecisionReason": reason,
                                   "updatedInput": {**tool_input, "command": command}}}


def _claude_rewrite_refused(event: Mapping[str, Any], env: Mapping[str, str],
                            own_plan_mode: bool) -> str | None:
    """From some version on, Claude Code's own plan mode holds every call it
    cannot see to be read-only, a hook's allow included, and hands it to its
    server-side classifier or asks the user: a rewritten command would never
    just run (2.1.332; 2.1.197 runs it).  There the command is not rewritten
    and runs in Claude Code's shell, judged by its profile."""
    if own_plan_mode:
        profile = load_profile("claude-code")
        version = client_version(profile, env)
        newest = profile.rewrite_in_plan_mode_up_to
        if version is None or newest is None or version > newest:
            shown = ".".join(map(str, version)) if version else "of an unknown version"
            return (f"Claude Code {shown} holds, in its own plan mode, every command it cannot "
                    "see to be read-only")
    return client_rules.claude_code(event, env)


def _gemini_rewrite(tool_input: Mapping[str, Any], command: str, reason: str) -> dict[str, Any]:
    """BeforeTool's hookSpecificOutput.tool_input replaces the call's input
    before Gemini CLI's policy check, which then judges the new command
    (0.61.0: evaluateBeforeToolHook, then checkPolicy)."""
    return {"hookSpecificOutput": {"hookEventName": "BeforeTool",
                                   "tool_input": {**tool_input, "command": command}}}


def _gemini_plan_files(event: Mapping[str, Any], env: Mapping[str, str]) -> tuple[str, ...]:
    """Gemini CLI's plans directory for this session, which it passes to
    hooks as $GEMINI_PLANS_DIR (its own plan mode writes plans there)."""
    plans = env.get("GEMINI_PLANS_DIR", "")
    return (plans.rstrip("/") + "/*.md",) if os.path.isabs(plans) and "\0" not in plans else ()


def _gemini_way_out(env: Mapping[str, str], own_plan_mode: bool) -> str:
    return ("the bash-policy hook keeps every session read-only while it is installed; the user "
            "can run /hooks disable bash-policy, or remove it from .gemini/settings.json")


CLAUDE_CODE = Harness(
    name="claude-code",
    client="Claude Code",
    event="PreToolUse",
    tools={
        "Bash": ("shell", "command"),
        **{tool: ("edit", "file_path") for tool in ("Write", "Edit", "MultiEdit")},
        "NotebookEdit": ("edit", "notebook_path"),
        "Read": ("read", "file_path"),
        **{tool: ("search", None) for tool in ("Grep", "Glob", "LS")},
        **{tool: ("task", "subagent_type") for tool in ("Task", "Agent")},
        "ExitPlanMode": ("plan_exit", None),
        "EnterPlanMode": ("plan_enter", None),
    },
    mode=("permission_mode", "plan"),
    cwd_keys=(),
    answer=lambda action, reason: {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": action,
        "permissionDecisionReason": reason}},
    no_opinion="",
    hook_fields={},
    plan_files=_claude_plan_file,
    way_out=_claude_way_out,
    rewrite=_claude_rewrite,
    rewrite_refused=_claude_rewrite_refused,
    profile="claude-code",
    project_variable="CLAUDE_PROJECT_DIR",
)

GEMINI = Harness(
    name="gemini",
    client="Gemini CLI",
    event="BeforeTool",
    tools={
        "run_shell_command": ("shell", "command"),
        **{tool: ("edit", "file_path") for tool in ("write_file", "replace")},
        "read_file": ("read", "file_path"),
        "read_many_files": ("read", None),
        **{tool: ("search", None) for tool in (
            "glob", "grep_search", "search_file_content", "list_directory")},
        "exit_plan_mode": ("plan_exit", None),
        "enter_plan_mode": ("plan_enter", None),
    },
    mode=None,
    # 0.61 calls the shell's directory `dir_path`; its docs say `directory`.
    cwd_keys=("dir_path", "directory"),
    answer=lambda action, reason: {"decision": action, "reason": reason},
    no_opinion="{}\n",  # stdout must be JSON
    hook_fields={"name": "bash-policy", "timeout": 10000},
    plan_files=_gemini_plan_files,
    way_out=_gemini_way_out,
    rewrite=_gemini_rewrite,
    rewrite_refused=lambda event, env, own: client_rules.gemini(event, env),
    profile="gemini",
    project_variable="GEMINI_PROJECT_DIR",
)

HARNESSES: dict[str, Harness] = {h.name: h for h in (CLAUDE_CODE, GEMINI)}
