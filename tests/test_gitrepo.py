"""Repository config checks (BP601), the config reader, and `cd` tracking.

Fixture repositories are built in tmp dirs; real git builds them where that
is simplest, but the checks themselves never run git.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from bash_policy import check
from bash_policy.repo.gitconfig import ConfigSyntaxError, parse

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _git(*args, cwd=None):
    env = {"PATH": os.environ["PATH"], "HOME": "/nonexistent", "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def _codes(command, cwd):
    return [d.code for d in check(command, cwd=str(cwd)).denials]


# -- the config reader ------------------------------------------------------

def test_parser_reads_git_syntax():
    text = ('# c\n[Core]\n\tPager = "less  -R" ; comment\n'
            '[diff "My Drv"] textconv = a\\\nb\n'
            '[Filter.LEGACY]\n\tclean\n'
            '[alias]\n\tx = "!sh -c \\"t\\"\\t" # c\n')
    entries = [(e.name, e.value) for e in parse(text)]
    assert entries == [("core.pager", "less  -R"), ("diff.My Drv.textconv", "ab"),
                       ("filter.legacy.clean", None), ("alias.x", '!sh -c "t"\t')]


@pytest.mark.parametrize("text", ['[core]\n\tpager = "x\n', "[core]\n\tpager = \\q\n",
                                  "pager = x\n", "[core\n", '[diff "x]\n', "[core]\n\tpager x\n"])
def test_parser_rejects_what_git_rejects(text):
    with pytest.raises(ConfigSyntaxError):
        parse(text)


# -- repositories -----------------------------------------------------------

@pytest.fixture
def repo(tmp_path):
    path = tmp_path / "repo"
    _git("init", "-q", str(path))
    (path / "src").mkdir()
    return path


def _config(repo, text, name="config"):
    with open(repo / ".git" / name, "a") as fh:
        fh.write(text)


@needs_git
def test_plain_repository_is_allowed(repo):
    assert check("git status", cwd=str(repo)).allowed
    assert check("cd src && git log -p", cwd=str(repo)).allowed


@needs_git
@pytest.mark.parametrize("text", [
    "[core]\n\tfsmonitor = /tmp/x\n", "[core]\n\tpager = less\n", "[pager]\n\tlog = sh -c x\n",
    "[diff]\n\texternal = x\n", '[diff "d"]\n\ttextconv = x\n', '[diff "d"]\n\tcommand = x\n',
    '[filter "f"]\n\tclean = x\n', '[filter "f"]\n\tprocess = x\n', "[gpg]\n\tprogram = x\n",
    '[gpg "ssh"]\n\tprogram = x\n', "[credential]\n\thelper = !x\n", "[core]\n\tsshCommand = x\n",
    '[remote "o"]\n\tuploadpack = x\n', "[protocol]\n\tallow = always\n",
    '[merge "m"]\n\tdriver = x\n', "[alias]\n\tlfs = !x\n", "[core]\n\tfsmonitor\n",
])
def test_program_keys_deny(repo, text):
    _config(repo, text)
    assert _codes("git status", repo) == ["BP601"]


@needs_git
@pytest.mark.parametrize("text", [
    "[core]\n\tfsmonitor = false\n", "[core]\n\tpager = cat\n", "[pager]\n\tlog = false\n",
    "[pager]\n\tlog\n", '[diff "d"]\n\txfuncname = x\n', '[filter "f"]\n\trequired = true\n',
    "[core]\n\teditor = vim\n", "[alias]\n\tst = status\n", "[log]\n\tshowSignature = true\n",
])
def test_harmless_keys_allow(repo, text):
    _config(repo, text)
    assert check("git log", cwd=str(repo)).allowed


@needs_git
def test_included_files_are_read_whatever_the_condition(repo, tmp_path):
    (tmp_path / "inc.cfg").write_text("[core]\n\tpager = evil\n")
    _config(repo, '[includeIf "onbranch:nope"]\n\tpath = ../../inc.cfg\n')
    assert _codes("git diff", repo) == ["BP601"]


def test_syntax_error_denies(repo):
    _config(repo, "[core\n")
    assert _codes("git status", repo) == ["BP601"]


@needs_git
def test_hook_that_status_runs(repo):
    hook = repo / ".git" / "hooks" / "post-index-change"
    hook.write_text("#!/bin/sh\n")
    hook.chmod(0o755)
    assert _codes("git status", repo) == ["BP601"]


@needs_git
def test_gitfile_and_worktree_config(tmp_path, repo):
    gitdir = tmp_path / "elsewhere.git"
    _git("init", "-q", "--bare", str(gitdir))
    work = tmp_path / "work"
    work.mkdir()
    (work / ".git").write_text(f"gitdir: ../{gitdir.name}\n")
    assert check("git status", cwd=str(work)).allowed
    with open(gitdir / "config", "a") as fh:
        fh.write("[extensions]\n\tworktreeConfig = true\n")
    (gitdir / "config.worktree").write_text("[core]\n\tpager = evil\n")
    assert _codes("git status", work) == ["BP601"]


@needs_git
def test_bare_repository_in_a_directory(tmp_path):
    bare = tmp_path / "crafted"
    _git("init", "-q", "--bare", str(bare))
    with open(bare / "config", "a") as fh:
        fh.write("[core]\n\tfsmonitor = x\n")
    for command in ("git log", "cd crafted && git log", "git -C crafted log",
                    "git --git-dir=crafted log", "git -C /nonexistent -C " + str(bare) + " log"):
        assert _codes(command, tmp_path if "crafted" in command else bare) == ["BP601"], command
    assert check("git -C / log", cwd=str(bare)).allowed


@needs_git
def test_submodule_config_is_read(repo):
    module = repo / ".git" / "modules" / "lib"
    _git("init", "-q", "--bare", str(module))
    with open(module / "config", "a") as fh:
        fh.write("[core]\n\tfsmonitor = x\n")
    assert _codes("git status", repo) == ["BP601"]


def test_without_cwd_a_note_says_nothing_was_checked():
    verdict = check("git status")
    assert verdict.allowed and any("not checked" in n for n in verdict.notes)


# -- cd ----------------------------------------------------------------------

@pytest.fixture
def two(tmp_path):
    """`good` is a plain repository, `bad` one whose config names a program."""
    for name in ("good", "bad"):
        _git("init", "-q", str(tmp_path / name))
    _config(tmp_path / "bad", "[core]\n\tpager = evil\n")
    return tmp_path


@needs_git
@pytest.mark.parametrize("command,allowed", [
    ("cd bad && git log", False),
    ("cd good && git log", True),
    ("cd bad; cd ../good; git log", False),  # the second cd may fail and leave git in bad
    ("cd bad && cd ../good && git log", True),
    ("cd bad || git log", True),        # git runs only where cd failed: the start directory
    ("cd good; git log", True),
    ("cd bad | git log", True),         # a cd in a pipeline changes nothing
    ("git log | cd bad; git log", True),
    ("cd bad; git log", False),
    ("cd good && cd ../bad && git log", False),
    ("cd -P bad/. && git log", False),
    ("cd good || cd bad && git log", False),  # good's cd may fail, then bad's runs
    ("! cd bad; git log", False),
    ("cd bad && rg x; git -C ../good log", True),
])
def test_cd_is_followed(two, command, allowed):
    verdict = check(command, cwd=str(two))
    assert verdict.allowed is allowed, verdict.denials


@needs_git
def test_cd_home_makes_git_unresolvable(two):
    assert _codes("cd; git log", two / "good") == ["BP601"]
    assert check("cd; rg x", cwd=str(two / "good")).allowed


@pytest.mark.parametrize("command,code", [("cd -", "BP406"), ("cd a b", "BP406"),
                                          ("cd -- ~/x", "BP205"), ("cd -@ x", "BP401")])
def test_cd_targets_it_cannot_follow(command, code):
    assert code in [d.code for d in check(command).denials]
