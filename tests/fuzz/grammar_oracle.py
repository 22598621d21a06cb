"""Differential fuzzing against real bash: a grammar of shell commands, and the oracle.

Commands come from a grammar over the whitelisted programs and their allowed
flags (so that many are allowed), mixing every quoting form, `$` forms,
braces, redirections with numbers and `-`, here-documents with odd delimiters
and end lines, here-strings, comments, continuations, CR/LF, unicode blanks,
keywords as arguments and globs that match files named like flags.

The grammar reads its decisions from a byte string (`Choices`): hypothesis
draws the bytes (one cheap draw per example) and shrinks them, and every
decision is 0, the simplest, past their end, so shorter and smaller bytes
give simpler commands.

For each command `check()` allows, bash runs it twice, as `bash -c` and
reading it from stdin, in a sandbox (fuzz/sandbox.py, FuzzSandbox) where every
whitelisted program is an argv-logging stub; what bash did must be exactly
what the checker read (`expected_runs`): the same programs with the same argv
in the same order, no other program, no change to the sandbox, nothing on
stderr but what the reading predicts, and (bash reading stdin) no program
started with code left in the script on its stdin.

A finding is shrunk by replaying the hypothesis run that produced it (same
seed, examples before it skipped) in a mode that raises on it, so hypothesis
shrinks it; see `scan` and `shrink`.  benchmarks/fuzz.py drives both on
every core.
"""

from __future__ import annotations

import json
import multiprocessing
import multiprocessing.connection
import os
import shutil
import signal
import string
import struct
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from oracle_support import bare, bash_names, double, flag_words, single

from bash_policy.judge.engine import check
from bash_policy.judge.policy import Policy

from .expect import CATEGORIES, OracleGap, expected_runs, run_problems
from .sandbox import INPUT_FILE, MISSING_FILE, FuzzSandbox, become_subreaper, isolate_filesystem

__all__ = ["ALL_CATEGORIES", "DEFAULT_SKIP", "Finding", "Report", "corpus_text", "example", "examine", "fuzz",
           "scan", "shrink"]

POLICY = Policy.default()
KEYWORDS = bash_names("k")
# `cat` first: the simplest choice, where shrinking ends, is a plain program.
# `break` only appears where the grammar ends a loop with it: the sandbox must
# not shadow it, or the loop would not end.
PROGRAMS = sorted((n for n in POLICY.program_names()
                   if "/" not in n and n not in KEYWORDS and n != "break"
                   and POLICY.spec(n).denied is None),
                  key=lambda n: (n != "cat", n))
# Programs the checker denies, to show when a misreading lets bash run them.
OTHER_PROGRAMS = ["rm", "touch", "bash", "sh"]
TIMEOUT = 30.0  # a run is a few milliseconds; a timeout is confirmed with CONFIRM
CONFIRM = 120.0
LOCALES = ("C.UTF-8", "C")
# Problems that are not the checker's: reported only when asked for.
DEFAULT_SKIP = frozenset({"bash-crash"})
# Every category of finding: how bash differed, or how check() failed.
ALL_CATEGORIES = (*CATEGORIES, "crash", "check-hang", "oracle-gap")


class Choices:
    """Grammar decisions read from bytes; past their end every decision is 0."""

    __slots__ = ("data", "pos", "features")

    def __init__(self, data: bytes):
        self.data = data
        self.pos = 0
        self.features: set[str] = set()

    def byte(self) -> int:
        pos = self.pos
        self.pos += 1
        return self.data[pos] if pos < len(self.data) else 0

    def below(self, n: int) -> int:
        if n <= 1:
            return 0
        value = self.byte() if n <= 256 else self.byte() << 8 | self.byte()
        return value % n

    def pick(self, options):
        return options[self.below(len(options))]

    def chance(self, percent: int) -> bool:
        """True with about `percent`% probability; False for a 0 byte."""
        return self.byte() * 100 >= (100 - percent) * 256

    def count(self, most: int, percent: int) -> int:
        n = 0
        while n < most and self.chance(percent):
            n += 1
        return n

    def tag(self, feature: str) -> None:
        """Name a tricky production this command used (for grouping findings)."""
        self.features.add(feature)

    def tricky(self, family: str, options):
        """Pick one of `options` and tag it."""
        choice = self.pick(options)
        self.tag(f"{family}:{choice if isinstance(choice, str) else choice[0]}")
        return choice


# -- words ----------------------------------------------------------------------

def _continued(value: str) -> str:
    half = len(value) // 2
    return bare(value[:half]) + "\\\n" + bare(value[half:])


def _ansi_c(value: str) -> str:
    return "$'" + "".join(f"\\x{ord(c):02x}" if c in "\\'\n" else c for c in value) + "'"


def _locale(value: str) -> str:
    return "$" + double(value)


def _empty_quotes(value: str) -> str:
    return "''" + bare(value) + '""'


STYLES = (("bare", bare), ("single", single), ("double", double),
          ("continued", _continued), ("ansi-c", _ansi_c), ("locale", _locale),
          ("empty-quotes", _empty_quotes))


def rendered(c: Choices, value: str) -> str:
    """`value` as one shell word, in up to three differently quoted chunks."""
    cuts = sorted(c.below(len(value) + 1) for _ in range(c.count(2, 30)))
    bounds = [0, *cuts, len(value)]
    parts = []
    for a, b in zip(bounds, bounds[1:]):
        name, style = STYLES[c.below(len(STYLES)) if c.chance(30) else 0]
        if name != "bare":
            c.tag(f"quote:{name}")
        elif {" ", "\t"} & set(value[a:b]):
            c.tag("quote:backslash-blank")
        parts.append(style(value[a:b]) if a < b or name != "bare" else "")
    return "".join(parts) or "''"


TEXT_ALPHABET = (list(string.ascii_lowercase[:8] + string.digits[:4] + " -_.=:,'\"\\$`*?[]{}~#!;&|<>()\t\n")
                 + ["é", "中", "\u00a0", "\u3000", "－", "\r"])


_ODD_CHARS = {"\u00a0", "\u3000", "\r", "\n", "－"}


def text(c: Choices) -> str:
    """A short value; no `/`, so no misread word can name a path outside the sandbox."""
    value = "".join(c.pick(TEXT_ALPHABET) for _ in range(c.count(8, 75)))
    for ch in _ODD_CHARS & set(value):
        c.tag(f"char:U+{ord(ch):04X}")
    return value


def flag(c: Choices, path: tuple[str, ...]) -> list[str]:
    """One allowed flag as words: `-A3`, `--after-context=3`, `-A 3`, ..."""
    flags, _ = flag_words(path)
    if not flags:
        return [rendered(c, text(c))]
    name, takes, choices = c.pick(flags)
    if takes == "none":
        return [rendered(c, name)]
    value = c.pick(choices) if choices else (
        text(c) if c.chance(40) else c.pick(["3", "x", "-", "--pre=x", "a b", "", INPUT_FILE]))
    attach = "=" if name.startswith("--") else ""
    if takes == "optional" and not c.chance(50):
        return [rendered(c, name)]
    if takes == "optional" or c.chance(50):
        return [rendered(c, name + attach + value)]
    return [rendered(c, name), rendered(c, value)]


GLOBS = ["*", "./*", "-*", "*e*", "[-]*", "?", "??", "sub/*", "a[*", "*]", "in.*", "\\**", "'*'",
         '"*"', "*.txt", "[a]*", "--*", "*=sh", "./-*", "[!a]*", "[^a]*", "[[:punct:]]*", "x*",
         "[x]", ".*", "*/", "**", "a\\[*", "./sub/-*", "sub/?", "./[-]v", "*[*", "./--*"]
KEYWORD_ARGS = ["time", "!", "-p", "if", "then", "fi", "{", "}", "[[", "]]", "case", "esac",
                "in", "do", "done", "while", "for", "function", "coproc", "select", "until",
                "elif", "else", "((", "))", "time -p", "! time"]
DOLLARS = ["$x", "${x}", "$(touch pwned)", "$((1))", "`touch pwned`", "$", "$ ", "$;", "$)",
           "$}", "$]", "$=", "$,", "$.", "$:", "$-", "$_", "$$", "$!", "$?", "$#", "$@",
           "$*", "$0", "$1", '$"a"', "$'a'", "$'\\x41'", "$'\\u00e9'", '"$"', "'$'", "\\$",
           "$\\", "a$", "${x:-a}", "$[1]", '"$x"', "${!x}", "$'\\''", "$$x", "$'\\n'",
           "\"$'a'\"", "'$(x)'", "\\$(x)", "$\\\n(x)", "${#}", "$'\\c'", "$'\\E'", "x$",
           "$/", "$+", "$~", "$%", "$^", "$&", "$<", "$|",
           # substitutions the checker may allow: their commands run first
           "$(cat x)", '"$(cat y)"', "<(cat x)", "$(cat <in.txt)", "`cat x`", "$(true)",
           '"$(ls)"x', "$(cat x)$(cat y)", "$( cat x; cat y )", "$(cat x | cat)"]
BRACES = ["{a,b}", "\\${a,b}", "'$'{a,b}", '"$"{a,b}', "$\\{a,b}", "{}", "{a}", "{,}",
          "{a..c}", "a{,b}", "{a,b\\}", "\\{a,b}", "{a\\,b}", "{-v,x}", "{--pre=sh,x}",
          "${a,b}", "{$x,y}", "x{a,b}y", "{'a',b}", '{a,"b c"}', '{"{",b}', "\\{}", "{ }",
          "{a,}", "{,a}", "$'$'{a,b}", "\\\\{a,b}", "{1..2}", "{a..}", "\\${a..b}", "{\\,,}",
          "{a,b}{c,d}", "-{v,e}", "{x,-delete}", "{a},b}", "{x},-v}", "a{},b}", "*.{a,b}",
          "{1..3..2}", "{03..1}", "~/{a,b}", "{~,a}", "{x,y}=~", "{a,{b,-c}}", "{1..3}{,-}"]
QUOTES = ["''", '""', "$''", '$""', "'a'\"b\"c", "\\'", '\\"', "\\\\", "'\\'", '"\\"x"',
          '"\\$"', '"\\`"', '"\\\n"', "a\\ b", "\\ ", "'a\nb'", '"a\nb"', "$'a\\'b'",
          "'\\\n'", "\\\n", "'#'", "\\#", "a#b", "#", "\\!", "'!'", "a'b'c", '"\'"', "'\"'",
          "\\-n", "-\\n", "'-'n", '"-"-', "''-n", "\\\n-n", "x\\\n", "\\\r", "\\\t", "'\r'",
          "\\\u00a0", "\u00a0", "\u3000", "a\u00a0b", "é", "中文", "－n", "–n"]
MISC = ["--", "-", "--pre=sh", "-e", "=", "a=b", "%", "^x", "@(a)", "+(a)", "!(a)", "?(a)",
        "*(a)", "<(x)", ">(x)", "~", "~/x", "~root", "a~", "x=~/a", "a=b:~/c", "-x=~",
        "--opt=~", "~+", "~-", "a\\\\", "\\", "-v", "-delete", "x", "y", INPUT_FILE, "&",
        "a&&b", "a;b", "a|b", "(", ")", "a(b)", "\\(", "\\;", "';'", ";;", "\\&", "1e-320",
        "1e309", "0x10", "-0", "nan", "inf", "9" * 30, "-1", "0.5", "-x2", "2"]
ASSIGNMENTS = ["LC_ALL=C", "FOO=bar", "x=$'a'", "a=b\\ c", "PAGER=cat", "A=~", "x=", "x=(a)",
               "x+=a", "1x=a", "x=$(touch pwned)", "LANG=C.UTF-8", "x=a\\\nb", "x[1]=a"]


def argument(c: Choices, path: tuple[str, ...]) -> str:
    kind = c.below(24)
    if kind < 10:
        return " ".join(flag(c, path))
    if kind < 14:
        return rendered(c, text(c) if kind < 13 else c.pick(["--pre=x", "-e", "--", "-v"]))
    families = (("glob", GLOBS), ("keyword", KEYWORD_ARGS), ("dollar", DOLLARS),
                ("brace", BRACES), ("quote", QUOTES), ("misc", MISC))
    if kind < 20:
        return c.tricky(*families[kind - 14])
    pieces = [c.tricky(*c.pick(families)) if c.chance(70) else bare(text(c))
              for _ in range(2 + c.count(1, 30))]
    return "".join(pieces) or "''"


# -- redirections, here-documents, here-strings -----------------------------------

REDIRECTS = ["2>/dev/null", ">/dev/null", "2>&1", ">&2", "&>/dev/null", "&>>/dev/null",
             "</dev/null", f"<{INPUT_FILE}", f"< {INPUT_FILE}", f"<{MISSING_FILE}",
             f"0<{INPUT_FILE}", "2>&-", "2<&-", "0<&-", "1>&-", ">&-", "<&-", "3<&-", "9>&-",
             "3<&0", "3>&1", ">&3", "4<&3", ">&-y", "<&-y", "2>&-x", "-1>&1", "-2>&1",
             "- >&1", "1>&2-", "2>&1-", ">|/dev/null", f"<>{INPUT_FILE}", "<> /dev/null",
             "2>>/dev/null", ">>/dev/null", "{fd}>&-", ">&/dev/null", "<&0", ">&1", "0>&1",
             "2>&2", f"5<{INPUT_FILE}", ">out", "1>out", "2>&1 >/dev/null", "3<&- x",
             "2>&- -delete", ">&- -v", "10>&-", "2>/dev/null\\\n", "2\\\n>/dev/null",
             "2 >/dev/null", "2>\\\n/dev/null", "&>-", ">&-1", "<&-0", "1<&-", "0>&-"]
FDS = ["", "0", "1", "2", "3", "9", "-1", "-", "12"]
OPS = ["<", ">", ">>", ">|", "<>", "<&", ">&", "&>", "&>>", "<&-", ">&-"]
TARGETS = ["/dev/null", INPUT_FILE, MISSING_FILE, "-", "0", "1", "2", "3", "-y", "2-", "1-",
           "'-'", '""', "-v", "x", "\\-", "$x", "'2'"]
DELIMITERS = [("EOF", "EOF"), ("'EOF'", "EOF"), ('"EOF"', "EOF"), ("\\EOF", "EOF"),
              ("E\\OF", "EOF"), ("$'A'", "A"), ('$"A"', "A"), ("A'B'", "AB"), ("'A'B", "AB"),
              ('A"$"', "A$"), ("$''", ""), ("''", ""), ('"A B"', "A B"), ("A\\$", "A$"),
              ("$A", "$A"), ("A\\\\", "A\\"), ("E'O'F", "EOF"), ("-", "-"), ("'-'", "-"),
              ("EOF\\\n", "EOF"), ("E\\\nOF", "EOF"), ("\\\nEOF", "EOF"), ("'A\nB'", "A\nB"),
              ("${A}", "${A}"), ("`A`", "`A`"), ("A#", "A#"), ("#", "#"), ("A}", "A}"),
              ("$'\\x41'", "A"), ("'$'A", "$A")]
HEREDOC_OPS = ["<<", "<<-", "<< ", "<<- ", "0<<", "3<<", "<<\\\n", "2<<"]
BODY_LINES = ["rm x", "rg rm x", "touch pwned", "$(touch pwned)", "`touch pwned`", "${x}",
              "a \\", "\\", "'", '"', "#", "", " ", "\t", "ls -la", "rg -n x", "$x",
              "$'A'", "A", "EOF", "cat <<EOF", "\\rm -rf y", "x\r", "text"]
HERESTRINGS = ["y}\\--", "'a b'", "a}", "}", "\\}", "a\\\\", '"a}"', "{a,b}", "x\\ y", "$'a'",
               "y}\\-- --pre=sh .", "a\\\nb", "'}'", "\\", "\\\\}", "-", "--pre=sh", "$x",
               "''", "#c", "a#b", "~", "*", "a b", "{}"]


def heredoc(c: Choices, bodies: list[str]) -> str:
    """A here-document operator and delimiter; its body waits in `bodies` for
    the next newline.  Lines may be the delimiter's value (where bash ends the
    body), its spelling or a near miss (where a loose reader might end it); the
    last line is the value, the spelling, or nothing (the body runs to the end)."""
    op = c.tricky("heredoc-op", HEREDOC_OPS)
    spelling, value = c.tricky("delimiter", DELIMITERS)
    near = [" " + value, value + " ", "\t" + value, value + ";", value + "|", value + "#",
            value + "\\", value + "\r", spelling, value + value, "\\" + value,
            "\t\t" + value + " ", value + " #"]
    lines = []
    for _ in range(c.count(3, 50)):
        kind = c.below(10)
        if kind < 2:
            c.tag("heredoc:value-inside")
            lines.append(value)
        elif kind < 5:
            lines.append(c.tricky("near-end", near))
        else:
            lines.append(c.pick(BODY_LINES))
    end = c.below(20)
    if end < 14:
        lines.append(("\t" if op.startswith("<<-") and c.chance(40) else "") + value)
    elif end < 17:
        c.tag("heredoc:ends-at-spelling")
        lines.append(spelling)
    else:
        c.tag("heredoc:unterminated")
    bodies.append("".join(line + "\n" for line in lines))
    return op + spelling


def redirection(c: Choices, bodies: list[str]) -> str:
    kind = c.below(10)
    if kind < 5:
        return c.tricky("redirect", REDIRECTS)
    if kind < 7:
        fd, op, target = c.pick(FDS), c.pick(OPS), c.pick(TARGETS)
        space = " " if c.chance(30) else ""
        c.tag(f"redirect-form:{fd}{op}{space}{target}")
        return fd + op + ("" if op.endswith("-") and c.chance(50) else space + target)
    if kind < 8:
        return c.tricky("herestring-op", ["<<<", "<<< ", "0<<<", "3<<<"]) + (
            c.tricky("herestring", HERESTRINGS) if c.chance(60) else rendered(c, text(c)))
    return heredoc(c, bodies)


# -- commands and scripts -------------------------------------------------------

SEPARATORS = [" ", "\t", "  ", " \\\n ", "\\\n", "\u00a0", "\u3000", " \\\r\n", "\r", "\f",
              "\v", " \\\n\\\n "]
PREFIXES = ["! ", "time ", "time -p ", "! time ", "time ! ", "time -p -p ", "time -- ",
            "time -p -- ", "time\t", "!\t", "! ! ", "time -p\\\n ", "ti\\\nme ", "\\time ",
            "'time' ", "time '-p' ", "!", "time -- -p ", "time --\\\n "]
# (text, whether it ends with a newline token: here-document bodies follow it)
OPERATORS = [("; ", False), (";", False), (" && ", False), ("&&", False), (" || ", False),
             ("\n", True), (" ;\n", True), (" &&\n", True), (" ||\n", True), (" & ", False),
             ("&", False), ("\n\n", True), ("\r\n", True), (" # c\n", True), (" #\\\n", True),
             (" # c\\\n", True), (";\\\n", False), ("&&\\\n", False), ("&\\\n&", False),
             ("\\\n&&", False), (" ;; ", False), (";&", False), ("|| \\\n", False),
             ("\n \n", True), ("\t\n", True), ("\u00a0\n", True), (" \u3000; ", False),
             (" #'\n", True), (' #"\n', True), (" # $(touch pwned)\n", True), ("#c\n", True),
             (";#c\n", True), (" ;\r\n", True), (" #c\r\n", True), ("\\\r\n", True)]
PIPES = [("|", False), (" | ", False), (" |& ", False), (" |\n", True), ("|\\\n", False),
         ("|&", False), (" |\n\n", True), (" | # c\n", True), ("\\\n|", False)]
TRAILERS = ["", ";", " ;", " &", "\n", " # c", " #\\", "\\", "\\\n", " \n\n", "\r", "\r\n",
            " # c\\\n", ";\n", " #", "\n#\\"]
COMPOUNDS = ["{{ {} ; }}", "( {} )", "if {}; then {}; fi", "for i in a; do {}; done",
             "while false; do {}; done", "case a in a) {};; esac", "{{ {}\n}}", "$( {} )",
             "! {{ {}; }}", "time {{ {}; }}", "{} {{ x; }}", "[[ -n a ]] && {}",
             "(({} ))", "function f {{ {}; }}",
             # bash 5.2 prints a substitution's commands back and runs the printed text
             # (red team RT5): a case arm's `(` and a `;` after a word ending in `&` are lost
             "echo $(case a in (esac|{}) ;; esac)", "echo \"$(case a in (esac) ;; (*) echo '{}';; esac)\"",
             "cat <(case a in (esac) ;; (*) {};; esac)", "echo $(case a in (a|b) {};; (c) ;; esac)",
             "echo $({{ {} \\&; }})", "echo $(if {} \\&; then {}; fi)", "echo $(for i in a; do {}; done)",
             "echo $(time [[ a > pwned ]]; {})", "cat <(time {})",
             # loops that end: counted, or broken out of on every path (issue 20)
             "for ((i = 0; i < 2; i++)); do {}; done", "for ((i=3;i>0;i-=2)) do {}; done",
             "while true; do {}; break; done", "until false; do {}\nbreak 1\ndone",
             "while :; do if {}; then break; else break; fi; done", "while true; do {} || break; done",
             "while true; do ( break ); {}; done", "[[ a =~ ^(a|b)$ ]] && {}",
             # the oracle takes every [[ ]] to succeed: `|| a` makes it so whatever $x holds
             "[[ $x =~ {} || a ]]"]


def command(c: Choices, bodies: list[str], depth: int = 0) -> str:
    if depth < 2 and c.chance(3):
        template = c.tricky("compound", COMPOUNDS)
        return template.format(*(command(c, bodies, depth + 1) for _ in range(template.count("{}"))))
    words = []
    if c.chance(8):
        words.append(c.tricky("assignment", ASSIGNMENTS))
    program = c.pick(OTHER_PROGRAMS) if c.chance(2) else c.pick(PROGRAMS)
    words.append(rendered(c, program) if c.chance(15) else program)
    path = (program,) if program in PROGRAMS else None
    if path:
        subs = flag_words(path)[1]
        if subs and not c.chance(10):
            sub = c.pick(subs)
            words.append(rendered(c, sub))
            path += (sub,)
    for _ in range(c.count(6, 55)):
        words.append(argument(c, path) if path else rendered(c, text(c)))
    for n in range(c.count(2, 25)):
        at = c.below(len(words) + 1) if n or c.chance(20) else len(words)
        if at and c.chance(10):  # `-x2>/dev/null`: a word, then the redirection
            c.tag("redirect:glued")
            words[at - 1] += redirection(c, bodies)
        else:
            words.insert(at, redirection(c, bodies))
    out = words[0]
    for word in words[1:]:
        sep = c.tricky("separator", SEPARATORS) if c.chance(8) else " "
        out += sep + word
    return out


def _joined(c: Choices, options, bodies: list[str], family: str) -> str:
    """An operator; pending here-document bodies follow it if it ends a line."""
    op, newline = c.tricky(family, options) if c.chance(50) else options[0]
    if newline and bodies:
        op += "".join(bodies)
        bodies.clear()
    return op


def pipeline(c: Choices, bodies: list[str], long: bool = False) -> str:
    """Commands joined by pipes; `long`: at least two pipes (three members)."""
    prefix = c.tricky("prefix", PREFIXES) if c.chance(10) else ""
    out = prefix + command(c, bodies)
    for _ in range(2 + c.count(2, 40) if long else c.count(2, 30)):
        out += _joined(c, PIPES, bodies, "pipe") + command(c, bodies)
    return out


AND_OR = [(" && ", False), (" || ", False), ("&&", False), ("||", False), (" &&\n", True),
          (" ||\n", True), (" &&\\\n", False)]


def and_or_chain(c: Choices, bodies: list[str]) -> str:
    """Pipelines of three members or more joined by `&&` and `||`
    (`ps aux | grep x | wc -l && echo done`): tree-sitter-bash nests them
    otherwise than bash, and the checker must read them as bash does."""
    c.tag("shape:long-pipelines-and-or")
    out = pipeline(c, bodies, long=c.chance(80))
    for _ in range(1 + c.count(2, 40)):
        out += _joined(c, AND_OR, bodies, "and-or") + pipeline(c, bodies, long=c.chance(60))
    return out


def script(c: Choices) -> str:
    bodies: list[str] = []
    out = c.tricky("leader", ["\n", " ", "# c\n", "\\\n", "#\\\n", "\n\n", "\r\n"]) \
        if c.chance(5) else ""
    out += and_or_chain(c, bodies) if c.chance(15) else pipeline(c, bodies)
    for _ in range(c.count(3, 40)):
        out += _joined(c, OPERATORS, bodies, "operator") + (
            and_or_chain(c, bodies) if c.chance(10) else pipeline(c, bodies))
    out += c.tricky("trailer", TRAILERS) if c.chance(12) else ""
    if bodies:
        out += "\n" + "".join(bodies)
        if c.chance(20):
            c.tag("heredoc:ends-at-eof")
            out = out[:-1]
    return out


@dataclass(frozen=True)
class Example:
    command: str
    locale: str
    evil_cwd: bool  # run in the directory where `test -- *` evaluates code
    features: frozenset[str]


def example(data: bytes) -> Example:
    """The command, where to run it, and its tricky features."""
    c = Choices(data)
    command_text = script(c)
    locale = LOCALES[1] if c.chance(15) else LOCALES[0]
    if locale != LOCALES[0]:
        c.tag(f"locale:{locale}")
    evil = c.chance(10)
    if evil:
        c.tag("cwd:evil")
    return Example(command_text, locale, evil, frozenset(c.features))


# -- the oracle -----------------------------------------------------------------


@dataclass
class Finding:
    """A command the checker allowed where bash did something else, or where
    check() itself failed (raised, hung)."""

    category: str
    example: Example
    mode: str  # "bash -c", "bash -s" (script on stdin), or "check" (check() failed)
    detail: str
    data: bytes = b""
    seed: int = 0
    chunk_size: int = 0
    raw: int = 1  # how many raw findings this one stands for, once shrunk

    def to_json(self) -> dict:
        e = self.example
        return {"category": self.category, "command": e.command, "locale": e.locale,
                "evil_cwd": e.evil_cwd, "features": sorted(e.features), "mode": self.mode,
                "detail": self.detail, "data": self.data.hex(), "seed": self.seed,
                "chunk_size": self.chunk_size, "raw": self.raw}


@dataclass
class Outcome:
    allowed: bool
    finding: Finding | None = None


_SANDBOX: FuzzSandbox | None = None
# Shared memory where a worker notes the command it is checking (length, then
# UTF-8 text), so that a worker killed by a hung check() still says which.
_SLOT = None
_SLOT_SIZE = 1 << 16
CHECK_TIMEOUT = 60  # seconds; check() takes milliseconds


def sandbox() -> FuzzSandbox:
    """This process's sandbox, made on first use; the process becomes the
    subreaper of the commands and loses write access outside the sandbox, so
    only worker processes may call this."""
    global _SANDBOX
    if _SANDBOX is None:
        root = Path(tempfile.mkdtemp(prefix="worker-", dir=os.environ.get("BP_FUZZ_BASE")))
        isolate_filesystem(root)
        become_subreaper()
        _SANDBOX = FuzzSandbox(root, PROGRAMS)
    return _SANDBOX


def _note(command: str) -> None:
    if _SLOT is not None:
        text = command.encode("utf-8", "surrogateescape")[:_SLOT_SIZE - 4]
        struct.pack_into(f"<i{len(text)}s", _SLOT, 0, len(text), text)


def _noted(slot) -> str:
    (length,) = struct.unpack_from("<i", slot, 0)
    return bytes(slot[4:4 + length]).decode("utf-8", "surrogateescape")


def examine(ex: Example, skip: frozenset[str] = DEFAULT_SKIP,
            policy: Policy = POLICY) -> Outcome:
    """Check one command and, if allowed, run it with bash both ways; problems
    of a category in `skip` are not findings."""
    _note(ex.command)
    signal.alarm(CHECK_TIMEOUT)  # a hung check() kills the worker, which reports it
    try:
        verdict = check(ex.command, policy)
    except Exception as error:  # noqa: BLE001 - a crash is an allow in disguise (issue 8)
        return Outcome(True, Finding("crash", ex, "check", f"check() raised {error!r}"))
    finally:
        signal.alarm(0)
    if not verdict.allowed:
        return Outcome(False)
    box = sandbox()
    cwd = box.evil_cwd if ex.evil_cwd else box.cwd
    try:
        expected = expected_runs(verdict, cwd)
    except OracleGap as gap:
        return Outcome(True, Finding("oracle-gap", ex, "check", str(gap)))
    except Exception as error:  # noqa: BLE001 - the harness's own bug: reported, not fatal
        return Outcome(True, Finding("oracle-gap", ex, "check", f"the oracle raised {error!r}"))
    for mode, stdin_script in (("bash -c", False), ("bash -s", True)):
        run = box.run(ex.command, stdin_script, ex.locale, TIMEOUT, cwd)
        if run.timed_out:  # only a hang that lasts far longer on a loaded machine counts
            run = box.run(ex.command, stdin_script, ex.locale, CONFIRM, cwd)
        problems = [p for p in run_problems(expected, run, cwd,
                                            ex.command if stdin_script else None,
                                            lambda argv: _reads_stdin(argv, policy))
                    if p.category not in skip]
        if problems:
            detail = "; ".join(f"{p.category}: {p.message}" for p in problems)
            return Outcome(True, Finding(problems[0].category, ex, mode, detail))
    return Outcome(True)


def _reads_stdin(argv: tuple[str, ...], policy: Policy) -> bool:
    """Whether the checker takes this program run (as bash passed it) to read
    standard input: it denies it with BP108 on a script's first line (asked
    with stdin_script on, whatever the policy under test says)."""
    import dataclasses
    import shlex

    verdict = check(shlex.join(argv) + "\n:", dataclasses.replace(policy, stdin_script=True))
    return any(d.code == "BP108" for d in verdict.denials)


# -- hypothesis runs: scanning a chunk, shrinking a finding by replaying it ---

MIN_BYTES, MAX_BYTES = 32, 600  # hypothesis draws about 2 * MIN_BYTES
_BYTES = st.binary(min_size=MIN_BYTES, max_size=MAX_BYTES)


def _settings(examples: int, phases) -> settings:
    return settings(max_examples=examples, phases=phases, database=None, deadline=None,
                    derandomize=False, verbosity=Verbosity.quiet, report_multiple_bugs=False,
                    suppress_health_check=list(HealthCheck))


def chunk_seed(base: int, index: int) -> int:
    return (base * 1_000_003 + index) % (1 << 63)


@dataclass
class ChunkResult:
    examples: int = 0
    allowed: int = 0
    findings: list[Finding] = field(default_factory=list)
    cpu: float = 0.0  # seconds of CPU, this process's and its children's


def _cpu() -> float:
    import resource

    own, children = (resource.getrusage(w) for w in (resource.RUSAGE_SELF,
                                                     resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def scan(seed: int, size: int, skip: frozenset[str] = DEFAULT_SKIP,
         policy: Policy = POLICY) -> ChunkResult:
    """Run `size` hypothesis examples from `seed`, keeping every finding and
    never raising, so that one finding does not end the run."""
    result = ChunkResult()
    started = _cpu()

    @hypothesis_seed(seed)
    @_settings(size, [Phase.generate])
    @given(_BYTES)
    def run(data: bytes) -> None:
        result.examples += 1
        outcome = examine(example(data), skip, policy)
        result.allowed += outcome.allowed
        if outcome.finding:
            f = outcome.finding
            f.data, f.seed, f.chunk_size = data, seed, size
            result.findings.append(f)

    run()
    result.cpu = _cpu() - started
    return result


class _Reproduced(Exception):
    def __init__(self, finding: Finding):
        super().__init__(finding.category)
        self.finding = finding


def covered(finding: Finding, known: list[Finding]) -> bool:
    """Whether a known minimal finding of the same category holds only tricky
    features this one holds too (then it most likely shows the same bug; one
    with none covers nothing).  A program reading the rest of the script is one
    bug whatever the features, and so is each kind of exception check() raises."""
    for k in known:
        if k.category != finding.category:
            continue
        if finding.category == "stdin-script" or k.example.features and \
                k.example.features <= finding.example.features:
            return True
        if finding.category == "crash" and k.detail.split("(")[0] == finding.detail.split("(")[0]:
            return True
    return False


def shrink(finding: Finding, known: list[Finding], skip: frozenset[str] = DEFAULT_SKIP,
           policy: Policy = POLICY) -> Finding:
    """The smallest command hypothesis finds with a finding of the same category
    that no known finding covers, starting from `finding`: the run that found it
    is replayed (same seed, the examples before it skipped without running) and
    fails from it on, so hypothesis shrinks it."""
    seen = [False]

    @hypothesis_seed(finding.seed)
    @_settings(finding.chunk_size, [Phase.generate, Phase.shrink])
    @given(_BYTES)
    def replay(data: bytes) -> None:
        if not seen[0]:
            if data != finding.data:
                return
            seen[0] = True
        found = examine(example(data), skip, policy).finding
        if found and found.category == finding.category and not covered(found, known):
            found.data, found.seed, found.chunk_size = data, finding.seed, finding.chunk_size
            raise _Reproduced(found)

    try:
        replay()
    except _Reproduced as reproduced:
        return reproduced.finding
    except Exception:  # noqa: BLE001 - a flaky replay keeps the finding as it was found
        pass
    return finding


# -- many examples on every core ------------------------------------------------


def _serve(conn, slot, base: str) -> None:
    """A worker: its own sandbox, then one task at a time from `conn`."""
    global _SLOT
    _SLOT = slot
    os.environ["BP_FUZZ_BASE"] = base
    sandbox()
    while (task := conn.recv()) is not None:
        function, args = task
        conn.send(function(*args))


def run_tasks(tasks: list, workers: int, on_result) -> list[Finding]:
    """Run `(function, args)` tasks on `workers` processes, each with its own
    sandbox, calling `on_result(i, result)` as each task ends.  A worker that
    dies (a hung check() was killed by its alarm) is replaced, its task ends
    with the result None, and the command it was checking is returned as a
    finding."""
    context = multiprocessing.get_context("fork")
    base = tempfile.mkdtemp(prefix="bp-fuzz-")

    def spawn():
        slot = context.RawArray("B", _SLOT_SIZE)
        ours, theirs = context.Pipe()
        process = context.Process(target=_serve, args=(theirs, slot, base), daemon=True)
        process.start()
        theirs.close()
        return ours, process, slot

    pending = list(enumerate(tasks))
    idle = [spawn() for _ in range(min(workers, len(tasks)))]
    busy: dict = {}
    died: list[Finding] = []
    try:
        while pending or busy:
            while idle and pending:
                worker, task = idle.pop(), pending.pop(0)
                worker[0].send(task[1])
                busy[worker[0]] = (worker, task[0])
            for conn in multiprocessing.connection.wait(list(busy)):
                worker, i = busy.pop(conn)
                try:
                    result = conn.recv()
                except EOFError:
                    worker[1].join()
                    command = _noted(worker[2])
                    if worker[1].exitcode == -signal.SIGALRM:
                        category, how = "check-hang", f"did not return in {CHECK_TIMEOUT} s"
                    else:
                        category, how = "crash", f"killed its process ({worker[1].exitcode})"
                    died.append(Finding(category, Example(command, LOCALES[0], False,
                                                          frozenset()), "check", f"check() {how}"))
                    result, worker = None, spawn()
                    conn.close()
                idle.append(worker)
                on_result(i, result)
    finally:
        for conn, process, _ in idle + [w for w, _ in busy.values()]:
            try:
                conn.send(None)
            except OSError:
                pass
            process.join(timeout=CONFIRM)
            if process.is_alive():
                process.kill()
        shutil.rmtree(base, ignore_errors=True)  # the workers' emptied mount points
    return died


@dataclass
class Report:
    examples: int
    allowed: int
    raw: list[Finding]
    findings: list[Finding]
    seconds: float  # of the scan, wall clock
    cpu: float  # of the scan, in every worker and the programs they ran


def fuzz(examples: int, seed: int = 0, workers: int | None = None, chunk: int = 500,
         max_shrinks: int = 100, skip: frozenset[str] = DEFAULT_SKIP, progress=None,
         found=None) -> Report:
    """Run `examples` examples in chunks of `chunk` on `workers` processes, each
    with its own sandbox, then shrink the findings (at most `max_shrinks`),
    skipping raw findings that a shrunk one already covers; `found(finding)` is
    called with each raw finding as soon as its chunk ends.  Deterministic for a
    given seed, example count and chunk size."""
    workers = workers or os.cpu_count() or 1
    sizes = [min(chunk, examples - start) for start in range(0, examples, chunk)]
    tasks = [(scan, (chunk_seed(seed, i), size, skip)) for i, size in enumerate(sizes)]
    started = time.monotonic()
    totals = {"examples": 0, "allowed": 0, "cpu": 0.0}
    by_chunk: dict[int, list[Finding]] = {}

    def scanned(i: int, result: ChunkResult | None) -> None:
        if result is None:  # the worker died in this chunk: its examples are lost
            return
        totals["examples"] += result.examples
        totals["allowed"] += result.allowed
        totals["cpu"] += result.cpu
        by_chunk[i] = result.findings
        if found:
            for finding in result.findings:
                found(finding)
        if progress:
            progress(totals["examples"], totals["allowed"], sum(map(len, by_chunk.values())),
                     time.monotonic() - started)

    died = run_tasks(tasks, workers, scanned)
    seconds = time.monotonic() - started
    raw = [f for i in range(len(tasks)) for f in by_chunk.get(i, [])] + died
    findings: list[Finding] = []
    pending = [f for f in raw if f.data]  # a hang or a dead worker cannot be replayed
    while pending and max_shrinks > 0:
        pending = [f for f in pending if not covered(f, findings)]
        batch = pending[:min(workers, max_shrinks)]
        pending = pending[len(batch):]
        max_shrinks -= len(batch)
        shrunk: dict[int, Finding] = {}
        def keep(i: int, small: Finding | None, shrunk=shrunk, batch=batch) -> None:
            shrunk[i] = small or batch[i]

        run_tasks([(shrink, (f, list(findings), skip)) for f in batch], workers, keep)
        findings.extend(shrunk[i] for i in sorted(shrunk))
    kept: list[Finding] = []  # the shrunk findings with the fewest features first
    for f in sorted(findings, key=lambda f: (len(f.example.features), len(f.example.command))):
        if not covered(f, kept):
            f.raw = 0
            kept.append(f)
    for f in raw:  # each raw finding counts for the first kept one that covers it
        owner = next((k for k in kept if covered(f, [k])), None)
        if owner is None:  # past the shrink budget: kept as found
            f.raw = 0
            kept.append(f)
            owner = f
        owner.raw += 1
    return Report(totals["examples"], totals["allowed"], raw, kept, seconds, totals["cpu"])


def corpus_text(findings: list[Finding]) -> str:
    """Findings as `deny` corpus cases, each under a comment saying what bash did."""
    out = []
    for f in findings:
        e = f.example
        where = ", in a directory holding -a, -v and a[$(touch pwned)]" if e.evil_cwd else ""
        what = " ".join(f.detail.split())
        out.append(f"# {f.category} ({f.mode}, LC_ALL={e.locale}{where}): {what[:400]}\n")
        plain = (e.command.isprintable() and e.command.isascii() and e.command == e.command.strip()
                 and not e.command.startswith("json:"))
        out.append(f"deny  {e.command if plain else 'json:' + json.dumps(e.command)}\n")
    return "".join(out)


def _examine_each(examples: list[Example], skip: frozenset[str]) -> list[Outcome]:
    return [examine(e, skip) for e in examples]


def examine_all(examples: list[Example], skip: frozenset[str] = DEFAULT_SKIP) -> list[Outcome]:
    """`examine` each example in a worker process (the sandbox takes over the
    process that makes it)."""
    outcomes: list[Outcome] = []
    run_tasks([(_examine_each, (examples, skip))], 1,
              lambda i, result: outcomes.extend(result or []))
    return outcomes
