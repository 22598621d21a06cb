"""git: deny a command whose repository's own config names a program git runs.

Called from git's top-level hook with the global options read.  The
repository is the one git would use: the segment's directory (after earlier
`cd`s, bash_policy/judge/rules/cd.py), moved by each `-C`, or named by `--git-dir`
/ `--bare`; bash_policy/repo/gitrepo.py finds it and reads its config.
"""

from __future__ import annotations

import os

from ...repo.gitconfig import ConfigSyntaxError
from ...repo.gitrepo import Repository, discover, findings, open_git_dir
from ..codes import Code, Effect
from .cd import known_directories

_NO_CWD_NOTE = ("the repository config was not checked: no working directory was given "
                "(check(cmd, cwd=DIR) or --cwd DIR)")
_HINT = ("inspect that config and remove the key if you do not trust it, or run git outside "
         "plan mode with the hardened environment (bash_policy.hardened_env)")


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
    directory = os.path.realpath(directory)
    if git_dir is not None:
        return open_git_dir(os.path.join(directory, git_dir)), directory
    if bare:
        return open_git_dir(directory), directory
    return discover(directory), directory


def git_repo_config(inv, ctx) -> None:
    """Deny when the repository this git command uses names a program in its config."""
    anchor = inv.words[0].span
    checked: set[str] = set()
    for directory in known_directories(ctx, anchor, "its repository config", _NO_CWD_NOTE, Effect.EXEC):
        repo, where = _repository(directory, inv)
        if repo is None or repo.git_dir in checked:
            continue
        checked.add(repo.git_dir)
        try:
            found = findings(repo)
        except ConfigSyntaxError as error:
            ctx.deny(Code.BP601, anchor, f"the repository config of {where} cannot be read: {error}",
                     "fix the config file, or run git outside plan mode", Effect.EXEC)
            continue
        for finding in found:
            if finding.kind == "hook":
                message = (f"the repository at {where} has {finding.what} ({finding.path}), "
                           "which `git status` runs when it refreshes the index")
            else:
                message = (f"the repository config {finding.path} sets `{finding.what}` = "
                           f"`{finding.value if finding.value is not None else 'true'}`, "
                           "a program git may run for this command")
            ctx.deny(Code.BP601, anchor, message, _HINT, Effect.EXEC)
