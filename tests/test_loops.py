"""Loops the checker allows only where it can see them end (bash_policy/judge/loops.py;
issue 20): counting `for (( ))` loops with literal bounds, `while true` loops
whose every path reaches `break`.  Each case runs with real bash 5.2: an
allowed loop ends (its simple commands counted by a DEBUG trap) and a
counting loop's variable takes exactly the values the checker computed; the
denied ones that can run for ever do.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from bash_policy import check
from bash_policy.judge.loops import MAX_PASSES, counting_passes
from bash_policy.read import exact

BASH = shutil.which("bash") or "/bin/bash"
_COUNT = 'n=0; trap \'n=$((n+1)); [ "$n" -gt 600 ] && exit 42\' DEBUG\n'


def _ends(command: str, tmp_path) -> bool:
    done = subprocess.run([BASH, "-c", _COUNT + command], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL,
                          env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"})
    return done.returncode != 42


COUNTED = [
    ("i=0", "i<3", "i++", [0, 1, 2]),
    ("i = 0", "i < 3", "i += 1", [0, 1, 2]),
    ("i=10", "i>0", "i--", list(range(10, 0, -1))),
    ("i=0", "i<=6", "i+=2", [0, 2, 4, 6]),
    ("i=5", "i>=5", "--i", [5]),
    ("i=0", "i!=4", "++i", [0, 1, 2, 3]),
    ("i=-2", "i<1", "i=i+1", [-2, -1, 0]),
    ("i=7", "i<3", "i++", []),
    ("idx=1", "idx<4", "idx = idx + 2", [1, 3]),
]


@pytest.mark.parametrize("init, test, update, passes", COUNTED)
def test_counting_loops_run_the_passes_computed(init, test, update, passes, tmp_path):
    command = f'for (({init}; {test}; {update})); do echo "${init.split("=")[0].strip()}"; done'
    verdict = check(command)
    assert verdict.allowed, verdict.denials
    node = exact.parse(command).body.items[0].commands[0]
    assert counting_passes(node)[1] == passes
    done = subprocess.run([BASH, "-c", command], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == [str(v) for v in passes]


@pytest.mark.parametrize("command, endless", [
    ("for ((i=0; i<3; i--)); do :; done", True),            # never reaches the bound
    ("for ((i=0; i!=3; i+=2)); do :; done", True),
    ("for ((;;)); do :; done", True),
    ("for ((i=0; j<3; i++)); do :; done", True),            # j is never set: 0 < 3
    (f"for ((i=0; i<{MAX_PASSES + 1}; i++)); do :; done", False),  # ends, past the cap
    ("for ((i=010; i<12; i++)); do :; done", False),        # 010 is octal 8
    ("for ((i=0; i<3; i++)); do read i; done < /dev/null", False),  # the body sets i
    ("for ((i=0; i<3; i=j+1)); do :; done", True),
    ("while true; do ls || break; done", True),
    ("while true; do (break); done", True),                  # a subshell's break is its own
    ("while true; do break | cat; done", True),
    ("while true; do echo $(break); done", True),
    ("while true; do break x; done", False),  # bash 5.2.15 exits (128): numeric argument required
    ("while true; do if ls; then break; fi; done", False),  # ends only while ls succeeds
    ("while true; do for f in a; do break; done; done", True),  # the inner loop's break
    ("while true; do break < missing; done", True),          # the redirection fails first
    ("while true; do :; done", True),
    ("until true; do break; done; while false; do break; done", False),  # not endless tests
    ("while true; do continue; break; done", True),           # continue skips the break
    ("while true; do ls || continue; break; done", False),     # ends only while ls succeeds
    ("while true; do exit 1 2; done", False),  # exits (too many arguments), but only one word is read as an exit
    ("while true; do (exit); done", True),                    # only the subshell exits
])
def test_other_loops_stay_denied(command, endless, tmp_path):
    verdict = check(command)
    assert not verdict.allowed
    assert "BP101" in [d.code for d in verdict.denials] or "BP300" in [d.code for d in verdict.denials]
    if endless:
        assert not _ends(command, tmp_path)


@pytest.mark.parametrize("command", [
    "while true; do ls; break; done",
    "while :; do ls; break; done",
    "until false; do ls; break; done",
    "while true; do if ls; then break; else break; fi; done",
    "while true; do { ls; break; }; done",
    "while true; do ls && break || break; done",
    "while true; do ! break; done",
    "while true; do break 0; done",                      # out of range, and still leaves
    "for f in a b; do while true; do break 2; done; done",
    "while true; do if false; then ls; elif true; then break; else break; fi; done",
    "while true; do ls; true && break; done",
    "for ((i=0; i<3; i++)); do while true; do ls; break; done; done",
    "while true; do ls; exit; done",
    "while true; do exit foo; done",                     # numeric argument required: exits 2
    "for f in a b; do continue; done; while true; do ls && exit 0 || exit 1; done",
])
def test_loops_broken_on_every_path_end(command, tmp_path):
    verdict = check(command)
    assert verdict.allowed, verdict.denials
    assert _ends(command, tmp_path)


def test_passes_count_for_sleep_bounds():
    """A counted loop's passes multiply what `sleep` inside it waits."""
    assert check("for ((i=0; i<3; i++)); do sleep 5; done").allowed
    assert not check("for ((i=0; i<10; i++)); do sleep 5; done").allowed


def test_loop_variable_holds_the_counted_values():
    """`$i` takes the counted values, so a word built from it is judged by them."""
    assert check('for ((i=0; i<3; i++)); do cat "f$i.txt"; done').allowed
    assert check('for ((i=0; i<3; i++)); do head -n $i a.txt; done').allowed
    assert check('for ((i=0; i<2; i++)); do rg foo $i; done').allowed
    assert not check('for ((i=-2; i<0; i++)); do rg foo $i; done').allowed  # `-2` is a flag to rg
