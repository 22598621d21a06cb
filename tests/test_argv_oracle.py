"""argv oracle: for every command the checker allows, bash passes exactly the argv it read.

Commands come from a grammar of tricky shell tokens over the whitelisted
programs and their allowed flags (so that many are allowed).  Each allowed
command runs with real bash in an empty directory where every whitelisted
program is a stub logging its argv (tests/oracle_support.py).  Properties:
the argv of every segment bash ran equals the checker's; no other program
ran; bash reported nothing on stderr but the failures of input redirections from
missing files (which the checker reads but cannot foresee); nothing appeared
in the directory.

Builtins among the whitelisted names (echo, printf, test, [, pwd, true, ...)
are disabled with `enable -n`, so bash runs their stubs and they are compared
too; reserved words (`time`) are not generated.  Globs: the directory is
empty, so bash passes a glob unexpanded; a word the checker marks as a glob
or `~` must become one argument starting with the word's literal prefix.

BASH_POLICY_ORACLE_EXAMPLES=N runs N examples instead of the default 5,000.
"""

from __future__ import annotations

import itertools
import os
import string
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st
from oracle_support import StubBin, argv_mismatches, bare, bash_names, double, flag_words, single

from bash_policy.judge.engine import check
from bash_policy.judge.policy import Policy
from bash_policy.render import text as render_text

EXAMPLES = int(os.environ.get("BASH_POLICY_ORACLE_EXAMPLES", "5000"))
POLICY = Policy.from_mapping({"stdin_script": False})  # the oracle runs `bash -c`
KEYWORDS = bash_names("k")
PROGRAMS = [n for n in POLICY.program_names()
            if "/" not in n and n not in KEYWORDS and POLICY.spec(n).denied is None]

# -- rendering a known value as shell text, in every quote form -----------------

def _ansi_c(value: str) -> str:
    return "$'" + "".join(f"\\x{ord(c):02x}" if c in "\\'\n" else c for c in value) + "'"


def _continued(value: str) -> str:
    """Bare text with a line continuation inside the word."""
    half = len(value) // 2
    return bare(value[:half]) + "\\\n" + bare(value[half:])


_STYLES = (bare, single, double, _continued, _ansi_c)


@st.composite
def rendered(draw, value: str) -> str:
    """`value` written as one shell word, split into differently quoted chunks."""
    cuts = sorted(draw(st.lists(st.integers(0, len(value)), max_size=2)))
    bounds = [0, *cuts, len(value)]
    chunks = [value[a:b] for a, b in zip(bounds, bounds[1:])]
    styles = st.sampled_from(_STYLES[:4]) if draw(st.integers(0, 19)) else st.sampled_from(_STYLES)
    parts = []
    for chunk in chunks:
        style = draw(styles)
        parts.append(style(chunk) if chunk or style in (single, double) else "")
    word = "".join(parts)
    return word if word else "''"


# -- raw tokens the checker must read as bash does -----------------------------

RAW_TOKENS = [
    "*.py", "src/*.rs", "./*", "[ab]c", "?x", "a[", "]", "x]", "[!a]b", "*", "\\*", "'*'",
    "{a,b}", "{1..3}", "{a}", "{}", "a{b", "}", "{,}", "${x}", "$x", "$1", "$", '"$"', "a$",
    "$'a\\nb'", '$"x"', "$((1))", "$(id)", "`id`", "~", "~/x", "~root", "a~", "x=~/a",
    "a=b:~/c", "-x=~", "--opt=~", "#c", "a#b", "\\#", "'#'", "\\\\", "\\'", '\\"', "''", '""',
    "\"'\"", "'\"'", "a\\\nb", "--", "-", "--pre=x", "'--pre=x'", "-e", "!", "a!b", "=", "a=b",
    "%", "^x", "@(a)", "+(a)", "!(a)", "?(a)", "*(a)", "<(x)", "é", "中文", "a\u00a0b",
    "a\u2028b", "－n", "–n", "'\t'", '"a\tb"', "a\\ b", "\\-n", "-\\n", "'-'n", '"-"-', "\\~",
    "a'b'c", 'a"b"c', "''-n", "\\\n-n", "x\\\n", "'a\nb'", "\\$x", "'$x'", "\\`x\\`",
]
TEXT = st.text(alphabet=st.sampled_from(
    list(string.ascii_letters + string.digits + " -_./=:,'\"\\$`*?[]{}~#!;&|<>()\t\n")
    + ["é", "中", "\u00a0", "－", "🙂", "\u0301"]), max_size=8)


@st.composite
def flag_values(draw, path: tuple[str, ...]) -> list[str]:
    """Argument values for one allowed flag: `-A3`, `--after-context=3`, `-A 3`, ..."""
    flags, _ = flag_words(path)
    if not flags:
        return []
    name, takes, choices = draw(st.sampled_from(flags))
    if takes == "none":
        return [name]
    value = draw(st.sampled_from(choices)) if choices else draw(
        st.one_of(st.sampled_from(["3", "x", "-", "--pre=x", "a b", ""]), TEXT))
    attach = "=" if name.startswith("--") else ""
    if takes == "optional":
        return [name + attach + value] if draw(st.booleans()) else [name]
    return draw(st.sampled_from([[name + attach + value], [name, value]]))


@st.composite
def word(draw, path: tuple[str, ...]) -> str:
    kind = draw(st.integers(0, 9))
    if kind < 4:
        return " ".join([draw(rendered(v)) for v in draw(flag_values(path))] or ["''"])
    if kind < 7:
        return draw(rendered(draw(st.one_of(TEXT, st.sampled_from(["--pre=x", "-e", "--"]))))
                    )
    if kind < 8:
        return draw(rendered("--"))
    pieces = draw(st.lists(st.one_of(st.sampled_from(RAW_TOKENS), TEXT.map(bare)),
                           min_size=1, max_size=3))
    return "".join(pieces) or "''"


REDIRECTS = ["2>/dev/null", "2> /dev/null", ">/dev/null", "2>&1", ">&2", "&>/dev/null",
             "</dev/null", "0</dev/null", "<<<'a b'", '<<< "$x"', "<<<text", "<INPUT",
             "< 'INPUT'", ">out", "2>>/dev/null", ">|/dev/null", "<&0", "3>&-"]
SEPARATORS = [" ", " ", " ", "  ", "\t", " \\\n ", "\\\n"]
ASSIGNMENTS = ["LC_ALL=C", "LC_ALL='C.UTF-8'", "TZ=UTC", 'NO_COLOR="1"', "PAGER=cat",
               "GIT_PAGER=cat", "FOO=bar", "LANG=~"]


@st.composite
def simple_command(draw, input_file: str) -> str:
    program = draw(st.sampled_from(PROGRAMS))
    path = (program,)
    words = [draw(rendered(program))]
    _, subs = flag_words(path)
    if subs and draw(st.integers(0, 9)):
        sub = draw(st.sampled_from(subs))
        words.append(draw(rendered(sub)))
        path += (sub,)
    words += draw(st.lists(word(path), max_size=5))
    for _ in range(draw(st.integers(0, 2))):
        redirect = draw(st.sampled_from(REDIRECTS)).replace("INPUT", input_file)
        words.insert(draw(st.integers(0 if _ == 0 else 1, len(words))), redirect)
    if not draw(st.integers(0, 6)):
        words.insert(0, draw(st.sampled_from(ASSIGNMENTS)))
    out = words[0]
    for w in words[1:]:
        out += draw(st.sampled_from(SEPARATORS)) + w
    return out


OPERATORS = [" | ", "|", " && ", " || ", "; ", ";", "\n", " ;\n", " |\n", " &&\n", " |& ",
             " # c\n", "\n\n", " &"]


# An input file that always exists, outside the command's (empty) directory.
INPUT_FILE = str(Path(__file__).resolve())


@st.composite
def command_line(draw) -> str:
    parts = draw(st.lists(simple_command(INPUT_FILE), min_size=1, max_size=4))
    out = ("! " if not draw(st.integers(0, 9)) else "") + parts[0]
    for part in parts[1:]:
        out += draw(st.sampled_from(OPERATORS))
        out += ("! " if not draw(st.integers(0, 9)) else "") + part
    tail = draw(st.integers(0, 19))
    if tail == 0:
        out += " # a comment; rg --pre x"
    elif tail == 1:
        out += ";"
    elif tail == 2:
        out += " <<'EOF'\n$(body) `x` \\\nEOF"
    return out


# -- the harness ----------------------------------------------------------------


@pytest.fixture(scope="module")
def sandbox():
    with tempfile.TemporaryDirectory(prefix="bp-argv-") as root:
        root = Path(root)
        (root / "home").mkdir()
        yield StubBin(root / "stubs", PROGRAMS), root


_COUNTER = itertools.count()


def assert_bash_agrees(command: str, stubs: StubBin, root: Path) -> bool:
    """Run an allowed command with bash and compare; False if it is denied."""
    verdict = check(command, POLICY)
    if not verdict.allowed:
        return False
    n = next(_COUNTER)
    cwd = root / f"cwd{n}"
    cwd.mkdir()
    run = stubs.run(command, cwd, root / f"log{n}")
    context = f"command {command!r}\n{render_text(verdict)}\nbash stderr: {run.stderr}"
    assert argv_mismatches(verdict, run) == [], context
    assert list(cwd.iterdir()) == [], context
    cwd.rmdir()
    return True


@pytest.mark.parametrize("command", [
    "rg -n 'a'\"b\"c\\ d -- *.py | head -5",
    "rg x\\\n -n",
    "rg -e --pre=x -- -e",
    "LC_ALL=C rg 'é'  \u00a0 2>/dev/null",
    "rg x # --pre=cat\nhead -1",
    "! rg x || head -2 && rg y",
    "rg x 'a''' \"\" \\'",
    "rg x=~/a a=b:~/c -- ~",
    "rg x <../home/\\\n--",
    "echo -n 'a  b' \\ c",
    "[ -f x ] && printf '%s\\n' a",
    "rg x <<'EOF'\n$(id) `id`\nEOF",
])
def test_known_tricky_commands(sandbox, command):
    stubs, root = sandbox
    assert assert_bash_agrees(command, stubs, root), render_text(check(command, POLICY))


@pytest.mark.oracle  # thousands of generated commands run with bash
@settings(max_examples=EXAMPLES, deadline=None,
          derandomize="BASH_POLICY_ORACLE_EXAMPLES" not in os.environ,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture, HealthCheck.filter_too_much])
@given(command=command_line())
@example(command="! b2sum -b -b 2>&1\\\n2>/dev/null # a comment; rg --pre x")
@example(command="! gh api <../home/\\\n'\n' 2>/dev/null # a comment; rg --pre x")
@example(command="! LC_ALL=C b2sum 2>/dev/null <../home/\\\n-b # a comment; rg --pre x")
@example(command="! LC_ALL=C \\[ | LC_ALL=C b2sum -b -- $\\\n-- -b # a comment; rg --pre x")
@example(command="! \\[ '' '' '' '' <../home/\\\n-- # a comment; rg --pre x")
def test_bash_passes_the_argv_the_checker_read(sandbox, command):
    stubs, root = sandbox
    event("allowed" if assert_bash_agrees(command, stubs, root) else "denied")
