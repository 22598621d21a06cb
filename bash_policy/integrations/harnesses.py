"""What bash-policy knows about each client whose hooks it answers, as data.

A `Harness` says which event it answers, what its tools are called and
which input names their subject, where a shell call's directory is, whether
events say that plan mode is on, how a decision and "no opinion" are
written, what the settings snippet holds, which files a plan may be written
to and how the user leaves plan mode.  The hook adapter and the gate's tool
table both read these records; nothing branches on which client it is.

Facts checked against the clients' hook references and by running them
(tests/e2e): Claude Code 2.1.197 and 2.1.332, Gemini CLI 0.61.0, Qwen Code
0.24.4 (its hook runner and scheduler read in the 0.24.4 package).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

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
    # The snippet's shell text after `||`, for a hook that cannot start or dies.
    fallback: str = "exit 2"

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


def _gemini_plan_files(event: Mapping[str, Any], env: Mapping[str, str]) -> tuple[str, ...]:
    """Gemini CLI's plans directory for this session, which it passes to
    hooks as $GEMINI_PLANS_DIR (its own plan mode writes plans there)."""
    plans = env.get("GEMINI_PLANS_DIR", "")
    return (plans.rstrip("/") + "/*.md",) if os.path.isabs(plans) and "\0" not in plans else ()


def _gemini_way_out(env: Mapping[str, str], own_plan_mode: bool) -> str:
    return ("the bash-policy hook keeps every session read-only while it is installed; the user "
            "can run /hooks disable bash-policy, or remove it from .gemini/settings.json")


def _pretooluse_answer(action: str, reason: str) -> dict[str, Any]:
    """Claude Code's PreToolUse decision, which Qwen Code reads as well."""
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": action,
                                   "permissionDecisionReason": reason}}


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
    answer=_pretooluse_answer,
    no_opinion="",
    hook_fields={},
    plan_files=_claude_plan_file,
    way_out=_claude_way_out,
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
)

def _qwen_plan_file(event: Mapping[str, Any], env: Mapping[str, str]) -> tuple[str, ...]:
    """The plan file Qwen Code keeps for this session: <QWEN_HOME or
    ~/.qwen>/plans/<session_id>.md (its exit_plan_mode saves the plan there;
    a configured plansDirectory is not in the event, --plan-file names it).
    A session id that is not a plain name gives none."""
    session = event.get("session_id")
    home = env.get("QWEN_HOME") or (os.path.join(env["HOME"], ".qwen") if env.get("HOME") else "")
    if not isinstance(session, str) or not re.fullmatch(r"[A-Za-z0-9_-]+", session):
        return ()
    return (os.path.join(home, "plans", f"{session}.md"),) if os.path.isabs(home) and "\0" not in home else ()


def _qwen_way_out(env: Mapping[str, str], own_plan_mode: bool) -> str:
    if not own_plan_mode:
        return ("the bash-policy hook enforces plan mode in every session (--always); "
                "the user can remove it from the Qwen Code settings")
    return ("approve the plan through exit_plan_mode, or switch the approval mode with Shift+Tab or "
            "/approval-mode default; a `qwen -p` run: run again without --approval-mode plan")


# Qwen Code's PreToolUse hook runs after its own plan-mode shell classifier
# and approval, so it gates what they let through; exit 2 with stderr text
# blocks, and 0.24.4 reads no updatedInput from PreToolUse (no rewriting).
QWEN = Harness(
    name="qwen",
    client="Qwen Code",
    event="PreToolUse",
    tools={
        **{tool: ("shell", "command") for tool in ("run_shell_command", "monitor")},
        **{tool: ("edit", "file_path") for tool in ("write_file", "edit")},
        "notebook_edit": ("edit", "notebook_path"),
        "read_file": ("read", "file_path"),
        **{tool: ("search", None) for tool in ("glob", "grep_search", "list_directory")},
        "exit_plan_mode": ("plan_exit", None),
        "enter_plan_mode": ("plan_enter", None),
    },
    mode=("permission_mode", "plan"),
    cwd_keys=("directory",),
    answer=_pretooluse_answer,
    no_opinion="",
    hook_fields={"timeout": 30},  # seconds; a hook that times out lets the call run
    plan_files=_qwen_plan_file,
    way_out=_qwen_way_out,
    # Exit 2 blocks only with text on stderr (with none the call runs, 0.24.4
    # tried); a shell need not print anything for a hook killed by a signal.
    fallback="{ echo 'bash-policy hook qwen did not run; the tool call is blocked' >&2; exit 2; }",
)

HARNESSES: dict[str, Harness] = {h.name: h for h in (CLAUDE_CODE, GEMINI, QWEN)}
