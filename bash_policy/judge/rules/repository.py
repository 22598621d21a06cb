"""git: deny a command whose repository holds config, hooks, promisor remotes or bisect terms it
would act on, or lacks the rr-cache `git rerere` would create.

Called from git's top-level hook with the global options read.  The
repository is the one git would use: the segment's directory (after earlier
`cd`s, bash_policy/judge/rules/cd.py), moved by each `-C`, or named by `--git-dir`
/ `--bare`; bash_policy/repo/gitrepo.py finds it and reads what git reads.
Repository config is untrusted: every key outside the inert allowlist
(bash_policy/repo/gitkeys.py) denies, unless the policy trusts it
(`trusted_repo_keys.git`).
"""

from __future__ import annotations

import os
import re

from ...records import dataclass
from ...repo.files import Unreadable, physical, read_text
from ...repo.gitconfig import ConfigSyntaxError
from ...repo.gitrepo import Finding, Repository, discover, inspect, open_git_dir
from ..codes import Code, Effect
from ..problems import Problem
from . import rule
from .cd import known_directories

_NO_CWD_NOTE = ("the repository config was not checked: no working directory was given "
                "(check(cmd, cwd=DIR) or --cwd DIR)")
_HINT = ("read that config (`git config --list --show-origin`) and remove the key if you do not "
         "trust it, or trust it in the policy (trusted_repo_keys.git, docs/config.md)")

# Subcommands that read no object from the object store, whatever their operands, so a
# partial clone never fetches for them.  Tried with git 2.39.5 under strace in a promisor
# repository whose every object is missing (tests/test_gitrepo.py, test_partial_clone_*):
# each of these started no `git fetch`; status, log, show, diff, blame, grep, cat-file,
# ls-tree, show-ref, for-each-ref, describe, stash list and the rest did.
_NO_OBJECTS = frozenset({"version", "var", "check-ref-format", "count-objects", "symbolic-ref",
                         "remote", "worktree", "check-ignore", "fsck"})
# Subcommands that read objects only with some options or operands.
_OBJECT_OPTIONS = {"config": ("--blob",), "check-attr": ("--source",),
                   "ls-files": ("--with-tree",)}
# `git branch` / `git tag` list refs only with these options; -v, --contains, --sort,
# --format and the like read commits.  Letters: the short options that may cluster.
_LIST_ONLY = {"branch": ({"--list", "--all", "--remotes", "--show-current", "--no-color",
                          "--no-column", "--ignore-case", "--quiet"}, set("lariq")),
              "tag": ({"--list", "--no-color", "--no-column", "--ignore-case"}, set("li"))}
# rev-parse resolves plain ref names without reading objects; `~`, `^`, `:` and `@{`
# navigate through commits and trees, and --disambiguate lists objects.
_PLAIN_REF = re.compile(r"[A-Za-z0-9._/+-]+")


def _repository(directory: str, inv) -> tuple[Repository | None, str]:
    """The repository git uses when started in `directory` with these global options."""
    git_dir = None
    bare = False
    for use in inv.flags:
        name, value = use.flag.names[0], use.value
        if name == "-C" and value:
            directory = os.path.join(directory, value)
        elif name == "--git-dir" and value is not None:
            git_dir = value
        elif name == "--bare":
            bare = True
    directory = physical(directory)
    if git_dir is not None:
        return open_git_dir(os.path.join(directory, git_dir)), directory
    if bare:
        return open_git_dir(directory), directory
    return discover(directory), directory


def _subcommand(inv) -> tuple[str | None, list]:
    """The subcommand word's value and the words after it."""
    end = 1
    for use in inv.flags:
        after = use.index + 1
        if use.value_word is not None and use.value_word is not use.word:
            after += 1
        end = max(end, after)
    if end >= len(inv.words):
        return None, []
    return inv.words[end].value, list(inv.words[end + 1:])


def _may_fetch(sub: str | None, rest) -> bool:
    """Whether `git SUB REST` may read an object, which a partial clone fetches when missing."""
    if sub is None or sub in _NO_OBJECTS:
        return False
    values = [w.value for w in rest]
    if None in values:
        return True
    if sub in _OBJECT_OPTIONS:
        return any(v.startswith(_OBJECT_OPTIONS[sub]) for v in values)
    if sub in _LIST_ONLY:
        longs, letters = _LIST_ONLY[sub]
        for v in values:
            if v.startswith("--color=") or v == "--color" or v.startswith("--column"):
                continue
            if v.startswith("--") and v not in longs:
                return True
            if v.startswith("-") and not v.startswith("--") and not set(v[1:]) <= letters:
                return True
        return False
    if sub == "rev-parse":
        return any(v.startswith("--disambiguate") or
                   (not v.startswith("-") and not _PLAIN_REF.fullmatch(v)) for v in values)
    return True


def _shell_reads(text: str, count: int) -> list[str]:
    """What `count` plain `read VAR`s (no -r) assign from `text`: a backslash
    quotes the next character, backslash-newline joins lines, blanks at both
    ends go.  (Escaped blanks at the ends would stay; they are stripped too,
    since no word allowed after `git bisect` begins or ends with a blank.)"""
    values, i = [], 0
    for _ in range(count):
        out: list[str] = []
        while i < len(text):
            ch = text[i]
            i += 1
            if ch == "\\" and i < len(text):
                if text[i] != "\n":
                    out.append(text[i])
                i += 1
            elif ch == "\n":
                break
            elif ch != "\\":
                out.append(ch)
        values.append("".join(out).strip(" \t\n"))
    return values


def _bisect_terms(text: str) -> set[str]:
    """Every word a reader of BISECT_TERMS may take for a term: git's C
    helper takes the first two lines as they are (tried: `log\\r` is no term
    for git 2.39.5), git-bisect.sh takes them with `read` (the shell-only
    bisect of older releases acts on that alone); both spellings are kept."""
    lines = text.split("\n")[:2]
    terms = set(lines) | {line.removesuffix("\r") for line in lines}
    return terms | set(_shell_reads(text, 2))


def _bisect_term(repo: Repository, word: str | None) -> str | None:
    """`word` when $GIT_DIR/BISECT_TERMS names it as a term.  git-bisect.sh
    matches its first operand against the terms before `log`, so a term `log`
    turns `git bisect log` into marking HEAD and checking out another commit,
    and a term `terms` does the same to `git bisect terms` (tried: git 2.39.5;
    git refuses such terms, but the file is repository content).  A
    BISECT_TERMS that is a FIFO raises Unreadable: `git bisect terms` blocks
    opening it (tried: git 2.39.5)."""
    text = read_text(os.path.join(repo.git_dir, "BISECT_TERMS"))
    if not text or word is None:
        return None
    return word if word in _bisect_terms(text) else None


@dataclass(frozen=True)
class RepositoryHook(Problem):
    code = Code.BP601
    effect = Effect.EXEC
    message_format = ("the repository at {where} has {finding.what} ({finding.path}), which `git status` "
                      "runs when it refreshes the index")
    hint_format = "remove the hook if you do not trust it, or run git outside plan mode"
    where: str
    finding: Finding


@dataclass(frozen=True)
class RepositoryKey(Problem):
    code = Code.BP601
    effect = Effect.EXEC
    hint_format = _HINT
    finding: Finding

    def message(self) -> str:
        finding = self.finding
        value = finding.value if finding.value is not None else "true"
        return (f"the repository config {finding.path} sets `{finding.what}` = `{value}`: {finding.why}; "
                "repository config is untrusted, so only keys known to run nothing are allowed")


@dataclass(frozen=True)
class RepositoryUnreadable(Problem):
    code = Code.BP601
    effect = Effect.EXEC
    message_format = "the repository at {directory} cannot be judged: {error}"
    hint_format = "fix or remove that file, or run {program} outside plan mode"
    directory: str
    error: Exception
    program: str


@dataclass(frozen=True)
class BisectTerm(Problem):
    code = Code.BP601
    effect = Effect.STATE
    message_format = ("the repository at {where} bisects with a term named `{term}` ({path}), so `git "
                      "bisect {term}` marks the current commit and checks out another")
    hint_format = "end that bisection (`git bisect reset`) outside plan mode"
    where: str
    term: str
    path: str


@dataclass(frozen=True)
class NoRerereCache(Problem):
    code = Code.BP601
    effect = Effect.WRITE
    message_format = ("the repository at {where} has no rr-cache directory ({path}): with rerere.enabled "
                      "set in any config, `git rerere` creates it before it reads anything")
    hint_format = "without rr-cache rerere has recorded nothing, so there is nothing to show"
    where: str
    path: str


@dataclass(frozen=True)
class PartialClone(Problem):
    code = Code.BP601
    effect = Effect.NETWORK
    message_format = ("the repository at {where} is a partial clone ({promisor}): `git {sub}` may need "
                      "objects it does not have, and git then fetches them from the promisor remote's "
                      "URL, which the repository chooses (and may run `git maintenance` afterwards)")
    hint_format = ("in a partial clone, use commands that read no objects (git ls-files, git rev-parse, "
                   "git branch, git remote -v); fetch outside plan mode first")
    where: str
    promisor: str
    sub: str | None


def _deny_findings(report, where: str, anchor, ctx) -> None:
    for finding in report.findings:
        if finding.kind == "hook":
            ctx.deny(RepositoryHook(where, finding), anchor)
        else:
            ctx.deny(RepositoryKey(finding), anchor)


def git_repo_config(inv, ctx) -> None:
    """Deny when the repository this git command uses may run a program or fetch for it."""
    anchor = inv.words[0].span
    trusted = tuple(ctx.policy.trusted_repo_keys.get("git", ()))
    sub, rest = _subcommand(inv)
    checked: set[str] = set()
    for directory in known_directories(ctx, anchor, "its repository config", _NO_CWD_NOTE, Effect.EXEC):
        try:
            repo, where = _repository(directory, inv)
            if repo is None or repo.git_dir in checked:
                continue
            checked.add(repo.git_dir)
            report = inspect(repo, trusted)
            term = _bisect_term(repo, rest[0].value) if sub == "bisect" and rest else None
        except (ConfigSyntaxError, Unreadable) as error:
            ctx.deny(RepositoryUnreadable(directory, error, "git"), anchor)
            continue
        _deny_findings(report, where, anchor, ctx)
        if term is not None:
            ctx.deny(BisectTerm(where, term, os.path.join(repo.git_dir, "BISECT_TERMS")), anchor)
        if sub == "rerere" and not os.path.isdir(os.path.join(repo.common_dir, "rr-cache")):
            ctx.deny(NoRerereCache(where, os.path.join(repo.common_dir, "rr-cache")), anchor)
        if report.promisor and _may_fetch(sub, rest):
            ctx.deny(PartialClone(where, report.promisor[0], sub), anchor)


@rule("gh_git_config", codes=[Code.BP601], deny=[], allow=["gh pr list", "gh --version"],
      untestable="needs a repository with untrusted config: tests/test_gitrepo.py")
def gh_git_config(inv, ctx) -> None:
    """gh in a repository whose config git would act on, as for git itself.
    gh runs git in its directory to find the repository (`git remote -v`,
    `git config --get-regexp`, `git symbolic-ref HEAD`, and `git status` for
    some commands), so the repository's config reaches it too: an include of
    a FIFO hung `gh pr list` (red team RT6)."""
    if all(use.name in ("--version", "--help") for use in inv.flags) and len(inv.words) == 1 + len(inv.flags):
        return   # `gh --version` runs no git
    anchor = inv.words[0].span
    trusted = tuple(ctx.policy.trusted_repo_keys.get("git", ()))
    for directory in known_directories(ctx, anchor, "its repository config", _NO_CWD_NOTE, Effect.EXEC):
        try:
            repo = discover(physical(directory))
            if repo is None:
                continue
            report = inspect(repo, trusted)
        except (ConfigSyntaxError, Unreadable) as error:
            ctx.deny(RepositoryUnreadable(directory, error, "gh"), anchor)
            continue
        _deny_findings(report, directory, anchor, ctx)


@rule("ag_git_config", codes=[Code.BP601], deny=[], allow=["ag foo"],
      untestable="needs a repository with untrusted config: tests/test_gitrepo.py", unknown_operands=True)
def ag_git_config(inv, ctx) -> None:
    """ag in a repository whose config git would act on, as for git itself.
    ag 2.2.0 runs `sh -c 'git config -z --path --get core.excludesfile'` on every
    search and then reads the file it names (strace), so the repository's config
    reaches it: an excludes file or an include that is a FIFO blocks."""
    if inv.has("-V", "-h", "--list-file-types"):
        return   # they print and exit before any git runs
    anchor = inv.words[0].span
    trusted = tuple(ctx.policy.trusted_repo_keys.get("git", ()))
    for directory in known_directories(ctx, anchor, "its repository config", _NO_CWD_NOTE, Effect.EXEC):
        try:
            repo = discover(physical(directory))
            if repo is None:
                continue
            report = inspect(repo, trusted)
        except (ConfigSyntaxError, Unreadable) as error:
            ctx.deny(RepositoryUnreadable(directory, error, "ag"), anchor)
            continue
        _deny_findings(report, directory, anchor, ctx)
