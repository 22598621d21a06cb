"""Every corpus case under corpora/ holds: the project's functional tests."""

from pathlib import Path

import pytest

from bash_policy.corpus import corpus_files, read_cases
from bash_policy.judge.engine import check
from bash_policy.render import text

CORPORA = Path(__file__).resolve().parent.parent / "corpora"
CASES = [case for f in corpus_files([CORPORA]) for case in read_cases(f)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{Path(c.path).name}:{c.line}")
def test_case(case):
    verdict = check(case.command, cwd=case.cwd)
    assert verdict.allowed == (case.expect == "allow"), text(verdict)
    got = {d.code for d in verdict.denials}
    assert set(case.codes) <= got, text(verdict)
    for denial in verdict.denials:  # every denial is actionable
        assert denial.message and denial.hint, denial
