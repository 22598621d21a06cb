"""hardened_env() against hostile repositories, with real git.

Each case builds a repository whose own config (or hook) points at a script
that leaves a marker file, runs a read-only git command once plainly (the
marker must appear: the attack is real, so the test can fail) and once under
hardened_env() (the marker must not appear).
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from bash_policy import check, hardened_env

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

SIGNATURE = ("gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n"
             " -----END PGP SIGNATURE-----\n")


def _git(repo, *args, env=None):
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)


def _base_env(home) -> dict[str, str]:
    return {"PATH": os.environ["PATH"], "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
            "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}


def _repo(tmp_path):
    """A repository with one committed file, then modified, and the marker script."""
    repo = tmp_path / "repo"
    repo.mkdir()
    env = _base_env(tmp_path)
    _git(repo, "init", "-q", env=env)
    (repo / "f.txt").write_text("one\n")
    (repo / "same.txt").write_text("unchanged\n")
    (repo / ".gitattributes").write_text("*.txt diff=pretty filter=tidy\n")
    _git(repo, "add", "f.txt", "same.txt", ".gitattributes", env=env)
    _git(repo, "commit", "-qm", "init", env=env)
    (repo / "f.txt").write_text("two\n")
    marker = tmp_path / "marker"
    script = tmp_path / "evil.sh"
    script.write_text(f'#!/bin/sh\necho "$0 $*" >> {marker}\ncat\n')
    script.chmod(0o755)
    return repo, env, str(script), marker


def _sign_head(repo, env):
    body = _git(repo, "cat-file", "commit", "HEAD", env=env).stdout
    head, _, message = body.partition("\n\n")
    signed = subprocess.run(["git", "hash-object", "-t", "commit", "-w", "--stdin"], cwd=repo,
                            env=env, input=f"{head}\n{SIGNATURE}\n{message}", capture_output=True,
                            text=True).stdout.strip()
    _git(repo, "update-ref", "HEAD", signed, env=env)


def _hook(repo, script):
    hook = repo / ".git" / "hooks" / "post-index-change"
    hook.write_text(f"#!/bin/sh\nexec {script}\n")
    hook.chmod(0o755)


# (name, config pairs with EVIL for the script, extra setup, command, needs a terminal)
CASES = [
    ("fsmonitor", [("core.fsmonitor", "EVIL")], None, ["status"], False),
    ("core.pager", [("core.pager", "EVIL")], None, ["log", "-1"], True),
    ("pager.log", [("pager.log", "EVIL")], None, ["log", "-1"], True),
    ("diff.external", [("diff.external", "EVIL")], None, ["diff"], False),
    ("textconv", [("diff.pretty.textconv", "EVIL")], None, ["log", "-p", "-1"], False),
    ("textconv in diff", [("diff.pretty.textconv", "EVIL")], None, ["diff"], False),
    ("filter clean", [("filter.tidy.clean", "EVIL")], None, ["diff"], False),
    ("filter process", [("filter.tidy.process", "EVIL")], None, ["diff"], False),
    ("gpg", [("gpg.program", "EVIL"), ("log.showSignature", "true")], _sign_head, ["log", "-1"], False),
    ("included file", [("include.path", "extra.cfg")], None, ["diff"], False),
    ("post-index-change hook", [], "hook", ["status"], False),
]


def _build(tmp_path, pairs, setup):
    repo, env, script, marker = _repo(tmp_path)
    for key, value in pairs:
        _git(repo, "config", key, value.replace("EVIL", script), env=env)
    if any(key == "include.path" for key, _ in pairs):
        (repo / ".git" / "extra.cfg").write_text(f"[diff]\n\texternal = {script}\n")
    if setup == "hook":
        _hook(repo, script)
    elif setup is not None:
        setup(repo, env)
    _stale(repo)
    return repo, env, marker


def _stale(repo):
    """Make the index's stat data stale: git status must look at both files,
    and refreshes the entry of the unchanged one, writing the index (which
    runs post-index-change) whatever the clock says."""
    os.utime(repo / "f.txt", (0, 0))
    os.utime(repo / "same.txt", (0, 0))


def _run(repo, command, env, tty):
    argv = ["git", *command]
    if tty:
        argv = ["script", "-qec", " ".join(argv), "/dev/null"]
    subprocess.run(argv, cwd=repo, env=env, capture_output=True, stdin=subprocess.DEVNULL, timeout=60)


@pytest.mark.parametrize("name,pairs,setup,command,tty", CASES, ids=[c[0] for c in CASES])
def test_hostile_repository_runs_nothing_when_hardened(tmp_path, name, pairs, setup, command, tty):
    if tty and shutil.which("script") is None:
        pytest.skip("needs script(1) for a terminal")
    repo, env, marker = _build(tmp_path, pairs, setup)
    _run(repo, command, env, tty)
    assert marker.exists(), f"{name}: the attack did not run without hardening"
    marker.unlink()
    _stale(repo)
    _run(repo, command, hardened_env(env, cwd=str(repo)), tty)
    assert not marker.exists(), f"{name}: ran under hardened_env: {marker.read_text()}"


# Closed by the fixed overrides alone, when the harness passes no directory.
WITHOUT_CWD = {"fsmonitor", "core.pager", "pager.log", "gpg", "post-index-change hook"}


@pytest.mark.parametrize("name,pairs,setup,command,tty", [c for c in CASES if c[0] in WITHOUT_CWD],
                         ids=sorted(WITHOUT_CWD, key=[c[0] for c in CASES].index))
def test_fixed_overrides_need_no_directory(tmp_path, name, pairs, setup, command, tty):
    repo, env, marker = _build(tmp_path, pairs, setup)
    _run(repo, command, hardened_env(env), tty)
    assert not marker.exists(), f"{name}: ran under hardened_env without cwd"


def test_hardened_env_keeps_ordinary_git_working(tmp_path):
    repo, env, _script, _marker = _repo(tmp_path)
    hardened = hardened_env(env, cwd=str(repo))
    diff = _git(repo, "diff", env=hardened)
    assert diff.returncode == 0 and "+two" in diff.stdout
    status = _git(repo, "status", "--short", env=hardened)
    assert status.returncode == 0 and status.stdout.strip() == "M f.txt"


def test_existing_config_pairs_are_kept_and_ours_win():
    env = hardened_env({"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.pager",
                        "GIT_CONFIG_VALUE_0": "less", "GIT_CONFIG_KEY_7": "stale",
                        "LESSOPEN": "|x %s", "BASH_FUNC_git%%": "() { :; }", "PATH": "/usr/bin"})
    assert env["GIT_CONFIG_KEY_0"] == "core.pager" and "GIT_CONFIG_KEY_7" != "stale"
    count = int(env["GIT_CONFIG_COUNT"])
    pagers = [env[f"GIT_CONFIG_VALUE_{i}"] for i in range(count)
              if env[f"GIT_CONFIG_KEY_{i}"] == "core.pager"]
    assert pagers == ["less", "cat"]
    assert "LESSOPEN" not in env and "BASH_FUNC_git%%" not in env
    assert env["GIT_PAGER"] == "cat" and env["GIT_OPTIONAL_LOCKS"] == "0"


def test_partial_clone_cannot_fetch_when_hardened(tmp_path):
    """protocol.allow=never (and per protocol) makes a lazy fetch fail instead of connecting."""
    env = _base_env(tmp_path)
    server = tmp_path / "server"
    _git(tmp_path, "init", "-q", str(server), env=env)
    (server / "f.txt").write_text("one\n")
    _git(server, "add", ".", env=env)
    _git(server, "commit", "-qm", "one", env=env)
    _git(server, "config", "uploadpack.allowAnySHA1InWant", "true", env=env)
    head = _git(server, "rev-parse", "HEAD", env=env).stdout.strip()
    repo = tmp_path / "partial"
    _git(tmp_path, "init", "-q", str(repo), env=env)
    (repo / ".git" / "refs" / "heads" / "master").write_text(head + "\n")
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/master\n")
    _git(repo, "config", "remote.origin.url", f"file://{server}", env=env)
    _git(repo, "config", "remote.origin.promisor", "true", env=env)
    _git(repo, "config", "protocol.file.allow", "always", env=env)
    packs = repo / ".git" / "objects" / "pack"
    hardened = _git(repo, "log", "-1", env=hardened_env(env, cwd=str(repo)))
    assert hardened.returncode != 0 and not list(packs.glob("*.pack"))
    plain = _git(repo, "log", "-1", env=env)
    assert plain.returncode == 0 and list(packs.glob("*.pack")), "the lazy fetch did not happen"


def test_signature_placeholders_are_found_as_git_finds_them(tmp_path):
    """Every spelling of a format that makes git run gpg is denied, and no
    other: git 2.39 runs gpg.program for `%G?` and also for `%+G?`, `%-GS`
    and `% GK` (a line-feed or blank modifier), not for `%%G?`."""
    repo, env, script, marker = _repo(tmp_path)
    _git(repo, "config", "gpg.program", script, env=env)
    _sign_head(repo, env)
    for body in ("%G?", "%+G?", "%-GS", "% GK", "%%G?", "%%%GG", "%+h", "%h %s", "%x47", "x%G", "%-%G?"):
        for format_ in (f"--format={body}", f"--pretty=tformat:{body}"):
            if marker.exists():
                marker.unlink()
            _git(repo, "log", "-1", format_, env=env)
            runs_gpg = marker.exists()
            verdict = check(f"git log -1 '{format_}'")
            assert verdict.allowed == (not runs_gpg), (format_, runs_gpg, verdict.denials)
