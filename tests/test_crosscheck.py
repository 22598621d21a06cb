"""Readings that must agree: the exact reader, tree-sitter, and bashlex when installed."""

import subprocess
import sys
from dataclasses import replace

import pytest

from bash_policy.explain import explain
from bash_policy.judge.engine import check
from bash_policy.judge.policy import ConfigError, Policy
from bash_policy.read import exact, treesitter
from bash_policy.read.crosscheck import compare, heredoc_lines

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
# Read alike by the two required readers; bashlex cannot read them (compound, time).
REQUIRED_ONLY = [
    "time -p rg x | head",
    "(cd src && rg x) || { ls; }",
    "if rg -q x f; then echo yes; elif true; then :; else echo no; fi",
    "for f in a b; do wc -l \"$f\"; done",
    "while read -r l; do echo \"$l\"; done < f",
    "until false; do break; done",
    "case $x in a|b) echo 1;; (*) echo 2;; esac",
    "echo \"$(git branch --show-current)\" <(sort a) && (( 1 + 2 ))",
    "[[ -f x && ! ( y == z ) ]] > /dev/null",
]


@pytest.mark.parametrize("command", SAME_READING)
def test_the_three_readers_read_alike(command):
    mine = exact.parse(command)
    assert not mine.problems
    assert compare(mine, treesitter.parse(command), "tree-sitter") is None
    assert compare(mine, bashlex_front.parse(command), "bashlex") is None


@pytest.mark.parametrize("command", REQUIRED_ONLY)
def test_exact_and_tree_sitter_read_compound_commands_alike(command):
    mine = exact.parse(command)
    assert not mine.problems, mine.problems
    assert compare(mine, treesitter.parse(command), "tree-sitter") is None


def test_bashlex_front_end_values():
    script = bashlex_front.parse("A=1 rg -e\\ x 'y z' 2>&1 <<'EOF'\nbody\nEOF")
    (command,) = script.commands
    assert [(a.name, a.value.value) for a in command.assignments] == [("A", "1")]
    assert command.argv == ("rg", "-e x", "y z")
    assert [(r.fd, r.op) for r in command.redirects] == [(2, ">&"), (None, "<<")]
    assert command.redirects[0].target.value == "1"
    assert command.redirects[1].quoted and command.redirects[1].body == "body\n"


def test_continuation_after_word_is_not_part_of_it():
    first = bashlex_front.parse("rg $x\\\n| head").commands[0]
    assert first.words[1].text == "$x"


@pytest.mark.parametrize("command", ["time rg foo", "rg foo {fd}</dev/null", "(ls)"])
def test_bashlex_problems(command):
    assert bashlex_front.parse(command).problems


def test_heredoc_lines_ignore_how_the_terminator_is_cut():
    assert heredoc_lines("hi\n\t", True) == heredoc_lines("\thi\n", True) == ("hi",)
    assert heredoc_lines("", False) == ()


def test_agreement_is_noted():
    verdict = check("rg fo\\o src")
    assert verdict.allowed and "cross-check: tree-sitter and bashlex agreed" in verdict.notes


def _misreading(parse):
    """A reader that reads the second word of the first command as `--pre=sh`."""
    def misread(source):
        script = parse(source)
        command = script.body.items[0].commands[0]
        word = replace(command.words[1], value="--pre=sh")
        command = replace(command, words=(command.words[0], word, *command.words[2:]))
        pipeline = replace(script.body.items[0], commands=(command,))
        return replace(script, body=replace(script.body, items=(pipeline,)))
    return misread


@pytest.mark.parametrize("reader", ["tree-sitter", "bashlex"])
def test_disagreement_denies_naming_both_readings(monkeypatch, reader):
    if reader == "tree-sitter":
        monkeypatch.setattr(treesitter, "parse", _misreading(treesitter.parse))
    else:
        monkeypatch.setattr(bashlex_front, "parse", _misreading(bashlex_front.parse))
    verdict = check("rg fo\\o")
    assert not verdict.allowed
    (denial,) = verdict.denials
    assert (denial.code, denial.rule) == ("BP106", "readings") and denial.hint
    assert reader in denial.message and "'foo'" in denial.message and "'--pre=sh'" in denial.message
    assert (denial.span.start, denial.span.end) == (3, 7)  # the word `fo\\o`


def test_a_tree_sitter_problem_denies(monkeypatch):
    monkeypatch.setattr(treesitter, "parse", lambda source: replace(
        exact.parse(source), body=None, problems=(("BP100", exact.Span(0, 1), "x", ""),)))
    verdict = check("rg foo")
    assert [d.code for d in verdict.denials] == ["BP106"]


def test_what_bashlex_cannot_read_is_noted_not_denied():
    verdict = check("time rg fo\\o src")
    assert verdict.allowed
    assert "cross-check: tree-sitter agreed; bashlex cannot read this command" in verdict.notes


def test_explain_shows_the_readings():
    out, allowed = explain("cat <<'EOF'\nhi\n EOF\nls")
    assert not allowed
    assert "exact reader" in out


def test_off_skips_bashlex():
    verdict = check("rg foo src", Policy.from_mapping({"crosscheck": "off"}))
    assert verdict.allowed and verdict.notes == ("cross-check: tree-sitter agreed; bashlex off",)


def test_bad_mode_is_a_config_error():
    with pytest.raises(ConfigError, match="crosscheck"):
        Policy.from_mapping({"crosscheck": "sometimes"})


def _run(code: str) -> str:
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_denied_command_imports_neither_second_reader():
    """Unless it has a fix: the rewritten command is checked in full (judge/fixes.py)."""
    out = _run("import sys, bash_policy\n"
               "from bash_policy.judge.engine import check\n"
               "assert not check('rg foo | sh')\n"
               "print('bashlex' in sys.modules, 'bash_policy.read.treesitter' in sys.modules)\n"
               "assert check('rg --pre cat x').fix.command == 'rg x'\n"
               "print('bashlex' in sys.modules, 'bash_policy.read.treesitter' in sys.modules)")
    assert out.splitlines() == ["False False", "True True"]


def test_tree_sitter_loads_without_running_its_packages():
    """Its compiled modules alone; importing the package later reuses them."""
    out = _run("import sys\n"
               "from bash_policy.read import treesitter\n"
               "print('tree_sitter' in sys.modules, 'tree_sitter_bash' in sys.modules)\n"
               "import tree_sitter\n"
               "print(type(treesitter._PARSER) is tree_sitter.Parser)")
    assert out.splitlines() == ["False False", "True"]


@pytest.mark.parametrize("mode, expected", [
    ("auto", "True ('cross-check: tree-sitter agreed; bashlex not installed',) []"),
    ("required", "False () ['BP106']"),
])
def test_missing_bashlex(mode, expected):
    out = _run("import sys; sys.modules['bashlex'] = None\n"
               "from bash_policy.judge.engine import check\n"
               "from bash_policy.judge.policy import Policy\n"
               f"v = check('rg fo\\\\o src', Policy.from_mapping({{'crosscheck': {mode!r}}}))\n"
               "print(v.allowed, v.notes, [str(d.code) for d in v.denials])")
    assert out == expected


def test_text_bashlex_skipped_is_a_problem():
    builder = bashlex_front._Builder("rg x junk # comment")
    builder.covered = [(0, 2), (3, 4)]
    with pytest.raises(bashlex_front._Problem, match="skipped"):
        builder.check_gaps()
    builder.covered.append((5, 9))
    builder.check_gaps()  # the comment after a blank is not skipped text


@pytest.mark.parametrize("command", ["cat a'${'", "cat a'x${y'", "cat a'${' }"])
def test_bashlex_is_not_asked_what_it_loops_on(command):
    """bashlex 0.18 never returns on `${` without `}` after a word's start
    (fuzzer finding F3): that reading is skipped, as where bashlex is absent."""
    code = f"from bash_policy import check; v = check({command!r}); print(v.allowed, v.notes)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "bashlex cannot read" in done.stdout, done
