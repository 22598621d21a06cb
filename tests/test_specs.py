"""Every built-in spec, found in the spec directory (no list kept by hand):
each says where it was checked, each denial it holds (a denied flag, a
subcommand or program denied whole) is reached by a corpus case, and an
alias (`alias_of`) denies what its base denies.  A new spec file is in
every one of these checks the moment it exists."""

import sys
from pathlib import Path

import pytest

from bash_policy.corpus import corpus_files, read_cases
from bash_policy.judge.engine import check
from bash_policy.judge.policy import SPEC_DIR, Policy, spec_file_stem

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

POLICY = Policy.default()
CORPORA = Path(__file__).resolve().parent.parent / "corpora"
PROGRAMS = POLICY.program_names()
# Each spec that extends another (`alias_of = "grep"`), with the program it extends.
ALIASES = {name: table["alias_of"] for name in PROGRAMS
           if "alias_of" in (table := tomllib.loads((SPEC_DIR / f"{spec_file_stem(name)}.toml")
                                                   .read_text(encoding="utf-8")))}
_CASES = [case for f in corpus_files([CORPORA]) for case in read_cases(f)]
_MESSAGES = [d.message for case in _CASES if case.expect == "deny"
             for d in check(case.command, cwd=case.cwd).denials]
# Declaration builtins (export, declare, local, ...) the reader refuses (BP101)
# before their spec is consulted: their specs only document the reason.
_PARSER_REJECTS = {name for name in PROGRAMS
                   if POLICY.spec(name).denied is not None
                   and any(d.code == "BP101" for d in check(f"{name} x").denials)}


def _walk(spec):
    yield spec
    for sub in spec.subcommands.values():
        yield from _walk(sub)


def _names_of(program: str) -> set[str]:
    """The program and every alias of it: a denial reached through `gawk` is awk's too."""
    return {program} | {alias for alias, base in ALIASES.items() if base == program}


def test_the_lists_are_found():
    assert {"rg", "git", "gh", "cat", "docker"} <= set(PROGRAMS)
    assert ALIASES["egrep"] == "grep" and ALIASES["gawk"] == "awk"


@pytest.mark.parametrize("name", PROGRAMS)
def test_spec_names_its_source(name):
    checked = POLICY.spec(name).checked
    assert checked and checked != "test" and any(ch.isdigit() for ch in checked), checked


@pytest.mark.parametrize("name", [n for n in PROGRAMS if n not in ALIASES])
def test_every_denial_has_a_corpus_case(name):
    spellings = _names_of(name)
    for spec in _walk(POLICY.spec(name)):
        shown = {" ".join((n, *spec.path[1:])) for n in spellings}
        if spec.denied is not None and name not in _PARSER_REJECTS:
            assert any(m.startswith(f"`{s}` {spec.denied.why}") for m in _MESSAGES for s in shown), \
                f"no deny case reaches `{spec.display}`, denied whole"
        for flag in spec.unique_flags():
            if flag.denied is not None:
                # a flag shared by several subcommands needs one case under any of them
                assert any(m.startswith(f"`{s} ") and f" {n}" in m
                           for m in _MESSAGES for s in spellings for n in flag.names), \
                    f"no deny case reaches `{spec.display} {flag.display}`"


@pytest.mark.parametrize("alias,base", sorted(ALIASES.items()))
def test_alias_denies_what_its_base_denies(alias, base):
    aliased, original = POLICY.spec(alias), POLICY.spec(base)
    assert set(aliased.subcommands) == set(original.subcommands)
    for spec, other in zip(_walk(original), _walk(aliased)):
        for flag_name, flag in spec.flags.items():
            if flag.denied is not None:
                assert other.flags[flag_name].denied == flag.denied, (spec.display, flag_name)
        assert (other.denied is None) == (spec.denied is None), spec.display
