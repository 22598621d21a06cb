"""The hook adapters: each client's answer format, plan files, the way out,
and exit 2 (the blocking exit for both clients) on every failure."""

import io
import json
import os
import subprocess
from pathlib import Path

import pytest
from client_support import write_snapshot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bash_policy.cli import main as cli_main
from bash_policy.integrations import adapters, gate
from bash_policy.integrations.adapters import DECISION_NOTE, Options, handle, settings_snippet
from bash_policy.integrations.harnesses import CLAUDE_CODE, GEMINI, HARNESSES

FIXTURES = Path(__file__).parent / "fixtures"
PLAN = Options(plan_files=[".plans/*.md"])
CLAUDE_FIELDS = {"session_id", "transcript_path", "cwd", "permission_mode", "hook_event_name",
                 "tool_name", "tool_input", "tool_use_id"}
GEMINI_FIELDS = {"session_id", "transcript_path", "cwd", "hook_event_name", "timestamp",
                 "tool_name", "tool_input"}
GEMINI_PLANS = "/home/user/.gemini/tmp/project/a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d/plans"


def fixture(harness: str, name: str) -> str:
    return (FIXTURES / harness / f"{name}.json").read_text()


def event(harness: str, name: str, **changes) -> str:
    data = json.loads(fixture(harness, name))
    for key, value in changes.items():
        if key in ("command", "file_path", "dir_path", "directory"):
            data["tool_input"][key] = value
        else:
            data[key] = value
    return json.dumps(data)


@pytest.fixture(autouse=True)
def claude_home(tmp_path, monkeypatch):
    """A HOME with a plain shell snapshot of this session (no functions or
    aliases), as Claude Code keeps it: calls the hook does not rewrite are
    judged for that shell (tests/test_client_shell.py covers its contents)."""
    home = tmp_path / "claude-home"
    write_snapshot(home)
    monkeypatch.setitem(CLAUDE_ENV, "HOME", str(home))
    return home


CLAUDE_ENV: dict[str, str] = {}  # the environment a Claude Code hook gets: the HOME above


def claude(raw, opts=PLAN, env=None):
    """(action, reason) of a Claude Code answer, or None for no opinion;
    ("rewrite", command) for an allow that runs another command."""
    outcome = handle(CLAUDE_CODE, raw, opts, dict(CLAUDE_ENV) if env is None else env)
    assert outcome.exit_code == 0 and outcome.stderr == "", outcome
    if not outcome.stdout:
        return None
    out = json.loads(outcome.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "PreToolUse"
    if "updatedInput" in out:
        assert out["permissionDecision"] == "allow"
        return "rewrite", out["updatedInput"]["command"]
    return out["permissionDecision"], out["permissionDecisionReason"]


def gemini(raw, opts=None, env=None):
    """As `claude`, for Gemini CLI."""
    opts = Options() if opts is None else opts
    outcome = handle(GEMINI, raw, opts, {"GEMINI_PLANS_DIR": GEMINI_PLANS} if env is None else env)
    assert outcome.exit_code == 0 and outcome.stderr == "", outcome
    body = json.loads(outcome.stdout)
    if "hookSpecificOutput" in body:
        return "rewrite", body["hookSpecificOutput"]["tool_input"]["command"]
    return (body["decision"], body["reason"]) if body else None


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
    decision = claude(fixture("claude-code", name))
    assert (decision and decision[0]) == expected


def test_a_denial_says_it_is_a_decision_and_is_actionable():
    action, reason = claude(fixture("claude-code", "bash_denied"),
                            Options(way_out="/plan off"))
    assert action == "deny"
    assert reason.startswith(DECISION_NOTE)
    assert "BP400" in reason and "fix:" in reason and "^" in reason
    assert reason.rstrip().endswith("/plan off")


def test_always_enforces_outside_plan_mode():
    raw = fixture("claude-code", "bash_denied_default_mode")
    assert claude(raw, Options()) is None
    assert claude(raw, Options(always=True))[0] == "deny"


def test_allow_readonly_skips_the_prompt_for_allowed_commands_only():
    assert claude(fixture("claude-code", "bash_readonly"), Options(allow_readonly=True))[0] == "allow"
    assert gemini(fixture("gemini", "shell_readonly"),
                  Options(allow_readonly=True, confine=False))[0] == "allow"
    # Never for writes, even to the plan file: Claude Code rules those itself.
    assert claude(fixture("claude-code", "write_plan"),
                  Options(plan_files=[".plans/*.md"], allow_readonly=True)) is None


def transcript(tmp_path, *records) -> str:
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


def plan_mode(path):
    return {"type": "attachment", "attachment": {"type": "plan_mode", "planFilePath": path}}


def test_claude_code_plan_file_is_the_one_this_session_was_given(tmp_path):
    mine, other = str(tmp_path / "plans/brave-otter.md"), str(tmp_path / "plans/other-session.md")
    log = transcript(tmp_path, {"type": "user", "message": {"content": "hi"}}, plan_mode(mine))
    assert claude(event("claude-code", "write_plan", transcript_path=log, file_path=mine),
                  Options()) is None
    action, reason = claude(event("claude-code", "write_plan", transcript_path=log,
                                  file_path=other), Options())
    assert action == "deny" and mine in reason


def test_a_plan_path_quoted_in_the_conversation_is_not_the_plan_file(tmp_path):
    victim = str(tmp_path / "plans/other-session.md")
    quoted = {"type": "user", "message": {"content": json.dumps(plan_mode(victim))}}
    log = transcript(tmp_path, quoted)
    assert claude(event("claude-code", "write_plan", transcript_path=log, file_path=victim),
                  Options())[0] == "deny"


def test_without_a_known_plan_file_writes_are_denied_with_a_hint(tmp_path):
    action, reason = claude(event("claude-code", "write_plan",
                                  transcript_path=str(tmp_path / "missing.jsonl")), Options())
    assert action == "deny" and "--plan-file" in reason


def test_gemini_plan_files_are_its_plans_directory():
    assert gemini(fixture("gemini", "write_file_plan")) is None
    assert gemini(fixture("gemini", "write_file_source"))[0] == "deny"
    # Without $GEMINI_PLANS_DIR no file is a plan file.
    action, reason = gemini(fixture("gemini", "write_file_plan"), env={})
    assert action == "deny" and "--plan-file" in reason


@pytest.mark.parametrize("name,expected", [
    ("shell_readonly", "rewrite"),
    ("shell_dir_path", "rewrite"),
    ("shell_denied", "deny"),
    ("write_file_source", "deny"),
    ("replace_source", "deny"),
])
def test_gemini_fixtures(name, expected):
    decision = gemini(fixture("gemini", name))
    assert (decision and decision[0]) == expected


@pytest.mark.parametrize("harness,raw,env,names,not_named", [
    (CLAUDE_CODE, fixture("claude-code", "bash_denied"), {}, "ExitPlanMode", "settings"),
    (CLAUDE_CODE, fixture("claude-code", "bash_denied"), {"CLAUDE_CODE_ENTRYPOINT": "sdk-cli"},
     "without --permission-mode plan", "Shift+Tab"),
    (CLAUDE_CODE, fixture("claude-code", "bash_denied_default_mode"), {}, "--always", "Shift+Tab"),
    (GEMINI, fixture("gemini", "shell_denied"), {}, "/hooks disable bash-policy", "ExitPlanMode"),
])
def test_the_way_out_names_what_exists_in_that_client_and_mode(harness, raw, env, names, not_named):
    outcome = handle(harness, raw, Options(always=True), env)
    body = json.loads(outcome.stdout)
    reason = body.get("reason") or body["hookSpecificOutput"]["permissionDecisionReason"]
    assert names in reason and not_named not in reason


def test_the_shell_directory_reaches_the_check(monkeypatch):
    import bash_policy.judge.engine

    seen = []
    real = bash_policy.judge.engine.check
    monkeypatch.setattr(bash_policy.judge.engine, "check",
                        lambda cmd, policy=None, *, cwd=None: seen.append(cwd) or real(cmd, policy, cwd=cwd))
    claude(fixture("claude-code", "bash_readonly"))
    gemini(fixture("gemini", "shell_readonly"))
    gemini(fixture("gemini", "shell_dir_path"))
    assert seen == ["/home/user/project", "/home/user/project/src", "/home/user/project/src"]


def test_the_session_directory_config_is_used(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "bash-policy.toml").write_text('[programs.tokei]\npositionals = "read"\n')
    (tmp_path / "sub").mkdir()
    raw = event("claude-code", "bash_readonly", cwd=str(tmp_path / "sub"), command="tokei src")
    assert claude(raw, Options(allow_readonly=True))[0] == "allow"


def blocked(harness, raw, opts=None, env=None):
    opts = Options(always=True) if opts is None else opts
    outcome = handle(harness, raw, opts, env or {})
    assert outcome.exit_code == 2 and outcome.stdout == "", outcome
    assert "blocked" in outcome.stderr
    return outcome.stderr


@pytest.mark.parametrize("raw,problem", [
    ("", "not a JSON event"),
    ("{not json", "not a JSON event"),
    (b"\xff\xfe{}", "not a JSON event"),
    ("[1, 2]", "JSON object"),
    ('{"tool_input": {"command": "ls"}}', "tool_name"),
    ('{"tool_name": "Bash", "tool_input": "ls"}', "tool_input"),
    ('{"tool_name": "Bash", "tool_input": {}, "permission_mode": "plan"}', "tool_input.command"),
    ('{"tool_name": "Bash", "tool_input": {"command": 7}, "permission_mode": "plan"}', "command"),
    ('{"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {}}', "PreToolUse"),
    ('{"tool_name": "Bash", "tool_input": {"command": "ls"}, "cwd": 3}', "cwd"),
])
def test_malformed_events_block_with_exit_2_and_a_message(raw, problem):
    assert problem in blocked(CLAUDE_CODE, raw)


@pytest.mark.parametrize("harness,raw", [
    (CLAUDE_CODE, event("claude-code", "write_source", file_path="/home/user/project/a\0b")),
    (CLAUDE_CODE, event("claude-code", "bash_readonly", cwd="/home/user/pro\0ject")),
    (GEMINI, event("gemini", "write_file_source", file_path="a\0.md")),
    (GEMINI, event("gemini", "shell_dir_path", dir_path="src\0")),
    (GEMINI, event("gemini", "shell_readonly", directory="\0")),
])
def test_nul_bytes_in_paths_block(harness, raw):
    assert "NUL" in blocked(harness, raw)


def test_two_directory_arguments_that_disagree_block():
    raw = json.loads(fixture("gemini", "shell_readonly"))
    raw["tool_input"]["dir_path"] = "/elsewhere"
    assert "different directories" in blocked(GEMINI, json.dumps(raw))


def test_bad_config_blocks(tmp_path):
    (tmp_path / "bad.toml").write_text("nonsense = 1\n")
    assert "nonsense" in blocked(CLAUDE_CODE, fixture("claude-code", "bash_readonly"),
                                 Options(config=str(tmp_path / "bad.toml")))


def test_an_internal_error_blocks(monkeypatch):
    """A failure in the checker is a denial from the gate; one anywhere else in
    the adapter is the harness's blocking exit."""
    import bash_policy.judge.engine

    monkeypatch.setattr(bash_policy.judge.engine, "check", lambda *a, **k: 1 / 0)
    outcome = handle(GEMINI, fixture("gemini", "shell_readonly"), Options(always=True), {})
    assert json.loads(outcome.stdout)["decision"] == "deny" and "ZeroDivisionError" in outcome.stdout
    monkeypatch.setattr(gate.PlanGate, "decide", lambda *a, **k: 1 / 0)
    assert "internal error: ZeroDivisionError" in blocked(GEMINI, fixture("gemini", "shell_readonly"))


# Events built from the real fields with hostile values: every answer is a
# well-formed decision or no opinion (exit 0), or a block (exit 2).
_hostile = st.sampled_from(["\0", "src/\0", "/tmp/a\0b", "..", "/", "/tmp", "plan", "default",
                            "~/.claude/plans/x.md", ".plans/a.md", "rg --pre sh x", "ls"])
_junk = st.one_of(_hostile, st.none(), st.booleans(), st.integers(), st.text(max_size=12),
                  st.lists(st.text(max_size=3), max_size=2))
def _inputs(tool):
    key = gate.TOOLS.get(tool, (None, "command"))[1] or "command"
    return st.fixed_dictionaries({key: _junk}, optional={
        k: _junk for k in ("dir_path", "directory", "content", "file_path") if k != key})


def _events(harness):
    tools = st.sampled_from(sorted(harness.tools) + ["Other"])
    return tools.flatmap(lambda tool: st.fixed_dictionaries(
        {"tool_name": st.just(tool), "tool_input": _inputs(tool)},
        optional={"hook_event_name": st.sampled_from([harness.event, "Stop", 3]),
                  "cwd": _junk, "permission_mode": _junk, "transcript_path": _junk}))


def _raw(harness):
    events = _events(harness)
    return st.one_of(events.map(json.dumps), events.map(lambda e: json.dumps(e).encode()),
                     st.binary(max_size=40))


_options = st.builds(Options, always=st.booleans(), allow_readonly=st.booleans(),
                     plan_files=st.lists(st.sampled_from([".plans/*.md", "*", "\0"]), max_size=1))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), harness=st.sampled_from(sorted(HARNESSES)), opts=_options)
def test_handle_answers_or_blocks_whatever_it_is_given(data, harness, opts):
    raw = data.draw(_raw(HARNESSES[harness]))
    outcome = handle(HARNESSES[harness], raw, opts, {"GEMINI_PLANS_DIR": "\0"})
    assert outcome.exit_code in (0, 2)
    if outcome.exit_code == 2:
        assert outcome.stdout == "" and "blocked" in outcome.stderr
    elif outcome.stdout.strip():
        json.loads(outcome.stdout)


class Broken(io.StringIO):
    def write(self, text):
        raise BrokenPipeError(32, "Broken pipe")


@settings(max_examples=60, deadline=None)
@given(data=st.data(), harness=st.sampled_from(sorted(HARNESSES)))
def test_main_exits_0_or_2_even_when_its_output_fails(data, harness):
    raw = data.draw(_raw(HARNESSES[harness]))
    data = raw if isinstance(raw, bytes) else raw.encode("utf-8")
    for stdout in (io.StringIO(), Broken()):
        code = adapters.main(HARNESSES[harness], Options(always=True), io.BytesIO(data), stdout,
                             io.StringIO())
        assert code in (0, 2)
    assert adapters.main(HARNESSES[harness], Options(), io.BytesIO(data), Broken(), Broken()) in (0, 2)


def test_main_blocks_when_reading_stdin_fails():
    class Failing(io.BytesIO):
        def read(self, *args):
            raise KeyboardInterrupt

    assert adapters.main(GEMINI, Options(), Failing(), io.StringIO(), io.StringIO()) == 2


@pytest.mark.parametrize("argv", [["hook", "cursor"], ["hook", "claude-code", "--bogus"],
                                  ["hook", "gemini", "--plan-file"]])
def test_hook_usage_errors_block(argv):
    assert cli_main(argv) == 2


def test_the_gates_tool_table_comes_from_the_harness_records():
    for harness in HARNESSES.values():
        for tool, entry in harness.tools.items():
            assert gate.TOOLS[tool] == entry
    assert CLAUDE_CODE.gated == ("Bash", "Edit", "MultiEdit", "NotebookEdit", "Write")
    assert GEMINI.gated == ("replace", "run_shell_command", "write_file")


@pytest.mark.parametrize("harness", sorted(HARNESSES))
def test_print_config_names_the_installed_executable_and_the_printed_command_runs(harness, capsys):
    assert cli_main(["hook", harness, "--print-config", "--always", "--plan-file", "docs/p*.md"]) == 0
    config = json.loads(capsys.readouterr().out)
    record = HARNESSES[harness]
    group = config["hooks"][record.event][0]
    assert group["matcher"] == "|".join(record.gated)
    command = group["hooks"][0]["command"]
    assert command.startswith("/") and command.endswith(" || exit 2")
    assert f"hook {harness} --always --plan-file 'docs/p*.md'" in command
    raw = fixture(harness, "bash_denied" if harness == "claude-code" else "shell_denied")
    bare = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/")}  # no venv on PATH
    proc = subprocess.run(["sh", "-c", command], input=raw, capture_output=True, text=True, env=bare)
    assert proc.returncode == 0 and '"deny"' in proc.stdout, proc.stderr
    gone = command.replace(command.split(" hook ")[0], "/nonexistent/bash-policy", 1)
    assert subprocess.run(["sh", "-c", gone], input=raw, capture_output=True, text=True,
                          env=bare).returncode == 2


def test_print_config_names_the_config_absolutely(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert cli_main(["hook", "gemini", "--print-config", "--config", "team.toml"]) == 0
    assert f"--config {tmp_path / 'team.toml'}" in capsys.readouterr().out


def test_snippet_falls_back_to_the_module_when_no_script_is_beside_python(monkeypatch):
    monkeypatch.setattr(adapters.sys, "executable", "/opt/py/bin/python3")
    snippet = json.loads(settings_snippet(GEMINI, Options()))
    hook = snippet["hooks"]["BeforeTool"][0]["hooks"][0]
    assert hook["command"] == "/opt/py/bin/python3 -m bash_policy hook gemini || exit 2"
    assert hook["name"] == "bash-policy" and hook["timeout"] == 10000
