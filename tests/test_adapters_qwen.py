"""`bash-policy hook qwen`: Qwen Code's PreToolUse events, which follow
Claude Code's contract (the same answer, `permission_mode: "plan"`) with
Gemini-style tool names.  The fixtures are events Qwen Code 0.24.4 sent to
a hook (tests/e2e runs the real client), with the paths made generic."""

import json
import subprocess
from pathlib import Path

import pytest

from bash_policy.integrations.adapters import DECISION_NOTE, Options, handle
from bash_policy.integrations.harnesses import CLAUDE_CODE, QWEN

FIXTURES = Path(__file__).parent / "fixtures" / "qwen"
HOME = {"HOME": "/home/user"}
FIELDS = {"session_id", "transcript_path", "cwd", "hook_event_name", "timestamp", "permission_mode",
          "tool_name", "tool_input", "tool_use_id"}


def fixture(name: str, **tool_input) -> str:
    """The recorded event, its project directory made one that exists here
    (the hooks refuse a cwd that does not)."""
    text = (FIXTURES / f"{name}.json").read_text().replace("/home/user/project", str(FIXTURES))
    event = json.loads(text)
    event["tool_input"].update(tool_input)
    return json.dumps(event)


def qwen(raw: str, opts: Options | None = None, env=None):
    """(action, reason) of the answer, or None for no opinion."""
    outcome = handle(QWEN, raw, opts or Options(), HOME if env is None else env)
    assert outcome.exit_code == 0 and outcome.stderr == "", outcome
    if not outcome.stdout:
        return None
    out = json.loads(outcome.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "PreToolUse"
    return out["permissionDecision"], out["permissionDecisionReason"]


def test_fixtures_carry_the_fields_qwen_code_sends():
    for path in FIXTURES.glob("*.json"):
        assert FIELDS <= set(json.loads(path.read_text())), path.name


@pytest.mark.parametrize("name,expected", [
    ("bash_readonly", None),
    ("bash_denied", "deny"),
    ("monitor_denied", "deny"),  # monitor runs a shell command too
    ("bash_denied_default_mode", None),
    ("bash_denied_yolo_mode", None),
    ("write_source", "deny"),
    ("edit_source", "deny"),
    ("write_plan", None),  # this session's plan file
    ("read_source", None),
])
def test_plan_mode_comes_from_the_event(name, expected):
    decision = qwen(fixture(name))
    assert (decision and decision[0]) == expected


def test_the_answer_is_claude_codes_with_the_way_out_of_qwen_code():
    action, reason = qwen(fixture("bash_denied"))
    assert action == "deny" and reason.startswith(DECISION_NOTE)
    assert "BP400" in reason and "fix:" in reason
    assert "/approval-mode default" in reason and "ExitPlanMode" not in reason
    assert QWEN.answer("deny", "x") == CLAUDE_CODE.answer("deny", "x")


def test_always_enforces_in_every_mode():
    action, reason = qwen(fixture("bash_denied_yolo_mode"), Options(always=True))
    assert action == "deny" and "--always" in reason


def test_only_this_sessions_plan_file_is_writable():
    other = "/home/user/.qwen/plans/99999999-2222-4333-8444-555555555555.md"
    assert qwen(fixture("write_plan", file_path=other))[0] == "deny"
    assert qwen(fixture("write_plan"), env={"QWEN_HOME": "/srv/qwen"})[0] == "deny"
    moved = "/srv/qwen/plans/11111111-2222-4333-8444-555555555555.md"
    assert qwen(fixture("write_plan", file_path=moved), env={"QWEN_HOME": "/srv/qwen"}) is None


@pytest.mark.parametrize("session", ["../../etc/x", "", 7, "a/b"])
def test_a_session_id_that_is_not_a_plain_name_gives_no_plan_file(session):
    raw = json.loads(fixture("write_plan"))
    raw["session_id"] = session
    assert qwen(json.dumps(raw))[0] == "deny"


def test_the_shell_directory_is_read(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path / "sub")], check=True)
    subprocess.run(["git", "-C", str(tmp_path / "sub"), "config", "core.fsmonitor", "touch canary"], check=True)
    raw = json.loads(fixture("bash_readonly", command="git diff", directory="sub"))
    raw["cwd"] = str(tmp_path)
    action, reason = qwen(json.dumps(raw))
    assert action == "deny" and "BP601" in reason


def test_a_broken_event_blocks_with_exit_2():
    outcome = handle(QWEN, fixture("bash_readonly", command=["ls"]), Options(), HOME)
    assert outcome.exit_code == 2 and "blocked" in outcome.stderr


def test_the_snippet_blocks_with_a_reason_when_the_hook_dies(tmp_path):
    """Qwen Code lets a call run on exit 2 with an empty stderr, and a shell
    need not print anything for a hook killed by a signal: the fallback says
    why itself."""
    from bash_policy.integrations.adapters import settings_snippet

    dying = tmp_path / "bash-policy"
    dying.write_text("#!/bin/sh\nkill -9 $$\n")
    dying.chmod(0o755)
    snippet = json.loads(settings_snippet(QWEN, Options(), str(dying)))
    command = snippet["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    proc = subprocess.run(["sh", "-c", command], input=fixture("bash_denied"), capture_output=True, text=True)
    assert proc.returncode == 2 and "the tool call is blocked" in proc.stderr, proc


@pytest.mark.parametrize("mode", ["planning", None, 3])
def test_a_mode_it_cannot_classify_is_plan_mode(mode):
    raw = json.loads(fixture("bash_denied"))
    raw["permission_mode"] = mode
    assert qwen(json.dumps(raw))[0] == "deny"
