"""Every key on the inert allowlist, tried with real git under strace.

For each key of bash_policy/repo/gitkeys.py and each value its check accepts
that is riskiest (a canary script's path, `true`, or the one value allowed),
a fixture repository gets the key, and a script running one use of every
read-only subcommand the git spec allows runs under `strace -f`.  The probe
fails when that run starts a program other than git's own (or a git that
fetches, serves or runs maintenance), connects to an inet address, opens
a file for writing outside .git/index or makes a directory, beyond what the
same script did without the key.  A key added to the allowlist is probed by this test too.

The whole list takes a few minutes; CI (CI=true) or BP_PROBE_ALL=1 probes
every key, other runs every fifth.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from bash_policy.repo.gitkeys import INERT, INERT_SECTIONS

pytestmark = [pytest.mark.oracle,  # runs git with every inert key under strace
              pytest.mark.skipif(shutil.which("git") is None or shutil.which("strace") is None,
                                 reason="needs git and strace")]

SIGNATURE = ("gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n"
             " -----END PGP SIGNATURE-----\n")
# One use of each read-only subcommand the spec allows, reading as much config as it can.
COMMANDS = [
    "status", "status --short --branch", "log -p -3", "log --stat --notes -2", "log -1 signed",
    "show", "show v1", "show signed", "whatchanged -1", "diff", "diff --cached", "diff HEAD~1",
    "diff-tree -p HEAD", "diff-index -p HEAD", "diff-files -p", "range-diff HEAD~2..HEAD~1 HEAD~1..HEAD",
    "rev-list --all", "shortlog -s HEAD", "reflog", "cherry -v origin/master",
    "blame f.txt", "annotate f.txt", "grep -n line", "grep line HEAD", "describe --tags --dirty",
    "rev-parse --short HEAD", "ls-files -s", "ls-tree -r HEAD", "cat-file -p HEAD",
    "show-ref -d", "for-each-ref", "merge-base HEAD origin/master", "name-rev HEAD",
    "symbolic-ref HEAD", "show-branch", "count-objects -v", "var -l", "version",
    "check-ignore -v x", "check-attr -a f.txt", "check-ref-format --branch master", "fsck",
    "branch -v -a", "tag -n", "config --list", "remote -v", "remote show -n origin",
    "stash list", "stash show -p", "worktree list", "notes list", "notes show HEAD",
    "hash-object f.txt", "check-mailmap 'T <t@example.com>'", "stripspace -s", "column",
    "rerere status", "rerere diff", "help -a", "help -c", "clean -n -d -x", "prune -n -v",
    "bisect log", "bisect terms",
]
PROGRAM_OK = re.compile(r"^(/usr/bin/git|/usr/lib/git-core/git(-[a-z-]+)?)$")
# A git child that fetches, serves, or runs maintenance acts on the network or writes.
GIT_CHILD_BAD = re.compile(r'"(fetch|upload-pack|git-upload-pack|remote-\w+|maintenance|gc|'
                           r'credential|fetch-pack|receive-pack)"')
WRITE = re.compile(r"O_WRONLY|O_RDWR|O_CREAT|O_TRUNC|O_APPEND")
ALLOWED_WRITE = re.compile(r'"(/dev/null|[^"]*/\.git/index(\.lock)?|[^"]*/\.git/modules/sub/index(\.lock)?)"')


def _git(cwd, *args, env, stdin=None):
    return subprocess.run(["git", *args], cwd=cwd, env=env, input=stdin, capture_output=True,
                          text=True, check=True).stdout


@pytest.fixture(scope="module")
def fixture(tmp_path_factory):
    root = tmp_path_factory.mktemp("gitkeys")
    home = root / "home"
    home.mkdir()
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    canary = root / "canary.sh"
    marker = root / "ran"
    canary.write_text(f'#!/bin/sh\necho "$0 $*" >> {marker}\ncat\n')
    canary.chmod(0o755)
    lib = root / "lib"
    _git(root, "init", "-q", str(lib), env=env)
    (lib / "l.txt").write_text("lib\n")
    _git(lib, "add", ".", env=env)
    _git(lib, "commit", "-qm", "lib", env=env)
    repo = root / "repo"
    _git(root, "init", "-q", "-b", "master", str(repo), env=env)
    (repo / ".gitattributes").write_text("* diff=drv merge=drv filter=flt\n")
    (repo / ".mailmap").write_text("T <t@example.com>\n")
    for i in range(3):
        (repo / "f.txt").write_text("".join(f"line {k}\n" for k in range(i * 3 + 3)))
        (repo / f"g{i}.txt").write_text(f"g {i}\n")
        _git(repo, "add", ".", env=env)
        _git(repo, "commit", "-qm", f"c{i}", env=env)
    _git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "sub", env=env)
    _git(repo, "commit", "-qm", "sub", env=env)
    _git(repo, "tag", "-a", "v1", "-m", "v1", env=env)
    _git(repo, "notes", "add", "-m", "note", env=env)
    head, _, message = _git(repo, "cat-file", "commit", "HEAD", env=env).partition("\n\n")
    signed = _git(repo, "hash-object", "-t", "commit", "-w", "--stdin", env=env,
                  stdin=f"{head}\n{SIGNATURE}\n{message}").strip()
    _git(repo, "update-ref", "refs/heads/signed", signed, env=env)
    _git(repo, "update-ref", "refs/remotes/origin/master", "HEAD~1", env=env)
    _git(repo, "remote", "add", "origin", str(lib), env=env)
    (repo / "f.txt").write_text("changed\n")
    _git(repo, "stash", "-q", env=env)
    _git(repo, "mv", "g0.txt", "moved.txt", env=env)
    (repo / "f.txt").write_text("modified\n")
    (repo / ".git-blame-ignore-revs").write_text("")
    # The checker allows `git rerere` only where rr-cache exists: without it,
    # rerere.enabled makes rerere create the directory (found by tracing mkdir).
    (repo / ".git" / "rr-cache").mkdir()
    return root, repo, env, canary, marker


def _probe_values(name: str, check, canary: str) -> list[str]:
    return {"_any": [canary, "true"], "_path": [canary], "_false": ["false"], "_pager": ["cat"],
            "_bool": ["true"], "_no_bang": ["log"], "_format": ["fuller", "format:%H %s"],
            "_no_signature": ["format:%H %an"]}[check.__name__]


def _key(shape: str) -> str:
    section, _, rest = shape.partition(".")
    if rest.startswith("*."):
        sub = {"remote": "origin", "branch": "master", "submodule": "sub", "url": "file:///x/",
               "http": "https://example.com/", "maintenance": "gc"}.get(section, "drv")
        if section == "filter":
            sub = "flt"
        return f"{section}.{sub}.{rest[2:]}"
    return f"{section}.{'probe' if rest == '*' else rest}"


def _effects(root: Path, repo: Path, env, name: str, pairs: list[tuple[str, str]]) -> set[str]:
    work = root / "runs" / name
    shutil.copytree(repo.parent / "lib", work / "lib", symlinks=True)
    shutil.copytree(repo, work / "repo", symlinks=True)
    target = work / "repo"
    for key, value in pairs:
        _git(target, "config", "--add", key, value, env=env)
    os.utime(target / "f.txt", (0, 0))
    script = "".join(f"git {c} >/dev/null 2>&1 </dev/null\n" for c in COMMANDS)
    log = work / "strace"
    subprocess.run(["strace", "-f", "--seccomp-bpf", "-qq", "-s", "300", "-o", str(log),
                    "-e", "trace=execve,connect,open,openat,creat,mkdir,mkdirat", "sh", "-c", script],
                   cwd=target, env=env, capture_output=True, timeout=300)
    found = set()
    for line in log.read_text("utf-8", "replace").splitlines():
        if "execve(" in line:
            program = line.split('execve("', 1)[1].split('"', 1)[0]
            if program in ("/bin/sh", "/usr/bin/sh"):
                continue
            if not PROGRAM_OK.match(program):
                found.add(f"ran {program}")
            elif GIT_CHILD_BAD.search(line.split("], ", 1)[0]) and "= 0" in line:
                found.add("git child: " + re.sub(r"^\d+\s+", "", line)[:160])
        elif "connect(" in line and re.search(r"AF_INET6?\b", line):
            found.add("network")
        elif "mkdir" in line and "= -1" not in line:
            found.add("made " + line.split('"')[1].replace(str(work), "WORK"))
        elif ("open" in line or "creat(" in line) and "= -1" not in line:
            if (WRITE.search(line) or "creat(" in line) and not ALLOWED_WRITE.search(line):
                found.add("wrote " + line.split('"')[1].replace(str(work), "WORK"))
    shutil.rmtree(work)
    return found


def _cases():
    cases = []
    for shape, check in sorted(INERT.items()):
        if shape.startswith(("include.", "includeif.")):
            continue   # followed and judged themselves (tests/test_gitrepo.py)
        cases.append((shape, check))
    for section in sorted(INERT_SECTIONS):
        cases.append((f"{section}.*", INERT["core.bare"]))
    if os.environ.get("CI") == "true" or os.environ.get("BP_PROBE_ALL") == "1":
        return cases
    return cases[::5]


def test_every_inert_key_runs_nothing(fixture):
    root, repo, env, canary, marker = fixture
    baseline = _effects(root, repo, env, "baseline", [])
    probes = []
    for shape, check in _cases():
        key = {"color.*": "color.ui", "advice.*": "advice.detachedhead"}.get(shape, _key(shape))
        for value in _probe_values(shape, check, str(canary)):
            probes.append((f"{key}={value}", [(key, value)], f"{len(probes)}"))
    with ThreadPoolExecutor(max_workers=max(2, (os.cpu_count() or 2) * 2)) as pool:
        results = list(pool.map(lambda p: (p[0], _effects(root, repo, env, p[2], p[1])), probes))
    problems = {label: sorted(found - baseline) for label, found in results if found - baseline}
    assert not marker.exists(), f"a canary ran: {marker.read_text()}"
    assert not problems, problems
    assert len(probes) >= len(_cases())
