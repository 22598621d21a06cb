"""Mode options (spec `modes`): the mode that results from the order the flags are given in."""

from __future__ import annotations

import pytest

from bash_policy import check
from bash_policy.judge.policy import ConfigError, Policy


def tool(combine: str, **extra) -> Policy:
    """A program `tool` whose -a, -b and -c select a mode, and whose rule (the
    compressors' own) writes its files unless the mode is -t or -l."""
    modes = {"flags": ["-a", "-t", "-l"], "combine": combine, **extra}
    return Policy.from_mapping({"programs": {"tool": {
        "positionals": "read", "hook": "compressor_to_stdout", "modes": modes,
        "flags": ["-a/--all", "-t/--test", "-l/--list", "-c", "-R"]}}})


def allowed(command: str, policy: Policy) -> bool:
    return check(command, policy).allowed


def test_last_wins():
    policy = tool("last", default="-a")
    assert not allowed("tool -t -a f", policy) and allowed("tool -a -t f", policy)
    assert not allowed("tool -ta f", policy) and allowed("tool --all --list f", policy)
    assert not allowed("tool f", policy), "the default mode writes"


def test_first_wins():
    policy = tool("first")
    assert allowed("tool -t -a f", policy) and not allowed("tool -a -t f", policy)


def test_all_take_effect():
    policy = tool("all")
    assert allowed("tool -t -a f", policy) and allowed("tool -a -t f", policy)
    assert not allowed("tool -a f", policy)


def test_error_denies_two_different_modes_in_either_order():
    policy = tool("error")
    for command in ("tool -t -l f", "tool -l -t f", "tool -tl f"):
        denial = check(command, policy).denials[0]
        assert (denial.code, denial.rule) == ("BP400", "modes"), command
    assert allowed("tool -t -t f", policy), "the same mode twice is one mode"
    assert allowed("tool -t --test f", policy), "two spellings of one flag are one mode"


def test_a_reset_drops_the_modes_before_it():
    policy = tool("all", reset=["-R"])
    assert not allowed("tool -t -R f", policy) and allowed("tool -R -t f", policy)


def test_without_modes_the_rule_sees_no_mode():
    policy = Policy.from_mapping({"programs": {"tool": {
        "positionals": "read", "hook": "compressor_to_stdout", "flags": ["-t"]}}})
    assert not allowed("tool -t f", policy), "a rule that judges modes fails closed without them"


@pytest.mark.parametrize("modes, error", [
    ({"flags": ["-a"], "combine": "sometimes"}, "combine"),
    ({"flags": ["-x"], "combine": "last"}, "not a flag"),
    ({"flags": [], "combine": "last"}, "name the flags"),
    ({"flags": ["-a"], "combine": "last", "default": "-t"}, "default"),
    ({"flags": ["-a"], "combine": "last", "reset": ["-x"]}, "not a flag"),
    ({"flags": ["-a"], "combine": "last", "order": []}, "expected a table"),
])
def test_malformed_modes_fail_at_load(modes, error):
    with pytest.raises(ConfigError, match=error):
        Policy.from_mapping({"programs": {"tool": {
            "positionals": "read", "modes": modes, "flags": ["-a", "-t"]}}})


def test_an_alias_changes_only_the_default():
    assert not allowed("unxz -t -z notes.txt", Policy.default())
    assert allowed("unxz -z -t notes.txt.xz", Policy.default())
    assert "uncompressed" in check("unxz notes.txt.xz").denials[0].message
    assert "compressed copy" in check("xz -t -z notes.txt").denials[0].message
