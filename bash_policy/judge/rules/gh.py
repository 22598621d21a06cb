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

import re
from urllib.parse import urlsplit

_FIELDS = frozenset({"-f", "-F"})
_METHOD_OVERRIDE = re.compile(r"\s*x-(http-)?method(-override)?\s*:", re.IGNORECASE)
_JQ_ENVIRONMENT = re.compile(r"\$ENV\b|\$__prog_env\b|\benv\b")
_READ_OPERATIONS = frozenset({"query", "fragment"})
_CLOSING = {"(": ")", "{": "}", "[": "]"}


_GITHUB_HOSTS = frozenset({"github.com", "www.github.com", "api.github.com"})
_REPO_NAME = re.compile(r"(?:github\.com/)?[^/:@\s]+/[^/:@\s]+", re.IGNORECASE)


def _entries(inv, name: str) -> list:
    return [entry for entry in inv.flags if name in entry[0].names]


def _deny_host(ctx, word, text: str) -> None:
    ctx.deny("BP403", word.span,
             f"`{text}` sends the request to a host other than github.com, with GH_ENTERPRISE_TOKEN "
             "attached when it is set", "query github.com; other hosts need leaving plan mode", "network")


def _foreign_url(value: str | None) -> bool:
    """A URL whose host is not GitHub's (gh takes the host from it)."""
    return value is not None and "://" in value and \
        (urlsplit(value).hostname or "") not in _GITHUB_HOSTS


def gh_repo(inv, ctx) -> None:
    """--jq as gh_jq; -R must be OWNER/REPO on github.com, and a URL operand a github.com URL."""
    gh_jq(inv, ctx)
    for _, value, word in _entries(inv, "--repo"):
        if value is not None and not _REPO_NAME.fullmatch(value):
            _deny_host(ctx, word, word.text)
    for word in inv.positionals:
        if _foreign_url(word.value):
            _deny_host(ctx, word, word.text)


def gh_repo_view(inv, ctx) -> None:
    """`gh repo view [HOST/]OWNER/REPO`: the host must be github.com."""
    gh_repo(inv, ctx)
    for word in inv.positionals:
        if word.value is not None and word.value.count("/") > 1 and "://" not in word.value \
                and not _REPO_NAME.fullmatch(word.value):
            _deny_host(ctx, word, word.text)


def gh_jq(inv, ctx) -> None:
    """gh's jq has the environment loaded: `env.GH_TOKEN` prints a secret."""
    for _, value, word in _entries(inv, "--jq"):
        if value is not None and _JQ_ENVIRONMENT.search(value):
            ctx.deny("BP407", word.span,
                     "the jq filter reads environment variables (`env`, `$ENV`), which can hold tokens",
                     "drop `env`/`$ENV` from the filter", "leak")


def gh_api(inv, ctx) -> None:
    """Allow GET requests and GraphQL queries; deny anything that could write."""
    gh_jq(inv, ctx)
    for _, value, word in _entries(inv, "--hostname"):
        if value is not None and value.lower() != "github.com":
            _deny_host(ctx, word, word.text)
    for word in inv.positionals[:1]:
        if _foreign_url(word.value):
            _deny_host(ctx, word, word.text)
    for _, value, word in _entries(inv, "-H"):
        if _METHOD_OVERRIDE.match(value):
            ctx.deny("BP400", word.span, f"the header `{value}` asks the server for another HTTP method",
                     "drop the header", "network")
    fields = [entry for entry in inv.flags if _FIELDS & set(entry[0].names)]
    for flag, value, word in fields:
        if "-F" in flag.names and "=@" in value:
            ctx.deny("BP400", word.span,
                     f"`gh api -F {value}` sends the contents of a local file, which the checker "
                     "cannot see",
                     "write the value literally with -f key=value", "leak")
    methods = _entries(inv, "-X")
    method = methods[-1][1].upper() if methods else None
    endpoint = inv.positionals[0].value if inv.positionals else None
    if endpoint and _is_graphql(endpoint):
        if method not in (None, "GET", "POST"):
            ctx.deny("BP403", methods[-1][2].span, f"`gh api -X {methods[-1][1]}` is not a GraphQL request method",
                     "drop -X; GraphQL queries are sent with POST", "network")
        _check_graphql(fields, ctx)
        return
    if method is not None and method != "GET":
        ctx.deny("BP403", methods[-1][2].span,
                 f"`gh api -X {methods[-1][1]}` sends a {method} request, which can change things on GitHub",
                 "use -X GET (the default); changing things needs leaving plan mode", "network")
    elif method is None and fields:
        ctx.deny("BP403", fields[0][2].span,
                 "fields (-f/-F) make `gh api` send a POST request, which can create or change things",
                 "add `-X GET` to send the fields as query parameters", "network")


def _is_graphql(endpoint: str) -> bool:
    """`graphql`, or a URL of the GraphQL endpoint (github.com or an Enterprise server)."""
    path = endpoint.split("?")[0]
    if "://" in path:
        path = "/" + path.split("://", 1)[1].partition("/")[2]
    return path.strip("/") in ("graphql", "api/graphql")


def _check_graphql(fields, ctx) -> None:
    for _, value, word in fields:
        key, _, document = value.partition("=")
        if key != "query" or document.startswith("@"):
            continue  # variables; a query read from a file was denied above
        operations = graphql_operations(document)
        if operations is None:
            ctx.deny("BP407", word.span, "the GraphQL document does not parse, so its operations are unknown",
                     "fix the document's brackets and quotes")
            continue
        writing = [op for op in operations if op not in _READ_OPERATIONS]
        if writing:
            ctx.deny("BP407", word.span,
                     f"the GraphQL document holds a `{writing[0]}` operation, and only queries are read-only",
                     "send a `query { … }` document; mutations need leaving plan mode", "network")


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
