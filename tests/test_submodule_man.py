"""`git submodule status` and `man PAGE`, decided by what the real programs do.

git 2.39 runs `git describe` inside each populated submodule, under that
submodule's config: the repository-config check reads it, so a hostile
submodule denies the command.  man-db runs a pager only when its output is
a terminal: into a pipe it prints, and MANPAGER=cat (which wins over PAGER)
makes the pager cat.  Both shown with the real programs (script(1) gives
man a terminal).
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from bash_policy import check

_GIT_ENV = {"GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@example.com", "GIT_COMMITTER_NAME": "a",
            "GIT_COMMITTER_EMAIL": "a@example.com", "GIT_CONFIG_NOSYSTEM": "1"}


def _git(*args, cwd):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, timeout=60,
                   env={**os.environ, **_GIT_ENV, "HOME": str(cwd)})


@pytest.fixture
def superproject(tmp_path):
    inner, outer = tmp_path / "inner", tmp_path / "outer"
    for repo in (inner, outer):
        repo.mkdir()
        _git("init", "-q", cwd=repo)
    (inner / "a").write_text("a\n")
    _git("add", "a", cwd=inner)
    _git("commit", "-qm", "i", cwd=inner)
    _git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(inner), "sub", cwd=outer)
    _git("commit", "-qm", "o", cwd=outer)
    return outer


def test_submodule_status_runs_git_in_each_submodule(superproject, tmp_path):
    trace = tmp_path / "trace"
    subprocess.run(["strace", "-f", "-qq", "-e", "trace=execve", "-o", str(trace), "git", "submodule",
                    "status"], cwd=superproject, capture_output=True, timeout=60, check=True)
    assert '"describe"' in trace.read_text()  # run in sub, which reads sub's config
    assert check("git submodule status", cwd=str(superproject)).allowed


def test_a_hostile_submodule_config_denies_it(superproject):
    _git("-C", "sub", "config", "core.fsmonitor", "./evil.sh", cwd=superproject)
    verdict = check("git submodule status", cwd=str(superproject))
    assert "BP601" in {d.code for d in verdict.denials}


def _execs(command: str, tmp_path, env: dict[str, str]) -> str:
    trace = tmp_path / "man.trace"
    # a pager waits for keys on the terminal: it is stopped after 5 s, once it has started
    subprocess.run(["timeout", "5", "strace", "-f", "-qq", "-e", "trace=execve", "-o", str(trace), "script",
                    "-qc", command, "/dev/null"], capture_output=True, timeout=60, stdin=subprocess.DEVNULL,
                   env={"PATH": "/usr/bin:/bin", "TERM": "dumb", **env})
    return trace.read_text()


@pytest.mark.skipif(not shutil.which("man") or not shutil.which("script") or not shutil.which("strace"),
                    reason="needs man-db, script(1) and strace")
def test_man_pages_only_on_a_terminal(tmp_path):
    pager = '"/usr/bin/pager"'
    assert pager in _execs("man ls", tmp_path, {})          # a terminal: the pager
    assert pager not in _execs("man ls | cat", tmp_path, {})  # a pipe: none
    with_cat = _execs("man ls", tmp_path, {"MANPAGER": "cat"})
    assert pager not in with_cat and '"/usr/bin/cat"' in with_cat
    assert pager in _execs("man ls", tmp_path, {"MANPAGER": "pager", "PAGER": "cat"})  # MANPAGER wins
    assert check("man ls | head").allowed and check("MANPAGER=cat man ls").allowed
    assert not check("man ls").allowed and not check("PAGER=cat man ls").allowed
