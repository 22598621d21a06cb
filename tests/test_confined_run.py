"""`bash-policy run` confines what the check allows (issue 17): the three
findings that got past the static check change nothing when run through it,
and the modes auto, required and off do what they say."""

from __future__ import annotations

import subprocess

import pytest

import bash_policy
from bash_policy.cli import main
from bash_policy.confine import Support, support
from bash_policy.integrations import runner
from bash_policy.judge.policy import ConfigError, Policy
from bash_policy.judge.verdict import Verdict

COMPLETE = support().complete
needs_confinement = pytest.mark.skipif(not COMPLETE, reason=f"no full confinement here: {support().gaps()}")


@pytest.fixture
def allow_anything(monkeypatch):
    """A test policy that allows every command: the kernel alone must hold."""
    import bash_policy.judge.engine

    monkeypatch.setattr(bash_policy.judge.engine, "check",
                        lambda command, policy=None, *, cwd=None: Verdict(command, True, (), ()))


def rg_pre_tree(tmp_path):
    """list.txt holds `--pre=sh` and a NUL; xargs hands it to rg, which then
    runs sh on every file it searches, a script among them."""
    canary = tmp_path / "canary"
    (tmp_path / "list.txt").write_bytes(b"--pre=sh\0")
    (tmp_path / "script.sh").write_text(f"touch {canary}\n")
    return "find . -print0 | xargs -0 rg foo < list.txt", tmp_path, canary


def git_external_diff(tmp_path):
    """lnk -> d/e; `cd -P lnk/..` lands in d, a repository whose config runs
    a program for every diff."""
    canary = tmp_path / "canary"
    repo = tmp_path / "d"
    (repo / "e").mkdir(parents=True)
    (tmp_path / "lnk").symlink_to("d/e")
    script = tmp_path / "external.sh"
    script.write_text(f"#!/bin/sh\ntouch {canary}\n")
    script.chmod(0o755)
    git = ["git", "-C", str(repo)]
    subprocess.run(git + ["init", "-q"], check=True)
    (repo / "f.txt").write_text("one\n")
    subprocess.run(git + ["add", "f.txt"], check=True)
    subprocess.run(git + ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"], check=True)
    (repo / "f.txt").write_text("two\n")
    subprocess.run(git + ["config", "diff.external", str(script)], check=True)
    return "cd -P lnk/.. && git diff", tmp_path, canary


def xz_in_place(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("notes\n" * 100)
    return "xz -t -z notes.txt", tmp_path, tmp_path / "notes.txt.xz"


FINDINGS = {"rg --pre through xargs' stdin": rg_pre_tree, "git diff.external after cd -P": git_external_diff,
            "xz -t -z compresses in place": xz_in_place}


@pytest.mark.parametrize("finding", FINDINGS)
@pytest.mark.parametrize("confine", ["off", "auto"])
def test_the_findings_change_nothing_when_confined(tmp_path, allow_anything, finding, confine):
    if confine != "off" and not COMPLETE:
        pytest.skip("no full confinement here")
    command, cwd, made = FINDINGS[finding](tmp_path)
    result = runner.run(command, cwd=str(cwd), confine=confine, timeout=30)
    assert result.ran and result.confined == (confine != "off")
    assert made.exists() == (confine == "off")  # unconfined, each really changes the tree


@needs_confinement
def test_read_only_work_still_works_confined(tmp_path):
    (tmp_path / "a.txt").write_text("hello\n")
    result = bash_policy.run("wc -l a.txt && sort a.txt | head -1", cwd=str(tmp_path))
    assert result.confined and result.returncode == 0 and result.stdout == b"1 a.txt\nhello\n"


def test_required_refuses_without_full_confinement(tmp_path, allow_anything, monkeypatch, capsys):
    partial = Support(landlock_abi=5, arch="x86_64", netns=False)
    import bash_policy.confine

    monkeypatch.setattr(bash_policy.confine, "support", lambda: partial)
    result = runner.run("true", cwd=str(tmp_path), confine="required")
    assert not result.ran and "ABI 5" in result.refused
    auto = runner.run("echo ran", cwd=str(tmp_path), confine="auto")
    assert auto.ran and auto.stdout == b"ran\n"
    assert any(note.startswith("confined, except: signals") for note in auto.verdict.notes)
    assert main(["run", "--cwd", str(tmp_path), "--confine", "required", "--", "true"]) == runner.DENIED_EXIT
    assert "confinement is required here, but signals" in capsys.readouterr().err


def test_auto_runs_unconfined_with_a_note_where_the_kernel_has_nothing(tmp_path, allow_anything, monkeypatch):
    import bash_policy.confine

    monkeypatch.setattr(bash_policy.confine, "support", lambda: Support(0, None, False))
    result = runner.run("echo ran", cwd=str(tmp_path), confine="auto")
    assert result.ran and not result.confined
    assert result.verdict.notes[-1].startswith("ran unconfined: nothing is confined: this kernel has no Landlock")
    refused = runner.run("echo ran", cwd=str(tmp_path), confine="required")
    assert not refused.ran and refused.stdout == b""


def test_the_config_chooses_the_mode(tmp_path, allow_anything):
    assert Policy.default().confine == "auto"
    off = Policy.from_mapping({"confine": "off"})
    (tmp_path / "a").write_text("")
    result = runner.run("rm a", cwd=str(tmp_path), policy=off)
    assert result.ran and not result.confined and not (tmp_path / "a").exists()
    with pytest.raises(ConfigError, match="confine: expected one of auto, required, off"):
        Policy.from_mapping({"confine": "sometimes"})


@needs_confinement
def test_a_child_that_cannot_confine_itself_runs_nothing(tmp_path, allow_anything, monkeypatch):
    """Never fail open: a set-up step that fails in the child stops the run."""
    from bash_policy.confine import privileges

    def broken():
        raise OSError(1, "no_new_privs refused (test)")

    monkeypatch.setattr(privileges, "no_new_privs", broken)
    (tmp_path / "a").write_text("")
    result = runner.run("rm a", cwd=str(tmp_path))
    assert not result.ran and "no_new_privs refused" in result.refused and (tmp_path / "a").exists()


@needs_confinement
def test_the_confine_command_alone(tmp_path, capfd):
    (tmp_path / "a").write_text("")
    assert main(["confine", "--cwd", str(tmp_path), "--", "rm", "a"]) == 1
    assert (tmp_path / "a").exists() and "Permission denied" in capfd.readouterr().err
    assert main(["confine", "--cwd", str(tmp_path), "--", "sh", "-c", "echo out; exit 3"]) == 3
    assert capfd.readouterr().out == "out\n"
    assert main(["confine", "--timeout", "0.5", "--", "sleep", "30"]) == runner.TIMEOUT_EXIT
    assert main(["confine", "--", "no-such-program-here"]) == 127


def test_the_confine_command_refuses_without_full_confinement(monkeypatch, capfd):
    import bash_policy.confine

    monkeypatch.setattr(bash_policy.confine, "support", lambda: Support(0, None, False))
    assert main(["confine", "--", "true"]) == runner.DENIED_EXIT
    assert "not run: not fully confined here: nothing is confined" in capfd.readouterr().err


def test_doctor_says_what_is_enforced(monkeypatch, capfd):
    import json

    import bash_policy.confine

    assert main(["doctor", "--json"]) == 0
    assert json.loads(capfd.readouterr().out)["confinement"]["complete"] == COMPLETE
    monkeypatch.setattr(bash_policy.confine, "probe", lambda: Support(5, None, False))
    assert main(["doctor"]) == 0
    out = capfd.readouterr().out
    assert out.startswith("confinement: partial (Landlock ABI 5, no seccomp filter")
    assert "not enforced: signals" in out and "not enforced: metadata changes" in out


@needs_confinement
def test_clients_that_retry_fail_at_once_when_confined(tmp_path):
    result = bash_policy.run('printf "%s %s\\n" "$npm_config_fetch_retries" "$PIP_RETRIES"', cwd=str(tmp_path))
    assert result.confined and result.stdout == b"0 0\n"
    unconfined = bash_policy.run("printenv PIP_RETRIES", cwd=str(tmp_path), confine="off")
    assert unconfined.ran and unconfined.returncode == 1 and unconfined.stdout == b""


@needs_confinement
def test_the_library_call_alone(tmp_path):
    from bash_policy import confine

    (tmp_path / "a").write_text("kept\n")
    outcome = confine.run(["sh", "-c", "rm a; cat a"], cwd=str(tmp_path), max_output=100)
    assert outcome.returncode == 0 and outcome.stdout == b"kept\n" and b"Permission denied" in outcome.stderr


@needs_confinement
def test_a_refused_network_namespace_is_done_without_then_remembered(tmp_path, allow_anything, monkeypatch):
    """Root in a container without CAP_SYS_ADMIN: the namespace step fails
    before the command starts, so it runs once more, still confined."""
    import bash_policy.confine
    from bash_policy.confine import privileges

    if not support().netns:
        pytest.skip("no network namespace here to refuse")
    tries = tmp_path / "tries"

    def refused():  # runs in the child, before it is confined
        with open(tries, "a") as log:
            log.write("tried\n")
        raise OSError(1, "unshare(CLONE_NEWNET): Operation not permitted (test)")

    monkeypatch.setattr(privileges, "new_network_namespace", refused)
    monkeypatch.setattr(bash_policy.confine, "_netns_refused", False)
    (tmp_path / "a").write_text("")
    result = runner.run("rm a; echo ran", cwd=str(tmp_path))
    assert result.ran and result.confined and result.stdout == b"ran\n" and (tmp_path / "a").exists()
    assert not support().netns and tries.read_text() == "tried\n"
    assert runner.run("true", cwd=str(tmp_path)).confined
    assert tries.read_text() == "tried\n"  # not tried again
