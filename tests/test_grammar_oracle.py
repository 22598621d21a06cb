"""Differential fuzzing against real bash (issue 8): every command the checker
allows must do exactly what the checker read, run as `bash -c` and as a
script on stdin (tests/fuzz/).

Marked `oracle` (deselect with `-m "not oracle"`).  Environment:
BASH_POLICY_FUZZ_EXAMPLES (default 20000), BASH_POLICY_FUZZ_SEED (default 0),
BASH_POLICY_FUZZ_SKIP (comma-separated categories not to report besides
bash-crash, such as stdin-script).  The 20,000 examples took 62 s on two
loaded cores (2026-12-01).  benchmarks/fuzz.py runs the same at any
scale.
"""

from __future__ import annotations

import dataclasses
import os

import pytest
from fuzz.grammar_oracle import DEFAULT_SKIP, Example, corpus_text, examine, examine_all, fuzz, run_tasks

from bash_policy.judge.engine import check
from bash_policy.judge.policy import Policy

pytestmark = pytest.mark.oracle

EXAMPLES = int(os.environ.get("BASH_POLICY_FUZZ_EXAMPLES", "20000"))
SEED = int(os.environ.get("BASH_POLICY_FUZZ_SEED", "0"))
SKIP = DEFAULT_SKIP | frozenset(
    filter(None, os.environ.get("BASH_POLICY_FUZZ_SKIP", "").split(",")))

# Issue 8's false allows, one per class: each must be denied, or caught by the oracle
# (the one of class 7 only while stdin-script problems are reported); `test -- *`
# runs where files -a, -v and a[$(touch pwned)] make it evaluate a substitution.
ISSUE_EXAMPLES = [Example(c, "C.UTF-8", c.startswith("test"), frozenset()) for c in [
    "cat <<$'A'\nA\nrm x\n$'A'",
    "find . 2>&- -delete",
    "rg x #\\\n\\rm -rf y",
    "rg x <<<y}\\-- --pre=sh .",
    "uniq \\${a,b}",
    "time -p -p rg x",
    "test -- *",
    "rg a -x2>/dev/null",
    *([] if "stdin-script" in SKIP else ["head -c 3\nrg rm x"]),
]]
# Commands the checker allows and bash runs as read: the oracle must not object.
AGREEING = [
    "cat x",
    "cat -A in.txt | head -n 1",
    "cat x; cat y && cat in.txt || cat",
    "cat 'a b' \"c d\" e\\ f",
    "cat <missing.txt || cat x",
    "cat ./* 2>/dev/null",
]


def test_oracle_catches_every_class_of_issue_8():
    outcomes = examine_all(ISSUE_EXAMPLES, SKIP)
    escaped = [e.command for e, o in zip(ISSUE_EXAMPLES, outcomes)
               if o.allowed and o.finding is None]
    assert escaped == []


def test_oracle_accepts_commands_bash_runs_as_read():
    examples = [Example(c, "C.UTF-8", False, frozenset()) for c in AGREEING]
    outcomes = examine_all(examples)
    assert [c for c, o in zip(AGREEING, outcomes) if not o.allowed] == []
    assert [o.finding.detail for o in outcomes if o.finding] == []


def _oracle_teeth() -> list[list[str]]:
    """What the oracle says when bash does something else than the checker read."""
    from fuzz.expect import expected_runs, run_problems
    from fuzz.grammar_oracle import sandbox

    box = sandbox()
    found = []
    for read, ran in [("cat x", "cat y"), ("cat x", "cat x >z"), ("cat x", "cat x; touch z"), ("cat x | cat", "cat x"),
                      ("cat x && cat y", "cat y; cat x")]:
        expected = expected_runs(check(read), box.cwd)
        run = box.run(ran, False, "C.UTF-8", 30, box.cwd)
        found.append(sorted({p.category for p in run_problems(expected, run, box.cwd)}))
    return found


def test_oracle_sees_what_bash_did_differently():
    found: list = []
    run_tasks([(_oracle_teeth, ())], 1, lambda i, result: found.extend(result or []))
    assert found == [["argv"], ["changed"], ["extra-program"], ["missing-program"], ["argv"]]


def test_oracle_sees_a_program_reading_the_script():
    """With stdin_script off the checker allows `head -c 3` before a later
    line; bash reading the script on stdin hands that line to head."""
    examples = [Example("head -c 3\nrg rm x", "C.UTF-8", False, frozenset())]
    outcomes: list = []
    run_tasks([(_examine_without_stdin_script, (examples,))], 1,
              lambda i, result: outcomes.extend(result or []))
    assert [(o.finding.category, o.finding.mode) for o in outcomes if o.finding] == [
        ("stdin-script", "bash -s")]


def _examine_without_stdin_script(examples):
    policy = dataclasses.replace(Policy.default(), stdin_script=False)  # not picklable
    return [examine(e, policy=policy) for e in examples]


def test_allowed_commands_do_what_the_checker_read():
    report = fuzz(EXAMPLES, SEED, workers=2, max_shrinks=4, skip=SKIP)
    assert report.examples == EXAMPLES
    if report.findings:
        pytest.fail(f"{len(report.findings)} findings (shrunk, as corpus cases):\n"
                    + corpus_text(report.findings), pytrace=False)
