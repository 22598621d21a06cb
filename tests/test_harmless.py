"""`harmless = true` is derived and checked, not assumed (issue 11, rule 2).

A spec may say that every option of its program only shapes output or reads:
then an operand whose value is unknown (`ls *.md`, `echo "$x"`) cannot do
harm even if it turns out to be a flag.  That claim holds only if the spec
lists every option the program has.  For each harmless spec whose program is
installed, this reads the options from the program's own `--help` (bash's
`help` for builtins) and requires each to be an allowed flag of the spec.
"""

import re
import shutil
import subprocess

import pytest

from bash_policy import check
from bash_policy.judge.policy import Policy

POLICY = Policy.default()
HARMLESS = [name for name in POLICY.program_names()
            if POLICY.spec(name).denied is None and POLICY.spec(name).harmless]
BUILTINS = {"echo", "pwd"}
# An option at the start of a help line, or after ", " in a list of spellings.
_OPTION = re.compile(r"(?:^|\s|,)(--?[A-Za-z0-9][A-Za-z0-9-]*)")


def _help(name: str) -> str:
    if name in BUILTINS:
        argv = ["bash", "-c", f"help {name}"]
    else:
        argv = [name, "--help"]
    return subprocess.run(argv, capture_output=True, text=True, timeout=10).stdout


def _options(text: str) -> set[str]:
    found = set()
    for line in text.splitlines():
        stripped = line.lstrip()
        if not stripped.startswith("-"):
            continue  # prose, usage lines and examples
        head = re.split(r"\s{2,}", stripped, maxsplit=1)[0]  # the option column
        found.update(m.group(1) for m in _OPTION.finditer(" " + head))
    return found


def test_some_specs_are_harmless():
    assert {"ls", "cat", "head", "echo"} <= set(HARMLESS)


@pytest.mark.parametrize("name", HARMLESS)
def test_a_harmless_spec_lists_every_option_of_its_program(name):
    if name not in BUILTINS and shutil.which(name) is None:
        pytest.skip(f"{name} is not installed")
    spec = POLICY.spec(name)
    options = _options(_help(name))
    assert options, f"no options read from {name}'s help"
    missing = sorted(o for o in options if o not in spec.flags
                     and not (o == "-NUM" and spec.numeric_flag))
    assert not missing, f"{name} has options its harmless spec does not list: {missing}"
    assert all(flag.denied.effect == "hang" for flag in spec.flags.values() if flag.denied)


@pytest.mark.parametrize("command", [
    "ls *.md", "ls -d */", "cat *.txt", "head -n 3 *.md", "stat -c '%s %n' *.md", "du -sh *",
    "echo $PATH", 'echo "$PATH" | tr : "\\n"', "ls -la \"$(git rev-parse --git-common-dir)/hooks/\"",
])
def test_unknown_operands_of_harmless_programs_pass(command):
    assert check(command).allowed, check(command).denials


@pytest.mark.parametrize("command", ["rg foo *.py", "rg $X", "sort *", "xxd *", "printf $X"])
def test_programs_with_a_harmful_flag_still_need_a_safe_word(command):
    assert not check(command).allowed
