"""`export` (rules/system.py export_vars, judge/later.py) against real bash.

Every allowed combination of exports is run by bash 5.2 followed by `env`:
each variable it changed must be one the policy calls harmless for every
later program, and PATH may only gain the harness's own entries and trusted
directories.  Where nothing runs after the export in its shell, and the
shell does not persist, any export is allowed.
"""

from __future__ import annotations

import itertools
import os
import subprocess

import pytest

from bash_policy import check
from bash_policy.judge import later
from bash_policy.judge.policy import Policy
from bash_policy.read import exact

_ARGUMENTS = ["PAGER=cat", "PAGER=less", "NO_COLOR=1", "FOO=1", 'PATH="$PATH:/usr/sbin"', 'PATH="$PATH:"',
              "PATH=/usr/bin:/bin", "PATH=$PATH:/usr/local/go/bin", "IFS=x", "LC_ALL=C.UTF-8",
              "LC_ALL=zh_TW.BIG5", "{PAGER,GIT_PAGER}=cat", "TERM=dumb", "TERM=$t", "PAGER", "-n PAGER",
              "GIT_PAGER=cat", 'PATH=":$PATH"', "COLUMNS=300", "LANG="]
_BASE = {"PATH": "/usr/local/bin:/usr/bin:/bin", "PAGER": "more", "HOME": "/root", "LC_ALL": "C.UTF-8"}


def _exported(command: str) -> dict[str, str]:
    run = subprocess.run(["bash", "-c", f"{command}\nenv -0"], capture_output=True, timeout=30, env=_BASE,
                         cwd="/")
    return dict(item.split("=", 1) for item in run.stdout.decode().split("\0") if "=" in item)


def _harmless(before: dict[str, str], after: dict[str, str], policy: Policy) -> list[str]:
    wrong = []
    for name in set(before) | set(after):
        old, new = before.get(name), after.get(name)
        if old == new:
            continue
        if name == "PATH":
            allowed = set(before["PATH"].split(":")) | set(policy.trusted_dirs)
            if new is None or any(entry not in allowed for entry in new.split(":")):
                wrong.append(f"PATH={new}")
        elif new is None or name == "IFS" or not policy.env_allows(name, new):
            wrong.append(f"{name}={new}")
    return wrong


def _commands():
    for n in (1, 2):
        for arguments in itertools.permutations(_ARGUMENTS, n):
            yield "t=dumb; export " + " ".join(arguments)


def test_every_allowed_export_leaves_only_harmless_variables():
    policy = Policy.default()
    before = _exported(":")
    allowed = [c for c in _commands() if check(c, policy).allowed]
    assert len(allowed) > 20
    wrong = {c: w for c in allowed if (w := _harmless(before, _exported(c), policy))}
    assert wrong == {}


def test_an_empty_path_entry_runs_the_working_directory(tmp_path):
    """Why `export PATH="$PATH:"` is denied: bash looks the name up in `.`."""
    program = tmp_path / "prog"
    program.write_text("#!/bin/sh\necho ran\n")
    program.chmod(0o755)
    run = subprocess.run(["bash", "-c", 'export PATH="$PATH:"; prog'], capture_output=True, cwd=tmp_path,
                         env={"PATH": "/usr/bin:/bin"}, timeout=30)
    assert run.stdout == b"ran\n"
    assert not check('export PATH="$PATH:"; prog').allowed
    assert not check('export PATH="$PATH:"').allowed


@pytest.mark.parametrize("command, persistent, runs", [
    ("export A=1", True, True),
    ("export A=1", False, False),
    ("ls && export A=1", False, False),
    ("export A=1; ls", False, True),
    ("export A=1 && ls", False, True),
    ("(export A=1); ls", True, False),
    ("{ ls; export A=1; }", False, False),
    ("{ export A=1; ls; }", False, True),
    ("if true; then export A=1; fi", False, False),
    ("if export A=1; then ls; fi", False, True),
    ("for i in 1; do export A=1; done", False, True),
    ("while read -r l; do export A=1; done < f", False, True),
    ("case a in a) export A=1;; esac", False, False),
    ("case a in a) export A=1;& b) ls;; esac", False, True),
    ("echo \"$(export A=1; ls)\"", True, True),
    ("echo \"$(ls; export A=1)\"", True, False),
    ("export A=1 | ls", True, False),
    ("ls | export A=1", True, True),   # the last member may run in the shell (lastpipe)
    ("ls | export A=1", False, False),
])
def test_what_runs_after_a_command(command, persistent, runs):
    script = exact.parse(command)
    target = next(c for c in script.commands if c.words and c.words[0].value == "export")
    assert later.runs_after(script.body, target, persistent) is runs


def test_a_harness_that_starts_a_new_shell_for_every_call_allows_a_last_export():
    fresh = Policy.from_mapping({"persistent_shell": False})
    assert check("ls && export FOO=1", fresh).allowed
    assert not check("ls && export FOO=1").allowed
    assert not check("export FOO=1; ls", fresh).allowed
    assert not check("export -n PAGER", fresh).allowed  # a denied flag stays denied


def test_persistent_shell_must_be_a_boolean():
    from bash_policy.judge.policy import ConfigError
    with pytest.raises(ConfigError, match="persistent_shell"):
        Policy.from_mapping({"persistent_shell": "no"})


def test_declaration_arguments_are_not_split():
    """bash expands `export A=$x` as an assignment: one word, not split."""
    out = subprocess.run(["bash", "-c", 'x="a b"; export A=$x; printf "[%s]" "$A"'], capture_output=True,
                         timeout=30, env={"PATH": os.environ["PATH"]}).stdout
    assert out == b"[a b]"
    assert check("export PATH=$PATH:/usr/sbin").allowed
