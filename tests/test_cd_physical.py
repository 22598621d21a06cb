"""After `cd`, every lookup uses the directory the process really reaches
(bash_policy/judge/flow.py; issue 18, class 3; issue 20's `cd -`).

The kernel resolves paths physically: `..` after a symlink goes to the link
target's parent.  bash keeps a logical $PWD for `cd -L` (the default) and
resolves `cd -P` physically; a relative name is looked up in CDPATH first;
`cd -` goes to $OLDPWD.  Each case is built in a temporary tree, checked with
its `cwd`, and run with real bash 5.2 and git: a repository's
`diff.external` writes a canary, and a probe (`[ -p F ]`, `[ -c F ]`: the
kernel's own lookup) shows what a read would open.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from bash_policy import check
from bash_policy.judge.policy import ConfigError, Policy

BASH = shutil.which("bash") or "/bin/bash"
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
_GIT_ENV = {"HOME": "/nonexistent", "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e"}


def _env(**extra) -> dict[str, str]:
    return {"PATH": os.environ["PATH"], "LC_ALL": "C", **_GIT_ENV, **extra}


def _git(*args, cwd) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=_env(), check=True, capture_output=True)


def _hostile_repository(path: Path, canary: Path) -> None:
    """A repository whose `git diff` runs `diff.external`, which writes `canary`."""
    path.mkdir(parents=True)
    _git("init", "-q", cwd=path)
    (path / "f").write_text("one\n")
    _git("add", "f", cwd=path)
    _git("commit", "-qm", "f", cwd=path)
    (path / "f").write_text("two\n")
    script = path.parent / f"{path.name}-diff.sh"
    script.write_text(f"#!/bin/sh\ntouch {canary}\n")
    script.chmod(0o755)
    with open(path / ".git" / "config", "a") as config:
        config.write(f"[diff]\n\texternal = {script}\n")


@pytest.fixture
def tree(tmp_path):
    """top/ (the cwd, not a repository) holds lnk -> ../d/e, where d is a
    hostile repository holding a FIFO; shm -> /dev/shm; rl -> ../r/s, where
    r holds a FIFO .gitignore; cdp/src is a hostile repository for CDPATH."""
    top = tmp_path / "top"
    top.mkdir()
    _hostile_repository(tmp_path / "d", tmp_path / "canary")
    (tmp_path / "d" / "e").mkdir()
    os.mkfifo(tmp_path / "d" / "fifo")
    (top / "lnk").symlink_to("../d/e")
    (top / "shm").symlink_to("/dev/shm")
    (tmp_path / "r" / "s").mkdir(parents=True)
    os.mkfifo(tmp_path / "r" / ".gitignore")
    (top / "rl").symlink_to("../r/s")
    (top / "src").mkdir()
    (top / "sub").mkdir()
    _hostile_repository(tmp_path / "cdp" / "src", tmp_path / "canary")
    return tmp_path


def _bash(command: str, cwd: Path, **env) -> subprocess.CompletedProcess:
    return subprocess.run([BASH, "-c", command], cwd=cwd, env=_env(**env), capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)


# (command, allowed, a probe bash runs instead: it prints HARM when the
# command would do harm, or None to run the command itself and look for the
# canary).  Every denied case is harmful in bash, every allowed one is not.
CASES = [
    ("cd -P lnk/.. && git diff", False, None),
    ("cd -L lnk/.. && git diff", True, None),
    ("cd lnk/.. && git diff", True, None),
    ("cd -LP lnk/.. && git diff", False, None),   # the last of -L and -P wins
    ("cd -PL lnk/.. && git diff", True, None),
    ("cd lnk && git diff", False, None),            # git walks up from the physical d/e
    ("cd lnk && cd .. && git diff", True, None),    # `cd ..` is logical: back to top
    ("cd lnk && cd -P .. && git diff", False, None),
    ("cd lnk/../e 2>/dev/null; git diff", False, None),  # top/e is missing: the kernel's d/e
    ("cd lnk && cat ../fifo", False, "cd lnk && [ -p ../fifo ] && echo HARM"),
    ("cd lnk && head -c 1 < ../fifo", False, "cd lnk && [ -p ../fifo ] && echo HARM"),
    ("cd shm && cat ../zero", False, "cd shm && [ -c ../zero ] && echo HARM"),
    ("cd shm && wc -c ../null", True, "cd shm && [ -c ../null ] && [ ../null -ef /dev/null ] || echo HARM"),
    ("cd shm/.. && cat zero", True, "cd shm/.. && [ -c zero ] && echo HARM"),  # logical: top
    ("cd -P shm/.. && cat zero", False, "cd -P shm/.. && [ -c zero ] && echo HARM"),
    ("cd /dev && cat zero", False, "cd /dev && [ -c zero ] && echo HARM"),
    ("cd /dev && cat null", True, "cd /dev && [ zero -ef /dev/zero ] && [ -c null ] || echo HARM"),
    ("cd -P rl/.. && rg foo", False, "cd -P rl/.. && [ -p .gitignore ] && echo HARM"),
    ("cd rl/.. && rg foo", True, "cd rl/.. && [ -p .gitignore ] && echo HARM"),
    ("cd /tmp && cd - && git diff", True, None),
    ("cd lnk && cd - && git diff", True, None),     # back to top, the $PWD cd left
    ("cd -P lnk && cd -L .. && git diff", False, None),  # -P made $PWD physical: d
]


@needs_git
@pytest.mark.parametrize("command, allowed, probe", CASES)
def test_lookups_follow_the_directory_the_process_reaches(tree, command, allowed, probe):
    top = tree / "top"
    verdict = check(command, cwd=str(top))
    assert verdict.allowed is allowed, verdict.denials
    done = _bash(probe or command, top)
    harm = "HARM" in done.stdout if probe else (tree / "canary").exists()
    assert harm is not allowed, (done.stdout, done.stderr)


@needs_git
@pytest.mark.parametrize("cdpath, allowed", [
    ("", True), ("{cdp}", False), (":{cdp}", True), ("{cdp}:", False), ("/nonexistent:{cdp}", False),
    ("{cdp}/missing", True)])
def test_cdpath_is_searched_first(tree, cdpath, allowed):
    """`cd src` goes to the first CDPATH entry holding src; `cd ./src` never searches."""
    top, value = tree / "top", cdpath.format(cdp=tree / "cdp")
    policy = dataclasses.replace(Policy.default(), cdpath=value)
    verdict = check("cd src && git diff", policy, cwd=str(top))
    assert verdict.allowed is allowed, verdict.denials
    _bash("cd src >/dev/null && git diff", top, CDPATH=value)
    assert (tree / "canary").exists() is not allowed
    assert check("cd ./src && git diff", policy, cwd=str(top)).allowed
    _bash("cd ./src && git diff", top, CDPATH=value)
    assert (tree / "canary").exists() is not allowed  # unchanged by ./src


def test_cdpath_comes_from_the_environment_unless_configured(tree, monkeypatch):
    top = tree / "top"
    monkeypatch.setenv("CDPATH", str(tree / "cdp"))
    assert not check("cd src && git diff", cwd=str(top)).allowed
    configured = Policy.from_mapping({"cdpath": ""})
    assert check("cd src && git diff", configured, cwd=str(top)).allowed
    monkeypatch.delenv("CDPATH")
    assert check("cd src && git diff", cwd=str(top)).allowed
    with pytest.raises(ConfigError):
        Policy.from_mapping({"cdpath": 1})


@pytest.mark.parametrize("command, allowed", [
    ("cd /tmp && cd - && ls", True),
    ("cd /tmp && cd -- - && ls", True),
    ("cd src && cd - && cd - && ls", True),
    ("cd -", False),                       # the caller's OLDPWD
    ("cd /tmp; cd -", False),              # the first cd may fail
    ("(cd /tmp) && cd -", False),          # a cd in a subshell changes nothing after it
    ("cd /tmp | cat && cd -", False),
    ("cd /tmp && { cd -; }", True),
    ("if true; then cd /tmp; fi && cd -", False),
    ("cd -P /proc/self/cwd/.. && ls", False),  # `..` after the shell's own link
])
def test_cd_back_is_known_only_after_a_cd_that_succeeded(command, allowed):
    assert check(command).allowed is allowed


def test_cd_back_returns_to_the_start_in_bash(tmp_path):
    done = _bash("cd /tmp && cd - >/dev/null && pwd", tmp_path)
    assert done.stdout.strip() == str(tmp_path)


def test_empty_target_stays(tree):
    """bash 5.2.15: `cd ''` succeeds and leaves the directory as it is."""
    top = tree / "top"
    assert _bash("cd '' && pwd", top).stdout.strip() == str(top)
    assert check("cd lnk && cd '' && cat ../fifo", cwd=str(top)).denials
