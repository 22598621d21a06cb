"""Unit tests of the script readers: sed scripts, awk programs, jq filters, find order."""

import itertools
import shlex
import shutil
import subprocess

import pytest

from bash_policy.judge.engine import check
from bash_policy.judge.rules.awk import read_program
from bash_policy.judge.rules.awk import tokenize as awk_tokens
from bash_policy.judge.rules.jq import filter_findings
from bash_policy.judge.rules.script import Finding
from bash_policy.judge.rules.sed import SedReader, Unreadable

NO_TARGETS = frozenset({"/dev/null"})


def sed(script):
    """The effects found; files the script reads (ReadsFile) are judged by the rule."""
    return [(f.effect, f.what) for f in SedReader(script, NO_TARGETS).read() if isinstance(f, Finding)]


def awk(program):
    return [f.effect for f in read_program(program, NO_TARGETS, ("/dev/tcp/",))
            if isinstance(f, Finding)]


@pytest.mark.parametrize("script", [
    "p", "1,20p", "$!N", "/a/,/b/{/c/!p}", "s/a/b/g;s|x|y|2", "0~3d", "2,+4d", "2,~4d",
    "\\%x%p", ":a;N;$!ba;s/\\n/ /g", "y/abc/xyz/", "l 5;q", "r file.txt", "/x/I,/y/Mp",
    "a one; two", "a\\\ntext\\\nmore", "s/a/b/w /dev/stdout", "#n\np", "1 ! p", "{p};p",
])
def test_sed_allows(script):
    assert sed(script) == []


@pytest.mark.parametrize("script, effect", [
    ("s/a/b/w out", "write"), ("s/a/b/gw out", "write"), ("w x", "write"), ("/x/W x", "write"),
    ("s|a|b|e", "exec"), ("1e id", "exec"), ("s/x/y/;e", "exec"), ("$e", "exec"),
])
def test_sed_denies(script, effect):
    assert [e for e, _ in sed(script)] == [effect]


def test_sed_file_names_run_to_end_of_line():
    # `w` takes `x; p` as its file name, as GNU sed does; `r` reads, so `r a; w b` has no write.
    assert sed("w x; p")[0][1] == "`w x; p` writes to the file `x; p`"
    assert sed("r a; w b") == []
    assert sed("r a\nw b")[0][0] == "write"


def test_sed_text_hides_nothing_after_unescaped_newline():
    assert sed("a foo\\\nw x") == []          # escaped newline: `w x` is text
    assert sed("a foo\nw x")[0][0] == "write"
    # The character after `a\` is the text's first, taken as is: `a\\` ends
    # at the newline (red team RT3 F4: GNU sed ran `1e touch out` after it).
    assert sed("a\\\\\nw x")[0][0] == "write"
    assert sed("i\\\\\n1e touch out")[0][0] == "exec"
    assert sed("a\\\nw x") == []               # classic form: the next line is the text


SED_COMMANDS = ["a", "i", "c", "$a", "1i", "/x/a", "$!c"]
SED_AFTER = ["", " ", "\t", "\\", "\\\\", "\\\\\\", "\\ ", " \\", "x", "x\\", "x\\\\", "\\x", "\\\\x",
             " \\\\", "t\\\\\\", "\\\n\\", "\\\nx\\\\", "\\\nx\\"]
SED_TAILS = ["\nw out", "\n1e touch out", "\ns/x/y/w out", "\\\nw out", "\n\nw out", "\n w out"]


@pytest.mark.oracle
@pytest.mark.skipif(shutil.which("sed") is None, reason="needs GNU sed")
def test_sed_text_ends_where_gnu_sed_ends_it(tmp_path):
    """Every a/i/c text form the checker allows, run by the real sed (one
    script, and split over two -e), writes and runs nothing."""
    runs = 0
    for command, after, tail in itertools.product(SED_COMMANDS, SED_AFTER, SED_TAILS):
        for argv in (["sed", "-n", command + after + tail, "f"],
                     ["sed", "-n", "-e", command + after, "-e", tail.lstrip("\n"), "f"]):
            if not check(shlex.join(argv)).allowed:
                continue
            runs += 1
            work = tmp_path / str(runs)
            work.mkdir()
            (work / "f").write_text("x\n")
            subprocess.run(argv, cwd=work, capture_output=True, timeout=10)
            assert not (work / "out").exists(), argv
    assert runs > 300


@pytest.mark.parametrize("script", ["k", "s/a/b", "s/a/b/q", "{p", "}", "p x", "s/[/]/x/", "a", ":"])
def test_sed_fails_closed(script):
    with pytest.raises(Unreadable):
        sed(script)


def test_sed_multiple_e_are_joined():
    assert not check("sed -e 'p' -e 'w x' f").allowed
    assert check("sed -e 'a\\' -e 'w x' f").allowed   # the second -e is the text of `a`


@pytest.mark.parametrize("program", [
    "$1 > 5", "{print ($1 > 5)}", "{ n = a / b / c }", "NR % 2 == 0", "{ print > \"/dev/stderr\" }",
    "{ while ((getline line < \"f\") > 0) print line }", "/x/ { print }", "{ print $1 }  # c | d",
    "{ if ($1 ~ /a|b/) print }", "BEGIN { printf \"%s\\n\", 1 }", "{ a[$1] = a[$1] \" \" $2 }",
])
def test_awk_allows(program):
    assert awk(program) == []


@pytest.mark.parametrize("program, effect", [
    ("{print > \"out\"}", "write"), ("{print $1 > 5}", "write"), ("{print >> \"log\"}", "write"),
    ("{ printf(\"%s\", $1) > \"o\" }", "write"),
    ("BEGIN{system(\"id\")}", "exec"), ("{print | \"sh\"}", "exec"), ("\"date\" | getline d", "exec"),
    ("{print |& \"sh\"}", "exec"), ("BEGIN{print ENVIRON[\"HOME\"]}", "leak"),
    ("{ getline x < $1 }", "network"), ("BEGIN { getline x < \"/inet/tcp/0/h/80\" }", "network"),
])
def test_awk_denies(program, effect):
    assert effect in awk(program)


def test_awk_regex_after_if_header():
    # After `if (...)` a statement starts, so `/"/` is a regex, not a division and a string.
    assert "exec" in awk('if (1) /"/; system("id") #"')
    assert [t.kind for t in awk_tokens("a / b / c")] == ["name", "op", "name", "op", "name"]
    assert [t.kind for t in awk_tokens("/a/ && /b/")] == ["regex", "op", "regex"]


@pytest.mark.parametrize("program", ["@load \"x\"", "BEGIN { @f() }", "/[/]/", "{ print \"x }", "a::b"])
def test_awk_fails_closed(program):
    with pytest.raises(Unreadable):
        awk(program)


@pytest.mark.parametrize("text", [
    ".a", ".env", "{env: 1}", "{env}", "$__loc__", '"\\(.a) env"', "# env\n.", ".[] | select(.x)",
])
def test_jq_allows(text):
    assert filter_findings(text) == []


@pytest.mark.parametrize("text", [
    "env", "$ENV", "$ ENV", "env.HOME", '"\\(env.HOME)"', ".[env:1]", "{a: env}",
    'import "m" as m; .', 'include "m"; .',
])
def test_jq_denies(text):
    assert filter_findings(text)


def test_yq_denies_go_operators_and_comments():
    assert filter_findings("strenv(HOME)", yq=True)
    assert filter_findings("eval(.x)", yq=True)
    assert filter_findings("strenv(HOME)") == []   # not a jq builtin
    with pytest.raises(Unreadable):
        filter_findings(". # c", yq=True)


@pytest.mark.parametrize("command, allowed", [
    ("find . -exec rm {} +", False), ("find . -delete", False), ("find . -fprint x", False),
    ("find src -name '*.py'", True), ("find . -name *.py", False), ("find . -name x src", False),
    ("find . \\( -name a -o -name b \\) -print", True), ("find . ! -type d", True),
])
def test_find(command, allowed):
    assert check(command).allowed is allowed
