"""Commands read from standard input (issue 8, class 7).

A harness may pipe the script into bash instead of running `bash -c`.  Then a
command that reads standard input, anywhere before the last line, reads the
later lines: bash never runs them as written.  The checker denies such
scripts (BP108) unless the policy says the harness runs `bash -c`
(stdin_script = false); a script of one line is safe, because bash has read
the whole line before anything runs.
"""

import subprocess

import pytest

from bash_policy import Policy, check

BASH = "/bin/bash"


def _stdin_run(script: str, cwd) -> str:
    """Run `script` the way such a harness does: piped into bash."""
    return subprocess.run([BASH, "--norc", "--noprofile"], input=script, cwd=cwd, text=True,
                          capture_output=True, timeout=10, env={"PATH": "/usr/bin:/bin"}).stdout


def test_the_hazard_is_real(tmp_path):
    # head reads "echo " from the script, so bash runs `first` instead of `echo first`.
    out = _stdin_run("head -c 5 >/dev/null\necho first\necho second\n", tmp_path)
    assert out == "second\n"
    # Joining two lines is not enough: head still reads the line after them.
    out = _stdin_run("head -c 5 >/dev/null; echo first\necho second\n", tmp_path)
    assert out == "first\n"
    # A script of one line is read whole before anything runs: nothing is lost.
    out = _stdin_run("head -c 5 >/dev/null; echo first; echo second\n", tmp_path)
    assert out == "first\nsecond\n"


@pytest.mark.parametrize("command", [
    "head -c 3\nrg rm x",
    "cat\nls",
    "rg foo\nls",                      # rg without a path reads standard input
    "cat | head -n 1\nls",             # the first command of a pipeline reads the script
    "git log --stdin\nls",
    "grep -f - src\nls",
    "ls; head -c 3\nls",
])
def test_earlier_lines_that_read_stdin_are_denied(command):
    verdict = check(command)
    assert "BP108" in [d.code for d in verdict.denials], verdict.denials


@pytest.mark.parametrize("command", [
    "head -c 3 notes.txt\nls",
    "git status\ngit diff --stat",
    "rg -n foo src\nrg -n bar src",
    "head -c 3; rg foo src",           # one line: bash has read it all
    "head -c 3 < notes.txt\nls",       # its input is a file
    "cat <<'EOF'\nhi\nEOF\nls",        # its input is the here-document
    "ls\nhead -c 3",                   # the last line has nothing after it
])
def test_lines_that_cannot_swallow_the_script_pass(command):
    assert check(command).allowed, check(command).denials


def test_a_bash_c_harness_can_turn_it_off():
    policy = Policy.from_mapping({"stdin_script": False})
    assert check("head -c 3\nrg foo src", policy).allowed
