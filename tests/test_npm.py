"""npm: a project .npmrc outside the inert allowlist denies; `npm view` takes registry names only."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from bash_policy import check
from bash_policy.judge.policy import Policy


def codes(command, cwd, policy=None):
    return [d.code for d in check(command, policy, cwd=str(cwd)).denials]


@pytest.fixture
def project(tmp_path):
    (tmp_path / "package.json").write_text('{"name": "p", "version": "1.0.0"}\n')
    (tmp_path / "src").mkdir()
    return tmp_path


@pytest.mark.parametrize("line", ["git=./script", "logs-dir=/tmp/x", "cache=.cache", "shell=./x",
                                  "script-shell=./x", "userconfig=./other", "node-options=--require ./x",
                                  "//evil.example/:_authToken=${GITHUB_TOKEN}", "[section]"])
def test_project_keys_outside_the_allowlist_deny(project, line):
    (project / ".npmrc").write_text(f"save-exact=true\n{line}\n")
    assert codes("npm ls", project) == ["BP601"]
    assert codes("cd src && npm --version", project) == ["BP601"]


def test_inert_project_keys_allow(project):
    (project / ".npmrc").write_text("; comment\nsave-exact=true\nengine-strict = true\n"
                                    "legacy-peer-deps\nauto-install-peers=true\nfund=false\n"
                                    "@myco:registry=https://npm.example.com/\n")
    assert check("npm ls --all", cwd=str(project)).allowed
    assert check("npm pkg get name", cwd=str(project)).allowed


def test_registry_keys_deny_only_commands_that_query_the_registry(project):
    (project / ".npmrc").write_text("registry=https://npm.example.com/\n")
    assert check("npm ls", cwd=str(project)).allowed
    assert codes("npm view react", project) == ["BP601"]
    assert codes("npm search react", project) == ["BP601"]
    assert codes("npm outdated", project) == ["BP601"]
    assert codes("npm query ':outdated'", project) == ["BP601"]
    assert check("npm config list", cwd=str(project)).allowed


def test_config_denies_a_project_value_that_names_a_variable(project):
    # npm 11.19.1: `init-author-name=${VAR}` made `npm config list` print VAR's value.
    (project / ".npmrc").write_text("init-author-name=${GITHUB_TOKEN}\n")
    assert codes("npm config list", project) == ["BP601"]
    assert codes("npm config get registry", project) == ["BP601"]
    assert check("npm ls", cwd=str(project)).allowed


def test_policy_trusts_npm_keys(project):
    (project / ".npmrc").write_text("//npm.pkg.github.com/:_authToken=${NPM_TOKEN}\n")
    assert codes("npm ls", project) == ["BP601"]
    policy = Policy.from_mapping({"trusted_repo_keys": {"npm": ["//npm.pkg.github.com/:_authToken"]}})
    assert check("npm ls", policy, cwd=str(project)).allowed


def test_fifo_npmrc_denies_instead_of_hanging(project):
    os.mkfifo(project / ".npmrc")
    assert codes("npm ls", project) == ["BP601"]


@pytest.mark.parametrize("spec", ["github:o/r", "o/r", "git+http://host/x.git", "git+file:///r",
                                  "https://host/x.tgz", "./dir", ".", "x@npm:y", "x@./p", "x@github:o/r"])
def test_view_takes_only_registry_names(spec):
    for sub in ("view", "info", "show"):
        assert [d.code for d in check(f"npm {sub} '{spec}'").denials] == ["BP406"]


@pytest.mark.parametrize("command", ["npm view", "npm info", "npm show --json", "npm view --workspaces",
                                     "npm view -w packages/a react"])
def test_view_without_a_name_denies(command, project):
    """Without a name npm views the name package.json gives, unchecked: a
    project named `http://HOST/x.tgz` or `git+file:…` made it fetch or clone (red team RT6)."""
    (project / "package.json").write_text('{"name": "http://127.0.0.1:9/leak.tgz", "version": "1.0.0"}\n')
    assert codes(command, project) == ["BP406"]


@pytest.mark.skipif(shutil.which("npm") is None or shutil.which("git") is None, reason="needs npm and git")
def test_project_git_key_really_runs_for_a_git_spec(project, tmp_path):
    """The threat is real with npm itself: `git=CANARY` runs the canary for a git spec."""
    marker = tmp_path / "ran"
    canary = tmp_path / "canary.sh"
    canary.write_text(f'#!/bin/sh\necho "$*" >> {marker}\nexit 1\n')
    canary.chmod(0o755)
    (project / ".npmrc").write_text(f"git={canary}\n")
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "npm_config_update_notifier": "false"}
    subprocess.run(["npm", "view", f"git+file://{tmp_path}/nowhere"], cwd=project, env=env,
                   capture_output=True, timeout=120, stdin=subprocess.DEVNULL)
    assert marker.exists() and "ls-remote" in marker.read_text()
    assert codes("npm ls", project) == ["BP601"]
    assert [d.code for d in check(f"npm view git+file://{tmp_path}/nowhere").denials] == ["BP406"]
