import os

import pytest

from bash_policy.integrations.gate import (
    ALLOW,
    ASK,
    DENY,
    OFF,
    PLANNING,
    READY,
    PlanGate,
    Rule,
    TransitionError,
    disabled,
    evaluate,
    from_config,
    merge,
    reminder,
    wildcard_match,
)

TOOLS = ["Read", "Grep", "Bash", "Edit", "Write", "Task", "ExitPlanMode", "EnterPlanMode"]


def planning(tmp_path, **kw):
    gate = PlanGate(root=str(tmp_path), **kw)
    gate.enter()
    return gate


# -- rules ---------------------------------------------------------------------

def test_last_match_wins_and_ask_when_nothing_matches():
    rules = (Rule("edit", "*", DENY), Rule("edit", "docs/*.md", ALLOW))
    assert evaluate(rules, "edit", "docs/a.md") == ALLOW
    assert evaluate(rules, "edit", "src/a.py") == DENY
    assert evaluate(rules, "webfetch", "x") == ASK
    assert evaluate(rules + (Rule("edit", "**", DENY),), "edit", "docs/a.md") == DENY


def test_merge_orders_layers_so_later_layers_override():
    defaults = (Rule("*", "*", ALLOW),)
    plan = (Rule("edit", "*", DENY),)
    user = from_config({"edit": {"notes/*.txt": "allow"}})
    merged = merge(defaults, plan, user)
    assert evaluate(merged, "edit", "notes/a.txt") == ALLOW
    assert evaluate(merged, "edit", "src/a.py") == DENY
    assert evaluate(merged, "read", "src/a.py") == ALLOW


def test_path_star_stays_in_one_component_but_lone_star_matches_all():
    assert wildcard_match(".plans/*.md", ".plans/a.md", paths=True)
    assert not wildcard_match(".plans/*.md", ".plans/sub/a.md", paths=True)
    assert wildcard_match(".plans/**.md", ".plans/sub/a.md", paths=True)
    assert wildcard_match("*", "/abs/path", paths=True)
    assert wildcard_match("git log*", "git log -- src/a.py")


def test_bad_action_and_bad_config_are_rejected():
    with pytest.raises(ValueError):
        Rule("edit", "*", "maybe")
    with pytest.raises(ValueError):
        from_config({"edit": 3})


def test_disabled_removes_only_tools_whose_last_rule_is_a_star_deny():
    rules = (Rule("*", "*", ALLOW), Rule("edit", "*", DENY), Rule("task", "*", DENY),
             Rule("task", "Explore", ALLOW))
    assert disabled(TOOLS, rules) == {"Edit", "Write"}
    assert disabled(TOOLS, rules + (Rule("edit", ".plans/*.md", ALLOW),)) == set()


# -- plan mode -----------------------------------------------------------------

def test_plan_mode_keeps_edit_tools_when_a_plan_file_is_writable(tmp_path):
    gate = planning(tmp_path)
    assert gate.disabled(TOOLS) == {"EnterPlanMode"}
    no_plan_file = PlanGate(plan_files=(), state=PLANNING)
    assert {"Edit", "Write"} <= no_plan_file.disabled(TOOLS)


def test_writes_only_reach_the_plan_file(tmp_path):
    gate = planning(tmp_path)
    assert gate.check_tool("Write", {"file_path": ".plans/p.md"}).action == ALLOW
    assert gate.check_tool("Write", {"file_path": str(tmp_path / ".plans/p.md")}).action == ALLOW
    for path in ("src/a.py", ".plans/../src/p.md", ".plans/sub/p.md", "/elsewhere/p.md"):
        decision = gate.check_tool("Edit", {"file_path": path})
        assert decision.action == DENY, path
        assert "/plan off" in decision.reason


def test_a_symlink_in_the_plans_dir_cannot_redirect_a_write(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / ".plans").mkdir()
    os.symlink(tmp_path / "src" / "main.py", tmp_path / ".plans" / "p.md")
    gate = planning(tmp_path)
    assert gate.check_tool("Write", {"file_path": ".plans/p.md"}).action == DENY


def test_home_plan_glob_is_expanded(tmp_path):
    gate = planning(tmp_path, plan_files=("~/.claude/plans/*.md",))
    home_plan = os.path.expanduser("~/.claude/plans/session.md")
    assert gate.check_tool("Write", {"file_path": home_plan}).action == ALLOW


def test_shell_is_delegated_to_the_bash_policy(tmp_path):
    gate = planning(tmp_path)
    assert gate.check_tool("Bash", {"command": 'rg -n "foo bar" src'}).action == ALLOW
    denied = gate.check_tool("Bash", {"command": "rg --pre cat x"})
    assert denied.action == DENY
    assert "BP400" in denied.reason and "fix:" in denied.reason
    assert denied.reason.rstrip().endswith("/plan off")
    assert denied.verdict is not None and not denied.verdict.allowed


def test_user_rules_override_the_policy_verdict_last(tmp_path):
    gate = planning(tmp_path, user_rules=(Rule("shell", "rg --pre*", ASK),))
    assert gate.check_tool("Bash", {"command": "rg --pre cat x"}).action == ASK


def test_only_read_only_subagents_are_dispatched(tmp_path):
    gate = planning(tmp_path)
    assert gate.check_tool("Task", {"subagent_type": "Explore"}).action == ALLOW
    general = gate.check_tool("Task", {"subagent_type": "general-purpose"})
    assert general.action == DENY and "/plan off" in general.reason


def test_reads_allowed_unknown_tools_ask(tmp_path):
    gate = planning(tmp_path)
    assert gate.check_tool("Read", {"file_path": "/etc/hostname"}).action == ALLOW
    assert gate.check_tool("Grep", {"pattern": "x"}).action == ALLOW
    assert gate.check_tool("mcp__db__query", {}).action == ASK


def test_non_string_subject_is_denied(tmp_path):
    gate = planning(tmp_path)
    assert gate.check_tool("Bash", {"command": ["rm", "-rf", "/"]}).action == DENY


def test_a_failure_inside_decide_is_a_denial(tmp_path):
    """A NUL byte makes path resolution raise; a library caller gets a denial (RT2 F22)."""
    gate = planning(tmp_path)
    for permission, subject, cwd in (("edit", str(tmp_path / ".plans/p.md\x00"), None),
                                     ("shell", "cat a.txt", str(tmp_path) + "\x00")):
        decision = gate.decide(permission, subject, cwd=cwd)
        assert decision.action == DENY and "failed" in decision.reason, decision


# -- states --------------------------------------------------------------------

def test_off_is_reachable_from_every_state_and_lifts_the_gate(tmp_path):
    for path in ([], ["finish"], ["finish", "revise"]):
        gate = planning(tmp_path)
        for event in path:
            gate.transition(event)
        assert gate.off() == OFF
        assert gate.check_tool("Edit", {"file_path": "src/a.py"}).action == ALLOW
        assert gate.reminder() == ""
    assert PlanGate().off() == OFF


def test_ready_blocks_everything_but_the_hand_over_and_names_the_way_out(tmp_path):
    gate = planning(tmp_path, way_out="/plan cancel")
    gate.finish()
    assert gate.state == READY
    read = gate.check_tool("Read", {"file_path": "a"})
    assert read.action == DENY and "/plan cancel" in read.reason
    assert gate.check_tool("ExitPlanMode", {}).action == ALLOW
    assert gate.disabled(TOOLS) == set(TOOLS) - {"ExitPlanMode"}


def test_invalid_transition_names_the_possible_ones(tmp_path):
    gate = planning(tmp_path)
    with pytest.raises(TransitionError, match="off"):
        gate.enter()
    gate.approve()
    assert gate.state == OFF
    assert gate.history == ["off -enter-> planning", "planning -approve-> off"]


def test_only_plan_mode_may_exit_and_only_off_may_enter(tmp_path):
    gate = PlanGate(root=str(tmp_path))
    assert gate.check_tool("ExitPlanMode").action == DENY
    assert gate.check_tool("EnterPlanMode").action == ALLOW
    gate.enter()
    assert gate.state == PLANNING
    assert gate.check_tool("ExitPlanMode").action == ALLOW
    assert gate.check_tool("EnterPlanMode").action == DENY


def test_reminder_names_plan_file_exit_tool_and_way_out():
    text = reminder([".plans/x.md"], "/plan off", "exit_plan_mode")
    assert ".plans/x.md" in text and "exit_plan_mode" in text and "/plan off" in text
