"""Wrappers check their inner command with the same engine."""

import pytest

from bash_policy.judge.engine import check
from bash_policy.judge.policy import Policy

# `time` is a bash keyword that bashlex cannot parse, so its checks run without the cross-check.
SINGLE_PARSER = Policy.from_mapping({"crosscheck": "off"})

WRAPPERS = ["timeout 5", "timeout -k 1 -s KILL 10s", "nice", "nice -n 5", "stdbuf -oL", "time",
            "time -p", "env", "env LC_ALL=C", "command", "nice timeout 5 env TZ=UTC"]


def _codes(command, policy=None):
    return {d.code for d in check(command, policy).denials}


@pytest.mark.parametrize("wrapper", WRAPPERS)
def test_inner_command_is_checked(wrapper):
    assert check(f"{wrapper} rg -n foo src", SINGLE_PARSER).allowed
    assert "BP400" in _codes(f"{wrapper} rg --pre sh foo", SINGLE_PARSER)
    assert "BP300" in _codes(f"{wrapper} rm -rf build", SINGLE_PARSER)
    assert "BP300" in _codes(f"{wrapper} bash -c 'rg foo'", SINGLE_PARSER)


def test_denials_named_in_the_brief_propagate():
    assert "BP400" in _codes("timeout 5 rg --pre sh x")
    assert "BP300" in _codes("xargs rm")
    assert "BP600" in _codes("env PAGER=less git log")


def test_inner_denial_points_at_the_inner_word():
    command = "timeout 5 rg --pre sh x"
    (denial,) = check(command).denials
    assert command[denial.span.start:denial.span.end] == "--pre"


@pytest.mark.parametrize("command", ["xargs rg foo", "xargs timeout 5 rg foo", "xargs nice rg foo"])
def test_xargs_needs_double_dash_through_nested_wrappers(command):
    assert "BP404" in _codes(command)
    assert check(command + " --").allowed


@pytest.mark.parametrize("command", ["xargs nice", "xargs timeout 5", "xargs xargs", "xargs env",
                                     "xargs command"])
def test_xargs_never_takes_the_program_from_stdin(command):
    assert "BP404" in _codes(command)


def test_env_assignments_follow_the_policy_allowlist():
    assert check("env TZ=UTC date").allowed
    relaxed = Policy.from_mapping({"env": {"MY_SETTING": "*"}})
    assert "BP600" in _codes("env MY_SETTING=1 rg foo")
    assert check("env MY_SETTING=1 rg foo", relaxed).allowed


def test_command_describes_names_without_checking_them():
    assert check("command -v python3 make rm").allowed
    assert "BP300" in _codes("command rm")


def test_no_program_fails_on_the_operands_xargs_appends():
    """The rules of a program see xargs' operands as one they cannot know
    (red team RT-I: `echo victim | xargs gzip --` replaced victim): none may
    fail on it, under any program or subcommand."""
    policy, failed = Policy.default(), []
    for name in sorted(policy.program_names()):
        spec = policy.spec(name)
        if spec.denied is not None:
            continue
        subs = [f" {s}" for s, sub in spec.subcommands.items() if sub.denied is None] or [""]
        for sub in subs:
            for command in (f"find . -print0 | xargs -0 {name}{sub} --", f"echo x | xargs {name}{sub}"):
                if any(d.code == "BP107" for d in check(command, cwd="/tmp").denials):
                    failed.append(command)
    assert failed == []
    assert not check("echo victim | xargs gzip --", cwd="/tmp").allowed
