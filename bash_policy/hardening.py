"""The environment a harness should run an allowed command in.

The checker judges command text and, given a working directory, repository
config (bash_policy/gitrepo.py).  Config can change between the check and the
run, and a caller may not pass a directory; these overrides make git ignore
program-running config at run time.  Per git-config(1) (git 2.39.5,
ENVIRONMENT), GIT_CONFIG_COUNT pairs override every config file and are only
overridden by `git -c`, which the git spec does not allow; GIT_PAGER beats
`pager.<cmd>` and core.pager.  tests/test_hardening.py proves both with real git.
"""

from __future__ import annotations

import os
from typing import Mapping

# git config pairs; each value starts no program (or makes git fail instead of running one).
GIT_OVERRIDES: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.pager", "cat"),
    ("core.hooksPath", "/dev/null"),      # no hooks at all (post-index-change on `git status`)
    ("core.sshCommand", "ssh"),
    ("core.askPass", ""),
    ("core.alternateRefsCommand", ""),
    ("credential.helper", ""),             # an empty value resets the list of helpers
    ("diff.external", ""),                 # git diff fails ("cannot run") rather than run one
    ("gpg.program", "gpg"),
    ("gpg.openpgp.program", "gpg"),
    ("gpg.x509.program", "gpgsm"),
    ("gpg.ssh.program", "ssh-keygen"),
    ("log.showSignature", "false"),
    ("protocol.ext.allow", "never"),
    ("safe.bareRepository", "explicit"),   # a bare repository inside a project is not used
    ("submodule.recurse", "false"),
)
# Variables set outright.  GIT_EDITOR=":" is git's own "no editor".
ENV_SET: dict[str, str] = {
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "GH_PAGER": "cat",
    "MANPAGER": "cat",
    "SYSTEMD_PAGER": "cat",
    "GIT_EDITOR": ":",
    "GIT_SEQUENCE_EDITOR": ":",
    "GIT_OPTIONAL_LOCKS": "0",     # `git status` does not rewrite the index
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_PROXY_COMMAND": "",        # set and empty: core.gitProxy is ignored, no proxy runs
    "GH_PROMPT_DISABLED": "1",
}
# Variables removed: each would run a program, override the settings above,
# or make bash resolve `cd` or a name differently from the checker.
ENV_UNSET: frozenset[str] = frozenset({
    "LESSOPEN", "LESSCLOSE", "GIT_EXTERNAL_DIFF", "GIT_SSH", "GIT_ASKPASS", "SSH_ASKPASS",
    "GIT_CONFIG_PARAMETERS", "GIT_EXEC_PATH", "BASH_ENV", "ENV", "CDPATH", "RIPGREP_CONFIG_PATH",
})
ENV_UNSET_PREFIXES = ("BASH_FUNC_",)  # exported shell functions shadow program names


def driver_overrides(cwd: str) -> list[tuple[str, str]]:
    """Overrides for the diff/filter/merge drivers named in the repository at `cwd`.

    Driver names are the repository's own, so no fixed list covers them.
    """
    from .gitconfig import ConfigSyntaxError
    from .gitrepo import discover, driver_names

    repo = discover(cwd)
    if repo is None:
        return []
    try:
        names = driver_names(repo)
    except ConfigSyntaxError:
        return []  # git refuses to run with this config
    pairs = []
    for name in sorted(names["diff"]):
        pairs += [(f"diff.{name}.textconv", "cat"), (f"diff.{name}.command", "")]
    for name in sorted(names["filter"]):
        pairs += [(f"filter.{name}.{k}", "") for k in ("clean", "smudge", "process")]
    for name in sorted(names["merge"]):
        pairs.append((f"merge.{name}.driver", ""))
    return pairs


def hardened_env(base: Mapping[str, str] | None = None, *, cwd: str | None = None) -> dict[str, str]:
    """A complete environment: `base` (default os.environ) with the overrides applied.

    With `cwd`, the drivers that the repository there defines are neutralised too.
    GIT_CONFIG_COUNT pairs already in `base` are kept; ours follow them and win.
    """
    env = {k: v for k, v in (os.environ if base is None else base).items()
           if k not in ENV_UNSET and not k.startswith(ENV_UNSET_PREFIXES)}
    env.update(ENV_SET)
    pairs = list(GIT_OVERRIDES) + (driver_overrides(cwd) if cwd else [])
    try:
        count = int(env.get("GIT_CONFIG_COUNT") or 0)
    except ValueError:
        count = 0
    if count < 0:
        count = 0
    for key in [k for k in env if k.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))]:
        if not key.rpartition("_")[2].isdigit() or int(key.rpartition("_")[2]) >= count:
            del env[key]
    for index, (key, value) in enumerate(pairs, start=count):
        env[f"GIT_CONFIG_KEY_{index}"] = key
        env[f"GIT_CONFIG_VALUE_{index}"] = value
    env["GIT_CONFIG_COUNT"] = str(count + len(pairs))
    return env
