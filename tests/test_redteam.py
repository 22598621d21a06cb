"""Red-team findings that the corpus cannot show: run-time effects of allowed commands."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from bash_policy import hardened_env


@pytest.mark.skipif(shutil.which("npm") is None, reason="needs npm")
def test_npm_ls_writes_no_log_into_a_project_chosen_directory(tmp_path):
    """A project's .npmrc `logs-dir` makes plain `npm ls` write there; hardened, nothing is written."""
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    (project / "package.json").write_text('{"name": "x", "version": "1.0.0"}\n')
    (project / ".npmrc").write_text(f"logs-dir={tmp_path / 'logs'}\nupdate-notifier=false\n")
    base = {"HOME": str(home), "PATH": "/usr/bin:/bin"}

    def npm_ls(env):
        subprocess.run(["npm", "ls"], cwd=project, env=env, capture_output=True, timeout=60,
                       stdin=subprocess.DEVNULL)
        return list((tmp_path / "logs").glob("*")) if (tmp_path / "logs").exists() else []

    assert npm_ls(base), "the attack should be real: plain npm ls writes its log there"
    shutil.rmtree(tmp_path / "logs")
    assert npm_ls(hardened_env(base, cwd=str(project))) == []
