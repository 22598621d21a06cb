import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "worked_harness.py"
sys.path.insert(0, str(EXAMPLE.parent))
import worked_harness  # noqa: E402


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    root = tmp_path_factory.mktemp("project")
    return worked_harness.play(root), root


def entry(log, call):
    """The result lines printed after a tool call."""
    index = log.index(call)
    return log[index + 1]


def test_reminder_rides_every_planning_turn_and_stops_after_approval(played):
    harness, _ = played
    user_turns = [m for m in harness.messages if m["role"] == "user"]
    assert [any("Plan mode is on" in c for c in m["content"]) for m in user_turns] == [True, True, False]
    assert "EnterPlanMode" not in user_turns[0]["tools"]


def test_source_write_blocked_then_plan_written(played):
    harness, root = played
    blocked = [line for line in harness.log if line.strip().startswith("denied: edit src/Login.tsx")]
    assert blocked and "/plan off" in harness.log[harness.log.index(blocked[0])]
    assert "login.lockedOut" in (root / ".plans/login-i18n.md").read_text()


def test_read_only_commands_run_and_the_dangerous_one_is_denied_with_its_fix(played):
    harness, _ = played
    assert "src/Login.tsx:2:" in entry(harness.log, "* Bash(rg -n errorMsg src)")
    assert "Login page" in entry(harness.log, "* Bash(git log --oneline -5)")
    denied = entry(harness.log, "* Bash(rg -n errorMsg src > hits.txt)")
    assert "BP500" in denied and "fix: drop the redirection" in denied


def test_writing_subagent_not_dispatched(played):
    harness, _ = played
    assert "only dispatches read-only subagents" in entry(harness.log, "* Task(general-purpose)")


def test_exit_needs_approval_then_edits_go_through(played):
    harness, root = played
    hand_overs = [harness.log[i + 1] for i, line in enumerate(harness.log) if line == "* ExitPlanMode()"]
    assert hand_overs[0].strip().startswith("keep planning")
    assert hand_overs[1].strip().startswith("approved")
    assert harness.gate.state == "off"
    assert 't("login.wrongPassword")' in (root / "src/Login.tsx").read_text()
    assert not (root / "hits.txt").exists()


def test_runs_as_a_script():
    proc = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.rstrip().endswith("plan mode: off")
