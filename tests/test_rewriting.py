"""Hooks wrap what they allow (issue 17 point 4): an allowed shell command is
answered with the same command under `bash-policy run`, where the client lets
a hook rewrite it and nothing of the user's own permission rules is hidden
by the rewrite.  What the real clients do with each answer is in
tests/e2e/test_shells.py; here, what the hook answers."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from client_support import write_snapshot

from bash_policy.integrations import adapters
from bash_policy.integrations.adapters import Options, handle, settings_snippet
from bash_policy.integrations.harnesses import CLAUDE_CODE, GEMINI
from bash_policy.integrations.wrapping import run_command

FIXTURES = Path(__file__).parent / "fixtures"
OLD, NEW = "claude-code_2-1-197_harness", "claude-code_2-1-332_harness"
WHERE: dict[str, str] = {}  # the project of the current test (the fixtures' /home/user/project is not here)


def event(harness, name, **changes):
    data = json.loads((FIXTURES / harness / f"{name}.json").read_text())
    data["cwd"] = WHERE["project"]
    for key, value in changes.items():
        if key in ("command", "timeout"):
            data["tool_input"][key] = value
        else:
            data[key] = value
    return data


@pytest.fixture(autouse=True)
def project(tmp_path, monkeypatch):
    """The directory the events' commands run in (Gemini CLI's name src/ in it)."""
    (tmp_path / "project" / "src").mkdir(parents=True)
    monkeypatch.setitem(WHERE, "project", str(tmp_path / "project"))
    return tmp_path / "project"


@pytest.fixture
def home(tmp_path):
    write_snapshot(tmp_path)
    return tmp_path


def answer(harness, raw, env, opts=None):
    outcome = handle(harness, json.dumps(raw), opts or Options(), env)
    assert outcome.exit_code == 0, outcome
    return json.loads(outcome.stdout) if outcome.stdout.strip() else {}


def rewritten(body):
    """The command a Claude Code answer runs instead, or None."""
    out = body.get("hookSpecificOutput", {})
    if "updatedInput" not in out:
        return None
    assert out["permissionDecision"] == "allow"
    return out["updatedInput"]


# -- Claude Code ----------------------------------------------------------------------------

def test_claude_code_2_1_197_plan_mode_runs_it_under_bash_policy_run(home):
    raw = event("claude-code", "bash_readonly")
    updated = rewritten(answer(CLAUDE_CODE, raw, {"HOME": str(home), "AI_AGENT": OLD}))
    assert updated == {**raw["tool_input"], "command": run_command(
        raw["tool_input"]["command"], executable=adapters.executable(), config=os.devnull, timeout=115)}


def test_claude_code_2_1_332_plan_mode_is_not_rewritten(home):
    """Its plan mode holds every call it cannot see to be read-only: a
    rewritten one would never run.  The command is judged for its shell."""
    body = answer(CLAUDE_CODE, event("claude-code", "bash_readonly"),
                  {"HOME": str(home), "AI_AGENT": NEW})
    assert body == {}
    for unknown in ({}, {"AI_AGENT": "claude-code_9-9-9_harness"}):
        assert answer(CLAUDE_CODE, event("claude-code", "bash_readonly"),
                      {"HOME": str(home), **unknown}) == {}


def test_outside_plan_mode_every_version_is_rewritten(home):
    raw = event("claude-code", "bash_denied_default_mode", command="ls -la")
    for version in (OLD, NEW):
        assert rewritten(answer(CLAUDE_CODE, raw, {"HOME": str(home), "AI_AGENT": version},
                                Options(always=True)))


def test_no_confine_never_rewrites(home):
    env = {"HOME": str(home), "AI_AGENT": OLD}
    raw = event("claude-code", "bash_readonly")
    assert answer(CLAUDE_CODE, raw, env, Options(confine=False)) == {}
    body = answer(CLAUDE_CODE, raw, env, Options(confine=False, allow_readonly=True))
    assert body["hookSpecificOutput"]["permissionDecision"] == "allow" and rewritten(body) is None
    assert "--no-confine" in settings_snippet(CLAUDE_CODE, Options(confine=False))


def test_a_denied_command_is_denied_not_rewritten(home):
    body = answer(CLAUDE_CODE, event("claude-code", "bash_denied"), {"HOME": str(home), "AI_AGENT": OLD})
    assert body["hookSpecificOutput"]["permissionDecision"] == "deny"


@pytest.mark.parametrize("given,env,expected", [
    (30000, {}, "--timeout 25"),
    (None, {"BASH_DEFAULT_TIMEOUT_MS": "60000"}, "--timeout 55"),
    (None, {}, "--timeout 115"),
    (1000, {}, "--timeout 1"),
    ("soon", {}, "--timeout 115"),
])
def test_run_stops_before_claude_code_would_move_it_to_the_background(home, given, env, expected):
    raw = event("claude-code", "bash_readonly")
    raw["tool_input"].pop("timeout")
    if given is not None:
        raw["tool_input"]["timeout"] = given
    updated = rewritten(answer(CLAUDE_CODE, raw, {"HOME": str(home), "AI_AGENT": OLD, **env}))
    assert f" run --config /dev/null {expected} -- " in updated["command"]


def settings(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))


@pytest.mark.parametrize("where,rules,rewrites", [
    ("user", {"deny": ["Read(./.env)"]}, False),
    ("user", {"ask": ["Bash(git log:*)"]}, False),
    ("project", {"deny": ["Bash"]}, False),
    ("local", {"deny": ["Read(//etc/**)"]}, False),
    ("user", {"deny": ["Edit(src/**)", "WebFetch"], "allow": ["Bash(ls:*)", "Read"]}, True),
    ("user", {}, True),
])
def test_claude_code_rules_the_rewrite_would_hide(home, tmp_path, where, rules, rewrites):
    """Claude Code matches its rules against the rewritten text: a deny or ask
    rule for Bash or Read would no longer see the command, so it is not rewritten."""
    project = tmp_path / "project"  # made by the fixture
    path = {"user": home / ".claude" / "settings.json",
            "project": project / ".claude" / "settings.json",
            "local": project / ".claude" / "settings.local.json"}[where]
    settings(path, {"permissions": rules})
    raw = event("claude-code", "bash_readonly", cwd=str(project))
    body = answer(CLAUDE_CODE, raw, {"HOME": str(home), "AI_AGENT": OLD})
    assert (rewritten(body) is not None) == rewrites


def test_claude_code_settings_that_cannot_be_read_stop_the_rewrite(home, tmp_path):
    settings(home / ".claude" / "settings.json", "{not json")
    assert answer(CLAUDE_CODE, event("claude-code", "bash_readonly"),
                  {"HOME": str(home), "AI_AGENT": OLD}) == {}
    settings(home / ".claude" / "settings.json", {"permissions": {"deny": "Bash"}})
    assert answer(CLAUDE_CODE, event("claude-code", "bash_readonly"),
                  {"HOME": str(home), "AI_AGENT": OLD}) == {}


def test_claude_config_dir_holds_the_user_settings(home, tmp_path):
    config = tmp_path / "config"
    settings(config / "settings.json", {"permissions": {"deny": ["Read(~/.ssh/**)"]}})
    write_snapshot(config.parent)  # the snapshot stays under $CLAUDE_CONFIG_DIR too
    (config.parent / ".claude" / "shell-snapshots").rename(config / "shell-snapshots")
    env = {"HOME": str(home), "AI_AGENT": OLD, "CLAUDE_CONFIG_DIR": str(config)}
    assert answer(CLAUDE_CODE, event("claude-code", "bash_readonly"), env) == {}


def hook_under_a_client(harness, raw, client_argv, env):
    """Run the installed hook the way a client does (`sh -c "HOOK || exit 2"`)
    from a parent process whose command line is `client_argv`."""
    hook = f"{sys.executable} -m bash_policy hook {harness} || exit 2"
    parent = ("import subprocess, sys\n"
              f"done = subprocess.run(['sh', '-c', {hook!r}], input=sys.stdin.buffer.read(),"
              " capture_output=True)\n"
              "sys.stdout.buffer.write(done.stdout); sys.exit(done.returncode)")
    proc = subprocess.run([sys.executable, "-c", parent, *client_argv], input=json.dumps(raw),
                          capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc
    return json.loads(proc.stdout) if proc.stdout.strip() else {}


@pytest.mark.parametrize("argv,rewrites", [
    (["-p", "hi", "--disallowedTools", "Read(./.env)", "Edit"], False),
    (["--disallowed-tools=Bash(curl:*)"], False),
    (["--settings", '{"permissions": {"deny": ["Bash(cat:*)"]}}'], False),
    (["--disallowedTools", "WebFetch", "--allowedTools", "Bash(ls:*)"], True),
])
def test_claude_code_command_line_rules(home, argv, rewrites):
    env = {**os.environ, "HOME": str(home), "AI_AGENT": OLD}
    body = hook_under_a_client("claude-code", event("claude-code", "bash_readonly"), argv, env)
    assert (rewritten(body) is not None) == rewrites, body


# -- Gemini CLI -------------------------------------------------------------------------------

def gemini_rewritten(body):
    out = body.get("hookSpecificOutput")
    return None if out is None else out["tool_input"]


def test_gemini_rewrites_with_tool_input(tmp_path):
    raw = event("gemini", "shell_readonly")
    body = answer(GEMINI, raw, {"HOME": str(tmp_path)})
    assert body["hookSpecificOutput"]["hookEventName"] == "BeforeTool"
    assert gemini_rewritten(body) == {**raw["tool_input"], "command": run_command(
        raw["tool_input"]["command"], executable=adapters.executable(), config=os.devnull)}


@pytest.mark.parametrize("policy,rewrites", [
    ('[[rule]]\ntoolName = "run_shell_command"\ncommandPrefix = "cat .env"\ndecision = "deny"\n', False),
    ('[[rule]]\ntoolName = ["run_shell_command"]\ncommandRegex = "curl.*"\ndecision = "ask_user"\n', False),
    ('[[rule]]\ntoolName = "*"\nargsPattern = "secret"\ndecision = "deny"\n', False),
    ('[[rule]]\ntoolName = "run_shell_command"\ndecision = "allow"\ncommandPrefix = "git"\n', True),
    ('[[rule]]\ntoolName = "run_shell_command"\ndecision = "deny"\n', True),  # the wrapped one too
    ('[[rule]]\ntoolName = "write_file"\ndecision = "deny"\n', True),
    ("not = [toml", False),
])
def test_gemini_policy_rules_the_rewrite_would_hide(tmp_path, policy, rewrites):
    (tmp_path / ".gemini" / "policies").mkdir(parents=True)
    (tmp_path / ".gemini" / "policies" / "mine.toml").write_text(policy)
    body = answer(GEMINI, event("gemini", "shell_readonly"), {"HOME": str(tmp_path)})
    assert (gemini_rewritten(body) is not None) == rewrites


@pytest.mark.parametrize("excluded,rewrites", [
    (["run_shell_command(rm)"], False), (["run_shell_command"], True), (["write_file"], True)])
def test_gemini_excluded_tools(tmp_path, excluded, rewrites):
    settings(tmp_path / ".gemini" / "settings.json", {"tools": {"exclude": excluded}})
    body = answer(GEMINI, event("gemini", "shell_readonly"), {"HOME": str(tmp_path)})
    assert (gemini_rewritten(body) is not None) == rewrites


def test_gemini_policy_files_on_its_command_line(tmp_path):
    policy = tmp_path / "team.toml"
    policy.write_text('[[rule]]\ntoolName = "run_shell_command"\ncommandPrefix = "cat"\n'
                      'decision = "deny"\n')
    env = {**os.environ, "HOME": str(tmp_path)}
    raw = event("gemini", "shell_readonly")
    assert gemini_rewritten(hook_under_a_client("gemini", raw, ["--policy", str(policy)], env)) is None
    assert gemini_rewritten(hook_under_a_client("gemini", raw, ["-p", "hi"], env)) is not None


def test_the_policy_is_the_session_s_and_run_is_told_which(home, tmp_path, trusted):
    """The event's cwd follows the shell's `cd`: a repository below the project
    with its own bash-policy.toml must not govern the hook, nor the run it
    rewrites to (which would otherwise look for a config where the shell is)."""
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / "vendor" / "clone" / "src").mkdir(parents=True)
    trusted((project / "bash-policy.toml").write_text('[programs.tokei]\npositionals = "read"\n') and
            project / "bash-policy.toml")
    clone = project / "vendor" / "clone"
    (clone / ".git").mkdir(parents=True)
    (clone / "bash-policy.toml").write_text('[programs.touch]\nreplace = true\npositionals = "read"\n')
    env = {"HOME": str(home), "AI_AGENT": OLD, "CLAUDE_PROJECT_DIR": str(project)}
    raw = event("claude-code", "bash_readonly", cwd=str(clone), command="touch x")
    assert answer(CLAUDE_CODE, raw, env)["hookSpecificOutput"]["permissionDecision"] == "deny"
    raw = event("claude-code", "bash_readonly", cwd=str(clone), command="tokei src")
    updated = rewritten(answer(CLAUDE_CODE, raw, env))
    assert f" run --config {project / 'bash-policy.toml'} " in updated["command"]
    raw = event("gemini", "shell_readonly", cwd=str(clone), command="touch x")
    body = answer(GEMINI, raw, {"HOME": str(home), "GEMINI_PROJECT_DIR": str(project)})
    assert body["decision"] == "deny"
