"""Hostile input: `check` never raises and denies what it does not understand.

Arbitrary text, bytes decoded with surrogateescape (how the CLI reads stdin),
huge and deeply nested commands, NUL bytes, control characters and bidi
overrides.  Large shapes run twice: under the default policy, whose length cap
denies them before parsing, and under a policy with the caps lifted, so the
parser and engine themselves face them.  Timing lives in
benchmarks/hostile_curve.py, not here.
"""

from __future__ import annotations

import io
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bash_policy import cli
from bash_policy.judge import shapes
from bash_policy.judge.codes import CODES
from bash_policy.judge.engine import check
from bash_policy.judge.policy import Policy

DEFAULT = Policy.default()
UNCAPPED = Policy.from_mapping({"limits": {"max_length": 10**8, "max_segments": 10**7}})


def assert_sound(command: str, policy: Policy = DEFAULT, cwd: str | None = None):
    """Check `command` and assert the verdict is well formed; return it."""
    verdict = check(command, policy, cwd=cwd)
    for denial in verdict.denials:
        assert denial.code in CODES, denial
        assert denial.code != "BP107", denial  # check() turns bugs into denials; tests must see them
        assert denial.message and denial.hint, denial
        assert 0 <= denial.span.start <= denial.span.end <= len(command), denial
    if verdict.allowed:
        assert not verdict.denials
        # Allowed means understood: every word is literal or holds only
        # expansions the engine reasons about (issue 11: `rg -- $0`), and every
        # program is a whitelisted spec.
        for segment in verdict.segments:
            for word in segment.words:
                assert word.value is not None or shapes.unknown_kinds_allowed(word), word
            if segment.words:
                name = segment.words[0].value.rpartition("/")[2]
                assert policy.spec(name) is not None, name
    return verdict


SHELLISH = st.lists(st.sampled_from(
    list(" \t\n\\'\"$`(){}[]<>|&;#~*?!=-") + ["rg", "head", "-n", "x", "$((", "<<", "EOF",
                                              "\u202e", "\x00", "\udcff", "é"]),
    max_size=60).map("".join)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(max_size=200), SHELLISH,
                 st.binary(max_size=200).map(lambda b: b.decode("utf-8", "surrogateescape"))))
def test_check_never_raises(command):
    assert_sound(command)


DEEP = 10_000
# Shape name -> (text at scale k, expected denied under the lifted caps).
# k = 1 gives the sizes of the brief: 10,000 deep, 100,000 segments, 1 MB.
SHAPES = {
    "nested subshells": (lambda k: "(" * (DEEP // k) + "rg x" + ")" * (DEEP // k), True),
    "nested substitutions": (lambda k: "rg " + "$(" * (DEEP // k) + "x" + ")" * (DEEP // k), True),
    "nested groups": (lambda k: "{ " * (DEEP // k) + "rg x; " + "}; " * (DEEP // k), True),
    "nested arithmetic": (lambda k: "((" * (DEEP // k) + "1" + "))" * (DEEP // k), False),
    "nested backquotes": (lambda k: "rg " + "`rg \\`" * (DEEP // k), True),
    "unclosed groups": (lambda k: "{ " * (DEEP // k), True),
    "segments of an unknown program": (lambda k: ";".join(["a"] * (100_000 // k)), True),
    "allowed segments": (lambda k: ";".join(["rg x"] * (100_000 // k)), False),
    "one long word": (lambda k: "rg " + "x" * (1_000_000 // k), False),
    "adjacent quotes": (lambda k: "rg " + "'a'\"b\"" * (170_000 // k), False),
    "pipes": (lambda k: "rg x" + " | head" * (140_000 // k), False),
    "unterminated quote": (lambda k: "rg '" + "a" * (1_000_000 // k), True),
    "here-document": (lambda k: "rg x <<'EOF'\n" + "line\n" * (200_000 // k) + "EOF", False),
    "backslashes": (lambda k: "rg " + "\\" * (1_000_001 // k), False),
    # Every ARGV use looks at its enclosing calls (awk.py): once a rescan per token.
    "awk calls": (lambda k: "awk '{" + "sub(/a/, ARGV[1]);" * (50_000 // k) + "}' f", True),
}


@pytest.mark.parametrize("shape", SHAPES)
def test_huge_and_deep_input_is_denied_by_the_cap(shape):
    verdict = assert_sound(SHAPES[shape][0](1))
    assert not verdict.allowed
    assert verdict.denials[0].code == "BP103"


@pytest.mark.parametrize("shape", SHAPES)
def test_large_and_deep_input_without_caps(shape):
    """With the caps lifted the parser and engine face them (at a tenth of the
    size, to keep the suite fast): no crash, no recursion error, and a deny
    for everything else (arithmetic on numbers is a harmless command at any depth)."""
    make, denied = SHAPES[shape]
    verdict = assert_sound(make(10), UNCAPPED)
    assert verdict.allowed is not denied, shape


@pytest.mark.parametrize("command, code, what", [
    ("rg x\x00y", "BP104", "NUL"),
    ("rg x\udcff", "BP104", "invalid UTF-8"),
    ("rg \x1b[31mx", "BP104", "U+001B"),
    ("rg x\ry", "BP104", "U+000D"),
    ("rg x\x7f", "BP104", "U+007F"),
    ("rg x\x85", "BP104", "U+0085"),
    ("rg 'x\u202e' head", "BP104", "bidirectional"),
    ("rg x \u2066y\u2069", "BP104", "bidirectional"),
    ("rg x\u200by", "BP104", "U+200B"),
    ("rg x\ufeff", "BP104", "U+FEFF"),
    ("rg x\u2028y", "BP104", "U+2028"),
])
def test_invisible_and_invalid_characters_are_denied(command, code, what):
    verdict = assert_sound(command)
    assert not verdict.allowed
    assert verdict.denials[0].code == code
    assert what in verdict.denials[0].message


def _cli_check(data: bytes, capsys, monkeypatch) -> tuple[int, str]:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    status = cli.main(["check", "-"])
    out = capsys.readouterr()
    return status, out.out + out.err


JUNK = [b"\xff\xfe\x00rg", b"\x00" * 100, b"rg x\xc3", b"\xed\xa0\x80", b"\x1b]0;x\x07",
        b"(" * 20_000, "rg \u202ex".encode(), b"", b"\n\n\n", b"rg '\xff"]


@pytest.mark.parametrize("data", JUNK)
def test_cli_reports_junk_without_a_traceback(data, capsys, monkeypatch):
    status, output = _cli_check(data, capsys, monkeypatch)
    assert status in (0, 1, 2) and output.strip()
    if data.strip():
        assert status in (1, 2)


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=100))
def test_cli_never_raises_on_bytes(capsys, monkeypatch, data):
    status, output = _cli_check(data, capsys, monkeypatch)
    assert status in (0, 1, 2) and output.strip()


def test_cli_process_exits_with_a_message():
    """The real process: junk on stdin gives exit 1 and a message, no traceback."""
    proc = subprocess.run([sys.executable, "-m", "bash_policy", "check", "-"],
                          input=b"rg \xff\x00\x1b x", capture_output=True)
    assert proc.returncode == 1
    assert b"BP104" in proc.stdout
    assert b"Traceback" not in proc.stderr


def test_an_internal_error_is_a_denial_not_an_exception(monkeypatch):
    """check() must never raise: a harness may read an exception as "go ahead"."""
    from bash_policy.judge import argv

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(argv, "check_argv", broken)
    verdict = check("rg foo")
    assert not verdict.allowed
    assert [(d.code, d.rule) for d in verdict.denials] == [("BP107", "internal_error")]
    assert "RuntimeError: boom" in verdict.denials[0].message


@pytest.mark.parametrize("command", ["rg a -x2>/dev/null", "seq 0 1e-320 1", "seq 1e400 1"])
def test_inputs_that_once_raised_are_checked(command):
    assert_sound(command)


@pytest.mark.parametrize("level", ["for x in a b; do ", "for x in a; do cd b; ",
                                   "if true; then cd b; else cd c; fi; for x in a; do ",
                                   "while read -r l; do cd ..; "])
def test_directory_flow_work_grows_polynomially_with_nesting(level, monkeypatch, tmp_path):
    """Each loop is walked to a fixed point; nested loops once walked each
    inner loop again per outer pass, so checking 22 nested loops (466
    characters) took minutes (red team RT1 F6).  Counted, not timed."""
    from bash_policy.judge import flow

    walks = 0
    original = flow._Flow.walk

    def counted(self, node, states):
        nonlocal walks
        walks += 1
        return original(self, node, states)

    monkeypatch.setattr(flow._Flow, "walk", counted)
    counts = []
    for depth in (10, 20):
        walks = 0
        done = " done < f;" if level.startswith("while") else " done;"
        assert_sound(level * depth + "ls;" + done * depth, cwd=str(tmp_path))
        counts.append(walks)
    assert counts[1] <= 8 * counts[0], counts  # doubling the depth: at most cubic growth
