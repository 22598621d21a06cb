"""Hooks for wrappers whose operands mix settings with an inner command.

The inner command is checked by the engine itself (`check_argv`), so every
rule for that program applies as if it had been typed alone.
"""

from __future__ import annotations

from ...read.model import Assignment, Word
from ..codes import Code, Effect
from . import rule


@rule("env_command", codes=[Code.BP400],
      deny=["env - rg x"],
      allow=["env LC_ALL=C rg x", "env"])
def env_command(inv, ctx) -> None:
    """`env` settings outside the harmless list, `env -`, and inner commands that are denied.
    `env [-] [NAME=VALUE]... [COMMAND [ARG]...]`: each assignment passes the same
    allowlist as a shell assignment; the command is checked like any other."""
    for word in inv.positionals:
        value = word.value
        if value == "-":
            ctx.deny(Code.BP400, word.span,
                     "`env -` empties the environment, dropping settings that keep programs "
                     "non-interactive (such as PAGER=cat)",
                     "drop `-`; set only harmless variables, e.g. `env LC_ALL=C rg foo`", Effect.STATE)
            return
        if value is not None and "=" in value:
            name, _, assigned = value.partition("=")
            ctx.check_assignment(Assignment(name, Word(assigned, word.span, assigned), word.span))
            continue
        ctx.check_inner(inv.words[inv.words.index(word):])
        return


@rule("command_builtin", codes=[Code.BP302],
      deny=["command src*"], allow=["command -v rg", "command rg x"])
def command_builtin(inv, ctx) -> None:
    """`command PROG ARGS` whose inner command is denied.
    `command -v/-V NAME...` only describes names; otherwise PROG runs and is
    checked like any other command."""
    describes = inv.has("-v", "-V")
    if describes or not inv.positionals:
        return
    first = inv.positionals[0]
    if first.value is None:
        ctx.deny(Code.BP302, first.span, "the program name after `command` is not literal",
                 "name the program literally")
        return
    ctx.check_inner(inv.words[inv.words.index(first):])
