"""Wrappers check their inner command with the same engine, and the system,
toolchain and denied-program specs keep every denial reachable from a corpus."""

from pathlib import Path

import pytest

from bash_policy.corpus import read_cases
from bash_policy.judge.engine import check
from bash_policy.judge.policy import Policy

CORPORA = Path(__file__).resolve().parent.parent / "corpora"
OWN_CORPORA = ("system.txt", "wrappers.txt", "toolchains.txt", "denied-programs.txt")
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
    assert "BP300" in _codes("command make")


# -- every denial in these specs is reached by a corpus case ------------------

_CASES = [case for name in OWN_CORPORA for case in read_cases(CORPORA / name)]
_MESSAGES = [d.message for case in _CASES if case.expect == "deny"
             for d in check(case.command, cwd=case.cwd).denials]
_OWN = """pwd echo printf which type basename dirname realpath readlink date env printenv whoami id
groups uname hostname arch nproc uptime free ps pgrep true false test [ expr seq sleep xxd od
hexdump strings md5sum sha1sum sha224sum sha256sum sha384sum sha512sum b2sum cksum base64 base32
basenc timeout nice stdbuf time command xargs python3 node go cargo pip npm rustc java gcc
less more most pg man vi vim nvim view nano emacs tee nohup sh bash zsh dash fish ksh eval exec
source . trap alias let read mapfile readarray set shopt unset export declare typeset local
builtin enable kill pkill killall rm rmdir shred mv cp ln install mkdir touch chmod chown
truncate dd curl wget ssh scp rsync nc sudo su crontab at make perl ruby php osascript""".split()
ALIASES = {"python": "python3", "pip3": "pip", "[": "test", "base32": "base64", "b2sum": "md5sum"}


def _walk(spec):
    yield spec
    for sub in spec.subcommands.values():
        yield from _walk(sub)


# Declaration builtins (export, declare, local, ...) are rejected by the parser
# (BP101) before their spec is consulted; their specs only document the reason.
_PARSER_REJECTS = {case.command.split()[0] for case in _CASES
                   if "BP101" in _codes(case.command)}


@pytest.mark.parametrize("name", _OWN)
def test_every_denial_has_a_corpus_case(name):
    for spec in _walk(Policy.default().spec(name)):
        if spec.denied is not None and name not in _PARSER_REJECTS:
            assert any(m.startswith(f"`{spec.display}` {spec.denied.why}") for m in _MESSAGES), spec.display
        for flag in spec.unique_flags():
            if flag.denied is not None:
                # a flag shared by several subcommands needs one case under any of them
                assert any(m.startswith(f"`{name} ") and f" {n}`" in m
                           for m in _MESSAGES for n in flag.names), \
                    f"no deny case reaches `{spec.display} {flag.display}`"


@pytest.mark.parametrize("name", _OWN)
def test_spec_names_its_source(name):
    checked = Policy.default().spec(name).checked
    assert any(ch.isdigit() for ch in checked), checked


@pytest.mark.parametrize("alias,base", ALIASES.items())
def test_alias_denies_what_its_base_denies(alias, base):
    aliased, original = Policy.default().spec(alias), Policy.default().spec(base)
    for name, flag in original.flags.items():
        assert aliased.flags[name].denied == flag.denied
