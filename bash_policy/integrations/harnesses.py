"""What bash-policy knows about each client whose hooks it answers, as data.

A `Harness` says which event it answers, what its tools are called and
which input names their subject, where a shell call's directory is, whether
events say that plan mode is on, how a decision, "no opinion", a rewritten
command and a failure are written, what the settings snippet holds and
where the client reads it, which files a plan may be written to and how the
user leaves plan mode.  The hook adapter, the installer and the gate's tool
table read these records; nothing branches on which client it is.  A
harness that rewrites also says when it must not (`rewrite_refused`), and
`profile` names how the client runs a shell command (profiles/NAME.toml),
for calls that run in the client's own shell.

Facts checked against the clients' hook references and by running them
(tests/e2e): Claude Code 2.1.197 and 2.1.332, Gemini CLI 0.61.0, Codex CLI
0.171.0, GitHub Copilot CLI 1.0.102, Qwen Code 0.24.4 (its hook runner and
scheduler also read in the 0.24.4 package).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path

from ..records import dataclass, field
from . import client_rules
from .profiles import client_version, load_profile

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
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
    settings_files: Callable[[Mapping[str, str], str], tuple[Path, ...]]  # (env, cwd): files it reads
    install_file: Callable[[Mapping[str, str]], Path]  # (env): where --install writes
    sample: Callable[[str, str], dict[str, Any]]  # (command, cwd): a shell event as the client sends it
    # Mode values that are known not to be plan mode; any other value, or none, is treated as plan.
    known_modes: tuple[str, ...] = ()
    keys: tuple[str | None, str, str] = ("hook_event_name", "tool_name", "tool_input")
    answers_allow: bool = True  # False: a bare allow is not an answer the client takes
    # (tool input, command) -> the answer that runs `command` instead; None: the client cannot.
    rewrite: Callable[[Mapping[str, Any], str], dict[str, Any]] | None = None
    rewrite_needs_allow_readonly: bool = False  # only rewrite when the answer is allow anyway
    failure_answers: bool = False  # a failure is a JSON deny, exit 0 (else exit 2 with stderr)
    deadline: float = 45.0  # seconds: past it the hook blocks by itself, before the client's timeout
    command_form: str = "{command} || exit 2"  # the snippet's command around the hook's
    shell: tuple[str, ...] = ("/bin/sh", "-c")  # how the client runs the command (for --check)
    layout: str = "groups"  # the snippet: matcher groups under hooks.EVENT, or "flat" hook entries
    # (event) -> the session's own directory, when the event's cwd may be elsewhere.
    session_dir: Callable[[Mapping[str, Any]], str | None] | None = None
    # The variable naming the session's directory for hooks (the event's cwd follows `cd`).
    project_variable: str | None = None
    # (event, env, plan mode is the client's own) -> why this call must not be rewritten, or None.
    rewrite_refused: Callable[[Mapping[str, Any], Mapping[str, str], bool], str | None] = \
        lambda event, env, own: None
    profile: str | None = None  # its execution profile, for calls it does not rewrite: profiles/NAME.toml
    extra: Mapping[str, Any] = field(default_factory=dict)  # top-level snippet keys

    @property
    def gated(self) -> tuple[str, ...]:
        """The tools the hook decides on: shell commands, file writes, patches,
        and the shells it cannot read."""
        return tuple(sorted(t for t, (perm, _) in self.tools.items()
                            if perm in ("shell", "edit", "patch", "foreign_shell")))


def _literal(path: str) -> bool:
    """A path the gate's wildcard patterns match as itself: a plan file's
    name comes from the event, its transcript or the environment, and a `*`
    there would let one session write every session's plan, or any file
    (red team RT-F)."""
    return os.path.isabs(path) and not any(c in path for c in "*?\0")


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
    return (found,) if found and _literal(found) else ()


def _claude_way_out(env: Mapping[str, str], own_plan_mode: bool) -> str:
    if not own_plan_mode:
        return ("the bash-policy hook enforces plan mode in every session (--always); "
                "the user can remove it from the Claude Code settings")
    if env.get("CLAUDE_CODE_ENTRYPOINT", "").startswith("sdk"):
        # `claude -p` and the Agent SDK offer no ExitPlanMode tool and no Shift+Tab.
        return ("this non-interactive session runs in plan mode; finish the plan in your reply, "
                "and the user can run again without --permission-mode plan")
    return "approve the plan via ExitPlanMode, or press Shift+Tab to switch out of plan mode"


def _home(env: Mapping[str, str]) -> Path:
    return Path(env.get("HOME") or os.path.expanduser("~"))


def _claude_settings(env: Mapping[str, str], cwd: str) -> tuple[Path, ...]:
    """User settings, then the project's shared and local ones
    (https://code.claude.com/docs/en/settings, "Settings files")."""
    user = Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else _home(env) / ".claude"
    project = Path(cwd) / ".claude"
    return (user / "settings.json", project / "settings.json", project / "settings.local.json")


def _claude_sample(command: str, cwd: str) -> dict[str, Any]:
    return {"session_id": "bash-policy-check", "transcript_path": "", "cwd": cwd,
            "permission_mode": "plan", "hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": {"command": command, "description": "bash-policy hook --check"},
            "tool_use_id": "bash-policy-check"}


def _claude_rewrite(tool_input: Mapping[str, Any], command: str) -> dict[str, Any]:
    """`allow` with updatedInput: updatedInput alone sends the rewritten text
    through Claude Code's own permission check, which knows nothing of
    bash-policy and asks for every call ("This command requires approval"
    in -p), and `ask` prompts for every call (2.1.197, 2.1.332; tests/e2e)."""
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow",
                                   "permissionDecisionReason": "read-only command (bash-policy), run "
                                                               "under bash-policy run",
                                   "updatedInput": {**tool_input, "command": command}}}


def _claude_rewrite_refused(event: Mapping[str, Any], env: Mapping[str, str],
                            own_plan_mode: bool) -> str | None:
    """From some version on, Claude Code's own plan mode holds every call it
    cannot see to be read-only, a hook's allow included, and hands it to its
    server-side classifier or asks the user: a rewritten command would never
    just run (2.1.332; 2.1.197 runs it).  There the command is not rewritten
    and runs in Claude Code's shell, judged by its profile.  Nor is a session
    whose own rules the rewrite would hide (client_rules.py)."""
    if own_plan_mode:
        profile = load_profile("claude-code")
        version = client_version(profile, env)
        newest = profile.rewrite_in_plan_mode_up_to
        if version is None or newest is None or version > newest:
            shown = ".".join(map(str, version)) if version else "of an unknown version"
            return (f"Claude Code {shown} holds, in its own plan mode, every command it cannot "
                    "see to be read-only")
    return client_rules.claude_code(event, env)


def _gemini_rewrite(tool_input: Mapping[str, Any], command: str) -> dict[str, Any]:
    """BeforeTool's hookSpecificOutput.tool_input replaces the call's input
    before Gemini CLI's policy check, which then judges the new command
    (0.61.0: evaluateBeforeToolHook, then checkPolicy)."""
    return {"hookSpecificOutput": {"hookEventName": "BeforeTool",
                                   "tool_input": {**tool_input, "command": command}}}


def _gemini_plan_files(event: Mapping[str, Any], env: Mapping[str, str]) -> tuple[str, ...]:
    """Gemini CLI's plans directory for this session, which it passes to
    hooks as $GEMINI_PLANS_DIR (its own plan mode writes plans there)."""
    plans = env.get("GEMINI_PLANS_DIR", "")
    return (plans.rstrip("/") + "/*.md",) if _literal(plans) else ()


def _gemini_way_out(env: Mapping[str, str], own_plan_mode: bool) -> str:
    return ("the bash-policy hook keeps every session read-only while it is installed; the user "
            "can run /hooks disable bash-policy, or remove it from .gemini/settings.json")


def _gemini_settings(env: Mapping[str, str], cwd: str) -> tuple[Path, ...]:
    return (_home(env) / ".gemini" / "settings.json", Path(cwd) / ".gemini" / "settings.json")


def _gemini_sample(command: str, cwd: str) -> dict[str, Any]:
    return {"session_id": "bash-policy-check", "transcript_path": "", "cwd": cwd,
            "hook_event_name": "BeforeTool", "timestamp": "1970-01-01T00:00:00.000Z",
            "tool_name": "run_shell_command", "tool_input": {"command": command}}


def _codex_home(env: Mapping[str, str]) -> Path:
    return Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else _home(env) / ".codex"


def _codex_settings(env: Mapping[str, str], cwd: str) -> tuple[Path, ...]:
    """The user layer's hooks.json and config.toml [hooks], then a project's
    `.codex/` layer, which Codex loads only in a trusted project."""
    home, project = _codex_home(env), Path(cwd) / ".codex"
    return (home / "hooks.json", home / "config.toml", project / "hooks.json", project / "config.toml")


def _codex_sample(command: str, cwd: str) -> dict[str, Any]:
    return {"session_id": "bash-policy-check", "turn_id": "bash-policy-check", "transcript_path": None,
            "cwd": cwd, "hook_event_name": "PreToolUse", "model": "bash-policy-check",
            "permission_mode": "default", "tool_name": "Bash", "tool_input": {"command": command},
            "tool_use_id": "bash-policy-check"}


def _codex_session_dir(event: Mapping[str, Any]) -> str | None:
    """The session's directory, from the first record of its transcript
    (`session_meta`): the event's cwd is the command's `workdir`, which the
    model chooses."""
    path = event.get("transcript_path")
    if not isinstance(path, str) or not os.path.isabs(path) or "\0" in path:
        return None
    try:
        with open(path, encoding="utf-8", errors="replace") as transcript:
            record = json.loads(transcript.readline())
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("type") != "session_meta" \
            or not isinstance(record.get("payload"), dict):
        return None
    cwd = record["payload"].get("cwd")
    return cwd if isinstance(cwd, str) and os.path.isabs(cwd) and "\0" not in cwd else None


def _codex_way_out(env: Mapping[str, str], own_plan_mode: bool) -> str:
    # Codex's events never say which collaboration mode is on (Plan included).
    return ("the bash-policy hook keeps every Codex session read-only while it is installed; the "
            "user can turn it off in /hooks, or remove it from ~/.codex/hooks.json")


def _codex_rewrite(tool_input: Mapping[str, Any], command: str) -> dict[str, Any]:
    """Codex takes a new input only with `allow`; the rewritten command still
    goes through its sandbox, approvals and rules (checked with 0.171.0)."""
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow",
                                   "updatedInput": {**tool_input, "command": command}}}


def _copilot_home(env: Mapping[str, str]) -> Path:
    return Path(env["COPILOT_HOME"]) if env.get("COPILOT_HOME") else _home(env) / ".copilot"


def _copilot_settings(env: Mapping[str, str], cwd: str) -> tuple[Path, ...]:
    """User hook files and settings, then the repository's `.github/hooks`,
    which Copilot CLI loads only in a folder the user trusted."""
    home = _copilot_home(env)
    return (*sorted((home / "hooks").glob("*.json")), home / "settings.json",
            *sorted((Path(cwd) / ".github" / "hooks").glob("*.json")))


def _copilot_plan_file(event: Mapping[str, Any], env: Mapping[str, str]) -> tuple[str, ...]:
    """Copilot CLI's plan mode writes the plan to
    `~/.copilot/session-state/SESSION/plan.md`, SESSION being the event's
    `sessionId` (1.0.102 names it in the plan-mode prompt)."""
    session = event.get("sessionId")
    if not isinstance(session, str) or not re.fullmatch(r"[A-Za-z0-9_-]+", session):
        return ()
    path = str(_copilot_home(env) / "session-state" / session / "plan.md")
    return (path,) if _literal(path) else ()


def _copilot_way_out(env: Mapping[str, str], own_plan_mode: bool) -> str:
    return ("the bash-policy hook keeps every Copilot CLI session read-only while it is installed; "
            "the user can remove ~/.copilot/hooks/bash-policy.json")


def _copilot_sample(command: str, cwd: str) -> dict[str, Any]:
    return {"sessionId": "bash-policy-check", "timestamp": 0, "cwd": cwd, "toolName": "bash",
            "toolArgs": {"command": command, "description": "bash-policy hook --check"}}


def _copilot_answer(action: str, reason: str) -> dict[str, Any]:
    return {"permissionDecision": action, "permissionDecisionReason": reason}


def _copilot_rewrite(tool_args: Mapping[str, Any], command: str) -> dict[str, Any]:
    return {**_copilot_answer("allow", "read-only command (bash-policy), run under bash-policy run"),
            "modifiedArgs": {**tool_args, "command": command}}


def _pretooluse_answer(action: str, reason: str) -> dict[str, Any]:
    """Claude Code's PreToolUse decision, which Codex CLI and Qwen Code read too."""
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": action,
                                   "permissionDecisionReason": reason}}


def _qwen_home(env: Mapping[str, str]) -> Path:
    return Path(env["QWEN_HOME"]) if env.get("QWEN_HOME") else _home(env) / ".qwen"


def _qwen_settings(env: Mapping[str, str], cwd: str) -> tuple[Path, ...]:
    """User settings, then a trusted project's."""
    return (_qwen_home(env) / "settings.json", Path(cwd) / ".qwen" / "settings.json")


def _qwen_sample(command: str, cwd: str) -> dict[str, Any]:
    return {"session_id": "bash-policy-check", "transcript_path": "", "cwd": cwd,
            "hook_event_name": "PreToolUse", "timestamp": "1970-01-01T00:00:00.000Z",
            "permission_mode": "plan", "tool_name": "run_shell_command",
            "tool_input": {"command": command}, "tool_use_id": "bash-policy-check"}


def _qwen_plan_file(event: Mapping[str, Any], env: Mapping[str, str]) -> tuple[str, ...]:
    """The plan file Qwen Code keeps for this session: <QWEN_HOME or
    ~/.qwen>/plans/<session_id>.md (its exit_plan_mode saves the plan there;
    a configured plansDirectory is not in the event, --plan-file names it).
    A session id that is not a plain name gives none."""
    session = event.get("session_id")
    if not isinstance(session, str) or not re.fullmatch(r"[A-Za-z0-9_-]+", session):
        return ()
    if not env.get("QWEN_HOME") and not env.get("HOME"):
        return ()
    home = str(_qwen_home(env))
    return (os.path.join(home, "plans", f"{session}.md"),) if _literal(home) else ()


def _qwen_way_out(env: Mapping[str, str], own_plan_mode: bool) -> str:
    if not own_plan_mode:
        return ("the bash-policy hook enforces plan mode in every session (--always); "
                "the user can remove it from the Qwen Code settings")
    return ("approve the plan through exit_plan_mode, or switch the approval mode with Shift+Tab or "
            "/approval-mode default; a `qwen -p` run: run again without --approval-mode plan")


CLAUDE_CODE = Harness(
    name="claude-code",
    client="Claude Code",
    event="PreToolUse",
    tools={
        "Bash": ("shell", "command"),
        # 2.1.332 has a PowerShell tool (CLAUDE_CODE_USE_POWERSHELL_TOOL, also on Linux).
        "PowerShell": ("foreign_shell", None),
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
    # Seconds (a 2 s timeout kills a hook after 2 s in 2.1.197 and 2.1.332); a hook
    # that times out lets the call through, so the hook blocks by itself at `deadline`.
    hook_fields={"timeout": 60},
    plan_files=_claude_plan_file,
    way_out=_claude_way_out,
    settings_files=_claude_settings,
    install_file=lambda env: _claude_settings(env, ".")[0],
    sample=_claude_sample,
    known_modes=("default", "acceptEdits", "auto", "bypassPermissions", "dontAsk"),
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
    hook_fields={"name": "bash-policy", "timeout": 10000},  # milliseconds
    plan_files=_gemini_plan_files,
    way_out=_gemini_way_out,
    settings_files=_gemini_settings,
    install_file=lambda env: _gemini_settings(env, ".")[0],
    sample=_gemini_sample,
    deadline=8.0,
    rewrite=_gemini_rewrite,
    rewrite_refused=lambda event, env, own: client_rules.gemini(event, env),
    # 0.61.0 blocks on exit 2 only with text to read: a hook that dies without a word
    # (a signal) leaves no output, and the call runs (hookRunner, red team RT-H).
    command_form=("{command} || {{ echo \"bash-policy hook gemini failed (status $?); "
                  "the tool call is blocked\" >&2; exit 2; }}"),
    profile="gemini",
    project_variable="GEMINI_PROJECT_DIR",
)

CODEX = Harness(
    name="codex",
    client="Codex CLI",
    event="PreToolUse",
    tools={"Bash": ("shell", "command"), "apply_patch": ("patch", "command")},
    mode=None,  # permission_mode is only "default" or "bypassPermissions", whatever the mode
    cwd_keys=(),  # exec_command's workdir arrives as the event's cwd
    answer=_pretooluse_answer,
    no_opinion="",
    hook_fields={"timeout": 60},  # seconds; a hook past it fails and the call runs
    plan_files=lambda event, env: (),
    way_out=_codex_way_out,
    settings_files=_codex_settings,
    install_file=lambda env: _codex_home(env) / "hooks.json",
    sample=_codex_sample,
    session_dir=_codex_session_dir,
    answers_allow=False,  # a bare allow, or ask, is a failed hook and the call runs
    rewrite=_codex_rewrite,
    # Exit 2 blocks only with a reason on stderr; without one (a hook killed by a
    # signal, a shell that found nothing to say) the call would run.
    command_form=("{command} || {{ echo \"bash-policy hook codex failed (status $?); "
                  "the tool call is blocked\" >&2; exit 2; }}"),
    shell=("bash", "-c"),  # 0.171.0 runs hook commands with bash
)

COPILOT = Harness(
    name="copilot",
    client="GitHub Copilot CLI",
    event="preToolUse",
    tools={"bash": ("shell", "command"), "powershell": ("foreign_shell", None),  # its shell on Windows
           **{tool: ("edit", "path") for tool in ("create", "edit")},
           "view": ("read", "path"), **{tool: ("search", None) for tool in ("grep", "glob")},
           "task": ("task", "agent_type"),
           # Input for a shell a bash call left running: commands the check never sees.
           # 1.0.102 spawns commands without a terminal and says write_bash "is no longer
           # supported" (its changelog), yet still names the tool in its own permission code.
           **{tool: ("shell_input", None) for tool in ("write_bash", "write_powershell")}},
    mode=None,  # events carry no mode
    cwd_keys=(),
    answer=_copilot_answer,
    no_opinion="",
    hook_fields={"timeoutSec": 60},  # a hook past it is skipped and the call runs
    plan_files=_copilot_plan_file,
    way_out=_copilot_way_out,
    settings_files=_copilot_settings,
    install_file=lambda env: _copilot_home(env) / "hooks" / "bash-policy.json",
    sample=_copilot_sample,
    keys=(None, "toolName", "toolArgs"),
    # A rewritten command loses Copilot's own approval (its read-only commands are
    # approved without a prompt, its rules match the new text): only with allow.
    rewrite=_copilot_rewrite,
    rewrite_needs_allow_readonly=True,
    failure_answers=True,
    # Its hook reference says failures never block (1.0.102 blocks on a non-zero
    # exit, but not on output that is not JSON): the answer is captured whole
    # and a deny is printed in its place when the hook fails.
    command_form=("out=$({command}) && printf '%s' \"$out\" || printf '%s' "
                  "'{{\"permissionDecision\":\"deny\",\"permissionDecisionReason\":"
                  "\"bash-policy hook copilot did not answer; the tool call is blocked\"}}'"),
    shell=("bash", "-c"),
    layout="flat",
    extra={"version": 1},
)

# Qwen Code's PreToolUse runs after its own plan-mode shell classifier and
# approval, so it gates what they let through; 0.24.4 reads no updatedInput
# from PreToolUse (only from PermissionRequest), so nothing is rewritten.
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
    hook_fields={"timeout": 60},  # seconds; a hook past it, like any failure but exit 2, lets the call run
    plan_files=_qwen_plan_file,
    way_out=_qwen_way_out,
    settings_files=_qwen_settings,
    install_file=lambda env: _qwen_settings(env, ".")[0],
    sample=_qwen_sample,
    known_modes=("default", "auto-edit", "auto", "yolo"),  # its --approval-mode choices but plan
    # Exit 2 blocks only with text on stderr (with none the call runs: 0.24.4, tried);
    # a shell need not print anything for a hook killed by a signal.
    command_form=("{command} || {{ echo \"bash-policy hook qwen failed (status $?); "
                  "the tool call is blocked\" >&2; exit 2; }}"),
    shell=("bash", "-c"),  # 0.24.4 runs hook commands with bash on Linux
)

HARNESSES: dict[str, Harness] = {h.name: h for h in (CLAUDE_CODE, GEMINI, CODEX, COPILOT, QWEN)}
