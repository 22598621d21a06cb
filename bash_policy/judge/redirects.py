"""Redirections: writing files, reading devices or the network, and what
standard input is once they are applied (judge/descriptors.py).
"""

from __future__ import annotations

import os
import re

from ..read.model import (
    Span,
    Word,
)
from ..records import dataclass, replace
from . import descriptors, expand, fixes, values
from .codes import Code, Effect
from .problems import Problem
from .rules import engine_rule
from .special import on_disk, special_in, stdin_in

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from .context import Context

REDIRECTION = engine_rule("redirection", """Redirections that write files, read network devices or expand.
    `>`, `>>`, `&>` and the like create files; `/dev/tcp/…` connects to a host;
    an unquoted here-document runs the substitutions in its body.""",
    codes=[Code.BP500, Code.BP501, Code.BP105],
    deny=["rg x > out", "rg x < /dev/tcp/h/80", "cat <<EOF\n$(id)\nEOF"],
    allow=["rg x 2>/dev/null", "rg x 2>&1"])
# ASCII digits only: bash and the programs read no other digits (`>&٣` writes a file named ٣).
_DESCRIPTOR = re.compile(r"[0-9]+-?")


@dataclass(frozen=True)
class InputFromCallerOutput(Problem):
    code = Code.BP500
    effect = Effect.HANG
    rule = REDIRECTION
    hint_format = "read a file instead: `< FILE`, or `< /dev/null` for no input"
    written: str
    fd: int | None

    def message(self) -> str:
        stream = "output" if self.fd == 1 else "error"
        return (f"`{self.written}` makes standard input a copy of descriptor {self.fd}, the caller's "
                f"standard {stream}: a program reading it waits on a terminal or pipe that never ends")


@dataclass(frozen=True)
class HeredocExpands(Problem):
    code = Code.BP105
    rule = REDIRECTION
    message_format = ("the here-document's delimiter is unquoted, so `$`, backquotes and `\\` in its "
                      "body are expanded")
    hint_format = "quote the delimiter: <<'EOF'"


@dataclass(frozen=True)
class UnsupportedRedirection(Problem):
    code = Code.BP500
    rule = REDIRECTION
    message_format = "unsupported redirection `{op}`"
    hint_format = "drop the redirection"
    op: str


@dataclass(frozen=True)
class TargetNotLiteral(Problem):
    code = Code.BP501
    rule = REDIRECTION
    message_format = "the redirection target `{target.text}` is not a literal path"
    hint_format = "write the file name literally, in quotes if needed"
    target: Word


@dataclass(frozen=True)
class WritesForeignDescriptor(Problem):
    code = Code.BP500
    effect = Effect.WRITE
    rule = REDIRECTION
    message_format = ("`{written}` writes to descriptor {fd}, which this command did not open: it may be "
                      "a file the caller holds open")
    hint_format = "redirect to the standard streams only (2>&1, >&2) or to /dev/null"
    written: str
    fd: int | None


@dataclass(frozen=True)
class ReadsForeignDescriptor(Problem):
    code = Code.BP500
    effect = Effect.HANG
    rule = REDIRECTION
    message_format = ("`{written}` reads descriptor {fd}, which this command did not open: it may be a "
                      "pipe or terminal that never ends")
    hint_format = "read a file instead: `< FILE`"
    written: str
    fd: int | None


@dataclass(frozen=True)
class NetworkRedirection(Problem):
    code = Code.BP501
    effect = Effect.NETWORK
    rule = REDIRECTION
    message_format = "reading `{path}` makes bash open a network connection"
    hint_format = "read a local file instead"
    path: str


@dataclass(frozen=True)
class ReadsSpecialFile(Problem):
    code = Code.BP501
    effect = Effect.HANG
    rule = REDIRECTION
    message_format = "`<{path}` reads a device, FIFO or kernel file, which may never end"
    hint_format = "read a regular file"
    path: str


@dataclass(frozen=True)
class NotADescriptor(Problem):
    code = Code.BP500
    rule = REDIRECTION
    message_format = "`<&{path}` is not a descriptor number"
    hint_format = "use <file to read a file"
    path: str


@dataclass(frozen=True)
class WritesFile(Problem):
    code = Code.BP500
    effect = Effect.WRITE
    rule = REDIRECTION
    message_format = "`{written}` opens `{path}` for writing"
    hint_format = "drop the redirection and read the output directly, or redirect to /dev/null"
    written: str
    path: str


def redirected(node, fds: descriptors.Table, ctx: Context) -> descriptors.Table:
    """Check a node's redirections in order, as bash applies them to the
    descriptors `fds` it inherits, and return the descriptors it runs with."""
    env = ctx.known.get(id(node), {})
    for redirect in node.redirects:
        redirect = _substituted_target(redirect, ctx, env)
        step = descriptors.apply(redirect, fds, ctx.loop, lambda path: _names_stdin(path, ctx))
        _check_redirect(redirect, ctx, step)
        fds = step.after
    return fds


def _names_stdin(path: str, ctx: Context) -> bool:
    """Whether opening `path` opens standard input again: /dev/stdin by its
    name, or a link to it in a directory the command may run in."""
    return stdin_in(path, ctx.directories()) or "stdin" in _on_disk(path, ctx)


def check_input(fds: descriptors.Table, inherited: descriptors.Table, node, ctx: Context) -> None:
    """Standard input must not be a copy of the caller's standard output or
    error, however the redirection that made it is spelled (`0<&2`, `0>&2`,
    `3>&1 <&3`): those are a terminal or a socket the harness reads, and a
    program reading them waits for ever (Node-based harnesses keep them open).
    Judged where the node's own redirections make it so."""
    origin = fds.get(0)
    if origin is None or not origin.caller_output or origin is inherited.get(0):
        return
    made = next((r for r in reversed(node.redirects)
                 if (r.fd if r.fd is not None else (0 if r.op.startswith("<") else 1)) == 0), None)
    span = made.span if made is not None else node.span
    ctx.deny(InputFromCallerOutput(ctx.source[span.start:span.end], origin.fd), span)

def _substituted_target(redirect, ctx: Context, env: values.Env):
    """A redirection whose target is parameters the script set, with the value
    bash opens (one word: more is bash's "ambiguous redirect"; a here-string
    is neither split nor globbed)."""
    target = redirect.target
    if not env or target is None or target.value is not None or redirect.op in ("<<", "<<-"):
        return redirect
    made: tuple[Word, ...] | None
    if redirect.op == "<<<":
        text = expand.value(target, ctx.source, env)
        made = None if text is None else (Word(target.text, target.span, text),)
    else:
        made = expand.substituted(target, ctx.source, env)
    if made is None or len(made) != 1:
        return redirect
    return replace(redirect, target=made[0])

def _check_redirect(redirect, ctx: Context, step: descriptors.Step) -> None:
    """One redirection; `step` is what it does to the descriptors."""
    op, target = redirect.op, redirect.target
    if op in ("<<", "<<-"):
        body = redirect.body or ""
        if not redirect.quoted and any(ch in body for ch in "$`\\"):
            ctx.deny(HeredocExpands(), redirect.span)
        return
    if op in (">&-", "<&-"):
        return
    if target is None:
        ctx.deny(UnsupportedRedirection(op), redirect.span)
        return
    if target.value is None:
        if op == "<<<" or not target.pathname_only:
            ctx.deny_word(target, "in a here-string" if op == "<<<" else "as a redirection target")
        else:
            ctx.deny(TargetNotLiteral(target), target.span)
        return
    path = target.value
    if op in (">&", "<&") and _DESCRIPTOR.fullmatch(path):
        # Copying or moving a descriptor opens nothing; what the copy is
        # judged as is decided by the descriptor that results (_check_input).
        if step.unknown_source and op == ">&":
            # Another descriptor may be a file the harness holds open for writing.
            ctx.deny(WritesForeignDescriptor(ctx.source[redirect.span.start:redirect.span.end],
                                             step.source), redirect.span)
        elif step.unknown_source:
            # Reading another descriptor reads whatever the harness holds open
            # there: a pipe may never end, a terminal waits for a person.
            ctx.deny(ReadsForeignDescriptor(ctx.source[redirect.span.start:redirect.span.end],
                                            step.source), redirect.span)
        return
    if op == "<<<":
        return
    if op in ("<", "<&"):
        if any(path.startswith(p) for p in ctx.policy.network_paths):
            ctx.deny(NetworkRedirection(path), target.span)
        elif op == "<" and (special_in(path, ctx.directories())
                            or _on_disk(path, ctx) - {None, "stdin"}):
            ctx.deny(ReadsSpecialFile(path), target.span)
        elif op == "<&":
            ctx.deny(NotADescriptor(path), redirect.span)
        return
    if op in (">", ">>", "&>", "&>>", ">|", ">&") and path in ctx.policy.write_targets:
        return
    written = f"{'' if redirect.fd is None else redirect.fd}{op}{target.text}"
    span = Span(redirect.span.start, target.span.end)
    ctx.deny(WritesFile(written, path, fix=fixes.drop(ctx.source, span)), span)


def _on_disk(path: str, ctx: Context) -> set[str | None]:
    """With a working directory: what `path` is in each directory the command
    may run in (special.on_disk: None for a plain file)."""
    if path.startswith("/"):
        return {on_disk(path)}
    return {on_disk(os.path.join(d, path)) for d in ctx.directories() if d is not None}
