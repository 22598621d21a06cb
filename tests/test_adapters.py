"""The hook adapters: each client's answer format, plan files, the way out,
and exit 2 (the blocking exit for both clients) on every failure."""

import dataclasses
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from client_support import write_snapshot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bash_policy.cli import main as cli_main
from bash_policy.integrations import adapters, gate, install
from bash_policy.integrations.adapters import DECISION_NOTE, Options, handle, settings_snippet
from bash_policy.integrations.harnesses import CLAUDE_CODE, CODEX, COPILOT, GEMINI, HARNESSES
from bash_policy.integrations.wrapping import run_command

FIXTURES = Path(__file__).parent / "fixtures"
PLAN = Options(plan_files=[".plans/*.md"])
CLAUDE_FIELDS = {"session_id", "transcript_path", "cwd", "permission_mode", "hook_event_name",
                 "tool_name", "tool_input", "tool_use_id"}
GEMINI_FIELDS = {"session_id", "transcript_path", "cwd", "hook_event_name", "timestamp",
                 "tool_name", "tool_input"}
GEMINI_PLANS = "/home/user/.gemini/tmp/project/a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d/plans"


@pytest.fixture(autouse=True)
def fixture_directories_exist(monkeypatch):
    """The fixture events name /home/user/project, which does not exist here,
    and a hook refuses a shell directory that does not exist, as serve does
    (test_a_missing_shell_directory_blocks_as_serve_refuses_it): here those
    directories pass."""
    real = adapters.directory_error
    monkeypatch.setattr(adapters, "directory_error",
                        lambda path: None if path.startswith("/home/user/project") else real(path))


@pytest.fixture(autouse=True)
def brief_plan_file_wait(monkeypatch):
    """Writes with no plan file known wait for one (adapters.PLAN_FILE_WAIT);
    the tests of such writes need not wait as long."""
    monkeypatch.setattr(adapters, "PLAN_FILE_WAIT", 0.1)


def test_a_missing_shell_directory_blocks_as_serve_refuses_it(monkeypatch, tmp_path):
    from bash_policy.integrations.serve import Policies, answer

    monkeypatch.undo()
    gone = str(tmp_path / "gone")
    for harness, name in ((CLAUDE_CODE, "bash_readonly"), (GEMINI, "shell_readonly")):
        outcome = handle(harness, event(harness.name, name, cwd=gone), Options(allow_readonly=True), {})
        assert outcome.exit_code == 2 and f"cwd '{gone}" in outcome.stderr, outcome
        assert "is not a directory; the tool call is blocked" in outcome.stderr
    relative = handle(GEMINI, event("gemini", "shell_readonly", cwd=str(tmp_path), dir_path="gone", directory="gone"),
                      Options(allow_readonly=True), {})
    assert relative.exit_code == 2 and f"cwd {gone!r} is not a directory" in relative.stderr
    served = answer(json.dumps({"id": 1, "command": "ls", "cwd": gone}), Policies())
    assert served == {"id": 1, "error": f"cwd {gone!r} is not a directory"}
    assert handle(CLAUDE_CODE, event("claude-code", "bash_readonly", cwd=str(tmp_path)),
                  Options(allow_readonly=True), {}).exit_code == 0


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
    monkeypatch.setenv("HOME", str(home))  # for the tests that give the hook no environment
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


def test_a_plan_file_named_in_the_transcript_a_moment_later_is_found(tmp_path, monkeypatch):
    """Claude Code writes the transcript line that names the plan file on its
    own time: under load 2.1.197 asked for the plan's first write before it
    (e2e, in CI).  A write with no plan file known looks again for a while."""
    import threading

    monkeypatch.setattr(adapters, "PLAN_FILE_WAIT", 5.0)
    mine = str(tmp_path / "plans/brave-otter.md")
    log = transcript(tmp_path, {"type": "user", "message": {"content": "hi"}})
    late = threading.Timer(0.3, lambda: open(log, "a").write(json.dumps(plan_mode(mine)) + "\n"))
    late.start()
    try:
        assert claude(event("claude-code", "write_plan", transcript_path=log, file_path=mine), Options()) is None
    finally:
        late.join()


def test_a_plan_path_quoted_in_the_conversation_is_not_the_plan_file(tmp_path):
    victim = str(tmp_path / "plans/other-session.md")
    quoted = {"type": "user", "message": {"content": json.dumps(plan_mode(victim))}}
    log = transcript(tmp_path, quoted)
    assert claude(event("claude-code", "write_plan", transcript_path=log, file_path=victim),
                  Options())[0] == "deny"


@pytest.mark.parametrize("named", ["plans/*", "plans/?ther-session.md", "**"])
def test_a_plan_path_with_wildcards_names_no_plan_file(tmp_path, named):
    """The gate's patterns treat `*` and `?` as wildcards: a plan path that
    holds one is no plan file, or it would open other files (red team RT-F)."""
    victim = str(tmp_path / "plans/other-session.md")
    log = transcript(tmp_path, plan_mode(str(tmp_path / named)))
    action, reason = claude(event("claude-code", "write_plan", transcript_path=log, file_path=victim),
                            Options())
    assert action == "deny" and "--plan-file" in reason


def test_a_copilot_session_id_with_wildcards_names_no_plan_file():
    raw = json.loads(event("copilot", "create_plan"))
    raw["sessionId"] = "*"
    answer = copilot(json.dumps(raw))  # the real session's plan is no longer writable through `*`
    assert answer["permissionDecision"] == "deny" and "no plan file" in answer["permissionDecisionReason"]


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


def test_the_session_directory_config_is_used(tmp_path, trusted):
    (tmp_path / ".git").mkdir()
    (tmp_path / "bash-policy.toml").write_text('[programs.tokei]\npositionals = "read"\n')
    (tmp_path / "sub").mkdir()
    raw = event("claude-code", "bash_readonly", cwd=str(tmp_path / "sub"), command="tokei src")
    trusted(tmp_path / "bash-policy.toml")
    assert claude(raw, Options(allow_readonly=True))[0] == "allow"


def test_a_repository_config_that_loosens_the_policy_blocks_until_trusted(tmp_path, trusted):
    """The explored repository may not widen plan mode by itself (red team
    RT-B: `confine = "off"` and a spec that allows touch, in a cloned
    repository's pyproject.toml, were adopted by every hook)."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text('[tool.bash-policy]\nconfine = "off"\n'
                                             '[tool.bash-policy.programs.touch]\npositionals = "read"\n')
    raw = event("claude-code", "bash_readonly", cwd=str(tmp_path), command="touch canary")
    outcome = handle(CLAUDE_CODE, raw, Options(allow_readonly=True), dict(CLAUDE_ENV))
    assert outcome.exit_code == 2 and "bash-policy trust" in outcome.stderr
    assert "programs.touch" in outcome.stderr and 'confine = "off"' in outcome.stderr
    # A config that only tightens needs no trust.
    (tmp_path / "pyproject.toml").write_text('[tool.bash-policy]\nscope_roots = ["."]\ncrosscheck = "required"\n')
    assert claude(event("claude-code", "bash_readonly", cwd=str(tmp_path), command="ls"),
                  Options(allow_readonly=True))[0] in ("allow", "rewrite")


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
_patches = st.sampled_from(["*** Begin Patch\n*** Add File: .plans/a.md\n+x\n*** End Patch",
                            "*** Begin Patch\n*** Delete File: src\0\n*** End Patch",
                            "*** Begin Patch\n*** Update File: a\n*** Move to: ../b\n@@\n-a\n+b\n"
                            "*** End Patch", "*** Begin Patch\n***  Add File: x\n*** End Patch"])


def _inputs(harness, tool):
    key = harness.tools.get(tool, (None, "command"))[1] or "command"
    value = st.one_of(_junk, _patches) if harness.tools.get(tool, ("",))[0] == "patch" else _junk
    return st.fixed_dictionaries({key: value}, optional={
        k: _junk for k in ("dir_path", "directory", "content", "file_path", "path") if k != key})


def _events(harness):
    event_key, tool_key, input_key = harness.keys
    tools = st.sampled_from(sorted(harness.tools) + ["Other"])
    inputs = lambda tool: _inputs(harness, tool)  # noqa: E731
    return tools.flatmap(lambda tool: st.fixed_dictionaries(
        {tool_key: st.just(tool), input_key: st.one_of(inputs(tool), inputs(tool).map(json.dumps))},
        optional={event_key or "hook_event_name": st.sampled_from([harness.event, "Stop", 3]),
                  "cwd": _junk, "permission_mode": _junk, "transcript_path": _junk,
                  "sessionId": _junk}))


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
        for tool, (permission, key) in harness.tools.items():
            known, keys = gate.TOOLS[tool]
            assert known == permission and key in (keys if isinstance(keys, tuple) else (keys,))
    assert CLAUDE_CODE.gated == ("Bash", "Edit", "MultiEdit", "NotebookEdit", "PowerShell", "Write")
    assert GEMINI.gated == ("replace", "run_shell_command", "write_file")
    assert CODEX.gated == ("Bash", "apply_patch")
    assert COPILOT.gated == ("bash", "create", "edit", "powershell")


def test_a_tool_name_two_clients_give_different_keys_reads_either():
    """Copilot CLI's `edit` names its file `path`, the plain tools' `file_path`."""
    planning = gate.PlanGate(plan_files=(".plans/*.md",), root="/repo", state=gate.PLANNING)
    assert planning.check_tool("edit", {"path": "/repo/.plans/a.md"}).action == gate.ALLOW
    assert planning.check_tool("edit", {"file_path": "/repo/.plans/a.md"}).action == gate.ALLOW
    assert planning.check_tool("edit", {"path": "/repo/src.py"}).action == gate.DENY


DENIED_FIXTURE = {"claude-code": "bash_denied", "gemini": "shell_denied", "codex": "bash_denied",
                  "copilot": "bash_denied", "qwen": "bash_denied"}


def run_hook_command(harness, command, raw):
    bare = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/")}  # no venv on PATH
    return subprocess.run([*harness.shell, command], input=raw, capture_output=True, text=True,
                          env=bare)


def blocks(harness, proc) -> bool:
    """The client's blocking answer: Copilot's JSON deny, else exit 2 with a
    reason on stderr (Codex and Gemini CLI 0.61.0 run the call on exit 2 with
    nothing there: red team RT-H read hookRunner)."""
    if harness.failure_answers:
        return proc.returncode == 0 and json.loads(proc.stdout)["permissionDecision"] == "deny"
    return proc.returncode == 2 and (proc.stderr.strip() != "" or harness not in (CODEX, GEMINI))


@pytest.mark.parametrize("harness", sorted(HARNESSES))
def test_print_config_names_the_installed_executable_and_the_printed_command_runs(harness, capsys, tmp_path):
    assert cli_main(["hook", harness, "--print-config", "--always", "--plan-file", "docs/p*.md"]) == 0
    config = json.loads(capsys.readouterr().out)
    record = HARNESSES[harness]
    [command] = install.configured(record, config)
    if record.layout == "groups":
        assert config["hooks"][record.event][0]["matcher"] == "|".join(record.gated)
    assert command.startswith(("/", "out=$(/"))
    assert f"hook {harness} --always --plan-file 'docs/p*.md'" in command
    (tmp_path / "src").mkdir()  # the Gemini CLI fixture's dir_path
    raw = event(harness, DENIED_FIXTURE[harness], cwd=str(tmp_path))  # a directory that exists
    proc = run_hook_command(record, command, raw)
    assert proc.returncode == 0 and '"deny"' in proc.stdout, proc.stderr
    executable = command.split(" hook ")[0].removeprefix("out=$(")
    for broken in ("/nonexistent/bash-policy", "sh -c 'kill -9 $$' x", "sh -c 'exit 1' x"):  # the last silent
        proc = run_hook_command(record, command.replace(executable, broken, 1), raw)
        assert blocks(record, proc), (broken, proc)


def test_copilot_snippet_answers_a_deny_in_place_of_a_half_written_answer():
    """A hook that wrote part of its JSON and failed: Copilot CLI would read
    output that is not JSON as no decision and run the call."""
    command = adapters.hook_command(COPILOT, Options(), "printf '{\"permissionDecision\":' ; exit 1 ;")
    proc = run_hook_command(COPILOT, command, fixture("copilot", "bash_denied"))
    assert json.loads(proc.stdout)["permissionDecision"] == "deny" and proc.returncode == 0


def test_print_config_names_the_config_absolutely(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert cli_main(["hook", "gemini", "--print-config", "--config", "team.toml"]) == 0
    assert f"--config {tmp_path / 'team.toml'}" in capsys.readouterr().out


def test_snippet_falls_back_to_the_module_when_no_script_is_beside_python(monkeypatch):
    monkeypatch.setattr(adapters.sys, "executable", "/opt/py/bin/python3")
    snippet = json.loads(settings_snippet(GEMINI, Options()))
    hook = snippet["hooks"]["BeforeTool"][0]["hooks"][0]
    assert hook["command"] == ("/opt/py/bin/python3 -m bash_policy hook gemini || { echo \"bash-policy hook "
                               "gemini failed (status $?); the tool call is blocked\" >&2; exit 2; }")
    assert hook["name"] == "bash-policy" and hook["timeout"] == 10000


# -- Claude Code: a mode the hook cannot classify -----------------------------------------------

@pytest.mark.parametrize("mode", ["default", "acceptEdits", "auto", "bypassPermissions", "dontAsk"])
def test_claude_code_known_modes_other_than_plan_pass(mode):
    assert claude(event("claude-code", "bash_denied", permission_mode=mode), Options()) is None


@pytest.mark.parametrize("mode", [None, "", "planning", "Plan", 3, ["plan"]])
def test_claude_code_treats_a_mode_it_cannot_classify_as_plan(mode):
    """A gate installed for plan mode must not pass what it cannot classify:
    a missing or new permission_mode is enforced as plan mode, and the
    denial says why."""
    raw = json.loads(fixture("claude-code", "bash_denied"))
    if mode is None:
        del raw["permission_mode"]
    else:
        raw["permission_mode"] = mode
    action, reason = claude(json.dumps(raw), Options())
    assert action == "deny" and "BP400" in reason
    assert f"permission_mode is {json.dumps(mode)}" in reason and "treated the session as plan mode" in reason
    assert claude(event("claude-code", "bash_readonly", permission_mode="planning"), Options()) is None


# -- Codex CLI -----------------------------------------------------------------------------------

CODEX_FIELDS = {"session_id", "turn_id", "transcript_path", "cwd", "hook_event_name", "model",
                "permission_mode", "tool_name", "tool_input", "tool_use_id"}


def codex(raw, opts=None, env=None):
    outcome = handle(CODEX, raw, Options() if opts is None else opts, env or {})
    assert outcome.exit_code == 0 and outcome.stderr == "", outcome
    return json.loads(outcome.stdout)["hookSpecificOutput"] if outcome.stdout else None


def test_codex_fixtures_are_the_events_codex_sends():
    for path in (FIXTURES / "codex").glob("*.json"):
        assert set(json.loads(path.read_text())) == CODEX_FIELDS, path.name


def test_codex_runs_an_allowed_command_under_bash_policy_run(tmp_path):
    out = codex(fixture("codex", "bash_readonly"))
    assert out["permissionDecision"] == "allow" and set(out) == {"hookEventName", "permissionDecision",
                                                                 "updatedInput"}
    wrapped = out["updatedInput"]["command"]
    assert wrapped == f"{adapters.executable()} run --config /dev/null -- 'head -n1 notes.txt'"
    (tmp_path / "bp.toml").write_text("")
    with_config = codex(fixture("codex", "bash_readonly"), Options(config=str(tmp_path / "bp.toml")))
    assert f" run --config {tmp_path / 'bp.toml'} -- " in with_config["updatedInput"]["command"]


def test_codex_without_confinement_gives_no_opinion():
    """Never a bare allow: Codex counts it as a failed hook."""
    assert codex(fixture("codex", "bash_readonly"), Options(confine=False)) is None
    assert cli_main(["hook", "codex", "--allow-readonly", "--print-config"]) == 2


@pytest.mark.parametrize("mode", ["default", "bypassPermissions"])
def test_codex_enforces_in_every_mode_it_reports(mode):
    out = codex(event("codex", "bash_denied", permission_mode=mode))
    assert out["permissionDecision"] == "deny" and out["permissionDecisionReason"].startswith(DECISION_NOTE)
    assert "BP300" in out["permissionDecisionReason"] and "/hooks" in out["permissionDecisionReason"]


def test_codex_patches_may_only_touch_plan_files():
    plan = Options(plan_files=["plans/*.md"])
    assert codex(fixture("codex", "patch_plan"), plan) is None
    out = codex(fixture("codex", "patch_source"), plan)
    assert out["permissionDecision"] == "deny" and "src.txt" in out["permissionDecisionReason"]
    out = codex(fixture("codex", "patch_plan"))  # no plan file named: none is writable
    assert out["permissionDecision"] == "deny" and "--plan-file" in out["permissionDecisionReason"]
    out = codex(event("codex", "patch_plan", command="*** Begin Patch\n*** Frobnicate: x\n*** End Patch"),
                plan)
    assert out["permissionDecision"] == "deny" and "Frobnicate" in out["permissionDecisionReason"]


def test_codex_failures_exit_2_with_a_reason_on_stderr():
    """Codex runs the call on exit 2 with an empty stderr."""
    for raw in ("", "{", json.dumps({"tool_name": "Bash", "tool_input": {"command": 7}})):
        outcome = handle(CODEX, raw, Options(), {})
        assert outcome.exit_code == 2 and outcome.stdout == "" and outcome.stderr.strip()


def test_codex_reads_the_policy_of_the_session_not_of_the_workdir(tmp_path, trusted):
    """exec_command's workdir, which the model picks, arrives as the event's
    cwd; the policy is the one of the session's directory (its transcript's
    session_meta), so a config somewhere else does not loosen it."""
    session, elsewhere = tmp_path / "session", tmp_path / "elsewhere"
    for directory, program in ((session, "tokei"), (elsewhere, "frobnicate")):
        (directory / ".git").mkdir(parents=True)
        (directory / "bash-policy.toml").write_text(f'[programs.{program}]\npositionals = "read"\n')
        trusted(directory / "bash-policy.toml")
    transcript = tmp_path / "rollout.jsonl"
    transcript.write_text(json.dumps({"type": "session_meta", "payload": {"cwd": str(session)}}) + "\n")
    for command, allowed in (("tokei src", True), ("frobnicate src", False)):
        raw = event("codex", "bash_readonly", cwd=str(elsewhere), transcript_path=str(transcript),
                    command=command)
        assert (codex(raw)["permissionDecision"] == "allow") == allowed, command
    # No transcript (an ephemeral session): the event's directory, as for the other clients.
    raw = event("codex", "bash_readonly", cwd=str(elsewhere), transcript_path=None,
                command="frobnicate src")
    assert codex(raw)["permissionDecision"] == "allow"


# -- Copilot CLI ---------------------------------------------------------------------------------

COPILOT_HOME = {"HOME": "/home/user"}


def copilot(raw, opts=None, env=None):
    outcome = handle(COPILOT, raw, Options() if opts is None else opts, COPILOT_HOME if env is None else env)
    assert outcome.exit_code == 0 and outcome.stderr == "", outcome
    return json.loads(outcome.stdout) if outcome.stdout else None


def test_copilot_fixtures_are_the_events_copilot_sends():
    for path in (FIXTURES / "copilot").glob("*.json"):
        assert set(json.loads(path.read_text())) == {"sessionId", "timestamp", "cwd", "toolName",
                                                    "toolArgs"}, path.name


@pytest.mark.parametrize("name,expected", [
    ("bash_readonly", None), ("bash_denied", "deny"), ("create_source", "deny"),
    ("edit_source", "deny"), ("create_plan", None), ("view_source", None),
])
def test_copilot_fixtures(name, expected):
    answer = copilot(fixture("copilot", name))
    assert (answer and answer["permissionDecision"]) == expected
    if expected:
        assert answer["permissionDecisionReason"].startswith(DECISION_NOTE)


def test_copilot_plan_file_is_this_sessions_plan_md():
    other = event("copilot", "create_plan")
    raw = json.loads(other)
    raw["toolArgs"]["path"] = raw["toolArgs"]["path"].replace(raw["sessionId"], "another-session")
    answer = copilot(json.dumps(raw))
    assert answer["permissionDecision"] == "deny" and raw["sessionId"] in answer["permissionDecisionReason"]
    # COPILOT_HOME moves the session state, and the plan with it.
    assert copilot(other, env={"HOME": "/nowhere", "COPILOT_HOME": "/home/user/.copilot"}) is None
    assert copilot(other, env={"HOME": "/nowhere"})["permissionDecision"] == "deny"


def test_copilot_tool_args_may_be_a_json_string():
    raw = json.loads(fixture("copilot", "bash_denied"))
    raw["toolArgs"] = json.dumps(raw["toolArgs"])
    assert copilot(json.dumps(raw))["permissionDecision"] == "deny"


@pytest.mark.parametrize("tool", ["write_bash", "write_powershell"])
def test_copilot_input_typed_into_a_running_shell_is_denied(tool):
    """Text for a shell a bash call left running is a command the check never
    sees (red team RT-B): denied, whatever it says."""
    raw = json.loads((FIXTURES / "copilot" / "bash_readonly.json").read_text())
    raw["toolName"], raw["toolArgs"] = tool, {"shellId": "1", "input": "touch canary\n"}
    answer = copilot(json.dumps(raw))
    assert answer["permissionDecision"] == "deny" and "running shell" in answer["permissionDecisionReason"]


def test_a_powershell_command_is_denied_as_a_shell_bash_policy_cannot_read():
    """Claude Code's PowerShell tool and Copilot's powershell run commands no
    bash reading judges (red team RT-F): denied, whatever they say."""
    raw = json.loads(fixture("claude-code", "bash_readonly"))
    raw["tool_name"], raw["tool_input"] = "PowerShell", {"command": "Get-ChildItem"}
    action, reason = claude(json.dumps(raw))
    assert action == "deny" and "PowerShell" in reason and "bash tool" in reason
    raw = json.loads(fixture("copilot", "bash_readonly"))
    raw["toolName"], raw["toolArgs"] = "powershell", {"command": "Remove-Item -Recurse x"}
    answer = copilot(json.dumps(raw))
    assert answer["permissionDecision"] == "deny" and "PowerShell" in answer["permissionDecisionReason"]


def test_copilot_rewrites_only_when_it_answers_allow():
    """A rewritten command loses Copilot's own read-only approval, so the
    rewrite comes only with --allow-readonly, whose allow skips it anyway."""
    assert copilot(fixture("copilot", "bash_readonly")) is None
    answer = copilot(fixture("copilot", "bash_readonly"), Options(allow_readonly=True))
    assert answer["permissionDecision"] == "allow"
    assert answer["modifiedArgs"] == {
        "command": f"{adapters.executable()} run --config /dev/null -- 'head -n1 notes.txt'",
        "description": "x"}
    answer = copilot(fixture("copilot", "bash_readonly"), Options(allow_readonly=True, confine=False))
    assert answer["permissionDecision"] == "allow" and "modifiedArgs" not in answer


@pytest.mark.parametrize("raw,problem", [
    ("", "not a JSON event"), ("[]", "JSON object"),
    ('{"toolName": "bash"}', "toolArgs"), ('{"toolArgs": {}}', "toolName"),
    ('{"toolName": "bash", "toolArgs": "{not json"}', "not JSON"),
    ('{"hook_event_name": "PreToolUse", "tool_name": "bash", "tool_input": {}}', "toolName"),
])
def test_copilot_failures_are_a_json_deny(raw, problem):
    """Copilot CLI's reference says a failed hook never blocks: every
    failure is answered with a deny, exit 0."""
    outcome = handle(COPILOT, raw, Options(), {})
    body = json.loads(outcome.stdout)
    assert outcome.exit_code == 0 and body["permissionDecision"] == "deny"
    assert problem in body["permissionDecisionReason"] and "blocked" in body["permissionDecisionReason"]


# -- the deadline --------------------------------------------------------------------------------

@pytest.mark.parametrize("harness", ["codex", "copilot", "claude-code"])
def test_a_hook_that_gets_no_answer_in_time_blocks_by_itself(harness):
    """Every client lets a call through when its hook times out; so the hook
    gives the blocking answer itself first (here: stdin is never closed)."""
    code = (f"from bash_policy.integrations import adapters, harnesses; import sys; "
            f"sys.exit(adapters.main(harnesses.HARNESSES[{harness!r}], adapters.Options(), deadline=0.5))")
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        proc.wait(timeout=60)  # stdin stays open: the hook waits on it
        out, err = proc.stdout.read(), proc.stderr.read()
    finally:
        proc.kill()
        proc.stdin.close()
    record = HARNESSES[harness]
    assert blocks(record, subprocess.CompletedProcess([], proc.returncode, out, err)), (out, err)
    assert "no decision within 0.5 s" in out + err


# -- --rewrite: a denied command's safe fix runs instead ------------------------------------

REWRITE = Options(plan_files=[".plans/*.md"], rewrite=True, allow_readonly=True)


def test_claude_code_rewrite_runs_the_safe_fix_through_updated_input():
    raw = event("claude-code", "bash_denied", command="rg -n TODO *.py")
    out = json.loads(handle(CLAUDE_CODE, raw, REWRITE, {}).stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "allow"
    assert out["updatedInput"]["command"] == "rg -n TODO -- *.py"
    assert set(out["updatedInput"]) == set(json.loads(raw)["tool_input"])  # the rest kept
    assert "ran `rg -n TODO -- *.py` instead of `rg -n TODO *.py`" in out["additionalContext"]
    assert "BP203" in out["additionalContext"]


def test_a_rewrite_without_allow_readonly_asks_as_the_client_would():
    raw = event("claude-code", "bash_denied", command="rg -n TODO *.py")
    opts = Options(plan_files=[".plans/*.md"], rewrite=True)
    out = json.loads(handle(CLAUDE_CODE, raw, opts, {}).stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "ask" and out["updatedInput"]["command"] == "rg -n TODO -- *.py"


def test_gemini_rewrite_sets_the_tool_input():
    raw = event("gemini", "shell_denied", command="rg -n TODO *.py")
    body = json.loads(handle(GEMINI, raw, dataclasses.replace(REWRITE, confine=False), {}).stdout)
    assert body["decision"] == "allow"
    assert body["hookSpecificOutput"]["tool_input"]["command"] == "rg -n TODO -- *.py"
    # Where allowed commands run under bash-policy run, so does the fix.
    body = json.loads(handle(GEMINI, raw, REWRITE, {}).stdout)
    assert body["hookSpecificOutput"]["tool_input"]["command"] == run_command(
        "rg -n TODO -- *.py", executable=adapters.executable(), config=os.devnull)


@pytest.mark.parametrize("command", ["rg foo > out",        # only an unsafe fix: dropping the write
                                     "rg foo *.py | sh",    # a denial without a fix
                                     "touch canary"])
def test_no_rewrite_without_a_safe_fix(command):
    assert claude(event("claude-code", "bash_denied", command=command), REWRITE)[0] == "deny"


def test_no_rewrite_unless_asked():
    decision = claude(event("claude-code", "bash_denied", command="rg -n TODO *.py"))
    assert decision[0] == "deny" and "rewrite (safe): rg -n TODO -- *.py" in decision[1]


def test_the_snippet_carries_rewrite():
    assert "--rewrite" in settings_snippet(CLAUDE_CODE, Options(rewrite=True))
