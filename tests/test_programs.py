"""Container, cluster, macOS, archive, environment and system-inspection specs:
every denied flag and denied subcommand has a corpus case that reaches it,
aliases deny what their base denies, and each spec says where it was checked."""

from pathlib import Path

import pytest

from bash_policy.corpus import read_cases
from bash_policy.judge.engine import check
from bash_policy.judge.policy import Policy

CORPORA = Path(__file__).resolve().parent.parent / "corpora"
OWN_CORPORA = ("containers.txt", "macos.txt", "archives.txt", "system-tools.txt")
PROGRAMS = """docker podman kubectl sw_vers defaults diskutil system_profiler tmutil mdfind mdls
plutil launchctl csrutil pkgutil tar unzip zipinfo zip 7z 7za 7zz man apropos whatis shuf numfmt
dir vdir ruff mypy eslint prettier tsc conda pipx uv lsof""".split()
ALIASES = {"7za": "7z", "7zz": "7z", "dir": "ls", "vdir": "ls"}
MESSAGES = [denial.message
            for name in OWN_CORPORA
            for case in read_cases(CORPORA / name) if case.expect == "deny"
            for denial in check(case.command, cwd=case.cwd).denials]


def _walk(spec):
    yield spec
    for sub in spec.subcommands.values():
        yield from _walk(sub)


@pytest.mark.parametrize("name", PROGRAMS)
def test_spec_names_its_source(name):
    checked = Policy.default().spec(name).checked
    assert checked and any(ch.isdigit() for ch in checked), checked


@pytest.mark.parametrize("name", [n for n in PROGRAMS if n not in ALIASES])
def test_every_denial_has_a_corpus_case(name):
    for spec in _walk(Policy.default().spec(name)):
        for flag in spec.unique_flags():
            if flag.denied is not None:
                # a flag shared by several subcommands needs one case under any of them
                assert any(m.startswith(f"`{name} ") and f" {n}" in m
                           for m in MESSAGES for n in flag.names), \
                    f"no deny case reaches `{spec.display} {flag.display}`"


@pytest.mark.parametrize("alias,base", ALIASES.items())
def test_alias_denies_what_its_base_denies(alias, base):
    aliased, original = Policy.default().spec(alias), Policy.default().spec(base)
    assert set(aliased.flags) == set(original.flags)
    assert set(aliased.subcommands) == set(original.subcommands)
