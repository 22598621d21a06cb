import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bash_policy
from bash_policy.cli import main
from bash_policy.integrations import runner
from bash_policy.judge.verdict import Verdict


def evil_repo(tmp_path):
    """A repository whose config runs a script (which drops a marker file)
    from core.fsmonitor, core.pager and diff.external."""
    marker = tmp_path / "marker"
    script = tmp_path / "evil.sh"
    script.write_text(f"#!/bin/sh\ntouch {marker}\n")
    script.chmod(0o755)
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo)]
    subprocess.run(git + ["init", "-q"], check=True)
    (repo / "a.txt").write_text("one\n")
    subprocess.run(git + ["add", "a.txt"], check=True)
    subprocess.run(git + ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"], check=True)
    (repo / "a.txt").write_text("two\n")
    for key in ("core.fsmonitor", "core.pager", "diff.external"):
        subprocess.run(git + ["config", key, str(script)], check=True)
    return repo, marker


def test_the_hostile_repository_really_runs_its_script_without_hardening(tmp_path):
    repo, marker = evil_repo(tmp_path)
    subprocess.run(["git", "status"], cwd=repo, capture_output=True)
    assert marker.exists()  # so the next test's absent marker means something


@pytest.mark.parametrize("command", ["git status", "git diff"])
def test_run_in_a_hostile_repository_runs_nothing_of_its_config(tmp_path, command):
    repo, marker = evil_repo(tmp_path)
    result = bash_policy.run(command, cwd=str(repo))
    if not result.ran:  # the checker read the config and refused
        assert {d.code for d in result.verdict.denials} == {"BP601"}
    assert not marker.exists()


@pytest.mark.parametrize("command", ["git status", "git diff"])
def test_config_the_check_never_saw_still_runs_nothing(tmp_path, command, allow_anything):
    """The config changed after the check (or the check had no cwd): the
    hardened environment alone keeps git from running it."""
    repo, marker = evil_repo(tmp_path)
    result = runner.run(command, cwd=str(repo))
    assert result.ran
    if command == "git status":
        assert b"a.txt" in result.stdout
    assert not marker.exists()


def test_cli_git_status_in_a_hostile_repository_runs_nothing(tmp_path):
    repo, marker = evil_repo(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "bash_policy", "run", "--", "git status"], cwd=repo,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert proc.returncode in (0, runner.DENIED_EXIT), proc.stderr
    assert "a.txt" in proc.stdout if proc.returncode == 0 else "not run" in proc.stderr
    assert not marker.exists()


def test_a_denied_command_prints_the_verdict_exits_126_and_runs_nothing(tmp_path):
    marker = tmp_path / "marker"
    (tmp_path / "x").write_text("x\n")
    (tmp_path / "evil.sh").write_text(f"#!/bin/sh\ntouch {marker}\n")
    (tmp_path / "evil.sh").chmod(0o755)
    proc = subprocess.run([sys.executable, "-m", "bash_policy", "run", "--", "rg --pre ./evil.sh x ."],
                          cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == runner.DENIED_EXIT == 126 and proc.stdout == ""
    assert "BP400" in proc.stderr and "fix:" in proc.stderr
    assert not marker.exists()


def test_an_allowed_command_runs_with_its_output_and_status(tmp_path):
    (tmp_path / "notes.txt").write_text("first\nsecond\n")
    result = runner.run("head -n 1 notes.txt", cwd=str(tmp_path))
    assert (result.ran, result.returncode, result.stdout) == (True, 0, b"first\n")
    assert runner.run("head -n 1 missing.txt", cwd=str(tmp_path)).returncode != 0


def test_stdin_is_closed(tmp_path):
    result = runner.run("head -n 1", cwd=str(tmp_path), timeout=20)
    assert result.ran and not result.timed_out and result.stdout == b""


@pytest.fixture
def allow_anything(monkeypatch):
    """Let test-only shell snippets through the check, to test the sandboxing."""
    import bash_policy.judge.engine

    monkeypatch.setattr(bash_policy.judge.engine, "check",
                        lambda command, policy=None, *, cwd=None: Verdict(command, True, (), ()))


@pytest.mark.parametrize("confine", ["off", "auto"])
def test_no_controlling_terminal_and_a_new_session(allow_anything, confine):
    result = runner.run('tty; set -- $(cat /proc/$$/stat); echo "$$ $5 $6"', confine=confine)
    assert b"not a tty" in result.stdout
    pid, group, session = result.stdout.decode().split()[-3:]
    assert pid == group == session  # bash leads its own session and group


def test_timeout_stops_the_whole_session(allow_anything):
    result = runner.run("sleep 30 & sleep 30", timeout=0.5)
    assert result.timed_out and result.returncode is not None


def test_output_is_capped(allow_anything):
    result = runner.run("yes", max_output=1000, timeout=20)
    assert result.truncated and len(result.stdout) == 1000 and not result.timed_out


def test_environment_is_hardened(allow_anything):
    result = runner.run('echo "$GIT_PAGER|${BASH_ENV-unset}"', env={"BASH_ENV": "/tmp/x", "PATH": os.defpath})
    assert result.stdout == b"cat|unset\n"


def test_a_command_that_ran_and_failed_keeps_its_own_status(tmp_path, capfd):
    assert main(["run", "--cwd", str(tmp_path), "--", "head -n 1 missing.txt"]) == 1
    assert "missing.txt" in capfd.readouterr().err


@pytest.mark.parametrize("argv", [
    ["run"], ["run", "--bogus", "x", "ls"], ["run", "--timeout", "soon", "--", "ls"],
    ["run", "--timeout", "-1", "ls"], ["run", "--cwd", "/nonexistent", "ls"], ["run", "ls", "-la"],
])
def test_usage_errors_exit_2(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 2 and "--help" in err


def test_an_internal_error_exits_2_and_runs_nothing(monkeypatch, capsys):
    monkeypatch.setattr(runner, "run", lambda *a, **k: 1 / 0)
    assert main(["run", "ls"]) == 2
    assert "internal error" in capsys.readouterr().err


@settings(max_examples=40, deadline=None)
@given(st.text(max_size=30))
def test_run_exits_with_a_documented_status_whatever_the_command(command):
    """Denied or erroneous input never escapes as a traceback or exit 1 from
    bash-policy itself; only a command that ran can return its own status."""
    ran = []
    real = runner.run

    def spy(*args, **kwargs):
        result = real(*args, **kwargs)
        ran.append(result.ran)
        return result

    runner.run = spy
    try:
        code = main(["run", "--timeout", "5", "--", command])
    finally:
        runner.run = real
    assert isinstance(code, int)
    if not ran:
        assert code == 2  # usage: an empty command
    elif not ran[0]:
        assert code == runner.DENIED_EXIT
