"""Repository config checks (BP601), the config reader, and `cd` tracking.

Fixture repositories are built in tmp dirs; real git builds them where that
is simplest, but the checks themselves never run git.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from bash_policy import check
from bash_policy.judge.policy import ConfigError, Policy
from bash_policy.repo.gitconfig import ConfigSyntaxError, parse

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _git(*args, cwd=None):
    env = {"PATH": os.environ["PATH"], "HOME": "/nonexistent", "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def _codes(command, cwd):
    return [d.code for d in check(command, cwd=str(cwd)).denials]


# -- the config reader ------------------------------------------------------

def test_parser_reads_git_syntax():
    text = ('# c\n[Core]\n\tPager = "less  -R" ; comment\n'
            '[diff "My Drv"] textconv = a\\\nb\n'
            '[Filter.LEGACY]\n\tclean\n'
            '[alias]\n\tx = "!sh -c \\"t\\"\\t" # c\n')
    entries = [(e.name, e.value) for e in parse(text)]
    assert entries == [("core.pager", "less  -R"), ("diff.My Drv.textconv", "ab"),
                       ("filter.legacy.clean", None), ("alias.x", '!sh -c "t"\t')]


@pytest.mark.parametrize("text", ['[core]\n\tpager = "x\n', "[core]\n\tpager = \\q\n",
                                  "[core\n", '[diff "x]\n', "[core]\n\tpager x\n", "[]\nx = 1\n"])
def test_parser_rejects_what_git_rejects(text):
    with pytest.raises(ConfigSyntaxError):
        parse(text)


# -- repositories -----------------------------------------------------------

@pytest.fixture
def repo(tmp_path):
    path = tmp_path / "repo"
    _git("init", "-q", str(path))
    (path / "src").mkdir()
    return path


def _config(repo, text, name="config"):
    with open(repo / ".git" / name, "a") as fh:
        fh.write(text)


@needs_git
@pytest.mark.parametrize("command", ["gh pr list", "gh repo view", "gh api repos/o/r", "gh run list"])
def test_gh_is_judged_by_the_repository_config(repo, command):
    """gh runs git in its directory (git remote -v, config, symbolic-ref): an
    include of a FIFO hung `gh pr list` (red team RT6), and any key git would
    act on reaches it as it reaches git."""
    assert check(command, cwd=str(repo)).allowed
    _config(repo, "[core]\n\tfsmonitor = ./x\n")
    assert _codes(command, repo) == ["BP601"]
    assert check("gh --version", cwd=str(repo)).allowed


@needs_git
def test_ag_is_judged_by_the_repository_config(repo):
    """ag 2.2.0 runs `git config --get core.excludesfile` and reads the file
    it names: an excludes file that is a FIFO blocked it."""
    assert check("ag foo", cwd=str(repo)).allowed
    os.mkfifo(repo / "fifo")
    _config(repo, "[core]\n\texcludesFile = fifo\n")
    assert _codes("ag -l foo src", repo) == ["BP601"]
    assert check("ag --version", cwd=str(repo)).allowed


@needs_git
def test_plain_repository_is_allowed(repo):
    assert check("git status", cwd=str(repo)).allowed
    assert check("cd src && git log -p", cwd=str(repo)).allowed


@needs_git
@pytest.mark.parametrize("text", [
    "[core]\n\tfsmonitor = /tmp/x\n", "[core]\n\tpager = less\n", "[pager]\n\tlog = sh -c x\n",
    "[diff]\n\texternal = x\n", '[diff "d"]\n\ttextconv = x\n', '[diff "d"]\n\tcommand = x\n',
    '[filter "f"]\n\tclean = x\n', '[filter "f"]\n\tprocess = x\n', "[gpg]\n\tprogram = x\n",
    '[gpg "ssh"]\n\tprogram = x\n', "[credential]\n\thelper = !x\n", "[core]\n\tsshCommand = x\n",
    '[remote "o"]\n\tuploadpack = x\n', "[protocol]\n\tallow = always\n",
    '[merge "m"]\n\tdriver = x\n', "[alias]\n\tlfs = !x\n", "[core]\n\tfsmonitor\n",
    # The allowlist: values that run gpg, and keys nobody listed.
    "[log]\n\tshowSignature = true\n", "[format]\n\tpretty = format:%h %G?\n",
    "[format]\n\tpretty = mine\n", '[pretty]\n\tmine = %GS\n', "[status]\n\tsubmoduleSummary = true\n",
    '[filter "lfs"]\n\tclean = git-lfs clean -- %f\n', "[core]\n\tsplitIndex = true\n",
    "[frobnicate]\n\tanything = 1\n", '[core "sub"]\n\tbare = false\n',
])
def test_keys_outside_the_allowlist_deny(repo, text):
    _config(repo, text)
    assert _codes("git status", repo) == ["BP601"]


@needs_git
@pytest.mark.parametrize("text", [
    "[core]\n\tfsmonitor = false\n", "[core]\n\tpager = cat\n", "[pager]\n\tlog = false\n",
    "[pager]\n\tlog\n", '[diff "d"]\n\txfuncname = x\n', '[filter "f"]\n\trequired = true\n',
    "[core]\n\teditor = vim\n", "[alias]\n\tst = status\n", "[log]\n\tshowSignature = false\n",
    "[format]\n\tpretty = fuller\n", "[format]\n\tpretty = format:%h %an%n%%G\n",
    '[color "diff"]\n\tmeta = blue\n', "[advice]\n\tdetachedHead = false\n",
    '[remote "origin"]\n\tgh-resolved = base\n', '[branch "main"]\n\tvscode-merge-base = origin/main\n',
    "[core]\n\thooksPath = .husky/_\n", "[blame]\n\tignoreRevsFile = .git-blame-ignore-revs\n",
    '[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic xyz\n',
])
def test_inert_keys_allow(repo, text):
    _config(repo, text)
    assert check("git log", cwd=str(repo)).allowed


@needs_git
def test_denial_names_the_key_and_the_file(repo):
    _config(repo, "[core]\n\tsshCommand = ssh -i key\n")
    denial = check("git status", cwd=str(repo)).denials[0]
    assert "`core.sshcommand`" in denial.message and str(repo / ".git" / "config") in denial.message
    assert denial.rule == "git_global" and denial.effect == "exec"
    assert "trusted_repo_keys" in denial.hint


@needs_git
def test_policy_trusts_more_keys(repo):
    _config(repo, "[core]\n\tsshCommand = ssh -i key\n" '[remote "o"]\n\tvcs = x\n')
    policy = Policy.from_mapping({"trusted_repo_keys": {"git": ["core.sshCommand"]}})
    assert [d.message.split("`")[1] for d in check("git status", policy, cwd=str(repo)).denials] \
        == ["remote.o.vcs"]
    policy = Policy.from_mapping({"trusted_repo_keys": {"git": ["core.sshcommand", "remote.*.vcs"]}})
    assert check("git status", policy, cwd=str(repo)).allowed


def test_trusted_repo_keys_are_validated():
    with pytest.raises(ConfigError):
        Policy.from_mapping({"trusted_repo_keys": {"hg": ["x"]}})
    with pytest.raises(ConfigError):
        Policy.from_mapping({"trusted_repo_keys": {"git": "core.pager"}})


@needs_git
def test_path_keys_that_would_hang_git_deny(repo):
    os.mkfifo(repo / "revs")
    _config(repo, "[blame]\n\tignoreRevsFile = revs\n")
    assert _codes("git blame x", repo) == ["BP601"]


@needs_git
def test_included_files_are_read_whatever_the_condition(repo, tmp_path):
    (tmp_path / "inc.cfg").write_text("[core]\n\tpager = evil\n")
    _config(repo, '[includeIf "onbranch:nope"]\n\tpath = ../../inc.cfg\n')
    assert _codes("git diff", repo) == ["BP601"]


def test_syntax_error_denies(repo):
    _config(repo, "[core\n")
    assert _codes("git status", repo) == ["BP601"]


@needs_git
def test_hook_that_status_runs(repo):
    hook = repo / ".git" / "hooks" / "post-index-change"
    hook.write_text("#!/bin/sh\n")
    hook.chmod(0o755)
    assert _codes("git status", repo) == ["BP601"]


@needs_git
def test_gitfile_and_worktree_config(tmp_path, repo):
    gitdir = tmp_path / "elsewhere.git"
    _git("init", "-q", "--bare", str(gitdir))
    work = tmp_path / "work"
    work.mkdir()
    (work / ".git").write_text(f"gitdir: ../{gitdir.name}\n")
    assert check("git status", cwd=str(work)).allowed
    with open(gitdir / "config", "a") as fh:
        fh.write("[extensions]\n\tworktreeConfig = true\n")
    (gitdir / "config.worktree").write_text("[core]\n\tpager = evil\n")
    assert _codes("git status", work) == ["BP601"]


@needs_git
def test_bare_repository_in_a_directory(tmp_path):
    bare = tmp_path / "crafted"
    _git("init", "-q", "--bare", str(bare))
    with open(bare / "config", "a") as fh:
        fh.write("[core]\n\tfsmonitor = x\n")
    for command in ("git log", "cd crafted && git log", "git -C crafted log",
                    "git --git-dir=crafted log", "git -C /nonexistent -C " + str(bare) + " log"):
        assert _codes(command, tmp_path if "crafted" in command else bare) == ["BP601"], command
    assert check("git -C / log", cwd=str(bare)).allowed


@needs_git
def test_submodule_config_is_read(repo):
    module = repo / ".git" / "modules" / "lib"
    _git("init", "-q", "--bare", str(module))
    with open(module / "config", "a") as fh:
        fh.write("[core]\n\tfsmonitor = x\n")
    assert _codes("git status", repo) == ["BP601"]


# -- resolving paths as git does (physically) -------------------------------------

def _git_out(*args, cwd):
    env = {"PATH": os.environ["PATH"], "HOME": "/nonexistent", "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def symlinked(tmp_path):
    """`work/lnk` -> `deep/inner`: `lnk/..` is `deep` for the kernel, `work` lexically.
    `deep/evil` is hostile, `work/evil` is clean."""
    (tmp_path / "work").mkdir()
    (tmp_path / "deep" / "inner").mkdir(parents=True)
    for where in ("work", "deep"):
        _git("init", "-q", "--bare", str(tmp_path / where / "evil"))
    with open(tmp_path / "deep" / "evil" / "config", "a") as fh:
        fh.write("[core]\n\tpager = echo EVIL\n")
    (tmp_path / "work" / "lnk").symlink_to("../deep/inner")
    return tmp_path


@needs_git
def test_gitdir_file_resolves_through_symlinks(symlinked):
    work = symlinked / "work"
    (work / ".git").write_text("gitdir: lnk/../evil\n")
    assert _git_out("config", "core.pager", cwd=work) == "echo EVIL"   # what git reads
    verdict = check("git status", cwd=str(work))
    assert [d.code for d in verdict.denials] == ["BP601"]
    assert str(symlinked / "deep" / "evil" / "config") in verdict.denials[0].message


@needs_git
def test_commondir_resolves_through_symlinks(symlinked, tmp_path):
    gitdir = tmp_path / "wt-gitdir"
    gitdir.mkdir()
    (gitdir / "HEAD").write_text("ref: refs/heads/main\n")
    (gitdir / "commondir").write_text("../work/lnk/../evil\n")
    (symlinked / "work" / "lnk2").symlink_to("../wt-gitdir")
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / ".git").write_text(f"gitdir: {gitdir}\n")
    assert _git_out("config", "core.pager", cwd=checkout) == "echo EVIL"
    assert _codes("git log", checkout) == ["BP601"]


@needs_git
def test_include_path_resolves_through_symlinks(symlinked, repo):
    (symlinked / "deep" / "inc.cfg").write_text("[core]\n\tpager = echo EVIL\n")
    (symlinked / "work" / "inc.cfg").write_text("[core]\n\tpager = cat\n")
    (repo / ".git" / "lnk").symlink_to(symlinked / "deep" / "inner")
    _config(repo, "[include]\n\tpath = lnk/../inc.cfg\n")
    assert _git_out("config", "core.pager", cwd=repo) == "echo EVIL"
    assert _codes("git status", repo) == ["BP601"]


@needs_git
def test_invalid_head_makes_git_use_the_parent(tmp_path, repo):
    """git skips a `.git` directory whose HEAD is not a ref (path.c validate_headref)."""
    _config(repo, "[core]\n\tpager = echo EVIL\n")
    inner = repo / "src" / ".git"
    _git("init", "-q", "--bare", str(inner))
    (inner / "HEAD").write_text("garbage\n")
    assert _git_out("config", "core.pager", cwd=repo / "src") == "echo EVIL"
    assert _codes("git status", repo / "src") == ["BP601"]


@needs_git
@pytest.mark.parametrize("where", ["config", "HEAD", "gitfile"])
def test_fifos_deny_instead_of_hanging(tmp_path, repo, where):
    if where == "gitfile":
        work = tmp_path / "w"
        work.mkdir()
        os.mkfifo(work / "target")
        (work / ".git").write_text("gitdir: target/x\n")
        (repo / ".git" / "config").unlink()
        start = work
    else:
        path = repo / ".git" / where
        path.unlink()
        os.mkfifo(path)
        start = repo
    verdict = check("git status", cwd=str(start))
    assert not verdict.allowed and verdict.denials[0].code == "BP601"


@needs_git
def test_submodule_only_in_the_index_is_read(repo):
    """A gitlink in the index with no .gitmodules entry: `git status` still recurses."""
    sub = repo / "vendored"
    _git("init", "-q", str(sub))
    env = {"PATH": os.environ["PATH"], "HOME": "/nonexistent", "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e"}
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "x"], cwd=sub, env=env, check=True)
    subprocess.run(["git", "add", "vendored"], cwd=repo, env=env, check=True, capture_output=True)
    assert not (repo / ".gitmodules").exists()
    assert check("git status", cwd=str(repo)).allowed
    _config(sub, '[filter "x"]\n\tclean = ./evil\n')
    assert _codes("git status", repo) == ["BP601"]


# -- real-looking repositories still pass -----------------------------------------

@needs_git
def test_ordinary_clones_with_submodules_and_worktrees_pass(tmp_path):
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e"}

    def git(*args, cwd=tmp_path):
        subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)

    for name in ("lib", "app"):
        git("init", "-q", "-b", "main", name)
        (tmp_path / name / "README.md").write_text(name)
        git("add", ".", cwd=tmp_path / name)
        git("commit", "-qm", "init", cwd=tmp_path / name)
    app = tmp_path / "app"
    git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(tmp_path / "lib"), "lib",
        cwd=app)
    git("commit", "-qm", "lib", cwd=app)
    git("-c", "protocol.file.allow=always", "clone", "-q", "--recurse-submodules", str(app), "clone")
    clone = tmp_path / "clone"
    git("worktree", "add", "-q", str(tmp_path / "wt"), cwd=clone)
    git("config", "user.email", "me@example.com", cwd=clone)
    git("config", "pull.rebase", "true", cwd=clone)
    for where in (clone, clone / "lib", tmp_path / "wt", tmp_path / "lib"):
        for command in ("git status", "git log -p", "git diff", "git branch -a", "git remote -v"):
            verdict = check(command, cwd=str(where))
            assert verdict.allowed, (where, command, verdict.denials)


# -- partial clones ------------------------------------------------------------------

@pytest.fixture
def partial(tmp_path):
    """A promisor repository whose every object is missing: git fetches whatever it reads."""
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e"}
    server = tmp_path / "server"
    subprocess.run(["git", "init", "-q", "-b", "main", str(server)], env=env, check=True)
    (server / "f.txt").write_text("one\n")
    for args in (["add", "."], ["commit", "-qm", "one"], ["config", "uploadpack.allowFilter", "true"],
                 ["config", "uploadpack.allowAnySHA1InWant", "true"]):
        subprocess.run(["git", *args], cwd=server, env=env, check=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=server, env=env, check=True,
                          capture_output=True, text=True).stdout.strip()
    repo = tmp_path / "partial"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], env=env, check=True)
    (repo / ".git" / "refs" / "heads" / "main").write_text(head + "\n")
    (repo / ".git" / "refs" / "tags" / "v1").write_text(head + "\n")
    with open(repo / ".git" / "config", "a") as fh:
        fh.write(f'[remote "origin"]\n\turl = file://{server}\n\tpromisor = true\n'
                 "\tpartialclonefilter = blob:none\n")
    return repo, env


# (command, denied): every denied one was seen to start `git fetch` in this repository,
# every allowed one was seen not to.
PARTIAL_CASES = [
    ("git status", True), ("git log -1", True), ("git show", True), ("git diff HEAD", True),
    ("git blame f.txt", True), ("git grep one HEAD", True), ("git cat-file -p HEAD", True),
    ("git ls-tree HEAD", True), ("git show-ref", True), ("git for-each-ref", True),
    ("git branch -v", True), ("git tag -n", True), ("git rev-parse HEAD~1", True),
    ("git rev-parse HEAD:f.txt", True), ("git ls-files --with-tree=HEAD", True),
    ("git describe --all", True), ("git config --blob=HEAD:f.txt --list", True),
    ("git rev-parse --show-toplevel", False), ("git rev-parse --abbrev-ref HEAD", False),
    ("git rev-parse --short HEAD", False), ("git ls-files", False), ("git branch -a", False),
    ("git tag -l 'v*'", False), ("git remote -v", False), ("git config --list", False),
    ("git symbolic-ref HEAD", False), ("git worktree list", False), ("git count-objects -v", False),
    ("git check-ignore -v x", False), ("git version", False), ("git remote show -n origin", False),
]


@needs_git
@pytest.mark.parametrize("command,denied", PARTIAL_CASES)
def test_partial_clone_denies_commands_that_read_objects(partial, command, denied):
    repo, _env = partial
    verdict = check(command, cwd=str(repo))
    assert verdict.allowed is not denied, verdict.denials
    if denied:
        assert "partial clone" in verdict.denials[0].message
        assert verdict.denials[0].effect == "network"


@pytest.mark.skipif(shutil.which("git") is None or shutil.which("strace") is None,
                    reason="needs git and strace")
@pytest.mark.parametrize("command,denied", PARTIAL_CASES)
def test_partial_clone_cases_match_real_git(partial, tmp_path, command, denied):
    """Each verdict above matches what git 2.39 does: a denied command fetches."""
    repo, env = partial
    copy = tmp_path / "copy"
    shutil.copytree(repo, copy, symlinks=True)
    log = tmp_path / "strace"
    subprocess.run(["strace", "-f", "--seccomp-bpf", "-qq", "-e", "trace=execve", "-o", str(log),
                    "bash", "-c", command], cwd=copy, env=env, capture_output=True,
                   stdin=subprocess.DEVNULL, timeout=60)
    fetched = '"fetch"' in log.read_text()
    assert fetched is denied


@needs_git
def test_promisor_pack_alone_marks_a_partial_clone(repo):
    pack = repo / ".git" / "objects" / "pack"
    (pack / "pack-0123.promisor").write_text("")
    assert "partial clone" in check("git log", cwd=str(repo)).denials[0].message
    assert check("git ls-files", cwd=str(repo)).allowed


@needs_git
def test_a_bisect_term_named_log_makes_bisect_log_check_out(repo):
    """git-bisect.sh reads BISECT_TERMS before it looks for `log`: the attack is
    real with git, and the checker denies exactly the subcommand a term names."""
    env = {"PATH": os.environ["PATH"], "HOME": "/nonexistent", "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e"}

    def git(*args):
        return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True,
                              text=True).stdout.strip()

    for n in range(4):
        git("commit", "-q", "--allow-empty", "-m", f"c{n}")
    git("bisect", "start", "HEAD", "HEAD~3")
    assert check("git bisect log", cwd=str(repo)).allowed
    assert check("git bisect terms --term-good", cwd=str(repo)).allowed
    head = git("rev-parse", "HEAD")
    (repo / ".git" / "BISECT_TERMS").write_text("log\ngood\n")
    assert _codes("git bisect log", repo) == ["BP601"]
    assert check("git bisect terms", cwd=str(repo)).allowed
    git("bisect", "log")
    assert git("rev-parse", "HEAD") != head, "the attack should be real: bisect log moved HEAD"
    (repo / ".git" / "BISECT_TERMS").write_text("bad\n terms \n")
    assert _codes("git -C src bisect terms", repo) == ["BP601"]
    assert check("git bisect log", cwd=str(repo)).allowed
    (repo / ".git" / "BISECT_TERMS").write_text("lo\\g\ngood\n")  # what `read` makes of it
    assert _codes("git bisect log", repo) == ["BP601"]
    (repo / ".git" / "BISECT_TERMS").write_text("log\r\ngood\n")
    assert _codes("git bisect log", repo) == ["BP601"]


@needs_git
def test_rerere_needs_an_existing_rr_cache(repo):
    """With rerere.enabled (repository config allows it as inert, or the user's),
    `git rerere status` makes .git/rr-cache when it is missing (git 2.39.5)."""
    _config(repo, "[rerere]\n\tenabled = true\n")
    for command in ("git rerere status", "git rerere diff", "git -C src rerere remaining"):
        assert _codes(command, repo) == ["BP601"]
    subprocess.run(["git", "rerere", "status"], cwd=repo, check=True, capture_output=True,
                   env={"PATH": os.environ["PATH"], "HOME": "/nonexistent", "GIT_CONFIG_NOSYSTEM": "1"})
    assert (repo / ".git" / "rr-cache").is_dir(), "the write should be real: git made rr-cache"
    assert check("git rerere status", cwd=str(repo)).allowed


@needs_git
def test_a_bisect_terms_fifo_denies(repo):
    """`git bisect terms` blocks opening a FIFO BISECT_TERMS (git 2.39.5); the
    checker reads it without blocking and denies."""
    os.mkfifo(repo / ".git" / "BISECT_TERMS")
    verdict = check("git bisect terms", cwd=str(repo))
    assert [d.code for d in verdict.denials] == ["BP601"]
    assert "FIFO" in verdict.denials[0].message
    assert check("git log", cwd=str(repo)).allowed


def test_without_cwd_a_note_says_nothing_was_checked():
    verdict = check("git status")
    assert verdict.allowed and any("not checked" in n for n in verdict.notes)


# -- cd ----------------------------------------------------------------------

@pytest.fixture
def two(tmp_path):
    """`good` is a plain repository, `bad` one whose config names a program."""
    for name in ("good", "bad"):
        _git("init", "-q", str(tmp_path / name))
    _config(tmp_path / "bad", "[core]\n\tpager = evil\n")
    return tmp_path


@needs_git
@pytest.mark.parametrize("command,allowed", [
    ("cd bad && git log", False),
    ("cd good && git log", True),
    ("cd bad; cd ../good; git log", False),  # the second cd may fail and leave git in bad
    ("cd bad && cd ../good && git log", True),
    ("cd bad || git log", True),        # git runs only where cd failed: the start directory
    ("cd good; git log", True),
    ("cd bad | git log", True),         # a cd in a pipeline changes nothing
    ("git log | cd bad; git log", True),
    ("cd bad; git log", False),
    ("cd good && cd ../bad && git log", False),
    ("cd -P bad/. && git log", False),
    ("cd good || cd bad && git log", False),  # good's cd may fail, then bad's runs
    ("! cd bad; git log", False),
    ("cd bad && rg x; git -C ../good log", True),
    ("command -p cd bad && git log", False),    # command's own options still run cd
    ("command -- cd bad && git log", False),
    ("command -pv cd bad && git log", True),    # -v only prints what cd is
])
def test_cd_is_followed(two, command, allowed):
    verdict = check(command, cwd=str(two))
    assert verdict.allowed is allowed, verdict.denials


@needs_git
def test_cd_home_makes_git_unresolvable(two):
    assert _codes("cd; git log", two / "good") == ["BP601"]
    assert check("cd; rg x", cwd=str(two / "good")).allowed


@pytest.mark.parametrize("command,code", [("cd -", "BP406"), ("cd a b", "BP406"),
                                          ("cd -- ~/x", "BP205"), ("cd -@ x", "BP401")])
def test_cd_targets_it_cannot_follow(command, code):
    assert code in [d.code for d in check(command).denials]


# -- red team RT2: what git opens is what the checker reads ------------------------

@needs_git
@pytest.mark.parametrize("line, file", [
    ('path = "" evil.cfg', "evil.cfg"),          # blanks count only once a value has a character
    ("path = evil.cfg\v", "evil.cfg\v"),          # \v is part of the value, not a blank
])
def test_include_is_the_file_git_opens(repo, line, file):
    (repo / ".git" / file).write_text("[core]\n\tfsmonitor = ./fsm.sh\n")
    _config(repo, f"[include]\n\t{line}\n")
    assert _codes("git status", repo) == ["BP601"]


@needs_git
def test_paths_under_proc_self_are_not_the_checkers(repo, tmp_path):
    """/proc/self/cwd is the opening process's directory: git's, not the checker's."""
    sub = repo / "sub"
    _git("init", "-q", str(sub))
    _config(sub, "[core]\n\tfsmonitor = ./fsm.sh\n")
    for command in ("git -C /proc/self/cwd/sub status", "cd /proc/self/cwd/sub && git status",
                    "git --git-dir=/proc/self/cwd/sub/.git status"):
        assert _codes(command, repo) == ["BP601"], command
    _config(repo, "[include]\n\tpath = /proc/self/cwd/inc.cfg\n")
    assert _codes("git status", repo) == ["BP601"]
    # Files the inert path keys name are git's too (red team RT3 F3: a FIFO there blocked git).
    for key in ("core.excludesFile", "core.attributesFile", "diff.orderFile", "blame.ignoreRevsFile"):
        section, name = key.split(".")
        fresh = tmp_path / key
        _git("init", "-q", str(fresh))
        assert check("git status", cwd=str(fresh)).allowed
        _config(fresh, f"[{section}]\n\t{name} = /proc/self/cwd/ignore\n")
        assert _codes("git status", fresh) == ["BP601"], key


@needs_git
def test_submodules_deeper_than_the_checker_looks_deny(tmp_path):
    """git status recurses into every level; past ten the checker cannot say."""
    env = {"PATH": os.environ["PATH"], "HOME": "/nonexistent", "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e"}

    def run(*args, cwd):
        subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)

    levels = [tmp_path / "top"]
    for _ in range(11):
        levels.append(levels[-1] / "s")
    for path in levels:
        path.mkdir(parents=True, exist_ok=True)
        run("init", "-q", ".", cwd=path)
    for path in reversed(levels):
        if (path / "s").exists():
            run("add", "s", cwd=path)
        run("commit", "-q", "--allow-empty", "-m", "x", cwd=path)
    assert [d.code for d in check("git status", cwd=str(levels[0])).denials] == ["BP601"]
    assert check("git status", cwd=str(levels[2])).allowed
