"""No cache may change a verdict: every corpus case gets the same verdict
with every cache on (read a first and a second time, so the second comes
from the caches) as with every cache off.  Speed itself is measured by
benchmarks/speed.py, never asserted here."""

from __future__ import annotations

from pathlib import Path

from bash_policy import Policy, check
from bash_policy.corpus import corpus_files, read_cases
from bash_policy.read import parse_cache

CASES = [c for f in corpus_files([Path(__file__).parent.parent / "corpora"]) for c in read_cases(f)]


def _summary(verdict) -> tuple:
    return (verdict.allowed, verdict.notes,
            [(d.code, d.message, d.hint, d.span, d.segment, d.effect, d.rule)
             for d in verdict.denials])


def test_caches_change_no_verdict(monkeypatch):
    with monkeypatch.context() as off:
        off.setattr(parse_cache, "MAX_ENTRIES", 0)
        parse_cache.clear()
        fresh = Policy.from_mapping({})  # builds each spec anew
        expected = [_summary(check(c.command, fresh, cwd=c.cwd)) for c in CASES]
        assert not parse_cache._kept
    policy, mismatched, hits = Policy.default(), [], 0
    for case, want in zip(CASES, expected):
        first = check(case.command, policy, cwd=case.cwd)
        again = check(case.command, policy, cwd=case.cwd)  # read from the cache
        hits += again.script is not None and again.script is first.script
        if not _summary(first) == _summary(again) == want:
            mismatched.append((case.path, case.line, case.command))
    assert not mismatched
    assert hits > len(CASES) // 2
