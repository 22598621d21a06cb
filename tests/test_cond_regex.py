"""`[[ x =~ REGEX ]]`: bash reads the right side with rules of its own
(parse.y, PST_REGEXP: `(` starts a group read to its matching `)` blanks
and all, `|` is part of the word).  The exact reader reads the forms whose
reading is plain and denies the rest (issue 18); each is compared here with
how bash 5.2 itself read it: `declare -f` prints a function's commands back,
words as bash cut them.
"""

from __future__ import annotations

import random
import re
import shutil
import subprocess

import pytest

from bash_policy import check
from bash_policy.read import exact, treesitter
from bash_policy.read.crosscheck import compare
from bash_policy.read.model import Cond

BASH = shutil.which("bash") or "/bin/bash"

ALLOWED = [
    "^[0-9]+$", r"\.py$", "(a b)", "^(foo|bar)$", "a|b", '"a.b"', "'a b'", r"x\ y", "(a)(b)",
    "((a))", "a{2}", "[[:digit:]]+", "$", "a$", "a#b", "^a.*b$", "(a)|b", "[0-9]{1,3}",
    r"^v[0-9]+\.[0-9]+", "^[a-z_]+=", "(^| )x( |$)", "[0-9]{4}-[0-9]{2}-[0-9]{2}", "'(a'",
    "\"x\"y'z'", "^-", r"a\(b", r"(a\)b)", "(a$|b)", "[a-f0-9]{40}", "a~b", "((a{10}){10}){10}",
    "^[^/]+/[^/]+$", "[{}]", "'{'", r"\{",
]
DENIED = [
    ("a]]", "BP106"),            # tree-sitter reads it otherwise
    ("(a$b)", "BP101"),          # `$b` inside a group would expand
    ("$re", "BP101"),            # an expansion: the regex is computed
    ('"$re"', "BP101"),
    ("$(id)", "BP101"),
    (r"(a)\1", "BP101"),         # backreferences: glibc may backtrack for ever
    ("((a{255}){255}){255}", "BP101"),  # regcomp takes seconds and gigabytes
    ("a{", "BP101"),
    ("a}b", "BP101"),
    ("(a", "BP101"),             # bash reads on to a matching `)`
    ("(a'b')", "BP101"),         # quotes inside a group
    ("#a", "BP101"),             # a comment: bash then finds no operand
    ("~/x", "BP101"),            # tilde expansion
    ("", "BP101"),
    ("a;b", "BP100"),            # `;` ends the word, then `b`: a syntax error
    ("a b", "BP100"),
    ("é", "BP101"),
    ("a\\\nb", "BP101"),
]


def _cond(command: str) -> Cond:
    node = exact.parse(command).body.items[0].commands[0]
    assert isinstance(node, Cond)
    return node


@pytest.mark.parametrize("regex", ALLOWED)
def test_plain_regular_expressions_are_read_as_one_word(regex):
    command = f"[[ $x =~ {regex} ]] && echo y"
    verdict = check(command)
    assert verdict.allowed, verdict.denials
    words = _cond(command).words
    assert [w.text for w in words] == ["$x", "=~", regex] and words[2].value == regex


@pytest.mark.parametrize("regex, code", DENIED)
def test_other_regular_expressions_deny(regex, code):
    verdict = check(f"[[ $x =~ {regex} ]] && echo y")
    assert code in [d.code for d in verdict.denials], verdict.denials


@pytest.mark.parametrize("command", [
    "[[ a =~ b && c =~ (d|e) ]]", "[[ ( a =~ b ) ]]", "[[ ! a =~ b ]]", "[[ =~ ]]",
    "[[ a == =~ ]]", "[[ -n a && b =~ ^c ]]", "[[ a =~ b\n]]", "[[ $(echo a) =~ ^a ]]",
])
def test_where_the_operator_stands(command):
    mine = exact.parse(command)
    assert not mine.problems, mine.problems
    assert compare(mine, treesitter.parse(command), "tree-sitter") is None
    assert check(command).allowed


def _bash_readings(conds: list[str]) -> list[str | None]:
    """How bash 5.2 prints each `[[ … ]]` back (None: a syntax error), in one run."""
    script = "".join(f"eval {_quoted(f'f{k}() {{ {c}; }}')} 2>/dev/null && declare -f f{k} | sed -n 3p "
                     "|| echo '<error>'; echo @@\n" for k, c in enumerate(conds))
    done = subprocess.run([BASH], input=script, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return [None if part.strip() == "<error>" else part.strip()
            for part in done.stdout.split("@@\n")[:-1]]


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def test_bash_reads_every_allowed_form_as_the_checker_does():
    conds = [f"[[ $x =~ {r} ]]" for r in ALLOWED]
    assert _bash_readings(conds) == conds


_PIECES = ["a", "b", "0", ".", "*", "+", "?", "^", "$", "[", "]", "[a-z]", "[^x]", "-", "_", "/",
           ",", ":", "=", "@", "%", "!", "#", "~", "{2}", "{1,3}", "|", "(", ")", " ", "\\.", "\\ ",
           "\\(", "\\)", "'x y'", "'('", '"z"', '"("', "\\|", "(a|b)", "( )", "]]", ";", "&", "<",
           ">", "\t"]


def test_generated_forms_the_checker_reads_are_read_alike_by_bash():
    """Random regular expressions from tricky pieces: whatever the exact reader
    reads without a problem as one `[[ … ]]`, bash reads into the same words
    (print_cmd puts one blank between them and `-n` before a lone word)."""
    rng = random.Random(18)
    conds, mine = [], []
    for _ in range(3000):
        command = f"[[ $x =~ {''.join(rng.choice(_PIECES) for _ in range(rng.randint(1, 7)))} ]]"
        script = exact.parse(command)
        if script.problems or len(script.body.items) > 1 or len(script.body.items[0].commands) > 1:
            continue
        cond = script.body.items[0].commands[0]
        if isinstance(cond, Cond) and not cond.redirects:
            conds.append(command)
            mine.append("[[ " + " ".join(w.text for w in cond.words) + " ]]")
    assert len(conds) > 300
    readings = _bash_readings(conds)
    unary = re.compile(r"(\[\[ |&& |\|\| |! |\( )-n ")
    assert [(c, r) for c, m, r in zip(conds, mine, readings)
            if r is None or unary.sub(r"\1", r) != unary.sub(r"\1", m)] == []
