"""The descriptors a command really runs with (bash_policy/judge/descriptors.py;
issue 18, classes 1, 2 and 4), against real bash 5.2.

Every case of corpora/descriptors.txt runs with /bin/bash in a directory set
up for it, with argv-logging stubs for the programs, and what bash did must
agree with the verdict: an allowed loop ends and a denied one runs its test
for ever; an allowed xargs hands its program only find's `./…` paths, and a
denied one fed from list.txt or a here-string hands it `--pre=sh` or
`-ocanary2`; an allowed command's standard input is never the caller's
standard output or error, a denied one's is.  Deterministic: loops are
counted with a DEBUG trap and descriptors compared by inode; nothing waits.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from bash_policy import check
from bash_policy.corpus import read_cases

CORPUS = Path(__file__).resolve().parent.parent / "corpora" / "descriptors.txt"
BASH = shutil.which("bash") or "/bin/bash"
# The programs each class runs as argv-logging stubs (class 2 keeps the real
# `cat` and `head`, whose output and reading matter there).
STUBS = {1: (), 2: ("rg", "sort", "wc"), 4: ("head", "cat", "ls")}


def _sections() -> dict[int, list]:
    """The corpus cases by the class their section names."""
    classes: dict[int, list] = {}
    current = 0
    cases = {case.line: case for case in read_cases(CORPUS)}
    for number, line in enumerate(CORPUS.read_text().splitlines(), 1):
        match = re.match(r"# --- Class (\d+)", line)
        if match:
            current = int(match[1])
        elif number in cases:
            classes.setdefault(current, []).append(cases[number])
    return classes


SECTIONS = _sections()


def _ids(case) -> str:
    return f"{case.expect}:{case.command}"


@pytest.fixture
def box(tmp_path, request):
    (tmp_path / "a.md").write_text("line1\nline2\n")
    (tmp_path / "b.md").write_text("b1\n")
    (tmp_path / "list.txt").write_bytes(b"--pre=sh\0")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "x.py").write_text("foo\n")
    (tmp_path / "stubs").mkdir()
    (tmp_path / "runs").mkdir()
    for name in STUBS[int(request.node.name.split("_")[2])]:
        # A file a run: the device and inode of descriptor 0, a space, the argv.
        stub = tmp_path / "stubs" / name
        stub.write_text("#!/bin/sh\n{ printf '%s ' \"$(stat -L -c %d:%i /proc/self/fd/0 2>/dev/null)\"; "
                        f"printf '%s\\0' \"$@\"; }} > {tmp_path / 'runs'}/$$\n")
        stub.chmod(0o755)
    return tmp_path


def _bash(command: str, cwd: Path, prefix: str = "", **kwargs) -> subprocess.CompletedProcess:
    env = {"PATH": f"{cwd / 'stubs'}:/usr/bin:/bin", "LC_ALL": "C"}
    if "stdout" not in kwargs:
        kwargs["capture_output"] = True
    return subprocess.run([BASH, "-c", prefix + command], cwd=cwd, env=env, timeout=60, **kwargs)


def _runs(box: Path) -> list[tuple[str, list[str]]]:
    """Each stub run: (device:inode of its stdin, its arguments)."""
    out = []
    for log in sorted((box / "runs").iterdir()):
        stdin, _, args = log.read_text().partition(" ")
        out.append((stdin, args.split("\0")[:-1]))
    return out


@pytest.mark.parametrize("case", SECTIONS[1], ids=_ids)
def test_class_1_loops_end_only_on_consumed_input(case, box):
    verdict = check(case.command, cwd=str(box))
    assert verdict.allowed == (case.expect == "allow"), verdict.denials
    # Count the simple commands bash runs: past 500 the loop is not ending.
    # Standard input is a regular file, as some harnesses give.
    with open(box / "b.md") as stdin:
        counted = _bash(case.command, box, 'n=0; trap \'n=$((n+1)); [ "$n" -gt 500 ] && exit 42\' DEBUG\n',
                        stdin=stdin)
    assert (counted.returncode == 42) == (not verdict.allowed), counted


@pytest.mark.parametrize("case", SECTIONS[2], ids=_ids)
def test_class_2_xargs_trusts_only_the_pipe_from_find(case, box):
    verdict = check(case.command, cwd=str(box))
    assert verdict.allowed == (case.expect == "allow"), verdict.denials
    _bash(case.command, box, stdin=subprocess.DEVNULL)
    written = set(case.command.split())
    flags = []  # arguments read as flags that the command does not hold
    for _, args in _runs(box):
        options = args[:args.index("--")] if "--" in args else args
        flags += [a for a in options if a.startswith("-") and a not in written]
    if verdict.allowed:
        assert flags == []
    elif "list.txt" in case.command or "<<<" in case.command:
        assert flags, "bash fed xargs words from elsewhere"


@pytest.mark.parametrize("case", SECTIONS[4], ids=_ids)
def test_class_4_standard_input_is_judged_by_what_it_is(case, box):
    verdict = check(case.command, cwd=str(box))
    assert verdict.allowed == (case.expect == "allow"), verdict.denials
    ours, theirs = socket.socketpair()  # stdout and stderr as Node gives them: readable sockets
    try:
        caller = os.fstat(theirs.fileno())
        with open(os.devnull) as null:
            _bash(case.command, box, stdin=null, stdout=theirs, stderr=theirs)
    finally:
        ours.close()
        theirs.close()
    inputs = [stdin for stdin, _ in _runs(box)]
    reads_caller = f"{caller.st_dev}:{caller.st_ino}" in inputs
    if verdict.allowed:
        assert not reads_caller, inputs
    elif "&3" not in case.command:  # the caller's descriptor 3 is not open here
        assert inputs and reads_caller, inputs
