"""Quote removal and expansion detection for single words (bash(1), QUOTING)."""

import pytest

from bash_policy.read.model import ANSI_C, ARITHMETIC, BRACE, COMMAND_SUB, GLOB, LOCALE, PARAMETER, TILDE
from bash_policy.read.words import WordSyntaxError, scan_word


@pytest.mark.parametrize("raw, value", [
    ("abc", "abc"),
    ("'a b'", "a b"),
    ('"a b"', "a b"),
    ("a\\ b", "a b"),
    ("'a'\"b\"c", "abc"),
    ("''", ""),
    ('""', ""),
    ("-e'x'", "-ex"),
    ("--glob='*.ts'", "--glob=*.ts"),
    ("'\\'", "\\"),                 # no escapes inside single quotes
    ('"\\$x"', "$x"),
    ('"\\a"', "\\a"),              # backslash stays before ordinary characters in "…"
    ('"a\\\nb"', "ab"),            # continuation inside double quotes
    ("a\\\nb", "ab"),              # continuation inside a word
    ("\\*", "*"),
    ("'*'", "*"),
    ("$", "$"),
    ("a$", "a$"),
    ('"$"', "$"),
    ("a~b", "a~b"),
    ("x[", "x["),
    ("{a}", "{a}"),
    ("{}", "{}"),
    ("a,b", "a,b"),
    ("'{a,b}'", "{a,b}"),
    ("#x", "#x"),
    ("日本", "日本"),
])
def test_literal_values(raw, value):
    word = scan_word(raw)
    assert word.value == value
    assert not word.expansions


@pytest.mark.parametrize("raw, kind", [
    ("$x", PARAMETER), ("${x}", PARAMETER), ('"$x"', PARAMETER), ("$1", PARAMETER),
    ("$@", PARAMETER), ("$(id)", COMMAND_SUB), ('"$(id)"', COMMAND_SUB), ("`id`", COMMAND_SUB),
    ('"`id`"', COMMAND_SUB), ("$((1))", ARITHMETIC), ("$[1]", ARITHMETIC), ("*.py", GLOB),
    ("a?", GLOB), ("[ab]", GLOB), ("{a,b}", BRACE), ("x{1..3}", BRACE), ("~", TILDE),
    ("~/x", TILDE), ("a=~/x", TILDE), ("PATH=/a:~/b", TILDE), ("$'x'", ANSI_C), ('$"x"', LOCALE),
])
def test_expansions(raw, kind):
    word = scan_word(raw)
    assert word.value is None
    assert kind in {e.kind for e in word.expansions}


@pytest.mark.parametrize("raw, kind", [
    ("$\\\n--", PARAMETER),       # bash joins the lines first: `$-`
    ("$\\\n(id)", COMMAND_SUB),
    ('"$\\\nHOME"', PARAMETER),
    ("x\\\n*", GLOB),
    ("~\\\n/x", TILDE),
])
def test_continuations_are_joined_before_the_word_is_read(raw, kind):
    word = scan_word(raw, start=3)
    assert word.value is None
    assert kind in {e.kind for e in word.expansions}
    assert all(3 <= e.span.start < e.span.end <= 3 + len(raw) for e in word.expansions)


def test_continuation_inside_single_quotes_is_literal():
    assert scan_word("'a\\\nb'").value == "a\\\nb"


def test_tilde_after_equals_only_in_assignment_like_words():
    assert scan_word("--file=~/x").value == "--file=~/x"
    assert scan_word("a=~/x").value is None


def test_glob_prefix_fixes_the_start():
    assert scan_word("src/*.py").prefix == "src/"
    assert scan_word("src/*.py").cannot_start_with_dash
    assert not scan_word("*.py").cannot_start_with_dash
    assert not scan_word("-*.py").cannot_start_with_dash
    assert scan_word("'sr c'/*.py").prefix == "sr c/"


def test_spans_are_offsets_into_the_source():
    word = scan_word("a$(id)", start=10)
    assert word.span.start == 10 and word.span.end == 16
    assert word.expansions[0].span.start == 11


@pytest.mark.parametrize("raw", ["'abc", '"abc', "`id", "a b", "a;b", "$'x"])
def test_broken_words_raise(raw):
    with pytest.raises(WordSyntaxError):
        scan_word(raw)
