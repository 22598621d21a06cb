"""The search and text-tool specs: every denial has a corpus case that hits it,
aliases mirror their base, and each spec says where it was checked."""

from pathlib import Path

import pytest

from bash_policy.corpus import read_cases
from bash_policy.judge.engine import check
from bash_policy.judge.policy import Policy

CORPORA = Path(__file__).resolve().parent.parent / "corpora"
PROGRAMS = (
    "rg fd fdfind ls wc head tail cat grep egrep fgrep sort uniq cut paste tr nl tac rev fold "
    "fmt expand unexpand column comm cmp diff join tree stat file du df"
).split()
ALIASES = {"fdfind": "fd", "egrep": "grep", "fgrep": "grep"}
DENY_MESSAGES = [
    denial.message
    for name in ("search.txt", "text-tools.txt")
    for case in read_cases(CORPORA / name) if case.expect == "deny"
    for denial in check(case.command, cwd=case.cwd).denials
]


def _spec(name):
    spec = Policy.default().spec(name)
    assert spec is not None, f"no spec for {name}"
    return spec


@pytest.mark.parametrize("name", PROGRAMS)
def test_spec_names_its_source(name):
    checked = _spec(name).checked
    assert checked and checked != "test" and any(ch.isdigit() for ch in checked), checked


@pytest.mark.parametrize("name", [n for n in PROGRAMS if n not in ALIASES])
def test_every_denied_flag_has_a_corpus_case(name):
    for flag in _spec(name).unique_flags():
        if flag.denied is None:
            continue
        hit = any(f"`{name} {n}" in m for m in DENY_MESSAGES for n in flag.names)
        assert hit, f"no deny case reaches `{name} {flag.display}`"


@pytest.mark.parametrize("alias,base", ALIASES.items())
def test_alias_has_the_flags_of_its_base(alias, base):
    assert set(_spec(alias).flags) == set(_spec(base).flags)
    for flag_name, flag in _spec(base).flags.items():
        assert _spec(alias).flags[flag_name].denied == flag.denied
