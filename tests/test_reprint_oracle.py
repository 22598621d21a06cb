"""Reprint oracle: bash runs a substitution's commands as its printer writes them back.

Bash 5.2 parses `$(…)` and `<(…)` when it reads the command, prints the
commands back (print_cmd.c) and keeps the printed text, which it parses
again and runs at expansion time (red team RT5: the printer lost a case arm's
`(`, and `(esac|touch p)` became a command).  `declare -f` shows the kept
text.  For every allowed command with a substitution (the corpora's, and
commands generated from compound commands, reserved words and odd words
inside substitutions), the commands the checker read inside each
substitution must be the commands bash will read from the printed text.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bash_policy import check
from bash_policy.corpus import read_cases
from bash_policy.read import exact
from bash_policy.read.model import COMPOUND, Case, Command, For, own_words, walk

pytestmark = pytest.mark.oracle
CORPORA = Path(__file__).resolve().parent.parent / "corpora"


def _substitutions(script) -> list:
    """The bodies of every substitution, outermost first, in source order."""
    return [e.body for node in walk(script.body) for word in own_words(node)
            for e in word.expansions if e.body is not None]


def _shape(body) -> list:
    """What a substitution runs: each node's kind with its words' values (the
    text when computed), its case patterns and its redirections' targets."""
    shape = []
    for node in walk(body):
        if isinstance(node, Command):
            # a computed word's text holds its substitutions as printed; their
            # bodies are compared on their own
            shape.append(("command", [w.value if w.value is not None else "<computed>" for w in node.words],
                          [r.target.value if r.target is not None else None for r in node.redirects]))
        elif isinstance(node, Case):
            shape.append(("case", [[w.value for w in arm.patterns] for arm in node.arms]))
        elif isinstance(node, For):
            shape.append(("for", [w.value for w in node.words or ()]))
        elif isinstance(node, COMPOUND):
            shape.append((type(node).__name__,))
    return shape


def _printed(command: str) -> str | None:
    """The function body bash keeps for `f() ( COMMAND )`, with each
    substitution as bash will run it; None when bash refuses the function
    (a body in braces would make a `}` pattern a syntax error)."""
    run = subprocess.run(["bash", "-c", f"f() (\n{command}\n)\ndeclare -f f"],
                         capture_output=True, text=True, timeout=10)
    if run.returncode != 0:
        return None
    lines = run.stdout.split("\n")
    assert lines[0].startswith("f ()") and lines[1].strip() == "{", run.stdout
    return "\n".join(lines[2:]).rstrip().removesuffix("}")


def _mismatch(command: str) -> str | None:
    printed = _printed(command)
    assert printed is not None, f"bash refused {command!r} in a function"
    mine = [_shape(body) for body in _substitutions(exact.parse(command))]
    theirs = [_shape(body) for body in _substitutions(exact.parse(printed))]
    if mine != theirs:
        return f"{command!r}: the checker read {mine}, bash will run {theirs}"
    return None


_CASES = sorted({case.command for path in sorted(CORPORA.glob("*.txt")) for case in read_cases(path)
                 if case.expect == "allow" and ("$(" in case.command or "<(" in case.command)})


def test_the_corpora_substitutions_run_as_read():
    assert len(_CASES) > 20
    wrong = [m for m in map(_mismatch, _CASES) if m]
    assert not wrong, "\n".join(wrong)


# Words that the printer may treat specially: reserved words, `&` endings,
# quoted forms of them, and plain words.
_WORDS = ["esac", "'esac'", "in", "do", "done", "then", "fi", "{", "}", "!", "time", "\\&", "'&'",
          "a\\&", "x", "-n", "*", "\\;", "';'", "'|'", "\\|", "\\)", "'('"]
_COMMANDS = ["ls", "cat", "wc", "echo", "head"]


@st.composite
def _inner(draw, depth: int = 0) -> str:
    words = " ".join(draw(st.lists(st.sampled_from(_WORDS), max_size=3)))
    simple = f"{draw(st.sampled_from(_COMMANDS))} {words}".rstrip()
    if depth >= 2 or draw(st.booleans()):
        return simple
    inner = draw(_inner(depth + 1))
    patterns = "|".join(draw(st.lists(st.sampled_from(_WORDS + ["a", "*"]), min_size=1, max_size=3)))
    return draw(st.sampled_from([
        f"case x in ({patterns}) {inner};; (*) {simple};; esac",
        f"case x in {patterns}) {inner};; esac",
        f"{{ {inner}; }}", f"( {inner} )", f"if {inner}; then {simple}; fi",
        f"for i in {words or 'a'}; do {inner}; done", f"{inner} | {simple}", f"{inner} && {simple}",
        f"{inner}; {simple}", f"! {inner}", f"{inner} > /dev/null",
    ]))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_inner(), st.sampled_from(["echo $({})", 'echo "$({})"', "cat <({})", "ls $(echo $({}))"]))
def test_generated_substitutions_run_as_read(inner, outer):
    command = outer.format(inner)
    if check(command).allowed and _printed(command) is not None:
        assert _mismatch(command) is None
