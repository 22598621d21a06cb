"""`bash-policy hook NAME --install` merges the snippet into the client's
settings (keeping every other hook where it is, backed up, idempotent), and
`--check` runs sample events through the installed command and reads the
answers as the client would, so a hook that is missing or fails open says so."""

import json
import os

import pytest

from bash_policy.cli import main as cli_main
from bash_policy.integrations import adapters, install
from bash_policy.integrations.adapters import Options
from bash_policy.integrations.harnesses import CLAUDE_CODE, CODEX, COPILOT, GEMINI, HARNESSES


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A throwaway HOME and working directory, with no `codex` on PATH."""
    home = tmp_path / "home"
    (home / "work").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "COPILOT_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.chdir(home / "work")
    return home


OTHER_HOOK = {"matcher": "Bash", "hooks": [{"type": "command", "command": "/usr/local/bin/audit"}]}


@pytest.mark.parametrize("harness", [CLAUDE_CODE, GEMINI])
def test_install_merges_keeps_other_hooks_backs_up_and_is_idempotent(harness, home, capsys):
    settings = harness.install_file(os.environ)
    settings.parent.mkdir(parents=True)
    original = {"theme": "dark", "hooks": {harness.event: [OTHER_HOOK], "Stop": [OTHER_HOOK]}}
    settings.write_text(json.dumps(original))
    assert cli_main(["hook", harness.name, "--install"]) == 0
    data = json.loads(settings.read_text())
    assert data["theme"] == "dark" and data["hooks"]["Stop"] == [OTHER_HOOK]
    assert data["hooks"][harness.event][0] == OTHER_HOOK
    assert install.configured(harness, data) == [adapters.hook_command(harness, Options())]
    assert json.loads(settings.with_name(settings.name + ".bak").read_text()) == original
    # Again, with other options: replaced in place, not added twice.
    assert cli_main(["hook", harness.name, "--install", "--always"]) == 0
    again = json.loads(settings.read_text())
    assert len(again["hooks"][harness.event]) == 2 and again["hooks"][harness.event][0] == OTHER_HOOK
    assert install.configured(harness, again) == [adapters.hook_command(harness, Options(always=True))]
    capsys.readouterr()
    assert cli_main(["hook", harness.name, "--install", "--always"]) == 0
    assert "already installed, not changed" in capsys.readouterr().out


def test_install_into_a_group_shared_with_other_hooks_replaces_only_bash_policys_entry(home):
    settings = CLAUDE_CODE.install_file(os.environ)
    settings.parent.mkdir(parents=True)
    ours = {"type": "command", "command": "/old/venv/bin/bash-policy hook claude-code || exit 2"}
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [OTHER_HOOK["hooks"][0], ours]}]}}))
    assert cli_main(["hook", "claude-code", "--install"]) == 0
    [group] = json.loads(settings.read_text())["hooks"]["PreToolUse"]
    assert group["matcher"] == "Bash" and group["hooks"][0] == OTHER_HOOK["hooks"][0]
    assert group["hooks"][1]["command"] == adapters.hook_command(CLAUDE_CODE, Options())


def test_install_refuses_a_settings_file_it_cannot_read(home, capsys):
    settings = CLAUDE_CODE.install_file(os.environ)
    settings.parent.mkdir(parents=True)
    settings.write_text("{not json")
    assert cli_main(["hook", "claude-code", "--install"]) == 1
    assert "not changed" in capsys.readouterr().err and settings.read_text() == "{not json"


def test_copilot_installs_its_own_hook_file(home):
    assert cli_main(["hook", "copilot", "--install"]) == 0
    data = json.loads((home / ".copilot" / "hooks" / "bash-policy.json").read_text())
    assert data["version"] == 1
    assert install.configured(COPILOT, data) == [adapters.hook_command(COPILOT, Options())]


@pytest.mark.parametrize("harness", sorted(HARNESSES))
def test_check_runs_the_installed_command_and_reads_the_answers(harness, home, capsys):
    record = HARNESSES[harness]
    assert cli_main(["hook", harness, "--check"]) == 1
    assert "no `bash-policy hook" in capsys.readouterr().err
    cli_main(["hook", harness, "--install"])
    capsys.readouterr()
    report = install.check(record)
    allowed, denied = [line for line in report.lines if line.startswith("  `")]
    assert allowed.startswith(f"  `{install.ALLOWED_SAMPLE}`: exit 0, ")
    # Claude Code's sample is plan mode of no known version: not rewritten (docs/integrations.md).
    assert ("rewritten" if record in (CODEX, GEMINI) else "no opinion") in allowed
    assert "denied: bash-policy denied (1 problem) | BP300" in denied
    if record is CODEX:  # no codex on PATH: the trust cannot be known, which is not ok
        assert not report.ok and any("trust: unknown" in line for line in report.lines)
    else:
        assert report.ok, report.text()


def test_check_finds_a_hook_that_fails_open(home):
    """An edited command that exits 1 (Claude Code runs the call) or answers
    nothing for a denied command: --check says so."""
    settings = CLAUDE_CODE.install_file(os.environ)
    settings.parent.mkdir(parents=True)
    for command, problem in (("true hook claude-code", "no opinion"),
                             ("sh -c 'exit 1' hook claude-code", "FAILS OPEN: exit 1")):
        settings.write_text(json.dumps({"hooks": {"PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}]}}))
        report = install.check(CLAUDE_CODE)
        assert not report.ok and any(problem in line and "expected denied or blocked" in line
                                     for line in report.lines), report.text()


@pytest.mark.parametrize("harness,code,stdout,stderr,seen", [
    (CODEX, 2, "", "", "FAILS OPEN: exit 2 with nothing on stderr"),
    (CODEX, 2, "", "why", "blocked"),
    (CODEX, 0, '{"hookSpecificOutput": {"permissionDecision": "allow"}}', "", "allowed"),
    (CLAUDE_CODE, 2, "", "", "blocked"),
    (CLAUDE_CODE, 127, "", "not found", "FAILS OPEN: exit 127"),
    (COPILOT, 0, '{"permissionDecision": "deny"', "", "FAILS OPEN: the answer is not JSON"),
    (COPILOT, 1, "", "", "blocked"),
    (GEMINI, 0, "{}\n", "", "no opinion"),
    (GEMINI, 0, '{"decision": "deny", "reason": "x"}', "", "denied"),
])
def test_reading_follows_each_clients_rules(harness, code, stdout, stderr, seen):
    assert install.reading(harness, code, stdout, stderr) == seen


def test_doctor_checks_every_installed_hook(home, capsys):
    """`bash-policy doctor` runs --check's samples for each client whose
    settings hold a bash-policy hook, and exits 1 when one would not block."""
    assert cli_main(["doctor"]) == 0
    assert "hooks: none installed" in capsys.readouterr().out
    cli_main(["hook", "gemini", "--install"])
    capsys.readouterr()
    assert cli_main(["doctor", "--json"]) == 0
    hooks = json.loads(capsys.readouterr().out)["hooks"]
    assert [(h["client"], h["ok"]) for h in hooks] == [("Gemini CLI", True)]
    settings = CLAUDE_CODE.install_file(os.environ)
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": "true hook claude-code"}]}]}}))
    assert cli_main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert "Claude Code: NOT OK" in out and "Gemini CLI: ok" in out
