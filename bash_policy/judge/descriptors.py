"""What each file descriptor refers to when a command runs, as bash sets it up.

A command starts with the descriptors of the shell that runs it, changed by
the pipes around it and by the redirections of every compound command that
holds it, then by its own, applied left to right (redir.c): `N<&M` and
`N>&M` make N a copy of M (the spelling does not matter: both dup2), `N>&M-`
moves M to N, `N<&-` closes N, and `<`, `>`, `<>`, `&>`, here-documents and
here-strings open something new.  The engine judges what a command reads by
the descriptor that results, not by how a redirection is spelled
(`head -c 8 < a.md 0>&2` reads the caller's standard error, as `0<&2` does:
issue 18, class 4), and rules ask where standard input really comes from
(xargs trusts the paths of `find -print0` only through the pipe from find:
class 2; a `while read` loop ends only on input it consumes: class 1).

A table maps descriptor numbers to `Origin`s; a descriptor that is absent
(3 and above, until a redirection opens it) is whatever the caller holds
open, unknown to the checker.
"""

from __future__ import annotations

import re

from ..read.model import Redirect
from ..records import dataclass

HARNESS = "harness"        # the caller's descriptor `fd`
PIPE_IN = "pipe-in"        # the reading end of a pipe between two pipeline members
PIPE_OUT = "pipe-out"      # the writing end of one
CAPTURED = "captured"      # the pipe bash reads a command substitution's output from
OPENED = "opened"          # opened by a redirection: a file, a here-document or here-string
CLOSED = "closed"          # closed by a redirection (`N<&-`), or the source of a failed copy

_DIGITS = re.compile(r"[0-9]+-?")


@dataclass(frozen=True, slots=True, eq=False)
class Origin:
    """What one descriptor refers to.  Compared by identity: two descriptors
    share an origin exactly when one is a copy of the other."""

    kind: str
    fd: int | None = None               # HARNESS: which of the caller's descriptors
    script: bool = False                # HARNESS 0: the harness may pipe the script into bash
    redirect: Redirect | None = None    # OPENED: the redirection that opened it
    loop: object | None = None          # OPENED: the innermost `while` that applies it on every test
    reopens: Origin | None = None       # OPENED by name (`< /dev/stdin`): the script it opens again
    joint: tuple[int, int] | None = None  # PIPE_IN/PIPE_OUT: (id of the pipeline, joint index)
    writer: object | None = None        # PIPE_IN: the member writing into the pipe
    reader: object | None = None        # PIPE_IN: the member reading it

    @property
    def caller_output(self) -> bool:
        """The caller's standard output or error: a terminal or a socket the
        harness reads, which a program reading it waits on for ever."""
        return self.kind == HARNESS and self.fd in (1, 2)

    @property
    def is_script(self) -> bool:
        """The rest of the script, when the harness pipes it into bash (BP108)."""
        origin: Origin | None = self
        while origin is not None and origin.kind == OPENED:
            origin = origin.reopens
        return origin is not None and origin.kind == HARNESS and origin.script


Table = dict[int, Origin]
_CLOSED = Origin(CLOSED)


def start(script: bool = False) -> Table:
    """The descriptors a top-level command inherits from the caller."""
    return {0: Origin(HARNESS, 0, script), 1: Origin(HARNESS, 1), 2: Origin(HARNESS, 2)}


def with_script(table: Table) -> Table:
    """`table` where the caller's standard input, if it is still there, may be the script."""
    origin = table.get(0)
    if origin is None or origin.kind != HARNESS or origin.fd != 0 or origin.script:
        return table
    return {**table, 0: Origin(HARNESS, 0, True)}


@dataclass(frozen=True, slots=True)
class Step:
    """One redirection applied: the table after it, and, for a copy or a move,
    the descriptor copied and whether it was open (None: the caller's
    descriptor 3 or above, unknown to the checker)."""

    after: Table
    source: int | None = None
    source_origin: Origin | None = None
    unknown_source: bool = False


def apply(redirect: Redirect, table: Table, loop: object | None, names_stdin) -> Step:
    """The table after one redirection.  `loop`: the innermost `while` whose
    test or body holds it (its redirection runs again on each pass);
    `names_stdin(path)`: whether opening `path` opens standard input again
    (`/dev/stdin`, a link to it)."""
    op, target = redirect.op, redirect.target
    fd = redirect.fd if redirect.fd is not None else (0 if op.startswith("<") else 1)
    after = dict(table)
    value = target.value if target is not None else None
    if op in (">&-", "<&-") or (op in (">&", "<&") and value == "-"):
        after[fd] = _CLOSED
        return Step(after)
    if op in (">&", "<&") and value is not None and _DIGITS.fullmatch(value):
        source = int(value.rstrip("-"))
        origin = table.get(source)
        if origin is None or origin.kind == CLOSED:  # a failed copy: bash runs nothing
            return Step({**after, fd: _CLOSED}, source, origin, unknown_source=origin is None)
        if source != fd:
            after[fd] = origin
            if value.endswith("-"):
                after[source] = _CLOSED
        return Step(after, source, origin)
    before = table.get(0)  # what opening /dev/stdin again reaches: asked only where it matters
    reopens = before if (op in ("<", "<>") and value is not None and before is not None
                         and before.is_script and names_stdin(value)) else None
    opened = Origin(OPENED, redirect=redirect, loop=loop, reopens=reopens)
    if op in ("&>", "&>>") or (op == ">&" and fd == 1):  # `>&FILE` and `1>&FILE` are `&>FILE`
        after[1] = after[2] = opened
    else:
        after[fd] = opened
    return Step(after)


def reopened_each_pass(origin: Origin | None, loop: object) -> bool:
    """Whether `origin` is opened again on every pass of `loop`: a redirection
    inside its test or body, not on the loop itself, so a `read` reading it
    starts over each time and the loop never ends."""
    return origin is not None and origin.kind == OPENED and origin.loop is loop
