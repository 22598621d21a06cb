import json
import subprocess
import sys
from pathlib import Path

import pytest

from bash_policy.integrations import adapters
from bash_policy.integrations.adapters import CLAUDE_CODE, GEMINI, handle, parse_options

FIXTURES = Path(__file__).parent / "fixtures"
PLAN = ["--plan-file", ".plans/*.md"]
CLAUDE_FIELDS = {"session_id", "transcript_path", "cwd", "permission_mode", "hook_event_name",
                 "tool_name", "tool_input", "tool_use_id"}
GEMINI_FIELDS = {"session_id", "transcript_path", "cwd", "hook_event_name", "timestamp",
                 "tool_name", "tool_input"}


def fixture(harness: str, name: str) -> str:
    return (FIXTURES / harness / f"{name}.json").read_text()


def run(harness, raw, *argv):
    return handle(harness, raw, parse_options(list(argv)))


def claude_decision(outcome):
    assert outcome.exit_code == 0 and outcome.stderr == ""
    if not outcome.stdout:
        return None
    out = json.loads(outcome.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "PreToolUse"
    return out["permissionDecision"], out["permissionDecisionReason"]


@pytest.mark.parametrize("harness,fields", [("claude-code", CLAUDE_FIELDS), ("gemini", GEMINI_FIELDS)])
def test_fixtures_carry_every_documented_field(harness, fields):
    for path in (FIXTURES / harness).glob("*.json"):
        assert fields <= set(json.loads(path.read_text())), path.name


@pytest.mark.parametrize("name,expected", [
    ("bash_readonly", None),
    ("bash_denied", "deny"),
    ("bash_denied_default_mode", None),
    ("write_source", "deny"),
    ("edit_source", "deny"),
    ("multiedit_source", "deny"),
    ("notebookedit_source", "deny"),
    ("write_plan", None),
    ("read_source", None),
])
def test_claude_code_fixtures(name, expected):
    decision = claude_decision(run(CLAUDE_CODE, fixture("claude-code", name), *PLAN))
    assert (decision and decision[0]) == expected


def test_claude_code_denial_is_actionable_and_names_the_way_out():
    action, reason = claude_decision(run(CLAUDE_CODE, fixture("claude-code", "bash_denied"), *PLAN,
                                         "--way-out", "/plan off"))
    assert action == "deny"
    assert "BP400" in reason and "fix:" in reason and "^" in reason
    assert reason.rstrip().endswith("/plan off")


def test_always_enforces_outside_plan_mode():
    raw = fixture("claude-code", "bash_denied_default_mode")
    assert claude_decision(run(CLAUDE_CODE, raw, "--always"))[0] == "deny"


def test_allow_readonly_skips_the_prompt_for_allowed_commands():
    action, _ = claude_decision(run(CLAUDE_CODE, fixture("claude-code", "bash_readonly"),
                                    "--allow-readonly"))
    assert action == "allow"
    # Never for writes, even to the plan file: Claude Code rules those itself.
    assert claude_decision(run(CLAUDE_CODE, fixture("claude-code", "write_plan"), *PLAN,
                               "--allow-readonly")) is None


def test_default_plan_file_is_claude_codes_plans_directory():
    event = json.loads(fixture("claude-code", "write_plan"))
    event["tool_input"]["file_path"] = str(Path.home() / ".claude/plans/session.md")
    assert claude_decision(run(CLAUDE_CODE, json.dumps(event))) is None
    assert claude_decision(run(CLAUDE_CODE, fixture("claude-code", "write_plan")))[0] == "deny"


def test_event_cwd_reaches_the_check(monkeypatch):
    import bash_policy.judge.engine

    seen = []
    real = bash_policy.judge.engine.check
    monkeypatch.setattr(bash_policy.judge.engine, "check",
                        lambda cmd, policy=None, *, cwd=None: seen.append(cwd) or real(cmd, policy, cwd=cwd))
    run(CLAUDE_CODE, fixture("claude-code", "bash_readonly"))
    run(GEMINI, fixture("gemini", "shell_readonly"))
    assert seen == ["/home/user/project", "/home/user/project/src"]


@pytest.mark.parametrize("raw,problem", [
    ("", "not a JSON event"),
    ("{not json", "not a JSON event"),
    ("[1, 2]", "JSON object"),
    ('{"tool_input": {"command": "ls"}}', "tool_name"),
    ('{"tool_name": "Bash", "tool_input": "ls"}', "tool_input"),
    ('{"tool_name": "Bash", "tool_input": {}, "permission_mode": "plan"}', "tool_input.command"),
    ('{"tool_name": "Bash", "tool_input": {"command": 7}, "permission_mode": "plan"}', "command"),
    ('{"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {}}', "PreToolUse"),
    ('{"tool_name": "Bash", "tool_input": {}, "cwd": 3}', "cwd"),
])
def test_malformed_events_block_with_exit_2_and_a_message(raw, problem):
    outcome = run(CLAUDE_CODE, raw)
    assert outcome.exit_code == 2 and outcome.stdout == ""
    assert problem in outcome.stderr and "blocked" in outcome.stderr


def test_bad_config_blocks(tmp_path):
    (tmp_path / "bad.toml").write_text("nonsense = 1\n")
    outcome = run(CLAUDE_CODE, fixture("claude-code", "bash_readonly"), "--config", str(tmp_path / "bad.toml"))
    assert outcome.exit_code == 2 and "nonsense" in outcome.stderr


@pytest.mark.parametrize("name,expected", [
    ("shell_readonly", None),
    ("shell_denied", "deny"),
    ("write_file_source", "deny"),
    ("replace_source", "deny"),
    ("write_file_plan", None),
])
def test_gemini_fixtures(name, expected):
    outcome = run(GEMINI, fixture("gemini", name))
    assert outcome.exit_code == 0
    body = json.loads(outcome.stdout)
    assert body.get("decision") == expected
    if expected == "deny":
        assert "remove or disable" in body["reason"]


def test_gemini_malformed_blocks_and_allow_readonly_allows():
    assert run(GEMINI, '{"hook_event_name": "AfterTool", "tool_name": "x", "tool_input": {}}').exit_code == 2
    outcome = run(GEMINI, fixture("gemini", "shell_readonly"), "--allow-readonly")
    assert json.loads(outcome.stdout)["decision"] == "allow"


@pytest.mark.parametrize("harness,event,matcher", [
    ("claude-code", "PreToolUse", "Bash|Edit|MultiEdit|NotebookEdit|Write"),
    ("gemini", "BeforeTool", "run_shell_command|replace|write_file"),
])
def test_print_config(harness, event, matcher, capsys):
    assert adapters.main([harness, "--print-config", "--plan-file", "docs/plans/*.md"]) == 0
    config = json.loads(capsys.readouterr().out)
    group = config["hooks"][event][0]
    assert group["matcher"] == matcher
    assert group["hooks"][0]["command"] == f"bash-policy hook {harness} --plan-file 'docs/plans/*.md'"


def test_cli_entry_point_answers_on_stdout_and_rejects_unknown_harness():
    proc = subprocess.run([sys.executable, "-m", "bash_policy", "hook", "claude-code"],
                          input=fixture("claude-code", "bash_denied"), capture_output=True, text=True)
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert adapters.main(["cursor"]) == 2
    assert adapters.main(["claude-code", "--bogus"]) == 2
