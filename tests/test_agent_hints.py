"""Hints for denials agents hit often must name a rewrite, and the rewrite must pass."""

import pytest

from bash_policy.judge.engine import check

# (denied command, the hint's rewrite, the command with that rewrite applied)
CASES = [
    ("find . -name '*.ts' | xargs rg -l foo", "xargs rg -l -- foo",
     "find . -name '*.ts' | xargs rg -l -- foo"),
    ("git ls-files -z | xargs -0 rg -c foo", "xargs rg -c -- foo",
     "git ls-files -z | xargs -0 rg -c -- foo"),
    ("rg $PATTERN src", 'rg -- "$PATTERN" src', 'rg -- "$PATTERN" src'),
    ("gh api repos/o/r/issues?state=open", "'repos/o/r/issues?state=open'",
     "gh api 'repos/o/r/issues?state=open'"),
]


@pytest.mark.parametrize("denied, rewrite, fixed", CASES)
def test_hint_names_a_rewrite_that_passes(denied, rewrite, fixed):
    verdict = check(denied)
    assert not verdict.allowed
    assert any(f"`{rewrite}`" in d.hint for d in verdict.denials), [d.hint for d in verdict.denials]
    assert check(fixed).allowed


def test_subcommand_hint_lists_only_allowed_subcommands():
    hint = check("npm audit").denials[0].hint  # `run` lists the scripts: allowed without a name
    assert "ls" in hint and "install" not in hint and "publish" not in hint and "exec" not in hint


def test_complex_expansions_keep_the_generic_hint():
    assert check("echo ${HOME/x/y}").denials[0].hint == "write the value literally"
    assert "printenv HOME" in check("cat < $HOME").denials[0].hint
    assert check("ls {a,{b,c}}$x").denials[0].hint == "write the words out, or quote the braces"
