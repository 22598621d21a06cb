"""Brace expansion (bash_policy/read/braces.py) against real bash 5.2.

Generated words of braces, commas, sequences, quotes and escapes are
expanded by bash (`printf '%s\\0' WORD`) and by the checker (the raw words
braces.expand makes, each read as a word by the exact reader); the values
must be the same, in the same order.  The exact reader must mark every word
whose expansion changes it.  The unit suite runs 400 words; the oracle run
(`-m oracle`) 20,000 (BASH_POLICY_BRACE_WORDS).
"""

from __future__ import annotations

import os
import random
import subprocess

import pytest

from bash_policy import check
from bash_policy.judge import expand as judge_expand
from bash_policy.read import braces, exact
from bash_policy.read.model import BRACE

# Pieces a word is made of: each keeps the word one word and its quotes
# balanced, and none expands after brace expansion (no `$`, glob or tilde).
_ATOMS = ["{", "}", ",", "..", "a", "b", "Z", "x", "1", "0", "3", "-", "+", "-0", "01",
          "'a,b'", "'{'", "'}'", '"}"', '"a b"', '"{a,b}"', "\\,", "\\{", "\\}", "\\$", "\\ ",
          "\\\\", "''", '""', "=", ":", "/", "@", "%"]
_WEIGHTS = [9, 9, 6, 4, 4, 3, 1, 2, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
            1, 1, 1, 1]


def _words(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        word = "".join(rng.choices(_ATOMS, _WEIGHTS, k=rng.randint(1, 12)))
        out.append(word)
    return out


def _bash(words: list[str]) -> list[list[str]]:
    """What bash passes for each word: its arguments after every expansion."""
    script = "".join(f"printf '%s\\0' _ {w}; printf '\\1'\n" for w in words)
    run = subprocess.run(["bash"], input=script.encode(), capture_output=True, timeout=300, cwd="/",
                         env={"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"})
    chunks = run.stdout.decode().split("\1")[:-1]
    assert len(chunks) == len(words), run.stderr.decode()[:500]
    return [c.split("\0")[1:-1] for c in chunks]  # without the `_` that keeps printf's format from repeating


def _checker(word: str) -> list[str] | None:
    """The values the checker reads for `word`, or None when it refuses it."""
    try:
        raws = braces.expand(word)
    except braces.Refused:
        return None
    if raws == [word]:
        made = exact.read_word(word, braces=False)
        return None if made is None or made.value is None else [made.value]
    values = []
    for raw in raws:
        if raw == "":
            continue
        made = exact.read_word(raw, braces=False, assignment=False)
        if made is None or made.value is None:
            return None
        values.append(made.value)
    return values


def _compare(words: list[str]) -> tuple[list, int]:
    wrong, refused = [], 0
    for word, theirs in zip(words, _bash(words)):
        mine = _checker(word)
        if mine is None:
            refused += 1
            continue
        if mine != theirs:
            wrong.append((word, mine, theirs))
        changed = braces.expand(word) != [word]
        marked = BRACE in {e.kind for e in exact.parse(f"echo {word}").commands[0].words[1].expansions}
        if changed and not marked:
            wrong.append((word, "expands, but the reader does not mark it", theirs))
    return wrong, refused


def test_generated_words_expand_as_bash_expands_them():
    words = _words(400, seed=1)
    wrong, refused = _compare(words)
    assert wrong == []
    assert refused < len(words) // 5  # the comparison is not vacuous


@pytest.mark.oracle
def test_many_generated_words_expand_as_bash_expands_them():
    words = _words(int(os.environ.get("BASH_POLICY_BRACE_WORDS", "20000")), seed=2)
    wrong, refused = _compare(words)
    assert wrong == []
    assert refused < len(words) // 5


# Words whose parts are not generated above: `${`, sequences at their limits,
# zero padding, nesting.  Each is expanded by bash in the test.
HAND = ["{a,b}.txt", "books/{x,y}.{pdf,epub}", "{1..5}", "{5..1}", "{a..e}", "{e..a..2}",
        "{01..10..2}", "{-01..3}", "{0..-010}", "{1..10..-3}", "{+1..3}", "{1..+3}", "{1..3..0}",
        "{a,{b,c}d}", "{{1..3}}", "{1..3}}", "{a}b,c}", "{'x,'..b}", "\\${a,b}", "x{,}y",
        "{1..3}{a,b}", "{a..c}{1..2}", "{1..3..}", "{1..}", "{..3}", "{1...3}", "{1..3.}",
        "{1..9223372036854775807..9223372036854775807}", "{1..5..-9223372036854775808}",
        "{2147483646..2147483648}", "{a,b}\\\"x", "\"{\"{a,b}", "a{b,c}{}", "{}{a,b}", "{,a}",
        "x{a..c..0}", "{A..E}", "{z..v}", "x\\ {}a", "{a,b}=c", "{1..3}=~/x"]


@pytest.mark.parametrize("word", HAND)
def test_hand_written_words(word):
    assert _checker(word) == [v for v in _bash([word])[0]]


def test_parameter_braces_are_not_a_list():
    """`${` opens a level that its `}` closes, so `${v}{a,b}` expands the list
    after it and `{${v},a}` keeps the parameter whole (bash, with v=V)."""
    script = "v=V; printf '%s\\0' ${v}{a,b} {${v},a} \"${v}\"{1..2}"
    out = subprocess.run(["bash", "-c", script], capture_output=True, timeout=30).stdout.decode()
    assert out.split("\0")[:-1] == ["Va", "Vb", "V", "a", "V1", "V2"]
    assert braces.expand("${v}{a,b}") == ["${v}a", "${v}b"]
    assert braces.expand("{${v},a}") == ["${v}", "a"]
    assert braces.expand('"${v}"{1..2}') == ['"${v}"1', '"${v}"2']


@pytest.mark.parametrize("word, reason", [
    ("{1..2000}", "more than 1024 words"),
    ("{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}", "more than 1024 words"),
    ("{a..Z}", "punctuation"),
    ("{001..2147483648}", "int"),
    ("{a,$(id)}", "substitution"),
    ("{" * 70 + "a,b" + "}" * 70, "braces in one word"),
])
def test_refused(word, reason):
    with pytest.raises(braces.Refused, match=reason.replace("(", r"\(")):
        braces.expand(word, judge_expand.MAX_BRACE_WORDS)


def test_deep_nesting_is_refused_not_a_crash():
    word = "{a," * 40 + "b" + "}" * 40
    with pytest.raises(braces.Refused):
        braces.expand(word)
    assert not check(f"echo {word}").allowed


@pytest.mark.parametrize("command, allowed", [
    ("ls books/*.{pdf,epub}", True),
    ("echo {a,b}.txt", True),
    ("wc -l src/**/*.{js,ts}", True),
    ("rg {--pre=sh,x} y", False),          # the expansion makes a denied flag
    ("rg foo {,--pre=sh}", False),
    ("cat {/dev/zero,a}", False),          # and a device operand
    ("rg foo {a,*.py}", False),            # and a glob that may start with `-`
    ("echo {1..2000}", False),
    ("{ls,-la}", False),                   # the program name is not written literally
    ("echo x > {a,b}", False),             # bash: ambiguous redirect
    ("echo {a,b}$(id)", False),
])
def test_expanded_words_are_judged(command, allowed):
    assert check(command).allowed is allowed
