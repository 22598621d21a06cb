"""Optional confinement: path words must stay under the policy's `scope_roots` (BP602).

Read-only tools still read secrets outside the project (`cat ~/.ssh/id_rsa`,
`cat /proc/self/environ`).  With `scope_roots` set, every literal word after
the program that looks like a path (contains `/`, is `.` or `..`, or starts
with `~`), the value of `--flag=VALUE`, a glob's literal prefix and each `<`
redirection must resolve (against every directory the segment may run in,
`..` and symlinks resolved) to a place under a root.  A pattern that looks
like a path (`rg /usr/lib`) is denied too: the checker cannot tell it from a
path.
"""

from __future__ import annotations

import os

from ..read.model import TILDE, Word
from ..records import dataclass
from .codes import Code
from .problems import Problem
from .rules import engine_rule

SCOPE = engine_rule("scope", """With `scope_roots` set: paths outside those directories.
    Read-only tools still read secrets outside the project.""",
    codes=[Code.BP602], deny=[], allow=["ls"],
    untestable="needs a policy with scope_roots: tests/test_scope.py")


@dataclass(frozen=True)
class UnderHome(Problem):
    code = Code.BP602
    rule = SCOPE
    message_format = "`{word.text}` is under a home directory, outside the scope roots"
    hint_format = "read files inside the project"
    word: Word


@dataclass(frozen=True)
class RelativeToUnknown(Problem):
    code = Code.BP602
    rule = SCOPE
    message_format = "`{word.text}` is relative to a directory the checker cannot resolve"
    hint_format = "use a path inside the project"
    word: Word


@dataclass(frozen=True)
class OutsideScope(Problem):
    code = Code.BP602
    rule = SCOPE
    message_format = "`{word.text}` resolves to {path}, outside the scope roots ({roots})"
    hint_format = "read files inside the project, or add the directory to scope_roots"
    word: Word
    path: str
    roots: str


def _looks_like_path(text: str) -> bool:
    return "/" in text or text in (".", "..") or text.startswith("~")


def _candidates(segment):
    """(word, text) pairs that name paths: operands, `--flag=VALUE` values, `<` targets."""
    for word in segment.words[1:]:
        if word.value is None:
            if any(e.kind == TILDE for e in word.expansions):
                yield word, "~"
            elif _looks_like_path(word.prefix):
                yield word, word.prefix.rpartition("/")[0] or "/"
            continue
        text = word.value
        if text.startswith("-"):
            name, eq, text = text.partition("=")
            if not eq:
                continue
        if _looks_like_path(text):
            yield word, text
    for redirect in segment.redirects:
        if redirect.op == "<" and redirect.target is not None and redirect.target.value:
            yield redirect.target, redirect.target.value


def _inside(path: str, roots: list[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def check_scope(segment, ctx) -> None:
    roots = [os.path.realpath(os.path.join(ctx.cwd or "", os.path.expanduser(r)))
             for r in ctx.policy.scope_roots
             if ctx.cwd is not None or os.path.isabs(os.path.expanduser(r))]  # else unresolvable
    dirs = ctx.directories()
    for word, text in _candidates(segment):
        if text.startswith("~"):
            ctx.deny(UnderHome(word), word.span)
            continue
        for directory in ([None] if text.startswith("/") else dirs):
            if directory is None and not text.startswith("/"):
                ctx.deny(RelativeToUnknown(word), word.span)
                break
            path = os.path.realpath(os.path.join(directory or "/", text))
            if not _inside(path, roots):
                ctx.deny(OutsideScope(word, path, ", ".join(roots)), word.span)
                break
