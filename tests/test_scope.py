"""scope_roots (BP602): path words must resolve under the roots; off by default."""

from __future__ import annotations

import os

import pytest

from bash_policy import Policy, check


@pytest.fixture
def project(tmp_path):
    (tmp_path / "proj" / "src").mkdir(parents=True)
    (tmp_path / "proj" / "src" / "a.py").write_text("x\n")
    (tmp_path / "outside").mkdir()
    os.symlink(tmp_path / "outside", tmp_path / "proj" / "link")
    return tmp_path / "proj"


POLICY = Policy.from_mapping({"scope_roots": ["."]})


@pytest.mark.parametrize("command", [
    "cat ~/.ssh/id_rsa", "cat /proc/self/environ", "rg x ../../etc", "cat link/secret",
    "cat < /etc/passwd", "rg --ignore-file=/etc/passwd x", "ls ../*", "cd .. && ls",
    "cd src && cat ../../outside/x", "rg x src/../..",
])
def test_out_of_scope_denies(project, command):
    codes = [d.code for d in check(command, POLICY, cwd=str(project)).denials]
    assert "BP602" in codes, command


@pytest.mark.parametrize("command", [
    "cat src/a.py", "rg -n x ./src", "ls src/*.py", "cd src && cat ./a.py", "rg x .",
    f"cat {'{'}cwd{'}'}/src/a.py", "rg foo", "head -n 5 src/a.py",
])
def test_in_scope_allows(project, command):
    verdict = check(command.replace("{cwd}", str(project)), POLICY, cwd=str(project))
    assert verdict.allowed, verdict.denials


def test_off_by_default(project):
    assert check("cat /etc/hostname", cwd=str(project)).allowed


def test_relative_path_without_cwd_denies():
    assert "BP602" in [d.code for d in check("cat src/a.py", POLICY).denials]


def test_relative_roots_without_cwd_cover_nothing():
    assert "BP602" in [d.code for d in check("cat /etc/hostname", POLICY).denials]
