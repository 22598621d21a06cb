"""Redirections: writing files, reading devices or the network, and what
standard input is once they are applied (judge/descriptors.py).
"""

from __future__ import annotations

import dataclasses
import os
import re
from typing import TYPE_CHECKING

from ..read.model import (
    Span,
    Word,
)
from . import descriptors, expand, fixes, values
from .codes import Code, Effect
from .rules import engine_rule
from .special import on_disk, special_in, stdin_in

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
    ctx.deny(Code.BP500, span,
             f"`{ctx.source[span.start:span.end]}` makes standard input a copy of descriptor "
             f"{origin.fd}, the caller's standard {'output' if origin.fd == 1 else 'error'}: a program "
             "reading it waits on a terminal or pipe that never ends",
             "read a file instead: `< FILE`, or `< /dev/null` for no input", Effect.HANG,
             rule=REDIRECTION)

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
    return dataclasses.replace(redirect, target=made[0])

def _check_redirect(redirect, ctx: Context, step: descriptors.Step) -> None:
    """One redirection; `step` is what it does to the descriptors."""
    op, target = redirect.op, redirect.target
    if op in ("<<", "<<-"):
        body = redirect.body or ""
        if not redirect.quoted and any(ch in body for ch in "$`\\"):
            ctx.deny(Code.BP105, redirect.span,
                     "the here-document's delimiter is unquoted, so `$`, backquotes and `\\` in its "
                     "body are expanded", "quote the delimiter: <<'EOF'", rule=REDIRECTION)
        return
    if op in (">&-", "<&-"):
        return
    if target is None:
        ctx.deny(Code.BP500, redirect.span, f"unsupported redirection `{op}`", "drop the redirection",
                 rule=REDIRECTION)
        return
    if target.value is None:
        if op == "<<<" or not target.pathname_only:
            ctx.deny_word(target, "in a here-string" if op == "<<<" else "as a redirection target")
        else:
            ctx.deny(Code.BP501, target.span,
                     f"the redirection target `{target.text}` is not a literal path",
                     "write the file name literally, in quotes if needed", rule=REDIRECTION)
        return
    path = target.value
    if op in (">&", "<&") and _DESCRIPTOR.fullmatch(path):
        # Copying or moving a descriptor opens nothing; what the copy is
        # judged as is decided by the descriptor that results (_check_input).
        if step.unknown_source and op == ">&":
            # Another descriptor may be a file the harness holds open for writing.
            ctx.deny(Code.BP500, redirect.span,
                     f"`{ctx.source[redirect.span.start:redirect.span.end]}` writes to descriptor "
                     f"{step.source}, which this command did not open: it may be a file the caller "
                     "holds open", "redirect to the standard streams only (2>&1, >&2) or to /dev/null",
                     Effect.WRITE, rule=REDIRECTION)
        elif step.unknown_source:
            # Reading another descriptor reads whatever the harness holds open
            # there: a pipe may never end, a terminal waits for a person.
            ctx.deny(Code.BP500, redirect.span,
                     f"`{ctx.source[redirect.span.start:redirect.span.end]}` reads descriptor "
                     f"{step.source}, which this command did not open: it may be a pipe or terminal "
                     "that never ends", "read a file instead: `< FILE`", Effect.HANG,
                     rule=REDIRECTION)
        return
    if op == "<<<":
        return
    if op in ("<", "<&"):
        if any(path.startswith(p) for p in ctx.policy.network_paths):
            ctx.deny(Code.BP501, target.span, f"reading `{path}` makes bash open a network connection",
                     "read a local file instead", Effect.NETWORK, rule=REDIRECTION)
        elif op == "<" and (special_in(path, ctx.directories())
                            or _on_disk(path, ctx) - {None, "stdin"}):
            ctx.deny(Code.BP501, target.span, f"`<{path}` reads a device, FIFO or kernel file, "
                     "which may never end", "read a regular file", Effect.HANG, rule=REDIRECTION)
        elif op == "<&":
            ctx.deny(Code.BP500, redirect.span, f"`<&{path}` is not a descriptor number",
                     "use <file to read a file", rule=REDIRECTION)
        return
    if op in (">", ">>", "&>", "&>>", ">|", ">&") and path in ctx.policy.write_targets:
        return
    written = f"{'' if redirect.fd is None else redirect.fd}{op}{target.text}"
    span = Span(redirect.span.start, target.span.end)
    ctx.deny(Code.BP500, span, f"`{written}` opens `{path}` for writing",
             "drop the redirection and read the output directly, or redirect to /dev/null",
             Effect.WRITE, rule=REDIRECTION, fix=fixes.drop(ctx.source, span))


def _on_disk(path: str, ctx: Context) -> set[str | None]:
    """With a working directory: what `path` is in each directory the command
    may run in (special.on_disk: None for a plain file)."""
    if path.startswith("/"):
        return {on_disk(path)}
    return {on_disk(os.path.join(d, path)) for d in ctx.directories() if d is not None}
