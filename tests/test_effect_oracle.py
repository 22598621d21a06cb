"""Effect oracle: every allowed corpus command, run for real, only reads.

Each `allow` case of corpora/ runs with bash under strace in a fixture git
repository (files, commits, a branch, a tag), stdin from /dev/null, with a
timeout.  The oracle asserts: no file opened for writing but /dev/null and
terminals, no unlink/rename/mkdir/chmod/truncate/utime, no program started
beyond the ones the command names (plus a program's own helpers, listed in
HELPERS), no connect() to an AF_INET/AF_INET6 address (AF_UNIX and netlink
are local: name-service sockets are fine), and it ends within the timeout.

Skipped, and counted in the skip reasons: cases that use gh or another
network client (NETWORK_PROGRAMS) or a use that queries a remote by design
(NETWORK_USES), or a program that is neither installed nor a bash builtin.
Allowed commands caught with a real effect are listed in KNOWN_EFFECTS.  Deny
cases tagged exec, write or hang are run too, from a curated sample in a
throwaway copy, to prove the oracle sees those effects.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from oracle_support import Effects, bash_names, strace_run

from bash_policy.corpus import corpus_files, read_cases
from bash_policy.judge.engine import check
from bash_policy.judge.policy import Policy

pytestmark = pytest.mark.oracle  # minutes: every allowed corpus case runs under strace

CORPORA = Path(__file__).resolve().parent.parent / "corpora"
POLICY = Policy.default()
TIMEOUT = 45  # above the longest allowed sleep (30 s)
# Programs whose allowed uses still talk to the network (read-only API calls).
NETWORK_PROGRAMS = frozenset({"gh", "curl", "wget", "dig", "host", "nslookup", "ping", "ssh",
                              "kubectl"})
# Allowed uses that query a registry or remote by design: (program, subcommand, *flags).
NETWORK_USES = (("npm", "view"), ("npm", "info"), ("npm", "show"), ("npm", "outdated"),
                ("npm", "search"), ("pip", "list", "--outdated"), ("pip", "list", "-o"),
                ("pip", "index"), ("pip3", "index"), ("pip3", "list", "--outdated"), ("pip3", "list", "-o"),
                ("cargo", "search"), ("git", "ls-remote"),
                # DNS queries for the machine's own names and addresses (hostname.toml says why)
                ("hostname", "-A"), ("hostname", "-f"), ("hostname", "-d"), ("hostname", "-i"),
                ("hostname", "-a"), ("who", "--lookup"))
# Programs whose allowed uses the oracle caught with a real effect: findings to fix in
# their specs, kept visible as xfails (`npm --version` and the like have no effect: pass).
KNOWN_EFFECTS = {
    "npm": "every npm command writes ~/.npm/_logs/*-debug-0.log, and its update notifier "
           "connects to the registry (npm 9, Debian)",
    "man": "root's man-db writes the page it formatted to its cache, /var/cache/man/catN "
           "(man-db 2.11.2, Debian): bookkeeping",
    **{tool: "APT keeps its parsed package lists in O_TMPFILE scratch files in $TMPDIR (never "
              "named, gone at exit; apt 2.6.1, Debian): bookkeeping" for tool in ("apt", "apt-cache")},
    **{tool: "the JVM writes its perf-data file /tmp/hsperfdata_USER/PID (-XX:-UsePerfData "
              "avoids it)" for tool in ("java", "javac", "javap", "jar", "jps", "mvn")},
    "top": "top -b creates ~/.config/procps (empty directories, no file) when it is missing "
           "(procps-ng 4.0.2, Debian): bookkeeping",
    "podman": "every podman command takes its locks, opens its state database read-write and "
              "runs conmon --version (podman 4.3, Debian): bookkeeping, no container changes",
}
# Programs a whitelisted program legitimately starts (path prefixes), by the starter's name:
# git's own commands; Debian's egrep and fgrep are scripts that run grep; xargs with
# no command runs echo; npm, eslint, prettier and tsc are node scripts; man formats a page with
# groff (nroff, tbl, troff, grotty, preconv, col, gzip) into cat, and man -k and -f run
# apropos and whatis; Debian's zcat and gunzip are scripts that run gzip; dpkg's queries
# run dpkg-query.
HELPERS = {"git": ("/usr/lib/git-core/",), "egrep": ("/usr/bin/grep", "/bin/grep"),
           "fgrep": ("/usr/bin/grep", "/bin/grep"), "xargs": ("/usr/bin/echo", "/bin/echo"),
           "npm": ("/usr/bin/node",), "eslint": ("/usr/bin/node",), "prettier": ("/usr/bin/node",),
           "tsc": ("/usr/bin/node",), "man": ("/usr/bin/apropos", "/usr/bin/whatis", "/usr/bin/groff", "/usr/bin/nroff",
                   "/usr/bin/troff", "/usr/bin/tbl", "/usr/bin/grotty", "/usr/bin/preconv", "/usr/bin/col",
                   "/usr/bin/gzip", "/usr/bin/locale", "/usr/bin/cat"),
           "zcat": ("/usr/bin/gzip", "/bin/gzip"), "gunzip": ("/usr/bin/gzip", "/bin/gzip"),
           "dpkg": ("/usr/bin/dpkg-query",),
           # APT asks dpkg for the foreign architectures (--print-foreign-architectures).
           "apt": ("/usr/bin/dpkg",), "apt-cache": ("/usr/bin/dpkg",),
           # Debian's zgrep is a script running gzip, grep, expr and sed; ag runs
           # `sh -c 'git config -z --path --get core.excludesfile'`; mvn is a script that
           # finds java with uname, ls, expr, dirname and tr; fd -l runs `ls -l -h -d`;
           # rustup --version runs the active toolchain's rustc.
           "zgrep": ("/usr/bin/gzip", "/bin/gzip", "/usr/bin/grep", "/bin/grep", "/usr/bin/expr",
                     "/usr/bin/sed", "/bin/sed"),
           "ag": ("/bin/sh", "/usr/bin/sh", "/usr/bin/git", "/usr/lib/git-core/"),
           "mvn": ("/usr/bin/uname", "/usr/bin/ls", "/usr/bin/expr", "/usr/bin/dirname", "/usr/bin/tr",
                   "/usr/bin/java", "/usr/lib/jvm/"),
           "fd": ("/usr/bin/ls", "/bin/ls"), "fdfind": ("/usr/bin/ls", "/bin/ls"),
           "rustup": (str(Path.home() / ".rustup" / "toolchains") + "/",)}
# git's shell-script commands (git bisect in 2.39, through git-sh-setup) run these.
HELPERS["git"] += ("/usr/bin/basename", "/usr/bin/sed", "/bin/sed", "/usr/bin/gettext",
                   "/usr/bin/envsubst", "/usr/bin/uname", "/bin/uname")
# git status (and describe --dirty) takes the index lock to refresh its stat cache,
# and renames the lock over the index when something changed (GIT_OPTIONAL_LOCKS in
# git(1)).  The oracle accepts exactly that cache write and nothing else in .git.
_GIT_INDEX_LOCK = re.compile(r'"[^"]*/\.git/index\.lock"')
BUILTINS = bash_names("b") | bash_names("k")
ALL_CASES = [c for f in corpus_files([CORPORA]) for c in read_cases(f)]
ALLOW_CASES = [c for c in ALL_CASES if c.expect == "allow"]


def _case_id(case) -> str:
    return f"{Path(case.path).name}:{case.line}"


def _environment(root: Path) -> dict[str, str]:
    bin_dir = root / "bin"
    if not bin_dir.exists():
        bin_dir.mkdir()
        fdfind = shutil.which("fdfind")
        if fdfind:
            (bin_dir / "fd").symlink_to(fdfind)
        (root / "home").mkdir()
        (root / "tmp").mkdir()
    return {"PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin", "HOME": str(root / "home"),
            "TMPDIR": str(root / "tmp"), "LANG": "C.UTF-8", "TERM": "dumb",
            "GIT_CONFIG_NOSYSTEM": "1"}


def make_repository(path: Path, env: dict[str, str]) -> None:
    """A small git repository: files, three commits, a branch and a tag.

    File times are set in the past so that `git status` finds its index
    fresh and has no reason to rewrite it.
    """
    files = {
        "README.md": "# demo\nTODO: write docs\n", "src/main.py": "def main():\n    return 1\n",
        "src/lib.rs": "pub fn add(a: i32) -> i32 { a + 1 }\n", "src/app.js": "console.log(1)\n",
        "docs/guide.md": "guide\nfoo bar\n", "data.json": '{"name": "demo", "items": [1, 2]}\n',
        "notes.txt": "b\na\nc\na\n", "file with spaces.txt": "x\n", ".gitignore": "*.log\n",
        "Makefile": "all:\n\ttrue\n",
    }
    git_env = {**env, "GIT_AUTHOR_NAME": "A", "GIT_AUTHOR_EMAIL": "a@example.com",
               "GIT_COMMITTER_NAME": "A", "GIT_COMMITTER_EMAIL": "a@example.com"}

    def git(*args):
        subprocess.run(["git", *args], cwd=path, env=git_env, check=True, capture_output=True)

    path.mkdir()
    git("init", "-q", "-b", "main")
    for number, (name, text) in enumerate(files.items()):
        file = path / name
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text)
        if number in (3, 7):
            git("add", "-A")
            git("commit", "-q", "-m", f"commit {number}")
    git("tag", "-a", "v1.0", "-m", "release")
    git("branch", "feature")
    git("add", "-A")
    git("commit", "-q", "-m", "last")
    for file in path.rglob("*"):
        if ".git" not in file.parts:
            os.utime(file, (1_600_000_000, 1_600_000_000))
    git("update-index", "--refresh")
    git("gc", "-q")


def snapshot(path: Path) -> dict[str, tuple[int, int]]:
    """Size and mtime of every file (directory times move with git's index lock)."""
    return {str(p.relative_to(path)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in path.rglob("*") if not p.is_dir()}


def skip_reason(case, verdict) -> str | None:
    if not verdict.allowed:
        return "denied under the current specs (tests/test_corpora.py reports it)"
    for segment in verdict.segments:
        if not segment.words:
            continue
        name = segment.words[0].value.rpartition("/")[2]
        if name in NETWORK_PROGRAMS:
            return f"uses the network client {name}"
        words = [w.value for w in segment.words]
        for use in NETWORK_USES:
            if tuple(words[:2]) == use[:2] and all(flag in words for flag in use[2:]):
                return f"`{' '.join(use)}` queries a remote by design"
        if name not in BUILTINS and name != "fd" and not shutil.which(name):
            return f"{name} is not installed"
        if "/" in words[1:]:
            return "walks the whole filesystem: its time depends on the machine, not the command"
    return None


def _programs_named(verdict) -> set[str]:
    """Programs the command may start: each segment's program and, after a
    wrapper (a spec whose operands are a command, or judged by a hook: env,
    command) or a program with a flag that runs a checked command (find
    -exec), every whitelisted word."""
    names = {"bash"}
    for segment in verdict.segments:
        words = [w.value for w in segment.words if w.value is not None]
        if not words:
            continue
        program = words[0].rpartition("/")[2]
        names.add(program)
        spec = POLICY.spec(program)
        if spec is not None and (spec.positionals.role in ("command", "hook")
                                 or any(flag.runs for flag in spec.flags.values())):
            names.update(w for w in words[1:] if POLICY.spec(w) is not None)
    if "fd" in names:
        names.add("fdfind")
    return names


def violations(verdict, effects: Effects) -> dict[str, list[str]]:
    """The effects a read-only command must not have, by category."""
    allowed = _programs_named(verdict)
    helper_dirs = tuple(d for name in allowed for d in HELPERS.get(name, ()))
    foreign = [p for p in effects.programs
               if p.rpartition("/")[2] not in allowed and not p.startswith(helper_dirs)]
    writes = [w for w in effects.writes + effects.mutations
              if not ("git" in allowed and _GIT_INDEX_LOCK.search(w))]
    found = {"write": writes, "exec": foreign,
             "network": effects.network, "hang": ["timed out"] if effects.timed_out else []}
    return {k: v for k, v in found.items() if v}


@pytest.fixture(scope="module")
def world():
    with tempfile.TemporaryDirectory(prefix="bp-effect-") as root:
        root = Path(root)
        env = _environment(root)
        repo = root / "repo"
        make_repository(repo, env)
        yield root, env, repo


@pytest.fixture(scope="module")
def observations(world):
    """Run every runnable allow case under strace, four at a time."""
    root, env, repo = world
    before = snapshot(repo)
    runnable = {}
    for case in ALLOW_CASES:
        verdict = check(case.command, POLICY, cwd=case.cwd)
        if skip_reason(case, verdict) is None:
            runnable[_case_id(case)] = (case, verdict)

    def run(item):
        key, (case, verdict) = item
        logs = root / "logs" / key.replace(":", "_")
        logs.mkdir(parents=True)
        return key, strace_run(case.command, repo, env, logs / "trace", TIMEOUT)

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = dict(pool.map(run, runnable.items()))
    after = snapshot(repo)
    return results, {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}


@pytest.mark.parametrize("case", ALLOW_CASES, ids=_case_id)
def test_allowed_command_only_reads(case, observations):
    verdict = check(case.command, POLICY, cwd=case.cwd)
    reason = skip_reason(case, verdict)
    if reason:
        pytest.skip(reason)
    results, _ = observations
    found = violations(verdict, results[_case_id(case)])
    known = [KNOWN_EFFECTS[p] for p in _programs_named(verdict) if p in KNOWN_EFFECTS]
    if known and found:
        pytest.xfail(f"{known[0]}: {found}")
    assert found == {}, case.command


def test_fixture_repository_is_unchanged(observations):
    assert observations[1] == set(), "allowed commands changed the fixture repository"


# A sample of denied commands with the effect each must show when run for real.
DENIED_SAMPLE = [
    ("rg --pre cat notes.txt", "exec"),
    ("fd -x cat", "exec"),
    ("find . -name notes.txt -exec sh -c 'cat \"$1\"' sh {} \\;", "exec"),
    ("find . -name '*.log' -delete", "write"),
    ("sort -o out notes.txt", "write"),
    ("rg TODO > out", "write"),
    ("git branch newbranch", "write"),
    ("sed -i s/a/b/ notes.txt", "write"),
    ("git tag v2", "write"),
    ("tail -f notes.txt", "hang"),
    ("sleep 1000", "hang"),
]
# Denial effects that show up as file writes when run.
_SEEN_AS = {"state": "write"}


@pytest.mark.parametrize("command, effect", DENIED_SAMPLE)
def test_oracle_sees_the_effect_of_a_denied_command(command, effect, world, tmp_path):
    """The oracle can fail: it sees exec, write and hang in a throwaway copy."""
    root, env, repo = world
    verdict = check(command, POLICY)
    assert not verdict.allowed, command
    tagged = {_SEEN_AS.get(d.effect, d.effect) for d in verdict.denials if d.effect}
    assert effect in tagged, verdict.denials
    work = tmp_path / "repo"
    shutil.copytree(repo, work, symlinks=True)
    (work / "debug.log").write_text("x\n")
    effects = strace_run(command, work, env, tmp_path / "trace", timeout=3)
    assert effect in violations(verdict, effects), effects
