"""Find the repository a git command will read and the program-running keys in its config.

A repository's own config can make `git status`, `git diff` or `git log` run a
program (docs/threat-model.md, class 8).  This module finds the repository
the way git 2.39 does (setup.c: walk up for a `.git` directory or a `gitdir:`
file, or accept a bare repository), reads its local config files and every
file they include, and reports keys whose value is a program that a
read-only subcommand can start.  It never runs git.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from fnmatch import fnmatchcase

from .gitconfig import ConfigSyntaxError, Entry, parse

# Keys (section.subsection.key, lower-case, `*` = any subsection) whose value
# names a program that a read-only git subcommand can start, with the values
# that start none.  Sources: man git-config and gitattributes, git 2.39.5.
_FALSE = frozenset({"false", "no", "off", "0", ""})
_BOOL = _FALSE | {"true", "yes", "on", "1", None}
PROGRAM_KEYS: dict[str, frozenset] = {
    "core.fsmonitor": _FALSE,             # a hook run by `git status`, `git diff`
    "core.pager": frozenset({"", "cat"}),  # run when stdout is a terminal
    "pager.*": _BOOL,                       # a string value is a pager for that command
    "core.sshcommand": frozenset({""}),     # lazy fetches of partial clones use ssh
    "core.gitproxy": frozenset({""}),
    "core.askpass": frozenset({""}),
    "core.alternaterefscommand": frozenset({""}),
    "credential.helper": frozenset({""}),
    "credential.*.helper": frozenset({""}),
    "diff.external": frozenset({""}),      # `git diff`
    "diff.*.command": frozenset({""}),     # external diff per gitattributes driver
    "diff.*.textconv": frozenset({""}),    # `git diff`, `git log -p`, `git show`, `git grep`
    "filter.*.clean": frozenset({""}),     # `git status`, `git diff` hash worktree files through it
    "filter.*.smudge": frozenset({""}),
    "filter.*.process": frozenset({""}),
    "merge.*.driver": frozenset({""}),     # `git merge-tree`
    "gpg.program": frozenset({""}),        # `git log --show-signature`, %G? formats
    "gpg.*.program": frozenset({""}),
    "remote.*.uploadpack": frozenset({""}),  # runs locally for local-path remotes
    "remote.*.vcs": frozenset({""}),         # selects a git-remote-* helper
    "protocol.allow": frozenset({"never"}),  # `always` or `user` enables ext:: commands
    "protocol.ext.allow": frozenset({"never"}),
    "tar.*.command": frozenset({""}),      # `git archive --format=…`
    "man.viewer": frozenset({""}),         # `git help`
    "man.*.cmd": frozenset({""}),
    "man.*.path": frozenset({""}),
    "browser.*.cmd": frozenset({""}),
    "browser.*.path": frozenset({""}),
    "web.browser": frozenset({""}),
    "help.browser": frozenset({""}),
    "trailer.*.command": frozenset({""}),  # `git interpret-trailers`
    "trailer.*.cmd": frozenset({""}),
}
# Hooks a read-only command can run: `git status` rewrites the index when it
# refreshes stat data, and writing the index runs post-index-change.
READ_HOOKS = ("post-index-change",)
_MAX_INCLUDE_DEPTH = 10  # git's own limit (config.c, MAX_INCLUDE_DEPTH)


@dataclass(frozen=True, slots=True)
class Finding:
    """A reason the repository may run a program: `what` names the key or hook."""

    what: str
    path: str
    value: str | None = None
    kind: str = "key"  # key | hook


@dataclass(frozen=True, slots=True)
class Repository:
    git_dir: str
    common_dir: str
    work_tree: str | None


def program_key(entry: Entry) -> bool:
    """True when this config entry makes git run a program."""
    if entry.section == "alias":
        return (entry.value or "").startswith("!")  # only reachable for names git lacks
    name = entry.section + (".*" if entry.subsection is not None else "") + "." + entry.key
    for pattern, harmless in PROGRAM_KEYS.items():
        if fnmatchcase(name, pattern) or (entry.subsection is not None and fnmatchcase(
                f"{entry.section}.{entry.subsection.lower()}.{entry.key}", pattern)):
            return (entry.value.lower() if entry.value is not None else None) not in harmless
    return False


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as fh:
            return fh.read()
    except (FileNotFoundError, NotADirectoryError):
        return None


def is_git_dir(path: str) -> bool:
    """git's is_git_directory(): HEAD, plus objects/ and refs/ here or in commondir."""
    if not os.path.isfile(os.path.join(path, "HEAD")):
        return False
    common = _common_dir(path)
    return os.path.isdir(os.path.join(common, "objects")) and os.path.isdir(os.path.join(common, "refs"))


def _common_dir(git_dir: str) -> str:
    text = _read(os.path.join(git_dir, "commondir"))
    if text is None or not text.strip():
        return git_dir
    return os.path.normpath(os.path.join(git_dir, text.strip()))


def _gitfile(path: str) -> str | None:
    """The target of a `.git` file (`gitdir: PATH`), relative to the file's directory."""
    text = _read(path)
    if text is None or not text.startswith("gitdir: "):
        return None
    target = text[len("gitdir: "):].strip()
    return os.path.normpath(os.path.join(os.path.dirname(path), target))


def discover(start: str) -> Repository | None:
    """The repository git uses when run in `start` (setup_git_directory_gently)."""
    here = os.path.abspath(start)
    while True:
        dotgit = os.path.join(here, ".git")
        target = _gitfile(dotgit) if os.path.isfile(dotgit) else dotgit
        if target and is_git_dir(target):
            return Repository(target, _common_dir(target), here)
        if is_git_dir(here):  # bare: git 2.39 accepts it unless safe.bareRepository=explicit
            return Repository(here, _common_dir(here), None)
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def open_git_dir(git_dir: str, work_tree: str | None = None) -> Repository:
    """The repository named by `--git-dir` (git does not search for it)."""
    git_dir = os.path.abspath(git_dir)
    if os.path.isfile(git_dir):
        git_dir = _gitfile(git_dir) or git_dir
    return Repository(git_dir, _common_dir(git_dir), work_tree)


def config_entries(path: str, depth: int = 0, seen: frozenset[str] = frozenset()
                   ) -> list[tuple[str, Entry]]:
    """Entries of one config file and, recursively, of every file it may include.

    includeIf conditions are not evaluated: every included file is read.
    """
    text = _read(path)
    if text is None or depth > _MAX_INCLUDE_DEPTH or path in seen:
        return []
    try:
        entries = [(path, e) for e in parse(text)]
    except ConfigSyntaxError as error:
        raise ConfigSyntaxError(f"{path}: {error}") from None
    result: list[tuple[str, Entry]] = []
    for source, entry in entries:
        result.append((source, entry))
        if entry.key == "path" and entry.section in ("include", "includeif") and entry.value:
            included = os.path.expanduser(entry.value)
            included = os.path.join(os.path.dirname(path), included)
            result.extend(config_entries(os.path.normpath(included), depth + 1, seen | {path}))
    return result


def repository_entries(repo: Repository) -> list[tuple[str, Entry]]:
    """The local config of `repo`: config, config.worktree when enabled, includes."""
    entries = config_entries(os.path.join(repo.common_dir, "config"))
    if any(e.name == "extensions.worktreeconfig" and (e.value or "true").lower() not in _FALSE
           for _, e in entries):
        entries += config_entries(os.path.join(repo.git_dir, "config.worktree"))
    return entries


def _submodules(repo: Repository, entries) -> list[Repository]:
    """Submodule repositories `git status` recurses into: modules/ and .gitmodules paths."""
    found: list[Repository] = []
    modules = os.path.join(repo.common_dir, "modules")
    for root, dirs, _files in os.walk(modules):
        if is_git_dir(root):
            found.append(Repository(root, _common_dir(root), None))
            dirs[:] = [d for d in dirs if d == "modules"]
    if repo.work_tree:
        try:
            gitmodules = parse(_read(os.path.join(repo.work_tree, ".gitmodules")) or "")
        except ConfigSyntaxError:
            gitmodules = []
        for entry in gitmodules:
            if entry.section == "submodule" and entry.key == "path" and entry.value:
                path = os.path.normpath(os.path.join(repo.work_tree, entry.value))
                dotgit = os.path.join(path, ".git")
                if os.path.isdir(dotgit) and is_git_dir(dotgit):
                    found.append(Repository(dotgit, _common_dir(dotgit), path))
    return found


def _hook_findings(repo: Repository, entries) -> list[Finding]:
    hooks_path = None
    for _, entry in entries:
        if entry.name == "core.hookspath":
            hooks_path = entry.value
    if hooks_path:
        base = repo.work_tree or repo.git_dir
        hooks_dir = os.path.join(base, os.path.expanduser(hooks_path))
    else:
        hooks_dir = os.path.join(repo.common_dir, "hooks")
    findings = []
    for name in READ_HOOKS:
        path = os.path.join(hooks_dir, name)
        try:
            mode = os.stat(path).st_mode
        except OSError:
            continue
        if stat.S_ISREG(mode) and mode & 0o111:
            findings.append(Finding(f"the {name} hook", path, kind="hook"))
    return findings


def findings(repo: Repository, depth: int = 0) -> list[Finding]:
    """Everything in `repo` (and its submodules) that a read-only command may run.

    Raises ConfigSyntaxError for config text git would reject.
    """
    entries = repository_entries(repo)
    result = [Finding(entry.name, path, entry.value) for path, entry in entries if program_key(entry)]
    result += _hook_findings(repo, entries)
    if depth < _MAX_INCLUDE_DEPTH:
        for sub in _submodules(repo, entries):
            if sub.git_dir != repo.git_dir:
                result += findings(sub, depth + 1)
    return result
