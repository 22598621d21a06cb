"""npm: a project `.npmrc` outside the inert allowlist, and `npm view` of anything but a registry name.

The project's `.npmrc` is repository content (bash_policy/repo/npmrc.py).
`npm view SPEC` resolves SPEC with npm-package-arg: a registry name (`pkg`,
`@scope/pkg`, `pkg@1.2`, `pkg@latest`, `pkg@^1`) asks the registry; a git
spec (`github:o/r`, `o/r`, `git+https://…`), a tarball URL, a path, a name or
version ending in .tgz, .tar.gz or .tar (a local tarball) or an alias
(`x@npm:y`) clones or downloads from any host, running the `git` program
npm is configured with.  Checked with npm 11.19.1: `npm view git+file:///repo`
ran `git ls-remote`.
"""

from __future__ import annotations

import re

from ...read.model import Word
from ...records import dataclass
from ...repo.files import Unreadable, read_text
from ...repo.npmrc import NpmrcError, entries, findings, project_files
from ..codes import Code, Effect
from ..problems import Problem
from . import rule
from .cd import known_directories

# Subcommands that send requests to the registry.
_ONLINE = frozenset({"view", "info", "show", "v", "search", "outdated", "query"})  # query: `:outdated`, `:vuln`
# Subcommands that print config values: a project value with `${VAR}` prints VAR.
_PRINTS_CONFIG = frozenset({"config", "c"})
# Keys `npm config get` may print: paths, registry URLs (npm refuses to print one with
# credentials: "The registry option is protected") and switches.  Others may hold
# secrets npm does not protect (`key`, a client TLS private key, printed unredacted).
_CONFIG_KEYS = frozenset({
    "registry", "prefix", "cache", "userconfig", "globalconfig", "loglevel", "audit", "fund",
    "save-exact", "save-prefix", "engine-strict", "legacy-peer-deps", "strict-peer-deps",
    "package-lock", "ignore-scripts", "strict-ssl", "tag", "init-license", "init-version",
    "update-notifier", "omit", "include", "install-strategy", "node-version", "os", "cpu",
    "lockfile-version", "progress", "color", "unicode", "json", "long", "parseable",
})
_NO_CWD_NOTE = ("the project's .npmrc was not checked: no working directory was given "
                "(check(cmd, cwd=DIR) or --cwd DIR)")
# validate-npm-package-name: lower-case URL-safe names, optionally scoped; then an optional
# `@version`, `@tag` or `@range` holding neither `/` nor `:` (which make it a git spec, a
# URL or an alias) and not starting with `.` or `~/` (a path).
_REGISTRY_SPEC = re.compile(r"(@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*"
                            r"(@(?![.]|~/)[^/:\\\s]*)?")
# npm-package-arg's isFileType: a name, or a version after `@`, ending so is a local
# tarball, which `npm view` unpacks into the npm cache (npm 11.19.1: `npm view b.tgz`
# and `npm view b@x.tgz` read ./b.tgz and ./x.tgz; `b.tarXgz` went to the registry).
_FILE_TYPE = re.compile(r"[.](?:tgz|tar[.]gz|tar)\Z", re.IGNORECASE)


@dataclass(frozen=True)
class NpmrcUnreadable(Problem):
    code = Code.BP601
    effect = Effect.EXEC
    message_format = "the project .npmrc cannot be judged: {error}"
    hint_format = "fix or remove that file, or run npm outside plan mode"
    error: Exception


@dataclass(frozen=True)
class NpmrcKey(Problem):
    code = Code.BP601
    effect = Effect.EXEC
    message_format = ("the project config {path}:{line} sets `{key}` = `{value}`: {why}; a project's "
                      ".npmrc is untrusted, so only keys known to be inert are allowed")
    hint_format = ("read the file and remove the key if you do not trust it, or trust it in the policy "
                   "(trusted_repo_keys.npm, docs/config.md)")
    path: str
    line: int
    key: str
    value: str
    why: str


@dataclass(frozen=True)
class NpmrcVariable(Problem):
    code = Code.BP601
    effect = Effect.LEAK
    message_format = ("the project config {path}:{line} sets `{key}` = `{value}`, which `npm config` "
                      "prints with the environment variable's value")
    hint_format = "read the file itself; the variable may hold a secret"
    path: str
    line: int
    key: str
    value: str


@rule("npm_project_config", codes=[Code.BP601], deny=[], allow=["npm ls"],
      untestable="needs a project with an .npmrc: tests/test_npm.py")
def npm_project_config(inv, ctx) -> None:
    """npm in a project whose .npmrc sets a key not known to be inert.
    A project .npmrc can name the git program npm runs, a log or cache directory
    it writes to, or a registry host that receives credentials."""
    anchor = inv.words[0].span
    sub = next((w.value for w in inv.words[1:] if w.value and not w.value.startswith("-")), None)
    online = sub in _ONLINE
    prints = sub in _PRINTS_CONFIG
    trusted = tuple(ctx.policy.trusted_repo_keys.get("npm", ()))
    for directory in known_directories(ctx, anchor, "its project .npmrc", _NO_CWD_NOTE, Effect.EXEC):
        try:
            found = findings(directory, online, trusted)
        except (Unreadable, NpmrcError) as error:
            ctx.deny(NpmrcUnreadable(error), anchor)
            continue
        for path, line, key, value, why in found:
            ctx.deny(NpmrcKey(path, line, key, value, why), anchor)
        if prints:
            _config_variables(ctx, anchor, directory)


def _config_variables(ctx, anchor, directory: str) -> None:
    """`npm config` prints project values with `${VAR}` expanded: the variable's value."""
    for path in project_files(directory):
        try:
            text = read_text(path) or ""
            found = entries(text)
        except (Unreadable, NpmrcError):
            continue   # denied above
        for line, key, value in found:
            if "${" in value:
                ctx.deny(NpmrcVariable(path, line, key, value), anchor)


@dataclass(frozen=True)
class NpmConfigKey(Problem):
    code = Code.BP406
    effect = Effect.LEAK
    message_format = ("`npm config get {word.text}` is not a key known to hold no secret (npm prints "
                      "`key`, a client TLS private key, unredacted)")
    hint_format = "`npm config list` shows the config with secrets redacted; `npm config get` takes {some}, …"
    word: Word
    some: str


@rule("npm_config_key", codes=[Code.BP406],
      deny=["npm config get //registry.npmjs.org/:_authToken", "npm config get key",
            "npm config get registry _auth"],
      allow=["npm config get registry", "npm config get prefix cache"])
def npm_config_key(inv, ctx) -> None:
    """`npm config get KEY` of a key outside a list of settings that hold no secret.
    npm protects tokens and passwords, not the legacy `key` (a TLS private key) or `otp`."""
    for word in inv.positionals:
        if word.value not in _CONFIG_KEYS:
            ctx.deny(NpmConfigKey(word, ", ".join(sorted(_CONFIG_KEYS)[:8])), word.span)


@dataclass(frozen=True)
class ViewsProjectName(Problem):
    code = Code.BP406
    effect = Effect.NETWORK
    message_format = "`npm {sub}` {where}, which may be a URL or git repository npm fetches"
    hint_format = "name the package: `npm view NAME[@VERSION] [FIELD]`"
    sub: str
    where: str


@dataclass(frozen=True)
class ViewsTarball(Problem):
    code = Code.BP406
    effect = Effect.WRITE
    message_format = ("`npm {sub} {spec.text}` names a local tarball (npm reads a package spec ending in "
                      ".tgz, .tar.gz or .tar as a file), which npm unpacks into its cache")
    hint_format = ("name a package on the registry: `npm view NAME[@VERSION] [FIELD]`; list a tarball "
                   "with `tar -tzf FILE`")
    sub: str
    spec: Word


@dataclass(frozen=True)
class NotRegistryName(Problem):
    code = Code.BP406
    effect = Effect.NETWORK
    message_format = ("`npm {sub} {spec.text}` is not a registry package name: npm would treat it as a "
                      "git repository, URL, path or alias and clone or download it")
    hint_format = "name a package on the registry: `npm view NAME[@VERSION] [FIELD]`"
    sub: str
    spec: Word


@rule("npm_view_spec", codes=[Code.BP406],
      deny=["npm view github:o/r", "npm view o/r", "npm view git+https://h/x.git",
            "npm view ./dir", "npm view x@npm:y", "npm view https://h/x.tgz", "npm view b.tgz",
            "npm view b@x.tar.gz",
            "npm view", "npm info --workspaces", "npm view -w pkg version"],
      allow=["npm view react", "npm view @types/node@20 version", "npm view lodash@'^4' dist.tarball",
             "npm view b.tarxgz"])
def npm_view_spec(inv, ctx) -> None:
    """`npm view` of anything but a registry package name: git specs, URLs, paths, aliases, or no name at all.
    Those clone or download from any host, running the git program npm is configured with.
    Without a name, or with workspaces, npm views the `name` of the project's
    package.json, unchecked: a repository naming itself
    `http://HOST/leak.tgz` or `git+file:…` made `npm view` fetch that URL or run
    git clone (red team RT6)."""
    workspaces = inv.uses("--workspace", "--workspaces")
    if workspaces or not inv.positionals:
        anchor = workspaces[0].word.span if workspaces else inv.words[0].span
        where = ("with workspaces views the names the workspaces' package.json files give" if workspaces
                 else "without a package name views the name the project's package.json gives")
        ctx.deny(ViewsProjectName(inv.spec.path[-1], where), anchor)
        return
    spec = inv.positionals[0]
    if spec.value is not None and _REGISTRY_SPEC.fullmatch(spec.value):
        if not _FILE_TYPE.search(spec.value):
            return
        ctx.deny(ViewsTarball(inv.spec.path[-1], spec), spec.span)
        return
    ctx.deny(NotRegistryName(inv.spec.path[-1], spec), spec.span)
