"""The environment a harness should run an allowed command in.

The checker judges command text and, given a working directory, repository
config (bash_policy/repo/gitrepo.py).  Config can change between the check and the
run, and a caller may not pass a directory; these overrides make git ignore
program-running config at run time.  Per git-config(1) (git 2.39.5,
ENVIRONMENT), GIT_CONFIG_COUNT pairs override every config file and are only
overridden by `git -c`, which the git spec does not allow; GIT_PAGER beats
`pager.<cmd>` and core.pager.  tests/test_hardening.py proves both with real git.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

# git config pairs; each value starts no program (or makes git fail instead of running one).
GIT_OVERRIDES: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.pager", "cat"),
    ("core.hooksPath", "/dev/null"),      # no hooks at all (post-index-change on `git status`)
    ("core.sshCommand", "ssh"),
    ("core.askPass", ""),
    ("core.alternateRefsCommand", ""),
    ("credential.helper", ""),             # an empty value resets the list of helpers
    ("gpg.program", "gpg"),
    ("gpg.openpgp.program", "gpg"),
    ("gpg.x509.program", "gpgsm"),
    ("gpg.ssh.program", "ssh-keygen"),
    ("log.showSignature", "false"),
    # No transport at all: a partial clone's lazy fetch fails instead of reaching the
    # promisor remote's URL (git 2.39 has no GIT_NO_LAZY_FETCH).  Per-protocol keys beat
    # protocol.allow, so each protocol git knows is named (tried: `git log -1` in a
    # promisor repository then fails with "transport 'file' not allowed").
    ("protocol.allow", "never"),
    ("protocol.file.allow", "never"),
    ("protocol.git.allow", "never"),
    ("protocol.ssh.allow", "never"),
    ("protocol.http.allow", "never"),
    ("protocol.https.allow", "never"),
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
    "DPKG_PAGER": "cat",          # dpkg-query -l and -s page only on a terminal; DPKG_PAGER beats PAGER
    "GIT_EDITOR": ":",
    "GIT_SEQUENCE_EDITOR": ":",
    "GIT_OPTIONAL_LOCKS": "0",     # `git status` does not rewrite the index
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_PROXY_COMMAND": "",        # set and empty: core.gitProxy is ignored, no proxy runs
    "GH_PROMPT_DISABLED": "1",
    # `npm ls`/`npm view` write a debug log (to a project .npmrc's logs-dir) and
    # check the registry for updates; env beats .npmrc (npm 11.19.1, tried).
    "npm_config_logs_max": "0",
    "npm_config_update_notifier": "false",
}
# Set for a confined run, whose sockets all fail: clients that retry a failed
# connection fail at once instead (npm 11.19.1 retried `npm view` for 70 s).
OFFLINE_ENV: dict[str, str] = {"npm_config_fetch_retries": "0", "PIP_RETRIES": "0"}
# Variables removed: each would run a program, override the settings above,
# or make bash resolve `cd` or a name differently from the checker.
ENV_UNSET: frozenset[str] = frozenset({
    "LESSOPEN", "LESSCLOSE", "GIT_EXTERNAL_DIFF", "GIT_SSH", "GIT_ASKPASS", "SSH_ASKPASS",
    "GIT_CONFIG_PARAMETERS", "GIT_EXEC_PATH", "BASH_ENV", "ENV", "CDPATH", "RIPGREP_CONFIG_PATH",
})
ENV_UNSET_PREFIXES = ("BASH_FUNC_",)  # exported shell functions shadow program names


# Values that start no program, for keys found in a repository's config
# (`*` = any subsection); every other key outside the inert allowlist is
# overridden with "", which makes git fail ("cannot run") instead of running a
# program, or is ignored by git as an empty setting.
NEUTRAL_VALUES = {"core.fsmonitor": "false", "core.pager": "cat", "pager.*": "false",
                  "core.sshcommand": "ssh", "diff.*.textconv": "cat", "log.showsignature": "false",
                  "protocol.allow": "never", "protocol.*.allow": "never"}


def repository_overrides(cwd: str) -> list[tuple[str, str]]:
    """Overrides for each key of the repository at `cwd` (and its submodules) that
    is not known to be inert (bash_policy/repo/gitkeys.py).

    Driver names (`diff.NAME.textconv`, `filter.NAME.clean`) and an external
    diff are the repository's own choice, so no fixed list covers them, and
    overriding diff.external everywhere would break every `git diff`.
    """
    from fnmatch import fnmatchcase

    from .files import Unreadable
    from .gitconfig import ConfigSyntaxError
    from .gitrepo import discover, findings

    try:
        repo = discover(cwd)
        found = findings(repo) if repo is not None else []
    except (ConfigSyntaxError, Unreadable):
        return []  # the checker denies; git itself rejects most such files
    pairs = []
    for finding in found:
        if finding.kind != "key" or finding.what.lower().startswith(("include.", "includeif.")):
            continue
        section, _, rest = finding.what.partition(".")
        sub, _, key = rest.rpartition(".")
        shape = f"{section}.*.{key}" if sub else finding.what
        pairs.append((finding.what, next((v for p, v in NEUTRAL_VALUES.items()
                                          if fnmatchcase(shape.lower(), p)), "")))
    return pairs


def hardened_env(base: Mapping[str, str] | None = None, *, cwd: str | None = None) -> dict[str, str]:
    """A complete environment: `base` (default os.environ) with the overrides applied.

    With `cwd`, the program-running keys of the repository there are overridden too;
    without it, textconv, filter and external-diff drivers are not (docs/threat-model.md).
    GIT_CONFIG_COUNT pairs already in `base` are kept; ours follow them and win.
    """
    env = {k: v for k, v in (os.environ if base is None else base).items()
           if k not in ENV_UNSET and not k.startswith(ENV_UNSET_PREFIXES)}
    env.update(ENV_SET)
    pairs = list(GIT_OVERRIDES) + (repository_overrides(cwd) if cwd else [])
    try:
        count = int(env.get("GIT_CONFIG_COUNT") or 0)
    except ValueError:
        count = 0
    if count < 0:
        count = 0
    for key in [k for k in env if k.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))]:
        number = key.rpartition("_")[2]
        if not (number.isascii() and number.isdigit()) or int(number) >= count:
            del env[key]
    for index, (key, value) in enumerate(pairs, start=count):
        env[f"GIT_CONFIG_KEY_{index}"] = key
        env[f"GIT_CONFIG_VALUE_{index}"] = value
    env["GIT_CONFIG_COUNT"] = str(count + len(pairs))
    return env
