"""The bashlex cross-check: same readings, BP106 on difference, loaded only for allows."""

import subprocess
import sys
from dataclasses import replace

import pytest

from bash_policy.read import treesitter as parse_ts
from bash_policy.read.crosscheck import compare, heredoc_lines, plain_reading
from bash_policy.judge.engine import check
from bash_policy.explain import explain
from bash_policy.judge.policy import ConfigError, Policy

bashlex_front = pytest.importorskip("bash_policy.read.bashlex_reader")

SAME_READING = [
    'LC_ALL=C rg -n "foo bar" src | head -20 && ls; wc -l a',
    "rg 'a b'c\"d\" \\# e\\ f",
    "rg foo src 2>/dev/null >&2 &>/dev/null 3<&- 2>&-",
    "rg foo 0< src/a.py",
    "! rg foo src |& head",
    "rg $(id) \"$HOME\" ~/x *.py {a,b} <(ls)",
    "rg fo\\\no src\\\n| head",
    "rg foo src;#c\nls # d\n\n# e\nwc",
    "cat <<'EOF' src\nhi $x\nEOF\nrg foo",
    "cat <<-\"EOF\"\n\ta\n\n\t\tb\n\tEOF",
    "rg '' \"\" x=1",
]


@pytest.mark.parametrize("command", SAME_READING)
def test_front_ends_read_alike(command):
    mine = parse_ts.parse(command)
    theirs = bashlex_front.parse(command)
    assert not mine.problems and not theirs.problems
    assert compare(mine, theirs) is None


def test_bashlex_front_end_values():
    script = bashlex_front.parse("A=1 rg -e\\ x 'y z' 2>&1 <<'EOF'\nbody\nEOF")
    (segment,) = script.segments
    assert [(a.name, a.value.value) for a in segment.assignments] == [("A", "1")]
    assert segment.argv == ("rg", "-e x", "y z")
    assert [(r.fd, r.op) for r in segment.redirects] == [(2, ">&"), (None, "<<")]
    assert segment.redirects[0].target.value == "1"
    assert segment.redirects[1].quoted and segment.redirects[1].body == "body\n"


def test_continuation_after_word_is_not_part_of_it():
    (segment, _) = bashlex_front.parse("rg $x\\\n| head").segments
    assert segment.words[1].text == "$x"


@pytest.mark.parametrize("command", ["time rg foo", "rg foo {fd}</dev/null", "(ls)", "rg foo &"])
def test_bashlex_problems(command):
    assert bashlex_front.parse(command).problems


def test_heredoc_lines_ignore_how_the_terminator_is_cut():
    assert heredoc_lines("hi\n\t", True) == heredoc_lines("\thi\n", True) == ("hi",)
    assert heredoc_lines("", False) == ()


def test_agreement_is_noted():
    verdict = check("rg fo\\o src")  # a backslash: outside the plain subset
    assert verdict.allowed and "cross-check: bashlex agreed" in verdict.notes


def test_plain_text_is_read_by_splitting_at_spaces():
    verdict = check("LC_ALL=C rg -n foo src 2>/dev/null | head -20 && git log --oneline -5")
    assert verdict.allowed and "cross-check: plain-text reading agreed" in verdict.notes
    assert plain_reading("rg fo\\o src") is None      # an escape: bashlex reads it
    assert plain_reading("rg \"$x\" src") is None      # an expansion inside quotes
    assert plain_reading("rg 'a b' \"c d\"") == [("", (), ("rg", "a b", "c d"), ())]
    assert plain_reading("if rg foo") is None         # a reserved word changes the grammar
    assert check("time rg foo src | head -5").allowed  # bashlex cannot parse `time`
    assert plain_reading("rg foo\nls") is None        # one line only
    assert plain_reading("rg foo >out") is None        # only the listed redirections


def test_a_plain_reading_that_differs_falls_back_to_bashlex(monkeypatch):
    from bash_policy.read import crosscheck

    monkeypatch.setattr(crosscheck, "plain_reading", lambda source: [("", (), ("other",), ())])
    verdict = check("rg foo src")
    assert verdict.allowed and "cross-check: bashlex agreed" in verdict.notes


def test_disagreement_denies_with_both_readings(monkeypatch):
    def misread(source):
        script = parse_ts.parse(source)
        word = replace(script.segments[0].words[1], value="--pre=sh")
        segment = replace(script.segments[0], words=(script.segments[0].words[0], word))
        return replace(script, segments=(segment,))

    monkeypatch.setattr(bashlex_front, "parse", misread)
    verdict = check("rg fo\\o")
    assert not verdict.allowed
    (denial,) = verdict.denials
    assert denial.code == "BP106" and denial.hint
    assert "word 1 of command 1" in denial.message
    assert "'foo'" in denial.message and "'--pre=sh'" in denial.message
    assert (denial.span.start, denial.span.end) == (3, 7)  # the word `fo\\o`


def test_bashlex_failure_denies():
    verdict = check("time rg fo\\o src")  # not plain: bashlex reads it, and cannot parse `time`
    assert [d.code for d in verdict.denials] == ["BP106"]
    assert "bashlex" in verdict.denials[0].message


def test_explain_shows_both_readings_side_by_side():
    out, allowed = explain("cat <<'EOF'\nhi\n EOF\nls")
    assert not allowed
    header = out.splitlines()[0]
    assert header.startswith("tree-sitter read:") and header.endswith("| bashlex read:")


def test_off_skips_bashlex():
    verdict = check("rg foo src", Policy.from_mapping({"crosscheck": "off"}))
    assert verdict.allowed and verdict.notes == ("cross-check: off",)


def test_bad_mode_is_a_config_error():
    with pytest.raises(ConfigError, match="crosscheck"):
        Policy.from_mapping({"crosscheck": "sometimes"})


def _run(code: str) -> str:
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_denied_command_does_not_import_bashlex():
    out = _run("import sys, bash_policy\n"
               "from bash_policy.judge.engine import check\n"
               "assert not check('rg --pre cat x')\n"
               "print('bashlex' in sys.modules, 'bash_policy.read.crosscheck' in sys.modules)\n"
               "assert check('rg foo src')\n"
               "print('bashlex' in sys.modules)\n"
               "assert check('rg fo\\\\o src')\n"
               "print('bashlex' in sys.modules)")
    assert out.splitlines() == ["False False", "False", "True"]


@pytest.mark.parametrize("mode, expected", [
    ("auto", "True ('cross-check: bashlex not installed',) []"),
    ("required", "False () ['BP106']"),
])
def test_missing_bashlex(mode, expected):
    out = _run("import sys; sys.modules['bashlex'] = None\n"
               "from bash_policy.judge.engine import check\n"
               "from bash_policy.judge.policy import Policy\n"
               f"v = check('rg fo\\\\o src', Policy.from_mapping({{'crosscheck': {mode!r}}}))\n"
               "print(v.allowed, v.notes, [d.code for d in v.denials])")
    assert out == expected


def test_text_bashlex_skipped_is_a_problem():
    builder = bashlex_front._Builder("rg x junk # comment")
    builder.covered = [(0, 2), (3, 4)]
    with pytest.raises(bashlex_front._Problem, match="skipped"):
        builder.check_gaps()
    builder.covered.append((5, 9))
    builder.check_gaps()  # the comment after a blank is not skipped text
