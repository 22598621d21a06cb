"""Hooks for wrappers whose operands mix settings with an inner command.

The inner command is checked by the engine itself (`check_argv`), so every
rule for that program applies as if it had been typed alone.
"""

from __future__ import annotations

from ..engine import _check_assignment, check_argv
from ...read.model import Assignment, Word


def env_command(inv, ctx) -> None:
    """`env [-] [NAME=VALUE]... [COMMAND [ARG]...]`: each assignment must pass the
    same allowlist as a shell assignment; the command is checked like any other."""
    for word in inv.positionals:
        value = word.value
        if value == "-":
            ctx.deny("BP400", word.span,
                     "`env -` empties the environment, dropping settings that keep programs "
                     "non-interactive (such as PAGER=cat)",
                     "drop `-`; set only harmless variables, e.g. `env LC_ALL=C rg foo`", "state")
            return
        if value is not None and "=" in value:
            name, _, assigned = value.partition("=")
            _check_assignment(Assignment(name, Word(assigned, word.span, assigned), word.span), ctx)
            continue
        check_argv(inv.words[inv.words.index(word):], ctx)
        return


def command_builtin(inv, ctx) -> None:
    """`command -v/-V NAME...` only describes names; `command PROG ARGS` runs PROG,
    which is then checked like any other command."""
    describes = any(names & {"-v", "-V"} for names in (set(f.names) for f, _, _ in inv.flags))
    if describes or not inv.positionals:
        return
    first = inv.positionals[0]
    if first.value is None:
        ctx.deny("BP302", first.span, "the program name after `command` is not literal",
                 "name the program literally")
        return
    check_argv(inv.words[inv.words.index(first):], ctx)
